package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

// chatBody builds a Chat Completions request of about size bytes, or of
// turns user/assistant pairs when turns > 0, shaped like real SDK traffic.
func chatBody(size, turns int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"model":"gpt-4o","stream":true,"temperature":0.7,"messages":[{"role":"system","content":"You are a helpful assistant. Answer concisely and cite sources."}`)
	line := "Could you explain how the garbage collector handles \"large\" heaps?\nThanks. "
	for i := 0; (turns > 0 && i < turns) || (turns == 0 && b.Len() < size-200); i++ {
		fmt.Fprintf(&b, `,{"role":"user","content":%q}`, strings.Repeat(line, 1+i%3))
		fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"text","text":%q}]}`, strings.Repeat("It uses a concurrent mark and sweep design. ", 2+i%2))
	}
	b.WriteString(`],"tools":[{"type":"function","function":{"name":"search","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}}]}`)
	return b.Bytes()
}

func BenchmarkParseOpenAIChat(b *testing.B) {
	for _, bc := range []struct {
		name        string
		size, turns int
	}{{"2KB", 2 << 10, 0}, {"16KB", 16 << 10, 0}, {"20turns", 0, 20}} {
		body := chatBody(bc.size, bc.turns)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := (openAIChat{}).ParseRequest(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkRewriteOpenAIChat(b *testing.B) {
	body := chatBody(2<<10, 0)
	req, err := openAIChat{}.ParseRequest(body)
	if err != nil {
		b.Fatal(err)
	}
	last := req.Conversation.Messages[len(req.Conversation.Messages)-2]
	edits := []Edit{{Ref: last.Ref, Text: "[EMAIL_ADDRESS_1] redacted"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (openAIChat{}).RewriteRequest(body, edits); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStreamOpenAIChat(b *testing.B) {
	var s bytes.Buffer
	for range 200 {
		s.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	}
	s.WriteString("data: [DONE]\n\n")
	data := s.Bytes()
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		st := openAIChat{}.NewStream(bytes.NewReader(data))
		for {
			if _, err := st.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkParseOpenAIChatStdlib is the yardstick: decoding the same 2 KB
// body with encoding/json into the few fields the screen needs.
func BenchmarkParseOpenAIChatStdlib(b *testing.B) {
	body := chatBody(2<<10, 0)
	type msg struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []msg  `json:"messages"`
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if err := json.Unmarshal(body, &req); err != nil {
			b.Fatal(err)
		}
	}
}
