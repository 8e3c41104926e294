package format

import (
	"io"

	"github.com/promptwall/promptwall/scanner"
)

// anthropic is the Anthropic Messages format (/v1/messages).
//
// Screened in a request: system as a string or text blocks; messages[].
// content as a string or blocks: the "text" of any block, tool_use input
// (an object: its string leaves, assistant), tool_result content (a string
// or blocks, tool), document blocks with a text source (source.data) or a
// content source (source.content blocks), their title and context, and
// search_result content. Thinking blocks are not screened: they are the
// model's own earlier output, already screened as an answer, and are signed
// so they cannot be edited.
type anthropic struct{}

var (
	anthKeys      = newKeys("model", "messages", "stream", "system")
	anthMsgKeys   = newKeys("role", "content")
	anthBlockKeys = newKeys("type", "text", "input", "content", "source", "title", "context")
	anthSrcKeys   = newKeys("type", "data", "content")
)

func (anthropic) Name() string { return NameAnthropicMessages }

func (anthropic) ParseRequest(body []byte) (*Request, error) {
	h, err := beginRequest(body, anthKeys, false, false)
	if err != nil {
		return nil, err
	}
	c, f, k, model, stream := h.c, h.f, h.k, h.model, h.stream
	if err := c.anthContent(scanner.RoleSystem, f[3], k[3]); err != nil {
		return nil, err
	}
	if !f[1].ok() {
		return nil, c.missing("messages")
	}
	mark := c.pushKey(k[1])
	if c.b[f[1].s] != '[' {
		return nil, c.typeErr(f[1], "an array of messages")
	}
	for i, m := range c.elems(f[1]) {
		mk := c.pushIndex(i)
		var mf, mkk [2]span
		if err := c.object(m, anthMsgKeys, mf[:], mkk[:]); err != nil {
			return nil, err
		}
		r, err := c.role(mf[0], mkk[0], true)
		if err != nil {
			return nil, err
		}
		if err := c.anthContent(mapRole(r), mf[1], mkk[1]); err != nil {
			return nil, err
		}
		c.pop(mk)
	}
	c.pop(mark)
	return c.finish(model, stream), nil
}

// anthContent screens a content (or system) that is a string or an array
// of blocks.
func (c *collector) anthContent(role scanner.Role, v, k span) error {
	if isNull(c.b, v) {
		return nil
	}
	mark := c.pushKey(k)
	defer c.pop(mark)
	switch c.b[v.s] {
	case '"':
		c.text(role, v)
		return nil
	case '[':
		return c.anthBlocks(role, v)
	}
	return c.typeErr(v, "a string or an array of content blocks")
}

func (c *collector) anthBlocks(role scanner.Role, v span) error {
	for i, blk := range c.elems(v) {
		mk := c.pushIndex(i)
		if err := c.anthBlock(role, blk); err != nil {
			return err
		}
		c.pop(mk)
	}
	return nil
}

func (c *collector) anthBlock(role scanner.Role, blk span) error {
	var f, k [7]span
	if err := c.object(blk, anthBlockKeys, f[:], k[:]); err != nil {
		return err
	}
	typ := ""
	if !isNull(c.b, f[0]) && c.b[f[0].s] == '"' {
		typ = string(c.unquote(f[0]))
	}
	if typ == "thinking" || typ == "redacted_thinking" {
		return nil
	}
	if err := c.optText(role, f[1], k[1]); err != nil {
		return err
	}
	if v := f[2]; !isNull(c.b, v) {
		// tool_use and server_tool_use input: the model's arguments.
		mark := c.pushKey(k[2])
		err := c.leaves(scanner.RoleAssistant, v)
		c.pop(mark)
		if err != nil {
			return err
		}
	}
	if v := f[3]; !isNull(c.b, v) {
		// tool_result and search_result content.
		r := role
		if typ != "search_result" {
			r = scanner.RoleTool
		}
		if err := c.anthContent(r, v, k[3]); err != nil {
			return err
		}
	}
	if v := f[4]; !isNull(c.b, v) && c.b[v.s] == '{' {
		mark := c.pushKey(k[4])
		var sf, sk [3]span
		if err := c.fields(v, anthSrcKeys, sf[:], sk[:]); err != nil {
			return err
		}
		if !isNull(c.b, sf[0]) && c.b[sf[0].s] == '"' && string(c.unquote(sf[0])) == "text" {
			if err := c.optText(role, sf[1], sk[1]); err != nil {
				return err
			}
		}
		if err := c.anthContent(role, sf[2], sk[2]); err != nil {
			return err
		}
		c.pop(mark)
	}
	if typ == "document" || typ == "search_result" {
		if err := c.optText(role, f[5], k[5]); err != nil {
			return err
		}
		if err := c.optText(role, f[6], k[6]); err != nil {
			return err
		}
	}
	return nil
}

func (anthropic) RewriteRequest(body []byte, edits []Edit) ([]byte, error) {
	return rewrite(body, edits)
}

var (
	anthAnswerKeys   = newKeys("content")
	anthThinkingKeys = newKeys("thinking")
	// anthDeltaKeys are the delta members read by name; citations carry
	// quoted text and go through the generic rule.
	anthDeltaKeys = newKeys("text", "partial_json", "thinking")
)

// ParseResponse screens the answer's content blocks: text, tool_use input,
// and (unlike requests) thinking text, which the client displays.
func (anthropic) ParseResponse(body []byte) (*scanner.Conversation, error) {
	return parseAnswerArray(body, anthAnswerKeys, "content", "an array of content blocks", func(c *collector, blk span) error {
		if err := c.anthBlock(scanner.RoleAssistant, blk); err != nil {
			return err
		}
		var tf, tk [1]span
		if err := c.fields(blk, anthThinkingKeys, tf[:], tk[:]); err != nil {
			return err
		}
		return c.optText(scanner.RoleAssistant, tf[0], tk[0])
	})
}

func (anthropic) RewriteResponse(body []byte, edits []Edit) ([]byte, error) {
	return rewrite(body, edits)
}

func (anthropic) Blocked(status int, _ string, message string) []byte {
	return anthropicBlocked(status, message)
}

type anthMessage struct {
	ID           string      `json:"id"`
	Type         string      `json:"type"`
	Role         string      `json:"role"`
	Model        string      `json:"model"`
	Content      []anthBlock `json:"content"`
	StopReason   *string     `json:"stop_reason"`
	StopSequence *string     `json:"stop_sequence"`
	Usage        anthUsage   `json:"usage"`
}

type anthBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type anthUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

func (anthropic) message(req *Request, message string) anthMessage {
	return anthMessage{
		ID: "msg_" + newID(), Type: "message", Role: "assistant", Model: req.Model,
		Content: []anthBlock{{Type: "text", Text: message}}, StopReason: ptr("end_turn"),
	}
}

func (a anthropic) Completion(req *Request, message string) []byte {
	return marshal(a.message(req, message))
}

// StreamCompletion renders the event sequence of a one-block answer, from
// message_start to message_stop.
func (a anthropic) StreamCompletion(req *Request, message string) []byte {
	m := a.message(req, "")
	m.Content, m.StopReason = []anthBlock{}, nil
	type delta struct {
		Type       string  `json:"type,omitempty"`
		Text       *string `json:"text,omitempty"`
		StopReason *string `json:"stop_reason,omitempty"`
	}
	type event struct {
		Type         string       `json:"type"`
		Message      *anthMessage `json:"message,omitempty"`
		Index        *int         `json:"index,omitempty"`
		ContentBlock *anthBlock   `json:"content_block,omitempty"`
		Delta        *delta       `json:"delta,omitempty"`
		Usage        *anthUsage   `json:"usage,omitempty"`
	}
	zero := 0
	events := []event{
		{Type: "message_start", Message: &m},
		{Type: "content_block_start", Index: &zero, ContentBlock: &anthBlock{Type: "text"}},
		{Type: "content_block_delta", Index: &zero, Delta: &delta{Type: "text_delta", Text: &message}},
		{Type: "content_block_stop", Index: &zero},
		{Type: "message_delta", Delta: &delta{StopReason: ptr("end_turn")}, Usage: &anthUsage{}},
		{Type: "message_stop"},
	}
	var out []byte
	for _, e := range events {
		out = append(out, sseFrame(e.Type, marshal(e))...)
	}
	return out
}

func (anthropic) NewStream(r io.Reader) Stream {
	return &decoder{
		fr:        NewSSEReader(r, 0),
		interpret: interpretAnthropicEvent,
		block: func(_, message string) []byte {
			return sseFrame("error", anthropicBlocked(403, message))
		},
	}
}

// interpretAnthropicEvent reads one Messages stream event: text, tool
// input JSON and thinking deltas add text, message_stop ends the answer,
// error is a provider error.
func interpretAnthropicEvent(d *doc, top span, ev *Event, frags []fragment) []fragment {
	b := d.b
	if b[top.s] != '{' {
		return frags
	}
	switch strField(d, top, "type") {
	case "content_block_delta":
		delta, ok := field(d, top, "delta")
		if !ok {
			break
		}
		path := []byte("delta")
		frags = addString(d, delta, "text", path, frags)
		frags = addString(d, delta, "partial_json", path, frags)
		frags = addString(d, delta, "thinking", path, frags)
		// A delta type this decoder does not know (the generic rule);
		// signature_delta carries an opaque signature.
		frags = addUnknown(d, delta, anthDeltaKeys, path, frags)
	case "message_stop":
		ev.Terminal = true
	case "error":
		ev.Err = &Error{Status: 502, Code: "provider_error", Message: "the provider reported an error"}
		if e, ok := field(d, top, "error"); ok {
			if m := strField(d, e, "message"); m != "" {
				ev.Err.Message = m
			}
			if t := strField(d, e, "type"); t != "" {
				ev.Err.Code = t
			}
		}
	}
	return frags
}
