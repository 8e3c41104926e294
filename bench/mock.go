package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// canaryHeader asks the mock for an answer carrying a secret: the probe uses
// it to tell whether a level screens answers (blocked or redacted) or passes
// them through.
const canaryHeader = "X-Bench-Canary"

// canarySecret is the README's example AWS key, which the secrets scanner
// blocks.
const canarySecret = "aws_access_key_id=AKIAZ7VRSQ4LMXWB2PEH"

const completionText = "Here is a short plan. Water the herbs in the morning, mix a layer of compost into the raised bed each spring, and rotate beans, squash and leafy greens between the beds every season. Keep notes on what grows well so next year is easier."

// mockUpstream answers OpenAI Chat Completions with a fixed completion,
// streamed (SSE, each event flushed, then data: [DONE]) when the request
// has "stream": true.
type mockUpstream struct {
	srv        *http.Server
	ln         net.Listener
	chunkDelay time.Duration
	plain      []byte
	events     [][]byte
}

var mockBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func startMock(chunkDelay time.Duration) (*mockUpstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &mockUpstream{ln: ln, chunkDelay: chunkDelay}
	m.plain = completion(completionText)
	m.events = streamEvents(completionText)
	m.srv = &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

func (m *mockUpstream) addr() string { return m.ln.Addr().String() }

func (m *mockUpstream) close() { _ = m.srv.Close() }

func completion(text string) []byte {
	return fmt.Appendf(nil, `{"id":"chatcmpl-bench","object":"chat.completion","created":1767225600,"model":"gpt-4o-mini",`+
		`"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],`+
		`"usage":{"prompt_tokens":512,"completion_tokens":54,"total_tokens":566}}`, text)
}

// streamEvents splits text into a role event, a few content events, a
// finish event and the terminator.
func streamEvents(text string) [][]byte {
	const head = `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-mini","choices":[{"index":0,`
	evs := [][]byte{[]byte(head + `"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n")}
	words := strings.SplitAfter(text, " ")
	const parts = 4
	per := (len(words) + parts - 1) / parts
	for i := 0; i < len(words); i += per {
		chunk := strings.Join(words[i:min(i+per, len(words))], "")
		evs = append(evs, fmt.Appendf(nil, head+`"delta":{"content":%q},"finish_reason":null}]}`+"\n\n", chunk))
	}
	evs = append(evs, []byte(head+`"delta":{},"finish_reason":"stop"}]}`+"\n\n"), []byte("data: [DONE]\n\n"))
	return evs
}

func (m *mockUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		_, _ = io.WriteString(w, "mock upstream\n")
		return
	}
	buf := mockBufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer mockBufs.Put(buf)
	if _, err := buf.ReadFrom(r.Body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	canary := r.Header.Get(canaryHeader) != ""
	stream := bytes.Contains(buf.Bytes(), []byte(`"stream":true`))
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		if canary {
			_, _ = w.Write(completion("Use " + canarySecret + " to deploy."))
			return
		}
		_, _ = w.Write(m.plain)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	events := m.events
	if canary {
		events = streamEvents("Use " + canarySecret + " to deploy.")
	}
	for i, ev := range events {
		if i > 0 && m.chunkDelay > 0 {
			time.Sleep(m.chunkDelay)
		}
		if _, err := w.Write(ev); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}
