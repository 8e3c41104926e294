package format

import (
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

func mustFormat(t *testing.T, name string) Format {
	t.Helper()
	f, err := ByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestAnswerTextFields checks that reasoning, thinking and fields a format
// does not name reach the scanners in non-streamed answers, and that opaque
// members (signatures, ids, encrypted data) do not.
func TestAnswerTextFields(t *testing.T) {
	tests := []struct {
		name, format, body string
		want               []string
	}{
		{"deepseek reasoning_content", NameOpenAIChat,
			`{"choices":[{"index":0,"message":{"role":"assistant","content":"Paris.","reasoning_content":"The key is AKIAZ7VRSQ4LMXWB2PEH."}}]}`,
			[]string{"Paris.", "The key is AKIAZ7VRSQ4LMXWB2PEH."}},
		{"openrouter reasoning and details", NameOpenAIChat,
			`{"choices":[{"index":0,"message":{"role":"assistant","content":"ok","reasoning":"thinking aloud","reasoning_details":[{"type":"reasoning.text","text":"step one","signature":"c2lnbmF0dXJl","id":"r1"}]}}]}`,
			[]string{"ok", "thinking aloud", "step one"}},
		{"ollama unknown message field", NameOllamaChat,
			`{"model":"m","message":{"role":"assistant","content":"hi","reasoning":"why not"},"done":true}`,
			[]string{"hi", "why not"}},
		{"responses reasoning text", NameOpenAIResponses,
			`{"output":[{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"brief"}],"content":[{"type":"reasoning_text","text":"full reasoning"}],"encrypted_content":"gAAAA"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"answer"}]}]}`,
			[]string{"brief", "full reasoning", "answer"}},
		{"anthropic thinking", NameAnthropicMessages,
			`{"content":[{"type":"thinking","thinking":"let me see","signature":"EqQB"},{"type":"text","text":"done"}]}`,
			[]string{"let me see", "done"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conv, err := mustFormat(t, tt.format).ParseResponse([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range conv.Messages {
				got = append(got, m.Text)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("texts = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestAnswerTextFieldsRewrite checks that a redaction in a field found by
// the generic rule is written back where it was found.
func TestAnswerTextFieldsRewrite(t *testing.T) {
	f := mustFormat(t, NameOpenAIChat)
	body := []byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"x","reasoning_content":"key AKIAZ7VRSQ4LMXWB2PEH"}}]}`)
	conv, err := f.ParseResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.RewriteResponse(body, []Edit{{Ref: conv.Messages[1].Ref, Text: "key [SECRET_1]"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"reasoning_content":"key [SECRET_1]"`) || strings.Contains(string(out), "AKIA") {
		t.Errorf("rewritten answer = %s", out)
	}
}

func streamDeltas(t *testing.T, format, body string) []string {
	t.Helper()
	s := mustFormat(t, format).NewStream(strings.NewReader(body))
	var deltas []string
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			return deltas
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Delta != "" {
			deltas = append(deltas, ev.Delta)
		}
	}
}

// TestStreamTextFields is TestAnswerTextFields for stream events.
func TestStreamTextFields(t *testing.T) {
	tests := []struct {
		name, format, body string
		want               []string
	}{
		{"reasoning_content delta", NameOpenAIChat,
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"reasoning_content\":\"hmm\"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"so\",\"content\":\"yes\"}}]}\n\ndata: [DONE]\n\n",
			[]string{"hmm", "yesso"}},
		{"ollama thinking and unknown", NameOllamaChat,
			`{"message":{"role":"assistant","content":"","thinking":"a"},"done":false}` + "\n" +
				`{"message":{"role":"assistant","content":"b","reasoning_content":"c"},"done":true}` + "\n",
			[]string{"a", "bc"}},
		{"anthropic unknown delta type, signature skipped", NameAnthropicMessages,
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"citations_delta\",\"citation\":{\"type\":\"char_location\",\"cited_text\":\"quoted\"}}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQB\"}}\n\n",
			[]string{"quoted"}},
		{"responses reasoning text and transcript, audio skipped", NameOpenAIResponses,
			"event: response.reasoning_text.delta\ndata: {\"type\":\"response.reasoning_text.delta\",\"item_id\":\"rs\",\"content_index\":0,\"delta\":\"think\",\"sequence_number\":1}\n\n" +
				"event: response.audio.delta\ndata: {\"type\":\"response.audio.delta\",\"delta\":\"UklGRg==\",\"sequence_number\":2}\n\n" +
				"event: response.audio.transcript.delta\ndata: {\"type\":\"response.audio.transcript.delta\",\"delta\":\"said\",\"sequence_number\":3}\n\n",
			[]string{"think", "said"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := streamDeltas(t, tt.format, tt.body); !slices.Equal(got, tt.want) {
				t.Errorf("deltas = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestBlockAfterGeminiArray checks that a blocked Gemini JSON-array stream
// ends as one valid JSON array whose last element is Google's error, both
// when elements were forwarded and when none was.
func TestBlockAfterGeminiArray(t *testing.T) {
	const body = "[{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"The\"}],\"role\":\"model\"},\"index\":0}]}\n,\r\n{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\" sky\"}],\"role\":\"model\"},\"index\":0}]}\n]"
	for _, forwarded := range []int{0, 1, 2} {
		s := mustFormat(t, NameGemini).NewStream(strings.NewReader(body))
		var client []byte
		for i := 0; i < forwarded; i++ {
			ev, err := s.Next()
			if err != nil {
				t.Fatal(err)
			}
			client = append(client, ev.Raw...)
		}
		if forwarded == 0 {
			// The decoder has read the first element, the screener held it.
			if _, err := s.Next(); err != nil {
				t.Fatal(err)
			}
		}
		client = append(client, BlockAfter(s, forwarded > 0, "content_blocked", "no")...)
		var elems []map[string]json.RawMessage
		if err := json.Unmarshal(client, &elems); err != nil {
			t.Fatalf("forwarded %d: client got invalid JSON %q: %v", forwarded, client, err)
		}
		if len(elems) != forwarded+1 || elems[forwarded]["error"] == nil {
			t.Errorf("forwarded %d: elements %q, want the error last", forwarded, client)
		}
	}
}

func TestBlockSSEForms(t *testing.T) {
	// Gemini with alt=sse keeps SSE framing.
	s := mustFormat(t, NameGemini).NewStream(strings.NewReader("data: {\"candidates\":[]}\n\n"))
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	if b := BlockAfter(s, true, "content_blocked", "no"); !strings.HasPrefix(string(b), "data: {\"error\"") {
		t.Errorf("Gemini SSE block = %q", b)
	}
	// The Responses error event continues the stream's numbering.
	r := mustFormat(t, NameOpenAIResponses).NewStream(strings.NewReader(
		"event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0}\n\n" +
			"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"m\",\"content_index\":0,\"delta\":\"hi\",\"sequence_number\":7}\n\n"))
	for range 2 {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	b := BlockAfter(r, true, "content_blocked", "no")
	data := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(string(b), "\n", 2)[1], "data: "))
	var ev struct {
		Type           string  `json:"type"`
		Code           string  `json:"code"`
		Message        string  `json:"message"`
		Param          *string `json:"param"`
		SequenceNumber *int    `json:"sequence_number"`
	}
	if err := json.Unmarshal([]byte(data), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "error" || ev.SequenceNumber == nil || *ev.SequenceNumber != 8 || ev.Message != "no" {
		t.Errorf("Responses block = %s", data)
	}
}
