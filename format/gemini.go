package format

import (
	"bufio"
	"io"

	"github.com/promptwall/promptwall/scanner"
)

// gemini is the Google Gemini generateContent format
// (/v1beta/models/{model}:generateContent and :streamGenerateContent, also
// Vertex AI's publisher paths). The model and the streaming choice live in
// the URL: Bind reads them.
//
// Screened in a request: systemInstruction.parts[].text (system),
// contents[].parts[]: text (by role: user, model is assistant, function is
// tool), functionCall.args string leaves (assistant), functionResponse.
// response string leaves (tool), executableCode.code (assistant),
// codeExecutionResult.output (tool). Field names match in lowerCamelCase
// and snake_case, as the proto JSON parser behind the API accepts both.
type gemini struct {
	model  string
	stream bool
}

var (
	gemKeys     = newKeys("contents", "systemInstruction|system_instruction")
	gemContKeys = newKeys("role", "parts")
	gemPartKeys = newKeys("text", "functionCall|function_call", "functionResponse|function_response",
		"executableCode|executable_code", "codeExecutionResult|code_execution_result")
	gemArgsKeys = newKeys("args")
	gemRespKeys = newKeys("response")
	gemCodeKeys = newKeys("code")
	gemOutKeys  = newKeys("output")
	gemCandKeys = newKeys("candidates")
	gemCKeys    = newKeys("content")
)

func (gemini) Name() string { return NameGemini }

func (g gemini) ParseRequest(body []byte) (*Request, error) {
	c, top, err := begin(body, 400)
	if err != nil {
		return nil, err
	}
	var f, k [2]span
	if err := c.fields(top, gemKeys, f[:], k[:]); err != nil {
		return nil, err
	}
	if v := f[1]; !isNull(c.b, v) {
		mark := c.pushKey(k[1])
		if err := c.gemContent(v, scanner.RoleSystem); err != nil {
			return nil, err
		}
		c.pop(mark)
	}
	if !f[0].ok() {
		return nil, c.missing("contents")
	}
	mark := c.pushKey(k[0])
	if c.b[f[0].s] != '[' {
		return nil, c.typeErr(f[0], "an array of contents")
	}
	for i, ct := range c.elems(f[0]) {
		mk := c.pushIndex(i)
		if err := c.gemContent(ct, ""); err != nil {
			return nil, err
		}
		c.pop(mk)
	}
	c.pop(mark)
	req := c.finish(textOffs{}, g.stream)
	req.Model = g.model
	return req, nil
}

// gemContent screens one Content {role, parts}; forced overrides the role.
func (c *collector) gemContent(v span, forced scanner.Role) error {
	var f, k [2]span
	if err := c.object(v, gemContKeys, f[:], k[:]); err != nil {
		return err
	}
	role := forced
	if role == "" {
		// A content without a role is the user's, as the API reads it.
		r, err := c.role(f[0], k[0], false)
		if err != nil {
			return err
		}
		role = mapRole(r)
	}
	if isNull(c.b, f[1]) {
		return nil
	}
	mark := c.pushKey(k[1])
	defer c.pop(mark)
	if c.b[f[1].s] != '[' {
		return c.typeErr(f[1], "an array of parts")
	}
	for i, p := range c.elems(f[1]) {
		mk := c.pushIndex(i)
		if err := c.gemPart(p, role, forced != ""); err != nil {
			return err
		}
		c.pop(mk)
	}
	return nil
}

func (c *collector) gemPart(p span, role scanner.Role, forced bool) error {
	var f, k [5]span
	if err := c.object(p, gemPartKeys, f[:], k[:]); err != nil {
		return err
	}
	if err := c.optText(role, f[0], k[0]); err != nil {
		return err
	}
	pick := func(r scanner.Role) scanner.Role {
		if forced {
			return role
		}
		return r
	}
	nested := []struct {
		v, k span
		ks   *keyset
		role scanner.Role
		tree bool
	}{
		{f[1], k[1], gemArgsKeys, pick(scanner.RoleAssistant), true},
		{f[2], k[2], gemRespKeys, pick(scanner.RoleTool), true},
		{f[3], k[3], gemCodeKeys, pick(scanner.RoleAssistant), false},
		{f[4], k[4], gemOutKeys, pick(scanner.RoleTool), false},
	}
	for _, n := range nested {
		if isNull(c.b, n.v) {
			continue
		}
		mark := c.pushKey(n.k)
		var nf, nk [1]span
		if err := c.object(n.v, n.ks, nf[:], nk[:]); err != nil {
			return err
		}
		if n.tree {
			if !isNull(c.b, nf[0]) {
				mv := c.pushKey(nk[0])
				if err := c.leaves(n.role, nf[0]); err != nil {
					return err
				}
				c.pop(mv)
			}
		} else if err := c.optText(n.role, nf[0], nk[0]); err != nil {
			return err
		}
		c.pop(mark)
	}
	return nil
}

func (gemini) RewriteRequest(body []byte, edits []Edit) ([]byte, error) {
	return rewrite(body, edits)
}

func (gemini) ParseResponse(body []byte) (*scanner.Conversation, error) {
	c, top, err := begin(body, 502)
	if err != nil {
		return nil, err
	}
	if err := c.gemCandidates(top); err != nil {
		return nil, err
	}
	conv := c.conversation()
	return &conv, nil
}

// gemCandidates screens candidates[].content of an answer or stream chunk.
// An answer without candidates (the prompt itself was blocked) has no text.
func (c *collector) gemCandidates(top span) error {
	var f, k [1]span
	if err := c.fields(top, gemCandKeys, f[:], k[:]); err != nil {
		return err
	}
	if isNull(c.b, f[0]) {
		return nil
	}
	mark := c.pushKey(k[0])
	defer c.pop(mark)
	if c.b[f[0].s] != '[' {
		return c.typeErr(f[0], "an array")
	}
	for i, cand := range c.elems(f[0]) {
		mk := c.pushIndex(i)
		var cf, ck [1]span
		if err := c.object(cand, gemCKeys, cf[:], ck[:]); err != nil {
			return err
		}
		if !isNull(c.b, cf[0]) {
			mc := c.pushKey(ck[0])
			if err := c.gemContent(cf[0], scanner.RoleAssistant); err != nil {
				return err
			}
			c.pop(mc)
		}
		c.pop(mk)
	}
	return nil
}

func (gemini) RewriteResponse(body []byte, edits []Edit) ([]byte, error) {
	return rewrite(body, edits)
}

func (gemini) Blocked(status int, code, message string) []byte {
	return geminiBlocked(status, code, message)
}

type gemAnswer struct {
	Candidates    []gemCandidate `json:"candidates"`
	UsageMetadata gemUsage       `json:"usageMetadata"`
	ModelVersion  string         `json:"modelVersion,omitempty"`
	ResponseID    string         `json:"responseId"`
}

type gemCandidate struct {
	Content      gemContentOut `json:"content"`
	FinishReason string        `json:"finishReason,omitempty"`
	Index        int           `json:"index"`
}

type gemContentOut struct {
	Parts []gemTextPart `json:"parts"`
	Role  string        `json:"role"`
}

type gemTextPart struct {
	Text string `json:"text"`
}

type gemUsage struct {
	PromptTokenCount     int `json:"promptTokenCount"`
	CandidatesTokenCount int `json:"candidatesTokenCount"`
	TotalTokenCount      int `json:"totalTokenCount"`
}

func (gemini) answer(req *Request, message string) gemAnswer {
	return gemAnswer{
		Candidates: []gemCandidate{{
			Content:      gemContentOut{Parts: []gemTextPart{{message}}, Role: "model"},
			FinishReason: "STOP",
		}},
		ModelVersion: req.Model,
		ResponseID:   newID(),
	}
}

func (g gemini) Completion(req *Request, message string) []byte {
	return marshal(g.answer(req, message))
}

// StreamCompletion renders one SSE chunk holding the whole answer, the form
// of streamGenerateContent?alt=sse that the SDKs use.
func (g gemini) StreamCompletion(req *Request, message string) []byte {
	return sseFrame("", marshal(g.answer(req, message)))
}

// NewStream decodes streamGenerateContent answers, SSE (alt=sse, the SDKs'
// choice) or a streamed JSON array (the REST default), told apart by the
// first byte.
func (gemini) NewStream(r io.Reader) Stream {
	sr := &sniffReader{r: bufio.NewReaderSize(r, streamReadBuffer)}
	return &decoder{
		fr:        sr,
		interpret: interpretGeminiChunk,
		block: func(code, message string) []byte {
			return sseFrame("", geminiBlocked(403, code, message))
		},
		geminiArray: sr.isArray,
	}
}

// interpretGeminiChunk reads one GenerateContentResponse chunk: the text
// of every candidate part adds to the answer, a finishReason ends it, an
// error object is a provider error.
func interpretGeminiChunk(d *doc, top span, ev *Event, frags []fragment) []fragment {
	b := d.b
	if b[top.s] != '{' {
		return frags
	}
	if e, ok := field(d, top, "error"); ok && !isNull(b, e) {
		ev.Err = providerError(d, e)
		return frags
	}
	cands, ok := field(d, top, "candidates")
	if !ok || b[cands.s] != '[' {
		return frags
	}
	for i, cand := range d.elems(cands) {
		if fr, ok := field(d, cand, "finishReason"); ok && !isNull(b, fr) {
			ev.Terminal = true
		}
		content, ok := field(d, cand, "content")
		if !ok {
			continue
		}
		parts, ok := field(d, content, "parts")
		if !ok || b[parts.s] != '[' {
			continue
		}
		for j, p := range d.elems(parts) {
			path := appendIndex(appendKey(appendKey(appendIndex([]byte("candidates"), i), []byte("content")), []byte("parts")), j)
			frags = addString(d, p, "text", path, frags)
			if fc, ok := field(d, p, "functionCall"); ok {
				if args, ok := field(d, fc, "args"); ok {
					frags = addLeaves(d, args, appendKey(appendKey(path, []byte("functionCall")), []byte("args")), frags)
				}
			}
		}
	}
	return frags
}
