// Package guardrail speaks the guardrail APIs that other LLM gateways already
// call, so that Promptwall can sit behind LiteLLM, Portkey, Kong or any
// Bedrock ApplyGuardrail client as their guardrail service:
//
//   - Prompt Security's POST /api/protect (LiteLLM's prompt_security
//     guardrail, Portkey's promptsecurity plugin);
//   - LiteLLM's Generic Guardrail API, POST /beta/litellm_basic_guardrail_api;
//   - Portkey's webhook guardrail (the hook context, answered with a verdict);
//   - Bedrock's ApplyGuardrail, POST /guardrail/{id}/version/{v}/apply.
//
// A Shape parses a caller's request into a Check (the texts to screen, which
// side of the exchange they come from, who the caller says they serve) and
// renders a Verdict in the caller's own answer. Screening, recording and
// authentication are the caller of this package's business: nothing here
// touches HTTP servers, Caddy or the store.
package guardrail

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/promptwall/promptwall/scanner"
)

// Names of the shapes, as accepted by ByName and the Caddyfile.
const (
	NamePromptSecurity = "prompt_security"
	NameLiteLLM        = "litellm"
	NamePortkey        = "portkey"
	NameBedrock        = "bedrock"
)

// Names lists every shape, in the order the documentation presents them.
var Names = []string{NamePromptSecurity, NameLiteLLM, NamePortkey, NameBedrock}

// Paths where each shape is served when a handler does not fix one. The
// callers append these to the base URL the operator configures (LiteLLM's
// api_base, Portkey's apiDomain, the Bedrock runtime endpoint).
const (
	PathPromptSecurity = "/api/protect"
	PathLiteLLM        = "/beta/litellm_basic_guardrail_api"
	PathPortkey        = "/portkey/webhook"
)

// Shape is one caller's guardrail API.
type Shape interface {
	// Name is the shape's registered name.
	Name() string
	// Parse reads a caller's request. path is the request path (Bedrock
	// carries the guardrail id and version in it). A body that is not the
	// caller's request returns an *Error with Status 400 naming the field.
	Parse(path string, body []byte) (*Check, error)
	// Answer renders v as the caller expects its guardrail's answer (with
	// HTTP status 200: every caller reads a refusal from the body).
	Answer(c *Check, v Verdict) ([]byte, error)
}

// ByName returns the shape with the given name.
func ByName(name string) (Shape, error) {
	switch name {
	case NamePromptSecurity:
		return promptSecurity{}, nil
	case NameLiteLLM:
		return liteLLM{}, nil
	case NamePortkey:
		return portkey{}, nil
	case NameBedrock:
		return bedrock{}, nil
	}
	return nil, fmt.Errorf("guardrail: unknown shape %q (%s)", name, strings.Join(Names, ", "))
}

// ForPath returns the shape served at path, matched on its end so that the
// handler may sit under any prefix; nil when no shape lives there.
func ForPath(path string) Shape {
	switch {
	case strings.HasSuffix(path, PathPromptSecurity):
		return promptSecurity{}
	case strings.HasSuffix(path, PathLiteLLM):
		return liteLLM{}
	case strings.HasSuffix(path, PathPortkey):
		return portkey{}
	}
	if _, _, ok := bedrockPath(path); ok {
		return bedrock{}
	}
	return nil
}

// Check is one screening a caller asked for.
type Check struct {
	// Shape is the name of the shape that parsed the request.
	Shape string
	// Direction is scanner.Input for a prompt on its way to a model and
	// scanner.Output for a model's answer.
	Direction scanner.Direction
	// Conversation holds the texts to screen. Context the caller sent
	// along (a system prompt) is a message too, so scanners that compare
	// against it see it.
	Conversation scanner.Conversation
	// Metadata is what the caller says about the call, stored with the
	// record.
	Metadata Metadata

	// state is the shape's own memory of the request, for Answer.
	state any
}

// Metadata is the caller's description of the call. Every value comes from
// the caller and is bounded to maxMetaLen bytes; none is a credential.
type Metadata struct {
	// Caller names the shape ("litellm", "portkey", ...).
	Caller string `json:"caller"`
	// User is the end user the caller acts for.
	User string `json:"user,omitempty"`
	// Team, Org and KeyAlias are LiteLLM's virtual-key attribution.
	Team     string `json:"team,omitempty"`
	Org      string `json:"org,omitempty"`
	KeyAlias string `json:"keyAlias,omitempty"`
	// CallID and TraceID identify the call in the caller's own logs.
	CallID  string `json:"callId,omitempty"`
	TraceID string `json:"traceId,omitempty"`
	// Provider and RequestType are Portkey's: the upstream provider and
	// the kind of call (chatComplete, complete, embed, messages).
	Provider    string `json:"provider,omitempty"`
	RequestType string `json:"requestType,omitempty"`
	// Guardrail and Version are the Bedrock guardrail the caller named.
	Guardrail string `json:"guardrail,omitempty"`
	Version   string `json:"version,omitempty"`
	// MonitorOnly is Prompt Security's monitor_only: detections are
	// reported but never refuse the call.
	MonitorOnly bool `json:"monitorOnly,omitempty"`
	// Extra holds the caller's free-form metadata (Portkey's metadata),
	// at most maxExtra entries.
	Extra map[string]string `json:"extra,omitempty"`
}

// JSON is the metadata as stored in a record's externalMetadata.
func (m Metadata) JSON() string {
	b, _ := json.Marshal(m)
	return string(b)
}

const (
	// maxMetaLen bounds each metadata value: they are stored with every
	// record and must not let a caller grow records without limit.
	maxMetaLen = 256
	// maxExtra bounds the free-form metadata entries kept per record.
	maxExtra = 16
)

// meta bounds a caller-supplied value, cutting on a rune boundary.
func meta(s string) string {
	if len(s) <= maxMetaLen {
		return s
	}
	n := maxMetaLen
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// extraMeta keeps the string-valued entries of a caller's free-form
// metadata, bounded in number and size, in a stable (sorted) choice.
func extraMeta(in map[string]any) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]string, min(len(in), maxExtra))
	for _, k := range slices.Sorted(maps.Keys(in)) {
		if len(out) == maxExtra {
			break
		}
		switch v := in[k].(type) {
		case string:
			out[meta(k)] = meta(v)
		case float64, bool:
			out[meta(k)] = fmt.Sprint(v)
		}
	}
	return out
}

// Verdict is what Promptwall decided about a Check.
type Verdict struct {
	// Outcome is the screening's outcome: Blocked refuses the call,
	// Modified lets it go on with Edits applied, anything else lets it go
	// on unchanged.
	Outcome scanner.Outcome
	// Message is what the end user reads when the call is refused.
	Message string
	// Detections are the scanners that found something, in config order.
	Detections []Detection
	// Edits are the redacted texts of a Modified verdict.
	Edits []scanner.Edit
	// RecordID is the id of the record that keeps this screening.
	RecordID string
}

// Detection is one scanner's finding, as callers report violations.
type Detection struct {
	// Scanner is the scanner's id ("secrets", "pii", ...).
	Scanner string
	// Type is the detector family ("secret", "pii", "injection", ...).
	Type string
	// Outcome is what the scanner decided: Blocked, Modified or Flagged.
	Outcome scanner.Outcome
}

// VerdictOf turns a screening result into a verdict. message is the end
// user's refusal text when the result names none.
func VerdictOf(res *scanner.Result, message, recordID string) Verdict {
	v := Verdict{Outcome: res.Outcome, Message: res.FlagMessage, Edits: res.Edits, RecordID: recordID}
	if v.Message == "" {
		v.Message = message
	}
	for i := range res.Scanners {
		sr := &res.Scanners[i]
		switch sr.Outcome {
		case scanner.Blocked, scanner.Modified, scanner.Flagged:
			v.Detections = append(v.Detections, Detection{Scanner: sr.ScannerID, Type: sr.Type, Outcome: sr.Outcome})
		}
	}
	return v
}

// blocked reports whether the call is refused.
func (v Verdict) blocked() bool { return v.Outcome == scanner.Blocked }

// modified reports whether the call goes on with redacted texts.
func (v Verdict) modified() bool { return v.Outcome == scanner.Modified && len(v.Edits) > 0 }

// violations names the scanners that found something, as the callers list
// them; never nil, so it encodes as [].
func (v Verdict) violations() []string {
	out := make([]string, 0, len(v.Detections))
	for _, d := range v.Detections {
		out = append(out, d.Scanner)
	}
	return out
}

// edited returns the text of message i with the verdict's edit applied, and
// whether there was one.
func (v Verdict) edited(i int) (string, bool) {
	for _, e := range v.Edits {
		if e.Message == i {
			return e.Text, true
		}
	}
	return "", false
}

// Error is a request the shape cannot read. The handler answers it in the
// API's error shape.
type Error struct {
	// Status is the HTTP status to answer with.
	Status int
	// Code is machine-readable: "invalid_parameter", "unauthorized", ...
	Code string
	// Message is a sentence for the caller; it never quotes screened text.
	Message string
	// Param is the offending field, "" if none.
	Param string
}

func (e *Error) Error() string {
	if e.Param != "" {
		return "guardrail: " + e.Param + ": " + e.Message
	}
	return "guardrail: " + e.Message
}

// JSON renders the error as {"error": {"code", "message", "param"}}.
func (e *Error) JSON() []byte {
	type body struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Param   string `json:"param,omitempty"`
	}
	b, _ := json.Marshal(struct {
		Error body `json:"error"`
	}{body{e.Code, e.Message, e.Param}})
	return b
}

// invalid is a 400 naming the offending field.
func invalid(param, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "invalid_parameter", Param: param, Message: fmt.Sprintf(format, args...)}
}

// decode reads body into v, naming what is wrong in a way a caller's
// operator can act on.
func decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return invalid(te.Field, "%s must be %s, not a JSON %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return &Error{Status: http.StatusBadRequest, Code: "invalid_json", Message: "The request body is not valid JSON."}
	}
	return nil
}

// jsonKind names a Go kind as the JSON type the caller should send.
func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "map", "struct":
		return "an object"
	case "bool":
		return "a boolean"
	case "ptr", "interface":
		return "a value of another type"
	}
	return "a number"
}
