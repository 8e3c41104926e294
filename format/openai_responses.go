package format

import (
	"io"
	"strings"

	"github.com/promptwall/promptwall/scanner"
)

// openAIResponses is the OpenAI Responses format (/v1/responses).
//
// Screened in a request: instructions (system); input as a string (user) or
// as items: messages (role; content as a string or parts, whose "text" and
// "refusal" are screened whatever the part type), function_call arguments
// (JSON in a string, assistant), function_call_output output (tool, string
// or parts), custom_tool_call input, custom_tool_call_output output,
// mcp_call arguments and output, local_shell_call_output output; and the
// variables of a reusable prompt (prompt.variables, user). Reasoning items
// are not screened: they are the model's own earlier output, already
// screened as an answer, and their encrypted form cannot be edited.
type openAIResponses struct{}

var (
	respKeys     = newKeys("model", "input", "stream", "instructions", "prompt")
	respItemKeys = newKeys("type", "role", "content", "arguments", "output", "input", "summary")
	promptKeys   = newKeys("variables")
	textKeys     = newKeys("text")
)

func (openAIResponses) Name() string { return NameOpenAIResponses }

func (openAIResponses) ParseRequest(body []byte) (*Request, error) {
	h, err := beginRequest(body, respKeys, false, false)
	if err != nil {
		return nil, err
	}
	c, f, k, model, stream := h.c, h.f, h.k, h.model, h.stream
	if err := c.optText(scanner.RoleSystem, f[3], k[3]); err != nil {
		return nil, err
	}
	// input is optional in the Responses API (a stored prompt or a
	// previous response can stand in for it).
	if v := f[1]; !isNull(c.b, v) {
		mark := c.pushKey(k[1])
		switch c.b[v.s] {
		case '"':
			c.text(scanner.RoleUser, v)
		case '[':
			for i, it := range c.elems(v) {
				mk := c.pushIndex(i)
				if err := c.responseItem(it, ""); err != nil {
					return nil, err
				}
				c.pop(mk)
			}
		default:
			return nil, c.typeErr(v, "a string or an array of input items")
		}
		c.pop(mark)
	}
	if v := f[4]; !isNull(c.b, v) {
		mark := c.pushKey(k[4])
		if err := c.storedPrompt(v); err != nil {
			return nil, err
		}
		c.pop(mark)
	}
	return c.finish(model, stream), nil
}

// storedPrompt collects the variables of a request's stored prompt
// ("prompt": {"id", "variables": {...}}): each is user text, given as a
// string or as an input_text (or image, file) object.
func (c *collector) storedPrompt(v span) error {
	var pf, pk [1]span
	if err := c.object(v, promptKeys, pf[:], pk[:]); err != nil {
		return err
	}
	vars := pf[0]
	if isNull(c.b, vars) {
		return nil
	}
	mv := c.pushKey(pk[0])
	if c.b[vars.s] != '{' {
		return c.typeErr(vars, "an object")
	}
	for vk, vv := range c.members(vars) {
		mm := c.pushKey(vk)
		switch c.b[vv.s] {
		case '"':
			c.text(scanner.RoleUser, vv)
		case '{':
			var tf, tk [1]span
			if err := c.fields(vv, textKeys, tf[:], tk[:]); err != nil {
				return err
			}
			if err := c.optText(scanner.RoleUser, tf[0], tk[0]); err != nil {
				return err
			}
		}
		c.pop(mm)
	}
	c.pop(mv)
	return nil
}

// responseItem screens one input or output item. forced, when not empty,
// is the role of every text (answers are assistant text).
func (c *collector) responseItem(it span, forced scanner.Role) error {
	var f, k [7]span
	if err := c.object(it, respItemKeys, f[:], k[:]); err != nil {
		return err
	}
	typ := ""
	if v := f[0]; !isNull(c.b, v) && c.b[v.s] == '"' {
		typ = string(c.unquote(v))
	}
	pick := func(r scanner.Role) scanner.Role {
		if forced != "" {
			return forced
		}
		return r
	}
	switch typ {
	case "", "message":
		r, err := c.role(f[1], k[1], forced == "")
		if err != nil {
			return err
		}
		return c.chatContent(pick(mapRole(r)), f[2], k[2])
	case "function_call", "mcp_call":
		if err := c.jsonString(scanner.RoleAssistant, f[3], k[3]); err != nil {
			return err
		}
		if typ == "mcp_call" {
			return c.optText(pick(scanner.RoleTool), f[4], k[4])
		}
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		return c.chatContent(pick(scanner.RoleTool), f[4], k[4])
	case "custom_tool_call":
		return c.optText(scanner.RoleAssistant, f[5], k[5])
	case "reasoning":
		// Screened in answers only (see the type comment): the summary
		// is what the user reads.
		if forced != "" && !isNull(c.b, f[6]) && c.b[f[6].s] == '[' {
			mark := c.pushKey(k[6])
			err := c.parts(forced, f[6])
			c.pop(mark)
			if err != nil {
				return err
			}
		}
		// The reasoning text itself (reasoning_text parts), where the
		// provider returns it.
		if forced != "" && !isNull(c.b, f[2]) && c.b[f[2].s] == '[' {
			mark := c.pushKey(k[2])
			defer c.pop(mark)
			return c.parts(forced, f[2])
		}
	}
	return nil
}

func (openAIResponses) RewriteRequest(body []byte, edits []Edit) ([]byte, error) {
	return rewrite(body, edits)
}

var respAnswerKeys = newKeys("output")

func (openAIResponses) ParseResponse(body []byte) (*scanner.Conversation, error) {
	return parseAnswerArray(body, respAnswerKeys, "output", "an array", func(c *collector, it span) error {
		return c.responseItem(it, scanner.RoleAssistant)
	})
}

func (openAIResponses) RewriteResponse(body []byte, edits []Edit) ([]byte, error) {
	return rewrite(body, edits)
}

func (openAIResponses) Blocked(status int, code, message string) []byte {
	return openAIBlocked(status, code, message)
}

type responseObject struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	CreatedAt         int64             `json:"created_at"`
	Status            string            `json:"status"`
	Error             *struct{}         `json:"error"`
	IncompleteDetails *struct{}         `json:"incomplete_details"`
	Model             string            `json:"model"`
	Output            []responseMessage `json:"output"`
	ParallelToolCalls bool              `json:"parallel_tool_calls"`
	Usage             *responseUsage    `json:"usage"`
}

type responseMessage struct {
	Type    string         `json:"type"`
	ID      string         `json:"id"`
	Status  string         `json:"status"`
	Role    string         `json:"role"`
	Content []responsePart `json:"content"`
}

type responsePart struct {
	Type        string   `json:"type"`
	Text        string   `json:"text"`
	Annotations []string `json:"annotations"`
}

type responseUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

func (openAIResponses) response(req *Request, message, status string) responseObject {
	r := responseObject{
		ID: "resp_" + newID(), Object: "response", CreatedAt: now().Unix(), Status: status,
		Model: req.Model, Output: []responseMessage{}, ParallelToolCalls: true,
	}
	if status == "completed" {
		r.Output = []responseMessage{{
			Type: "message", ID: "msg_" + newID(), Status: "completed", Role: "assistant",
			Content: []responsePart{{Type: "output_text", Text: message, Annotations: []string{}}},
		}}
		r.Usage = &responseUsage{}
	}
	return r
}

func (f openAIResponses) Completion(req *Request, message string) []byte {
	return marshal(f.response(req, message, "completed"))
}

type responseEvent struct {
	Type           string           `json:"type"`
	SequenceNumber int              `json:"sequence_number"`
	Response       *responseObject  `json:"response,omitempty"`
	OutputIndex    *int             `json:"output_index,omitempty"`
	Item           *responseMessage `json:"item,omitempty"`
	ItemID         string           `json:"item_id,omitempty"`
	ContentIndex   *int             `json:"content_index,omitempty"`
	Part           *responsePart    `json:"part,omitempty"`
	Delta          *string          `json:"delta,omitempty"`
	Text           *string          `json:"text,omitempty"`
}

// StreamCompletion renders the event sequence the SDKs assemble a
// response from, ending with response.completed.
func (f openAIResponses) StreamCompletion(req *Request, message string) []byte {
	done := f.response(req, message, "completed")
	pending := done
	pending.Status, pending.Output, pending.Usage = "in_progress", []responseMessage{}, nil
	item := done.Output[0]
	zero := 0
	emptyItem := item
	emptyItem.Status, emptyItem.Content = "in_progress", []responsePart{}
	part := responsePart{Type: "output_text", Annotations: []string{}}
	events := []responseEvent{
		{Type: "response.created", Response: &pending},
		{Type: "response.in_progress", Response: &pending},
		{Type: "response.output_item.added", OutputIndex: &zero, Item: &emptyItem},
		{Type: "response.content_part.added", ItemID: item.ID, OutputIndex: &zero, ContentIndex: &zero, Part: &part},
		{Type: "response.output_text.delta", ItemID: item.ID, OutputIndex: &zero, ContentIndex: &zero, Delta: &message},
		{Type: "response.output_text.done", ItemID: item.ID, OutputIndex: &zero, ContentIndex: &zero, Text: &message},
		{Type: "response.content_part.done", ItemID: item.ID, OutputIndex: &zero, ContentIndex: &zero, Part: &item.Content[0]},
		{Type: "response.output_item.done", OutputIndex: &zero, Item: &item},
		{Type: "response.completed", Response: &done},
	}
	var out []byte
	for i, e := range events {
		e.SequenceNumber = i
		out = append(out, sseFrame(e.Type, marshal(e))...)
	}
	return out
}

func (openAIResponses) NewStream(r io.Reader) Stream {
	d := &decoder{
		fr:        NewSSEReader(r, 0),
		interpret: interpretResponseEvent,
		echo:      newEchoState(),
		sequenced: true,
	}
	d.block = func(code, message string) []byte { return responsesStreamBlock(d.seq+1, code, message) }
	return d
}

// responsesStreamBlock renders the Responses error event as the API
// defines it, sequence_number included: the SDKs raise APIError for an
// event of type "error", and strict ones (the Vercel ai SDK) reject an
// event without its sequence number before they look at its type.
func responsesStreamBlock(seq int, code, message string) []byte {
	type errEvent struct {
		Type           string  `json:"type"`
		Code           string  `json:"code"`
		Message        string  `json:"message"`
		Param          *string `json:"param"`
		SequenceNumber int     `json:"sequence_number"`
	}
	return sseFrame("error", marshal(errEvent{Type: "error", Code: code, Message: message, SequenceNumber: seq}))
}

// interpretResponseEvent reads one Responses stream event: the *.delta
// events add text, response.completed and response.incomplete end the
// answer, error and response.failed are provider errors.
func interpretResponseEvent(d *doc, top span, ev *Event, frags []fragment) []fragment {
	b := d.b
	if b[top.s] != '{' {
		return frags
	}
	switch typ := strField(d, top, "type"); typ {
	case "response.audio.delta":
		// Base64 audio; its words come as response.audio.transcript.delta.
	case "response.completed", "response.incomplete":
		ev.Terminal = true
	case "error":
		ev.Err = providerError(d, top)
	case "response.failed":
		ev.Err = &Error{Status: 502, Code: "provider_error", Message: "the provider reported an error"}
		if r, ok := field(d, top, "response"); ok {
			if e, ok := field(d, r, "error"); ok && !isNull(b, e) {
				ev.Err = providerError(d, e)
			}
		}
	default:
		// Every *.delta event with a string delta is answer text: output
		// and refusal text, reasoning text and summaries, tool-call
		// arguments, transcripts, and the delta events of later API
		// versions (the generic rule).
		if strings.HasPrefix(typ, "response.") && strings.HasSuffix(typ, ".delta") {
			frags = addString(d, top, "delta", nil, frags)
			ev.echoKey = typ[:len(typ)-len(".delta")] + "/" + strField(d, top, "item_id") + "/" + rawField(d, top, "content_index") + "/" + rawField(d, top, "summary_index")
		}
	}
	return frags
}

// rawField returns the raw JSON of a scalar field, "" if absent.
func rawField(d *doc, obj span, key string) string {
	b := d.b
	v, ok := field(d, obj, key)
	if !ok {
		return ""
	}
	return string(b[v.s:v.e])
}
