package format

import (
	"io"

	"github.com/promptwall/promptwall/scanner"
)

// openAICompletions is the legacy OpenAI Completions format
// (/v1/completions): prompt as a string or an array of strings, and suffix.
// A prompt of token ids (an array of integers, or of such arrays) is
// refused with a 400 "unsupported_input": token ids can encode any text,
// and decoding them needs the model's tokenizer, so they cannot be
// screened. An operator who must let them through configures pass-through.
type openAICompletions struct{}

var (
	complKeys   = newKeys("model", "prompt", "stream", "suffix")
	embedKeys   = newKeys("model", "input")
	answerText  = newKeys("text")
	legacyNoTok = "token ids cannot be screened; send the text instead"
)

func (openAICompletions) Name() string { return NameOpenAICompletions }

func (openAICompletions) ParseRequest(body []byte) (*Request, error) {
	h, err := beginRequest(body, complKeys, false, false)
	if err != nil {
		return nil, err
	}
	c, f, k, model, stream := h.c, h.f, h.k, h.model, h.stream
	if !f[1].ok() {
		return nil, c.missing("prompt")
	}
	if err := c.textOrStrings(f[1], k[1]); err != nil {
		return nil, err
	}
	if err := c.optText(scanner.RoleUser, f[3], k[3]); err != nil {
		return nil, err
	}
	return c.finish(model, stream), nil
}

// textOrStrings screens a string or an array of strings as user text and
// refuses token ids.
func (c *collector) textOrStrings(v, k span) error {
	mark := c.pushKey(k)
	defer c.pop(mark)
	switch c.b[v.s] {
	case '"':
		c.text(scanner.RoleUser, v)
		return nil
	case '[':
		for i, e := range c.elems(v) {
			mk := c.pushIndex(i)
			switch ch := c.b[e.s]; {
			case ch == '"':
				c.text(scanner.RoleUser, e)
			case ch == '[' || ch == '-' || (ch >= '0' && ch <= '9'):
				err := c.errf("%s", legacyNoTok)
				err.Code = "unsupported_input"
				return err
			default:
				return c.typeErr(e, "a string")
			}
			c.pop(mk)
		}
		return nil
	}
	return c.typeErr(v, "a string or an array of strings")
}

func (openAICompletions) RewriteRequest(body []byte, edits []Edit) ([]byte, error) {
	return rewrite(body, edits)
}

func (openAICompletions) ParseResponse(body []byte) (*scanner.Conversation, error) {
	return parseAnswerArray(body, chatAnswerKeys, "choices", "an array", func(c *collector, ch span) error {
		var cf, ck [1]span
		if err := c.object(ch, answerText, cf[:], ck[:]); err != nil {
			return err
		}
		return c.optText(scanner.RoleAssistant, cf[0], ck[0])
	})
}

func (openAICompletions) RewriteResponse(body []byte, edits []Edit) ([]byte, error) {
	return rewrite(body, edits)
}

func (openAICompletions) Blocked(status int, code, message string) []byte {
	return openAIBlocked(status, code, message)
}

type textCompletion struct {
	ID      string         `json:"id"`
	Object  string         `json:"object"`
	Created int64          `json:"created"`
	Model   string         `json:"model"`
	Choices []legacyChoice `json:"choices"`
	Usage   *openAIUsage   `json:"usage,omitempty"`
}

type legacyChoice struct {
	Text         string    `json:"text"`
	Index        int       `json:"index"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

func (openAICompletions) Completion(req *Request, message string) []byte {
	return marshal(textCompletion{
		ID: "cmpl-" + newID(), Object: "text_completion", Created: now().Unix(), Model: req.Model,
		Choices: []legacyChoice{{Text: message, FinishReason: ptr("stop")}},
		Usage:   &openAIUsage{},
	})
}

func (openAICompletions) StreamCompletion(req *Request, message string) []byte {
	c := textCompletion{
		ID: "cmpl-" + newID(), Object: "text_completion", Created: now().Unix(), Model: req.Model,
		Choices: []legacyChoice{{Text: message}},
	}
	out := sseFrame("", marshal(c))
	c.Choices = []legacyChoice{{FinishReason: ptr("stop")}}
	out = append(out, sseFrame("", marshal(c))...)
	return append(out, "data: [DONE]\n\n"...)
}

func (openAICompletions) NewStream(r io.Reader) Stream {
	return &decoder{fr: NewSSEReader(r, 0), interpret: interpretChatChunk, block: openAIStreamBlock}
}

// openAIEmbeddings is the OpenAI Embeddings format (/v1/embeddings): input
// as a string or an array of strings, screened as user text. Token-id
// inputs are refused like the Completions prompt's. An answer holds
// vectors only: ParseResponse returns an empty conversation, Completion
// nil (no answer can carry a message), and the format never streams.
type openAIEmbeddings struct{}

func (openAIEmbeddings) Name() string { return NameOpenAIEmbeddings }

func (openAIEmbeddings) ParseRequest(body []byte) (*Request, error) {
	c, top, err := begin(body, 400)
	if err != nil {
		return nil, err
	}
	var f, k [2]span
	if err := c.fields(top, embedKeys, f[:], k[:]); err != nil {
		return nil, err
	}
	model, err := c.model(f[0], k[0])
	if err != nil {
		return nil, err
	}
	if !f[1].ok() {
		return nil, c.missing("input")
	}
	if err := c.textOrStrings(f[1], k[1]); err != nil {
		return nil, err
	}
	return c.finish(model, false), nil
}

func (openAIEmbeddings) RewriteRequest(body []byte, edits []Edit) ([]byte, error) {
	return rewrite(body, edits)
}

func (openAIEmbeddings) ParseResponse(body []byte) (*scanner.Conversation, error) {
	c, _, err := begin(body, 502)
	if err != nil {
		return nil, err
	}
	c.release()
	return &scanner.Conversation{}, nil
}

func (openAIEmbeddings) RewriteResponse(body []byte, edits []Edit) ([]byte, error) {
	return rewrite(body, edits)
}

func (openAIEmbeddings) Blocked(status int, code, message string) []byte {
	return openAIBlocked(status, code, message)
}

func (openAIEmbeddings) Completion(*Request, string) []byte       { return nil }
func (openAIEmbeddings) StreamCompletion(*Request, string) []byte { return nil }
func (openAIEmbeddings) NewStream(io.Reader) Stream               { return nil }
