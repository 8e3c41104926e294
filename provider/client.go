package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/promptwall/promptwall/format"
	"github.com/promptwall/promptwall/scanner"
)

// Defaults of Client.
const (
	// DefaultTimeout bounds a request whose template sets no timeout.
	DefaultTimeout = 60 * time.Second
	// DefaultMaxResponseBytes bounds the answer read from a provider.
	DefaultMaxResponseBytes = 8 << 20
	// defaultAnthropicMaxTokens is Anthropic's required max_tokens when
	// inputs.max_tokens is not set.
	defaultAnthropicMaxTokens = 1024
)

// Sentinel errors: every error of Send wraps one of them or a context
// error of the caller's ctx.
var (
	// ErrTimeout: the provider did not answer within the timeout (504).
	ErrTimeout = errors.New("provider: timed out")
	// ErrUpstream: the provider could not be reached, answered with a
	// non-2xx status, with something that is not JSON, too large, or
	// without the configured output (502).
	ErrUpstream = errors.New("provider: upstream error")
	// ErrTemplate: the request template could not be rendered (502).
	ErrTemplate = errors.New("provider: template error")
	// ErrDisabled: the provider is disabled in the config.
	ErrDisabled = errors.New("provider: disabled")
)

// Error is the error of a failed Send. Its message never contains a secret
// value: every text that could echo one is masked first.
type Error struct {
	// Kind is ErrTimeout, ErrUpstream, ErrTemplate or ErrDisabled.
	Kind error
	// Status is the provider's HTTP status, 0 if none arrived.
	Status int
	// Msg says what went wrong, for the client and the record.
	Msg string
}

func (e *Error) Error() string { return e.Msg }

func (e *Error) Unwrap() error { return e.Kind }

// HTTPStatus maps a Send error to the status the API answers with: 504 for
// a timeout, 502 for anything else the provider or its template caused.
func HTTPStatus(err error) int {
	switch {
	case errors.Is(err, ErrTimeout):
		return http.StatusGatewayTimeout
	case errors.Is(err, ErrDisabled):
		return http.StatusBadRequest
	}
	return http.StatusBadGateway
}

// Message is one turn of the conversation sent to a provider. Role is
// system, user or assistant.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Result is a provider's answer.
type Result struct {
	// Text is the assistant text: the native answer's texts joined by
	// newlines, or the value at template.outputs.response.
	Text string
	// Raw is the answer body with secret values masked (bounded by
	// MaxResponseBytes); set on upstream errors too when a body arrived.
	Raw []byte
	// Status is the provider's HTTP status, 0 if none arrived.
	Status int
	// Conversation holds the answer's assistant texts for output
	// screening: the native format's texts (tool-call arguments
	// included), or Text as one message for a template.
	Conversation *scanner.Conversation
}

// Client calls providers. The zero value is ready to use; it is safe for
// concurrent use.
type Client struct {
	// HTTP is the client requests go through. Default: a client without
	// a timeout of its own (Send applies the provider's). Redirects are
	// never followed, whatever its CheckRedirect: following one would
	// carry the API key to wherever the provider points.
	HTTP *http.Client
	// MaxResponseBytes bounds the answer; a larger one is ErrUpstream.
	// Default: 8 MiB.
	MaxResponseBytes int64
}

// Send sends the conversation to the provider cfg describes and returns
// its answer. cfg's secrets must be resolved.
func (c *Client) Send(ctx context.Context, cfg *Config, msgs []Message) (Result, error) {
	mask := secretMasker(cfg.Secrets)
	fail := func(kind error, status int, format string, args ...any) *Error {
		return &Error{Kind: kind, Status: status, Msg: mask(fmt.Sprintf("provider %q: ", cfg.Name) + fmt.Sprintf(format, args...))}
	}
	if cfg.Disabled {
		return Result{}, fail(ErrDisabled, 0, "the provider is disabled")
	}
	if cfg.Model == "" && cfg.Type != TypeCustom {
		return Result{}, fail(ErrTemplate, 0, "no model configured: set the provider's model to send prompts through the gateway")
	}
	timeout := DefaultTimeout
	if cfg.Template.Timeout > 0 {
		timeout = time.Duration(cfg.Template.Timeout) * time.Millisecond
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	req, err := c.build(tctx, cfg, msgs)
	if err != nil {
		if te, ok := errors.AsType[*templateError](err); ok {
			return Result{}, fail(ErrTemplate, 0, "%s", te.msg)
		}
		return Result{}, fail(ErrTemplate, 0, "%v", err)
	}
	res, body, err := c.fetch(ctx, req, cfg.Name, timeout, fail)
	if err != nil {
		return res, err
	}
	res.Raw = []byte(mask(string(body)))
	return decodeAnswer(cfg, res, body, fail)
}

// failFunc builds an *Error of one provider: its name first, its secrets
// masked.
type failFunc func(kind error, status int, format string, args ...any) *Error

// fetch sends req (whose context carries the call's timeout) without
// following redirects and reads the answer, capped at the client's limit.
// A failure is ErrTimeout when the call's own deadline passed, the error
// of ctx (the caller's) when the caller went away, and ErrUpstream
// otherwise.
func (c *Client) fetch(ctx context.Context, req *http.Request, name string, timeout time.Duration, fail failFunc) (Result, []byte, error) {
	hc := http.Client{}
	if c.HTTP != nil {
		hc = *c.HTTP
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	failed := func(status int, what string, err error) error {
		switch {
		case errors.Is(req.Context().Err(), context.DeadlineExceeded) && ctx.Err() == nil:
			if status == 0 {
				return fail(ErrTimeout, 0, "no answer within %s", timeout)
			}
			return fail(ErrTimeout, status, "answer not complete within %s", timeout)
		case ctx.Err() != nil:
			return fmt.Errorf("provider %q: %w", name, ctx.Err())
		}
		return fail(ErrUpstream, status, "%s: %v", what, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Result{}, nil, failed(0, "cannot reach the provider", err)
	}
	defer resp.Body.Close()
	limit := c.MaxResponseBytes
	if limit <= 0 {
		limit = DefaultMaxResponseBytes
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	res := Result{Status: resp.StatusCode}
	if err != nil {
		return res, nil, failed(resp.StatusCode, "reading the answer", err)
	}
	if int64(len(body)) > limit {
		return res, nil, fail(ErrUpstream, resp.StatusCode, "the answer exceeds %d bytes", limit)
	}
	return res, body, nil
}

// decodeAnswer reads a provider's answer into res: the custom template's
// response output, or the answer in the provider's native format.
func decodeAnswer(cfg *Config, res Result, body []byte, fail failFunc) (Result, error) {
	if res.Status < 200 || res.Status > 299 {
		return res, fail(ErrUpstream, res.Status, "the provider answered HTTP %d", res.Status)
	}
	if !json.Valid(body) {
		return res, fail(ErrUpstream, res.Status, "the answer is not JSON")
	}
	if cfg.Type == TypeCustom {
		v, err := extract(body, cfg.Template.Outputs["response"])
		if err != nil {
			return res, fail(ErrUpstream, res.Status, "outputs.response: %v", err)
		}
		res.Text = v
		res.Conversation = &scanner.Conversation{Messages: []scanner.Message{{Role: scanner.RoleAssistant, Text: v}}}
		return res, nil
	}
	f, err := format.ByName(nativeFormat(cfg.Type))
	if err != nil {
		return res, fail(ErrUpstream, res.Status, "%v", err)
	}
	conv, err := f.ParseResponse(body)
	if err != nil {
		return res, fail(ErrUpstream, res.Status, "the answer is not a %s answer: %v", cfg.Type, err)
	}
	texts := make([]string, 0, len(conv.Messages))
	for _, m := range conv.Messages {
		texts = append(texts, m.Text)
	}
	res.Text = strings.Join(texts, "\n")
	res.Conversation = conv
	return res, nil
}

func nativeFormat(typ string) string {
	switch typ {
	case TypeAnthropic:
		return format.NameAnthropicMessages
	case TypeGemini:
		return format.NameGemini
	case TypeOllama:
		return format.NameOllamaChat
	}
	return format.NameOpenAIChat
}

// build makes the HTTP request: native for the known types, from the
// template for custom. Template headers and query params apply to both.
func (c *Client) build(ctx context.Context, cfg *Config, msgs []Message) (*http.Request, error) {
	r := &renderer{cfg: cfg, msgs: msgs}
	out, err := outgoingOf(cfg, r, msgs)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(out.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &templateError{"the provider URL is not an absolute http(s) URL"}
	}
	if len(cfg.Template.QueryParams) > 0 {
		q := u.Query()
		for k, v := range cfg.Template.QueryParams {
			s, err := r.render(v, "template.queryParams."+k, modeRaw)
			if err != nil {
				return nil, err
			}
			q.Set(k, s)
		}
		u.RawQuery = q.Encode()
	}
	var rd io.Reader
	if out.body != nil {
		rd = bytes.NewReader(out.body)
	}
	req, err := http.NewRequestWithContext(ctx, out.method, u.String(), rd)
	if err != nil {
		return nil, &templateError{"the request cannot be built: " + err.Error()}
	}
	if out.contentType != "" {
		req.Header.Set("Content-Type", out.contentType)
	}
	if err := setHeaders(req, cfg, r); err != nil {
		return nil, err
	}
	return req, nil
}

// outgoing is what a request to a provider carries before its query
// parameters and headers.
type outgoing struct {
	method, url, contentType string
	body                     []byte
}

// outgoingOf is the request of a provider type: its native API's, or for
// a custom provider its template's.
func outgoingOf(cfg *Config, r *renderer, msgs []Message) (outgoing, error) {
	out := outgoing{method: http.MethodPost, contentType: "application/json"}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL(cfg.Type)
	}
	var err error
	switch cfg.Type {
	case TypeCustom:
		return customOutgoing(&cfg.Template, r)
	case TypeOpenAI:
		out.url = base + "/chat/completions"
		out.body, err = json.Marshal(map[string]any{"model": cfg.Model, "messages": nonNil(msgs)})
	case TypeAzureOpenAI:
		v := DefaultAzureAPIVersion
		if s, ok := cfg.Inputs["api_version"].(string); ok && s != "" {
			v = s
		}
		out.url = base + "/openai/deployments/" + url.PathEscape(cfg.Model) + "/chat/completions?api-version=" + url.QueryEscape(v)
		out.body, err = json.Marshal(map[string]any{"messages": nonNil(msgs)})
	case TypeOllama:
		out.url = base + "/api/chat"
		out.body, err = json.Marshal(map[string]any{"model": cfg.Model, "messages": nonNil(msgs), "stream": false})
	case TypeAnthropic:
		out.url = base + "/v1/messages"
		out.body, err = json.Marshal(anthropicBody(cfg, msgs))
	case TypeGemini:
		out.url = base + "/models/" + url.PathEscape(cfg.Model) + ":generateContent"
		out.body, err = json.Marshal(geminiBody(msgs))
	default:
		return out, fmt.Errorf("type %q cannot be sent", cfg.Type)
	}
	return out, err
}

// customOutgoing renders a custom provider's template: its URL, method,
// and a JSON body (which must render to valid JSON), a plain-text body, or
// none.
func customOutgoing(t *Template, r *renderer) (outgoing, error) {
	out := outgoing{method: http.MethodPost, contentType: "application/json"}
	var err error
	if out.url, err = r.render(t.URL, "template.url", modeURL); err != nil {
		return out, err
	}
	if t.Method != "" {
		out.method = strings.ToUpper(t.Method)
	}
	switch {
	case t.JSON != "":
		s, err := r.render(t.JSON, "template.json", modeJSON)
		if err != nil {
			return out, err
		}
		if !json.Valid([]byte(s)) {
			return out, &templateError{"template.json does not render to valid JSON"}
		}
		out.body = []byte(s)
	case t.Body != "":
		s, err := r.render(t.Body, "template.body", modeRaw)
		if err != nil {
			return out, err
		}
		out.body = []byte(s)
		out.contentType = "text/plain; charset=utf-8"
	default:
		out.contentType = ""
	}
	return out, nil
}

// setHeaders sets the provider's key header (native types), the
// Anthropic version, and the template's headers, none of which may render
// to a value with a line break.
func setHeaders(req *http.Request, cfg *Config, r *renderer) error {
	req.Header.Set("Accept", "application/json")
	if name, prefix := SecretHeader(cfg.Type); name != "" && cfg.Type != TypeCustom {
		if key := cfg.Secrets[SecretAPIKey]; key != "" {
			req.Header.Set(name, prefix+key)
		}
	}
	if cfg.Type == TypeAnthropic {
		req.Header.Set("anthropic-version", AnthropicVersion)
	}
	for k, v := range cfg.Template.Headers {
		s, err := r.render(v, "template.headers."+k, modeRaw)
		if err != nil {
			return err
		}
		if strings.ContainsAny(s, "\r\n") {
			return &templateError{"template.headers." + k + " renders to a value with a line break"}
		}
		req.Header.Set(k, s)
	}
	return nil
}

func nonNil(m []Message) []Message {
	if m == nil {
		return []Message{}
	}
	return m
}

func anthropicBody(cfg *Config, msgs []Message) map[string]any {
	maxTokens := defaultAnthropicMaxTokens
	switch v := cfg.Inputs["max_tokens"].(type) {
	case float64:
		maxTokens = int(v)
	case int:
		maxTokens = v
	case json.Number:
		if n, err := v.Int64(); err == nil {
			maxTokens = int(n)
		}
	}
	var system []string
	turns := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Role == "system" {
			system = append(system, m.Content)
			continue
		}
		turns = append(turns, m)
	}
	out := map[string]any{"model": cfg.Model, "max_tokens": maxTokens, "messages": turns}
	if len(system) > 0 {
		out["system"] = strings.Join(system, "\n\n")
	}
	return out
}

type geminiPart struct {
	Text string `json:"text"`
}

type geminiContent struct {
	Role  string       `json:"role,omitempty"`
	Parts []geminiPart `json:"parts"`
}

func geminiBody(msgs []Message) map[string]any {
	var system []geminiPart
	contents := make([]geminiContent, 0, len(msgs))
	for _, m := range msgs {
		switch m.Role {
		case "system":
			system = append(system, geminiPart{m.Content})
		case "assistant":
			contents = append(contents, geminiContent{Role: "model", Parts: []geminiPart{{m.Content}}})
		default:
			contents = append(contents, geminiContent{Role: "user", Parts: []geminiPart{{m.Content}}})
		}
	}
	out := map[string]any{"contents": contents}
	if len(system) > 0 {
		out["systemInstruction"] = geminiContent{Parts: system}
	}
	return out
}

// templateError is a template that cannot be rendered; its message names
// the field and the placeholder, never a value.
type templateError struct{ msg string }

func (e *templateError) Error() string { return e.msg }

type renderMode int

const (
	modeRaw renderMode = iota
	modeURL
	modeJSON
)

var placeholderRE = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_.\-]+)\s*\}\}`)

type renderer struct {
	cfg  *Config
	msgs []Message
}

// value resolves a placeholder to its text, and for JSON mode to its JSON
// value outside a string.
func (r *renderer) value(name, field string) (text string, jsonValue []byte, err error) {
	switch {
	case name == "input":
		for i := len(r.msgs) - 1; i >= 0; i-- {
			if r.msgs[i].Role == "user" {
				text = r.msgs[i].Content
				break
			}
		}
	case name == "messages":
		b, err := marshal(nonNil(r.msgs))
		if err != nil {
			return "", nil, err
		}
		return string(b), b, nil
	case strings.HasPrefix(name, "secrets."):
		k := strings.TrimPrefix(name, "secrets.")
		v, ok := r.cfg.Secrets[k]
		if !ok {
			return "", nil, &templateError{fmt.Sprintf("%s uses {{%s}} but secret %q is not configured", field, name, k)}
		}
		text = v
	case strings.HasPrefix(name, "inputs."):
		k := strings.TrimPrefix(name, "inputs.")
		v, ok := r.cfg.Inputs[k]
		if !ok {
			return "", nil, &templateError{fmt.Sprintf("%s uses {{%s}} but input %q is not configured", field, name, k)}
		}
		if s, ok := v.(string); ok {
			text = s
			break
		}
		b, err := marshal(v)
		if err != nil {
			return "", nil, &templateError{fmt.Sprintf("input %q cannot be rendered as JSON", k)}
		}
		return string(b), b, nil
	default:
		return "", nil, &templateError{fmt.Sprintf("%s uses the unknown placeholder {{%s}}; known: {{input}}, {{messages}}, {{secrets.NAME}}, {{inputs.NAME}}", field, name)}
	}
	b, err := marshal(text)
	return text, b, err
}

// marshal is json.Marshal without HTML escaping, so a rendered body says
// what the operator wrote (a "<" stays "<").
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// render substitutes the placeholders of tmpl. In JSON mode a placeholder
// inside a JSON string is escaped for the string, and one outside a string
// becomes the JSON value (a quoted string, or the messages array).
func (r *renderer) render(tmpl, field string, mode renderMode) (string, error) {
	locs := placeholderRE.FindAllStringSubmatchIndex(tmpl, -1)
	if len(locs) == 0 {
		if strings.Contains(tmpl, "{{") {
			return "", &templateError{field + " has a malformed {{placeholder}}"}
		}
		return tmpl, nil
	}
	var out strings.Builder
	prev := 0
	inString := false
	for _, loc := range locs {
		lit := tmpl[prev:loc[0]]
		if strings.Contains(lit, "{{") {
			return "", &templateError{field + " has a malformed {{placeholder}}"}
		}
		if mode == modeJSON {
			inString = scanString(lit, inString)
		}
		out.WriteString(lit)
		text, jv, err := r.value(tmpl[loc[2]:loc[3]], field)
		if err != nil {
			return "", err
		}
		switch mode {
		case modeRaw:
			out.WriteString(text)
		case modeURL:
			out.WriteString(strings.ReplaceAll(url.QueryEscape(text), "+", "%20"))
		case modeJSON:
			if inString {
				q, err := marshal(text)
				if err != nil {
					return "", err
				}
				out.Write(q[1 : len(q)-1])
			} else {
				out.Write(jv)
			}
		}
		prev = loc[1]
	}
	rest := tmpl[prev:]
	if strings.Contains(rest, "{{") {
		return "", &templateError{field + " has a malformed {{placeholder}}"}
	}
	out.WriteString(rest)
	return out.String(), nil
}

// scanString returns whether a JSON text is inside a string after s, given
// whether it was before.
func scanString(s string, in bool) bool {
	for i := 0; i < len(s); i++ {
		switch {
		case in && s[i] == '\\':
			i++
		case s[i] == '"':
			in = !in
		}
	}
	return in
}

// step is one step of an output path: a key, or an index when key is "".
type step struct {
	key   string
	index int
	isIdx bool
}

// parsePath reads the small path syntax of template outputs: keys joined
// by '.', [n] indexes, ["quoted key"] for keys with other characters, and
// an optional leading "$" or "$.": choices[0].message.content.
func parsePath(p string) ([]step, error) {
	s := strings.TrimPrefix(strings.TrimPrefix(p, "$"), ".")
	if s == "" {
		return nil, errors.New("empty path")
	}
	var out []step
	for s != "" {
		switch {
		case s[0] == '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return nil, fmt.Errorf("path %q: unclosed [", p)
			}
			inner := s[1:end]
			if strings.HasPrefix(inner, `"`) {
				// A quoted key may itself contain ']': parse as JSON.
				dec := json.NewDecoder(strings.NewReader(s[1:]))
				var k string
				if err := dec.Decode(&k); err != nil {
					return nil, fmt.Errorf("path %q: bad quoted key", p)
				}
				n := 1 + int(dec.InputOffset())
				if n >= len(s) || s[n] != ']' {
					return nil, fmt.Errorf("path %q: bad quoted key", p)
				}
				out = append(out, step{key: k})
				s = s[n+1:]
			} else {
				n, err := strconv.Atoi(inner)
				if err != nil || n < 0 {
					return nil, fmt.Errorf("path %q: index %q is not a non-negative integer", p, inner)
				}
				out = append(out, step{index: n, isIdx: true})
				s = s[end+1:]
			}
		case s[0] == '.':
			if len(s) == 1 || s[1] == '.' || s[1] == '[' {
				return nil, fmt.Errorf("path %q: empty key", p)
			}
			s = s[1:]
		default:
			end := strings.IndexAny(s, ".[")
			if end < 0 {
				end = len(s)
			}
			out = append(out, step{key: s[:end]})
			s = s[end:]
		}
	}
	return out, nil
}

// extract returns the value at path in a JSON document: a string as its
// text, anything else as its JSON.
func extract(doc []byte, path string) (string, error) {
	steps, err := parsePath(path)
	if err != nil {
		return "", err
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	for _, st := range steps {
		switch cur := v.(type) {
		case map[string]any:
			if st.isIdx {
				return "", fmt.Errorf("the answer has no value at %s (an object, not an array)", path)
			}
			var ok bool
			if v, ok = cur[st.key]; !ok {
				return "", fmt.Errorf("the answer has no value at %s", path)
			}
		case []any:
			if !st.isIdx || st.index >= len(cur) {
				return "", fmt.Errorf("the answer has no value at %s", path)
			}
			v = cur[st.index]
		default:
			return "", fmt.Errorf("the answer has no value at %s", path)
		}
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case nil:
		return "", fmt.Errorf("the answer has null at %s", path)
	}
	b, err := marshal(v)
	return string(b), err
}
