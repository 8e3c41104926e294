package format

import (
	"io"

	"github.com/promptwall/promptwall/scanner"
)

// openAIChat is the OpenAI Chat Completions format (/v1/chat/completions),
// also spoken by Azure OpenAI, Ollama, vLLM, LiteLLM and most gateways.
//
// Screened in a request: messages[].content as a string or as content parts
// (the "text" of text parts and the "refusal" of refusal parts; image,
// audio and file parts are left alone), assistant tool_calls[].function.
// arguments and custom tool inputs, the legacy function_call.arguments, and
// assistant refusal. Roles: system and developer are system, tool and
// function are tool, unknown roles are screened as user.
type openAIChat struct{}

var (
	chatKeys     = newKeys("model", "messages", "stream", "prediction")
	chatMsgKeys  = newKeys("role", "content", "tool_calls", "function_call", "refusal", "audio")
	partKeys     = newKeys("text", "refusal")
	toolCallKeys = newKeys("function", "custom")
	functionKeys = newKeys("arguments")
	customKeys   = newKeys("input")
	transcript   = newKeys("transcript")
	// predictionKeys reads the "content" of a predicted output.
	predictionKeys = newKeys("content")
)

func (openAIChat) Name() string { return NameOpenAIChat }

func (openAIChat) ParseRequest(body []byte) (*Request, error) {
	h, err := beginRequest(body, chatKeys, false, false)
	if err != nil {
		return nil, err
	}
	c, f, k, model, stream := h.c, h.f, h.k, h.model, h.stream
	if !f[1].ok() {
		return nil, c.missing("messages")
	}
	if err := c.chatMessages(f[1], k[1]); err != nil {
		return nil, err
	}
	// A predicted output (prediction.content) is text the client sends
	// to the model like a prompt.
	if v := f[3]; !isNull(c.b, v) {
		mark := c.pushKey(k[3])
		var pf, pk [1]span
		if err := c.object(v, predictionKeys, pf[:], pk[:]); err != nil {
			return nil, err
		}
		if err := c.chatContent(scanner.RoleUser, pf[0], pk[0]); err != nil {
			return nil, err
		}
		c.pop(mark)
	}
	return c.finish(model, stream), nil
}

// chatMessages walks the request's array of chat messages.
func (c *collector) chatMessages(v, k span) error {
	mark := c.pushKey(k)
	defer c.pop(mark)
	if c.b[v.s] != '[' {
		return c.typeErr(v, "an array of messages")
	}
	for i, m := range c.elems(v) {
		mk := c.pushIndex(i)
		if err := c.chatMessage(m, "", true); err != nil {
			return err
		}
		c.pop(mk)
	}
	return nil
}

// chatMessage walks one message object. forced, when not empty, overrides
// the role (answers are always assistant text).
func (c *collector) chatMessage(m span, forced scanner.Role, needRole bool) error {
	var f, k [6]span
	if err := c.object(m, chatMsgKeys, f[:], k[:]); err != nil {
		return err
	}
	role := forced
	if role == "" {
		r, err := c.role(f[0], k[0], needRole)
		if err != nil {
			return err
		}
		role = mapRole(r)
	}
	if err := c.chatContent(role, f[1], k[1]); err != nil {
		return err
	}
	if err := c.toolCalls(f[2], k[2]); err != nil {
		return err
	}
	if err := c.functionCall(f[3], k[3]); err != nil {
		return err
	}
	if err := c.optText(scanner.RoleAssistant, f[4], k[4]); err != nil {
		return err
	}
	// An audio answer carries its words in audio.transcript.
	if v := f[5]; !isNull(c.b, v) && c.b[v.s] == '{' {
		mark := c.pushKey(k[5])
		var af, ak [1]span
		if err := c.fields(v, transcript, af[:], ak[:]); err != nil {
			return err
		}
		if err := c.optText(scanner.RoleAssistant, af[0], ak[0]); err != nil {
			return err
		}
		c.pop(mark)
	}
	// reasoning_content (DeepSeek, vLLM), reasoning (OpenRouter) and any
	// other field a server adds to an answer.
	c.unknownTexts(scanner.RoleAssistant, m, chatMsgKeys)
	return nil
}

// toolCalls screens a message's tool_calls (absent or null: none): each
// function call (functionCall), and a custom tool's input as assistant
// text.
func (c *collector) toolCalls(v, k span) error {
	if isNull(c.b, v) {
		return nil
	}
	mark := c.pushKey(k)
	if c.b[v.s] != '[' {
		return c.typeErr(v, "an array of tool calls")
	}
	for i, tc := range c.elems(v) {
		mk := c.pushIndex(i)
		var tf, tk [2]span
		if err := c.object(tc, toolCallKeys, tf[:], tk[:]); err != nil {
			return err
		}
		if err := c.functionCall(tf[0], tk[0]); err != nil {
			return err
		}
		if v := tf[1]; !isNull(c.b, v) {
			mc := c.pushKey(tk[1])
			var cf, ck [1]span
			if err := c.object(v, customKeys, cf[:], ck[:]); err != nil {
				return err
			}
			if err := c.optText(scanner.RoleAssistant, cf[0], ck[0]); err != nil {
				return err
			}
			c.pop(mc)
		}
		c.pop(mk)
	}
	c.pop(mark)
	return nil
}

// functionCall screens {"name", "arguments"} (tool_calls[].function and
// the legacy function_call): the arguments are JSON in a string.
func (c *collector) functionCall(v, k span) error {
	if isNull(c.b, v) {
		return nil
	}
	mark := c.pushKey(k)
	defer c.pop(mark)
	var f, fk [1]span
	if err := c.object(v, functionKeys, f[:], fk[:]); err != nil {
		return err
	}
	return c.jsonString(scanner.RoleAssistant, f[0], fk[0])
}

// chatContent screens a content that is a string, an array of parts, or
// null.
func (c *collector) chatContent(role scanner.Role, v, k span) error {
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
		return c.parts(role, v)
	}
	return c.typeErr(v, "a string, an array of content parts or null")
}

// parts screens an array of content parts: the "text" and "refusal" of
// any part, whatever its declared type, so that an unusual type cannot
// carry text past the screen.
func (c *collector) parts(role scanner.Role, v span) error {
	for i, p := range c.elems(v) {
		mk := c.pushIndex(i)
		var f, k [2]span
		if err := c.object(p, partKeys, f[:], k[:]); err != nil {
			return err
		}
		if err := c.optText(role, f[0], k[0]); err != nil {
			return err
		}
		if err := c.optText(role, f[1], k[1]); err != nil {
			return err
		}
		c.pop(mk)
	}
	return nil
}

func (openAIChat) RewriteRequest(body []byte, edits []Edit) ([]byte, error) {
	return rewrite(body, edits)
}

var (
	chatAnswerKeys = newKeys("choices")
	choiceKeys     = newKeys("message")
)

func (openAIChat) ParseResponse(body []byte) (*scanner.Conversation, error) {
	return parseAnswerArray(body, chatAnswerKeys, "choices", "an array", func(c *collector, ch span) error {
		var cf, ck [1]span
		if err := c.object(ch, choiceKeys, cf[:], ck[:]); err != nil {
			return err
		}
		if cf[0].ok() {
			mm := c.pushKey(ck[0])
			if err := c.chatMessage(cf[0], scanner.RoleAssistant, false); err != nil {
				return err
			}
			c.pop(mm)
		}
		return nil
	})
}

func (openAIChat) RewriteResponse(body []byte, edits []Edit) ([]byte, error) {
	return rewrite(body, edits)
}

func (openAIChat) Blocked(status int, code, message string) []byte {
	return openAIBlocked(status, code, message)
}

type chatCompletion struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	Choices           []chatChoice `json:"choices"`
	Usage             *openAIUsage `json:"usage"`
	SystemFingerprint *string      `json:"system_fingerprint"`
}

type chatChoice struct {
	Index        int          `json:"index"`
	Message      *chatMessage `json:"message,omitempty"`
	Delta        *chatMessage `json:"delta,omitempty"`
	Logprobs     *struct{}    `json:"logprobs"`
	FinishReason *string      `json:"finish_reason"`
}

type chatMessage struct {
	Role        string   `json:"role,omitempty"`
	Content     *string  `json:"content,omitempty"`
	Refusal     *string  `json:"refusal"`
	Annotations []string `json:"annotations,omitempty"`
}

type openAIUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func ptr[T any](v T) *T { return &v }

func (openAIChat) Completion(req *Request, message string) []byte {
	return marshal(chatCompletion{
		ID:      "chatcmpl-" + newID(),
		Object:  "chat.completion",
		Created: now().Unix(),
		Model:   req.Model,
		Choices: []chatChoice{{
			Message:      &chatMessage{Role: "assistant", Content: &message, Annotations: []string{}},
			FinishReason: ptr("stop"),
		}},
		Usage: &openAIUsage{},
	})
}

// StreamCompletion renders the chunks the SDKs expect: the role, the
// content, the finish reason, then [DONE].
func (openAIChat) StreamCompletion(req *Request, message string) []byte {
	id, created := "chatcmpl-"+newID(), now().Unix()
	chunk := func(delta chatMessage, finish *string) []byte {
		return sseFrame("", marshal(chatCompletion{
			ID: id, Object: "chat.completion.chunk", Created: created, Model: req.Model,
			Choices: []chatChoice{{Delta: &delta, FinishReason: finish}},
		}))
	}
	var out []byte
	out = append(out, chunk(chatMessage{Role: "assistant", Content: ptr("")}, nil)...)
	out = append(out, chunk(chatMessage{Content: &message}, nil)...)
	out = append(out, chunk(chatMessage{}, ptr("stop"))...)
	return append(out, "data: [DONE]\n\n"...)
}

func (openAIChat) NewStream(r io.Reader) Stream {
	return &decoder{
		fr:        NewSSEReader(r, 0),
		interpret: interpretChatChunk,
		block:     openAIStreamBlock,
	}
}

// openAIStreamBlock is the streamed error of every OpenAI format: a data
// event holding {"error": ...} and no [DONE]; the SDKs raise APIError from
// it.
func openAIStreamBlock(code, message string) []byte {
	return sseFrame("", openAIBlocked(403, code, message))
}

// interpretChatChunk reads a chat.completion.chunk (or a legacy
// text_completion chunk): choices[].delta.content, .refusal, tool call and
// function call argument fragments, and choices[].text.
func interpretChatChunk(d *doc, top span, ev *Event, frags []fragment) []fragment {
	b := d.b
	if b[top.s] != '{' {
		return frags
	}
	var tf [2]span
	lookupKeys(d, top, chunkKeys, tf[:])
	if e := tf[0]; e.ok() && !isNull(b, e) {
		ev.Err = providerError(d, e)
		return frags
	}
	choices := tf[1]
	if !choices.ok() || b[choices.s] != '[' {
		return frags
	}
	// Paths are built on the stack: only the refs of found texts are kept.
	var pathBuf, subBuf [64]byte
	for i, ch := range d.elems(choices) {
		path := appendIndex(append(pathBuf[:0], "choices"...), i)
		var cf [2]span
		lookupKeys(d, ch, chunkChoiceKeys, cf[:])
		frags = addValue(d, cf[0], "text", path, frags)
		delta := cf[1]
		if !delta.ok() {
			continue
		}
		path = appendKey(path, []byte("delta"))
		var df [4]span
		lookupKeys(d, delta, chunkDeltaKeys, df[:])
		frags = addValue(d, df[0], "content", path, frags)
		frags = addValue(d, df[1], "refusal", path, frags)
		if fc := df[2]; fc.ok() {
			frags = addString(d, fc, "arguments", appendKey(append(subBuf[:0], path...), []byte("function_call")), frags)
		}
		if tcs := df[3]; tcs.ok() && b[tcs.s] == '[' {
			for j, tc := range d.elems(tcs) {
				p := appendIndex(appendKey(append(subBuf[:0], path...), []byte("tool_calls")), j)
				if fn, ok := field(d, tc, "function"); ok {
					frags = addString(d, fn, "arguments", appendKey(p, []byte("function")), frags)
				}
			}
		}
		// reasoning_content, reasoning and any other field a server adds.
		frags = addUnknown(d, delta, chunkDeltaKeys, path, frags)
	}
	return frags
}

// The members of a chat chunk that interpretChatChunk reads, by level.
var (
	chunkKeys       = newKeys("error", "choices")
	chunkChoiceKeys = newKeys("text", "delta")
	chunkDeltaKeys  = newKeys("content", "refusal", "function_call", "tool_calls")
)

// providerError reads an OpenAI-style error object (or string).
func providerError(d *doc, e span) *Error {
	b := d.b
	pe := &Error{Status: 502, Code: "provider_error", Message: "the provider reported an error"}
	switch b[e.s] {
	case '"':
		pe.Message = string(d.unquote(e))
	case '{':
		if m := strField(d, e, "message"); m != "" {
			pe.Message = m
		}
		if t := strField(d, e, "code"); t != "" {
			pe.Code = t
		} else if t := strField(d, e, "type"); t != "" {
			pe.Code = t
		} else if t := strField(d, e, "status"); t != "" {
			pe.Code = t
		}
	}
	return pe
}
