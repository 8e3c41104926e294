// Package format reads and writes the wire formats of LLM APIs: it extracts
// the screenable texts of a request or answer into a scanner.Conversation,
// writes redactions back into the body without disturbing anything else,
// renders refusals and canned answers in the provider's own shapes, and
// decodes streamed answers event by event.
//
// It knows nothing of HTTP handlers or Caddy: the gateway hands it bodies,
// paths and readers.
package format

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/promptwall/promptwall/scanner"
)

// Format is one LLM API wire format. Implementations are stateless and safe
// for concurrent use.
type Format interface {
	// Name is the format's registered name, as accepted by ByName.
	Name() string
	// ParseRequest extracts every screenable text of a request body. Each
	// Message.Ref locates the JSON string it came from, for RewriteRequest.
	// Malformed JSON, wrong shapes and missing required fields return an
	// *Error with Status 400 and a message naming the field.
	ParseRequest(body []byte) (*Request, error)
	// RewriteRequest replaces the values named by edits and leaves every
	// other byte of the body as the client sent it. Edits inside tool-call
	// arguments (JSON held in a JSON string) keep the arguments valid JSON.
	RewriteRequest(body []byte, edits []Edit) ([]byte, error)
	// ParseResponse extracts the assistant texts and tool-call arguments of
	// a non-streamed answer, all with Role assistant. A body that is not the
	// expected answer returns an *Error with Status 502.
	ParseResponse(body []byte) (*scanner.Conversation, error)
	// RewriteResponse is RewriteRequest for answers.
	RewriteResponse(body []byte, edits []Edit) ([]byte, error)
	// Blocked renders a refusal in the provider's own error shape, so the
	// official SDKs raise their usual API error carrying message. code is
	// a machine-readable reason such as "content_blocked".
	Blocked(status int, code, message string) []byte
	// Completion renders a successful, non-streamed answer whose assistant
	// text is message, shaped like the provider's answer for req's model.
	// It returns nil where no answer can carry a text (embeddings).
	Completion(req *Request, message string) []byte
	// StreamCompletion is Completion for a client that asked to stream:
	// the whole event stream, terminator included. It returns nil for
	// formats that never stream.
	StreamCompletion(req *Request, message string) []byte
	// NewStream returns the incremental decoder of this format's streamed
	// answers read from r, or nil if the format never streams.
	NewStream(r io.Reader) Stream
}

// Request is what ParseRequest extracts from a request body.
type Request struct {
	// Conversation holds the screenable texts in document order.
	Conversation scanner.Conversation
	// Stream is true when the client asked for a streamed answer.
	Stream bool
	// Model is the requested model, "" if the request names none.
	Model string
}

// Edit replaces the text at Ref (a Message.Ref from ParseRequest or
// ParseResponse of the same body) by Text.
//
// A ref is a path into the body: object keys joined by '.', array indexes
// in brackets, keys that are not plain identifiers quoted in brackets
// (messages[2].content[0].text, args["user name"]). Text inside JSON that
// a string holds (tool-call arguments) is named by the string's path, '#'
// and a path inside that JSON: messages[1].tool_calls[0].function.
// arguments#location.city. Keys are spelt as the body spells them once
// JSON escapes are decoded.
type Edit struct {
	Ref  string
	Text string
}

// Error is a client-facing failure: a request the gateway refuses to
// forward, or an error event a provider sent in a stream.
type Error struct {
	// Status is the HTTP status to answer with.
	Status int
	// Code is a machine-readable reason ("invalid_json",
	// "invalid_request", "unsupported_input"; for provider errors the
	// provider's own type or code).
	Code string
	// Message is a sentence for the client; it never quotes screened text.
	Message string
	// Param is the path of the offending field, "" if none.
	Param string
}

func (e *Error) Error() string { return "format: " + e.Message }

// Sentinel errors.
var (
	// ErrUnknownFormat is returned (wrapped) by Detect when neither the path
	// nor the body identifies a supported format, and by ByName for an
	// unknown name. The handler refuses such requests unless the operator
	// configured pass-through: an unrecognised body cannot be screened.
	ErrUnknownFormat = errors.New("format: unknown wire format")
	// ErrUnknownRef is returned (wrapped) by a rewrite whose edit names no
	// text of the body.
	ErrUnknownRef = errors.New("format: ref names no text of the body")
	// ErrEventTooLarge is returned (wrapped) by a stream reader when one
	// event or line exceeds its size limit.
	ErrEventTooLarge = errors.New("format: stream event too large")
)

// Names of the built-in formats.
const (
	NameOpenAIChat        = "openai_chat"
	NameOpenAIResponses   = "openai_responses"
	NameOpenAICompletions = "openai_completions"
	NameOpenAIEmbeddings  = "openai_embeddings"
	NameAnthropicMessages = "anthropic_messages"
	NameGemini            = "gemini"
	NameOllamaChat        = "ollama_chat"
	NameOllamaGenerate    = "ollama_generate"
	NameGeneric           = "generic"
)

// ByName returns the built-in format with the given name. "generic" needs a
// configuration and is built with NewGeneric instead. A Gemini format from
// ByName knows neither model nor streaming (they live in the URL); pass it
// through Bind with the request path.
func ByName(name string) (Format, error) {
	switch name {
	case NameOpenAIChat:
		return openAIChat{}, nil
	case NameOpenAIResponses:
		return openAIResponses{}, nil
	case NameOpenAICompletions:
		return openAICompletions{}, nil
	case NameOpenAIEmbeddings:
		return openAIEmbeddings{}, nil
	case NameAnthropicMessages:
		return anthropic{}, nil
	case NameGemini:
		return gemini{}, nil
	case NameOllamaChat:
		return ollamaChat{}, nil
	case NameOllamaGenerate:
		return ollamaGenerate{}, nil
	case NameGeneric:
		return nil, fmt.Errorf("%w: %q needs a configuration (NewGeneric)", ErrUnknownFormat, name)
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownFormat, name)
}

// Bind returns f adjusted to a request path (URL path without the query).
// Formats that carry the model or the streaming choice in the URL (Gemini:
// /v1beta/models/{model}:streamGenerateContent) read them from it; other
// formats are returned unchanged.
func Bind(f Format, path string) Format {
	if _, ok := f.(gemini); ok {
		g := gemini{}
		// models/{model} and tunedModels/{model}.
		if i := strings.LastIndex(path, "odels/"); i >= 0 {
			m := path[i+len("odels/"):]
			if j := strings.LastIndexByte(m, ':'); j >= 0 {
				g.stream = m[j+1:] == "streamGenerateContent"
				m = m[:j]
			}
			g.model = m
		}
		return g
	}
	return f
}

// Detect picks the format of a request: by path first, accepting any prefix
// (so /openai/v1/chat/completions and Azure deployment paths match), then,
// for an unknown path, by the top-level keys of a JSON object body. It
// returns ErrUnknownFormat when neither identifies a format. A body that is
// not JSON does not make Detect fail when the path is known: ParseRequest
// then reports it as a 400.
func Detect(path string, body []byte) (Format, error) {
	switch {
	case strings.HasSuffix(path, "/chat/completions"):
		return openAIChat{}, nil
	case strings.HasSuffix(path, "/responses"):
		return openAIResponses{}, nil
	case strings.HasSuffix(path, "/completions"):
		return openAICompletions{}, nil
	case strings.HasSuffix(path, "/embeddings"):
		return openAIEmbeddings{}, nil
	case strings.HasSuffix(path, "/messages"):
		return anthropic{}, nil
	case strings.Contains(path, "models/") &&
		(strings.HasSuffix(path, ":generateContent") || strings.HasSuffix(path, ":streamGenerateContent")):
		return Bind(gemini{}, path), nil
	case strings.HasSuffix(path, "/api/chat"):
		return ollamaChat{}, nil
	case strings.HasSuffix(path, "/api/generate"):
		return ollamaGenerate{}, nil
	}
	if f := sniff(body); f != nil {
		return f, nil
	}
	return nil, fmt.Errorf("%w: path %q", ErrUnknownFormat, path)
}

// sniff recognises a format from the top-level keys of the body. Only
// shapes that identify one format are accepted; a guess that picked the
// wrong format would screen the wrong fields.
func sniff(body []byte) Format {
	d, err := parse(body, nil)
	if err != nil {
		return nil
	}
	b := body
	top := d.root()
	if b[top.s] != '{' {
		return nil
	}
	var f [8]span
	var k [8]span
	ks := newKeys("contents", "messages", "system", "anthropic_version", "prompt", "input", "instructions", "max_tokens")
	c := collector{doc: d}
	if c.fields(top, ks, f[:], k[:]) != nil {
		return nil
	}
	switch {
	case f[0].ok() && !f[1].ok():
		return gemini{}
	case f[1].ok():
		// Anthropic is the chat shape with a top-level system prompt, an
		// anthropic_version, or Anthropic-only content blocks.
		if f[2].ok() || f[3].ok() || anthropicBlocks(&d, f[1]) {
			return anthropic{}
		}
		return openAIChat{}
	case f[4].ok() && !f[5].ok():
		return openAICompletions{}
	case f[5].ok() && !f[4].ok():
		if f[6].ok() || b[f[5].s] == '[' && hasObject(&d, f[5]) {
			return openAIResponses{}
		}
		return openAIEmbeddings{}
	}
	return nil
}

func hasObject(d *doc, arr span) bool {
	b := d.b
	for _, e := range d.elems(arr) {
		if b[e.s] == '{' {
			return true
		}
	}
	return false
}

// anthropicBlocks reports whether any message carries a content block type
// that only Anthropic uses.
func anthropicBlocks(d *doc, msgs span) bool {
	b := d.b
	if b[msgs.s] != '[' {
		return false
	}
	for _, m := range d.elems(msgs) {
		if b[m.s] != '{' {
			continue
		}
		c, ok := lookup(d, m, []segment{{key: "content", idx: segKey}})
		if !ok || b[c.s] != '[' {
			continue
		}
		for _, blk := range d.elems(c) {
			if t, ok := lookup(d, blk, []segment{{key: "type", idx: segKey}}); ok && b[t.s] == '"' {
				switch string(d.unquote(t)) {
				case "tool_use", "tool_result", "thinking", "document":
					return true
				}
			}
		}
	}
	return false
}
