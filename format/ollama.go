package format

import (
	"io"
	"time"

	"github.com/promptwall/promptwall/scanner"
)

// The Ollama formats. Ollama is written in Go and decodes bodies with
// encoding/json, which matches field names case-insensitively: "Messages"
// is read as "messages". The walkers here fold keys the same way, or a
// client could hide a prompt from the screen behind a capital letter.
// Ollama streams unless the request says "stream": false.

// ollamaChat is /api/chat: messages[].content (by role), earlier thinking
// of assistant messages, and tool_calls[].function.arguments (an object:
// its string leaves, assistant).
type ollamaChat struct{}

// ollamaGenerate is /api/generate: prompt and suffix (user), system and
// template (system: a template can carry instructions as well).
type ollamaGenerate struct{}

var (
	olChatKeys = newKeys("model", "messages", "stream")
	olMsgKeys  = newKeys("role", "content", "thinking", "tool_calls")
	olGenKeys  = newKeys("model", "prompt", "stream", "suffix", "system", "template")
	olAnsChat  = newKeys("message")
	olAnsGen   = newKeys("response", "thinking")
)

func (ollamaChat) Name() string { return NameOllamaChat }

func (ollamaChat) ParseRequest(body []byte) (*Request, error) {
	h, err := beginRequest(body, olChatKeys, true, true)
	if err != nil {
		return nil, err
	}
	c, f, k, model, stream := h.c, h.f, h.k, h.model, h.stream
	if !f[1].ok() {
		return nil, c.missing("messages")
	}
	mark := c.pushKey(k[1])
	if c.b[f[1].s] != '[' {
		return nil, c.typeErr(f[1], "an array of messages")
	}
	for i, m := range c.elems(f[1]) {
		mk := c.pushIndex(i)
		if err := c.ollamaMessage(m, ""); err != nil {
			return nil, err
		}
		c.pop(mk)
	}
	c.pop(mark)
	return c.finish(model, stream), nil
}

func (c *collector) ollamaMessage(m span, forced scanner.Role) error {
	var f, k [4]span
	if err := c.object(m, olMsgKeys, f[:], k[:]); err != nil {
		return err
	}
	role := forced
	if role == "" {
		r, err := c.role(f[0], k[0], true)
		if err != nil {
			return err
		}
		role = mapRole(r)
	}
	if err := c.optText(role, f[1], k[1]); err != nil {
		return err
	}
	if err := c.optText(scanner.RoleAssistant, f[2], k[2]); err != nil {
		return err
	}
	if v := f[3]; !isNull(c.b, v) {
		mark := c.pushKey(k[3])
		if c.b[v.s] != '[' {
			return c.typeErr(v, "an array of tool calls")
		}
		for i, tc := range c.elems(v) {
			mk := c.pushIndex(i)
			var tf, tk [1]span
			if err := c.object(tc, olFuncKeys, tf[:], tk[:]); err != nil {
				return err
			}
			if !isNull(c.b, tf[0]) {
				mf := c.pushKey(tk[0])
				var af, ak [1]span
				if err := c.object(tf[0], olArgsKeys, af[:], ak[:]); err != nil {
					return err
				}
				if !isNull(c.b, af[0]) {
					ma := c.pushKey(ak[0])
					if err := c.leaves(scanner.RoleAssistant, af[0]); err != nil {
						return err
					}
					c.pop(ma)
				}
				c.pop(mf)
			}
			c.pop(mk)
		}
		c.pop(mark)
	}
	c.unknownTexts(scanner.RoleAssistant, m, olMsgKeys)
	return nil
}

var (
	olFuncKeys = newKeys("function")
	olArgsKeys = newKeys("arguments")
)

func (ollamaChat) RewriteRequest(body []byte, edits []Edit) ([]byte, error) {
	return rewrite(body, edits)
}

func (ollamaChat) ParseResponse(body []byte) (*scanner.Conversation, error) {
	c, top, err := begin(body, 502)
	if err != nil {
		return nil, err
	}
	c.fold = true
	var f, k [1]span
	if err := c.fields(top, olAnsChat, f[:], k[:]); err != nil {
		return nil, err
	}
	if !f[0].ok() {
		return nil, c.missing("message")
	}
	mark := c.pushKey(k[0])
	if err := c.ollamaMessage(f[0], scanner.RoleAssistant); err != nil {
		return nil, err
	}
	c.pop(mark)
	conv := c.conversation()
	return &conv, nil
}

func (ollamaChat) RewriteResponse(body []byte, edits []Edit) ([]byte, error) {
	return rewrite(body, edits)
}

func (ollamaChat) Blocked(_ int, _ string, message string) []byte { return ollamaBlocked(message) }

type ollamaAnswer struct {
	Model              string         `json:"model"`
	CreatedAt          string         `json:"created_at"`
	Message            *ollamaMessage `json:"message,omitempty"`
	Response           *string        `json:"response,omitempty"`
	Done               bool           `json:"done"`
	DoneReason         string         `json:"done_reason,omitempty"`
	TotalDuration      *int           `json:"total_duration,omitempty"`
	LoadDuration       *int           `json:"load_duration,omitempty"`
	PromptEvalCount    *int           `json:"prompt_eval_count,omitempty"`
	PromptEvalDuration *int           `json:"prompt_eval_duration,omitempty"`
	EvalCount          *int           `json:"eval_count,omitempty"`
	EvalDuration       *int           `json:"eval_duration,omitempty"`
}

type ollamaMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ollamaAnswers renders a final answer, or for a stream the content line
// and the closing "done" line.
func ollamaAnswers(req *Request, message string, chat, stream bool) []byte {
	at := now().UTC().Format(time.RFC3339Nano)
	zero := 0
	final := ollamaAnswer{
		Model: req.Model, CreatedAt: at, Done: true, DoneReason: "stop",
		TotalDuration: &zero, LoadDuration: &zero, PromptEvalCount: &zero,
		PromptEvalDuration: &zero, EvalCount: &zero, EvalDuration: &zero,
	}
	text := func(a *ollamaAnswer, s string) {
		if chat {
			a.Message = &ollamaMessage{Role: "assistant", Content: s}
		} else {
			a.Response = &s
		}
	}
	if !stream {
		text(&final, message)
		return marshal(final)
	}
	part := ollamaAnswer{Model: req.Model, CreatedAt: at}
	text(&part, message)
	text(&final, "")
	out := append(marshal(part), '\n')
	return append(append(out, marshal(final)...), '\n')
}

func (ollamaChat) Completion(req *Request, message string) []byte {
	return ollamaAnswers(req, message, true, false)
}

func (ollamaChat) StreamCompletion(req *Request, message string) []byte {
	return ollamaAnswers(req, message, true, true)
}

func (ollamaChat) NewStream(r io.Reader) Stream { return newOllamaStream(r) }

func (ollamaGenerate) Name() string { return NameOllamaGenerate }

func (ollamaGenerate) ParseRequest(body []byte) (*Request, error) {
	h, err := beginRequest(body, olGenKeys, true, true)
	if err != nil {
		return nil, err
	}
	c, f, k, model, stream := h.c, h.f, h.k, h.model, h.stream
	// prompt may be absent: Ollama then only loads the model.
	for _, x := range []struct {
		i    int
		role scanner.Role
	}{{4, scanner.RoleSystem}, {5, scanner.RoleSystem}, {1, scanner.RoleUser}, {3, scanner.RoleUser}} {
		if err := c.optText(x.role, f[x.i], k[x.i]); err != nil {
			return nil, err
		}
	}
	return c.finish(model, stream), nil
}

func (ollamaGenerate) RewriteRequest(body []byte, edits []Edit) ([]byte, error) {
	return rewrite(body, edits)
}

func (ollamaGenerate) ParseResponse(body []byte) (*scanner.Conversation, error) {
	c, top, err := begin(body, 502)
	if err != nil {
		return nil, err
	}
	c.fold = true
	var f, k [2]span
	if err := c.fields(top, olAnsGen, f[:], k[:]); err != nil {
		return nil, err
	}
	if !f[0].ok() {
		return nil, c.missing("response")
	}
	for i := range f {
		if err := c.optText(scanner.RoleAssistant, f[i], k[i]); err != nil {
			return nil, err
		}
	}
	conv := c.conversation()
	return &conv, nil
}

func (ollamaGenerate) RewriteResponse(body []byte, edits []Edit) ([]byte, error) {
	return rewrite(body, edits)
}

func (ollamaGenerate) Blocked(_ int, _ string, message string) []byte {
	return ollamaBlocked(message)
}

func (ollamaGenerate) Completion(req *Request, message string) []byte {
	return ollamaAnswers(req, message, false, false)
}

func (ollamaGenerate) StreamCompletion(req *Request, message string) []byte {
	return ollamaAnswers(req, message, false, true)
}

func (ollamaGenerate) NewStream(r io.Reader) Stream { return newOllamaStream(r) }

// newOllamaStream decodes Ollama's NDJSON answers (chat and generate): the
// message content, thinking and tool-call arguments, or response and
// thinking, add text; "done": true ends the answer; {"error": ...} is a
// provider error.
func newOllamaStream(r io.Reader) Stream {
	return &decoder{
		fr:        NewNDJSONReader(r, 0),
		interpret: interpretOllamaLine,
		block: func(_, message string) []byte {
			return append(ollamaBlocked(message), '\n')
		},
	}
}

func interpretOllamaLine(d *doc, top span, ev *Event, frags []fragment) []fragment {
	b := d.b
	if b[top.s] != '{' {
		return frags
	}
	// The decoder reads the upstream's own output, whose keys are
	// lowercase; no folding is needed here.
	if e, ok := field(d, top, "error"); ok && !isNull(b, e) {
		ev.Err = providerError(d, e)
		return frags
	}
	frags = addString(d, top, "response", nil, frags)
	frags = addString(d, top, "thinking", nil, frags)
	if m, ok := field(d, top, "message"); ok {
		path := []byte("message")
		frags = addString(d, m, "content", path, frags)
		frags = addString(d, m, "thinking", path, frags)
		if tcs, ok := field(d, m, "tool_calls"); ok && b[tcs.s] == '[' {
			for i, tc := range d.elems(tcs) {
				if fn, ok := field(d, tc, "function"); ok {
					if args, ok := field(d, fn, "arguments"); ok {
						p := appendKey(appendKey(appendIndex([]byte("message.tool_calls"), i), []byte("function")), []byte("arguments"))
						frags = addLeaves(d, args, p, frags)
					}
				}
			}
		}
		frags = addUnknown(d, m, olMsgKeys, path, frags)
	}
	if d, ok := field(d, top, "done"); ok && b[d.s] == 't' {
		ev.Terminal = true
	}
	return frags
}
