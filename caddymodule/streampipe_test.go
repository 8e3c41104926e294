package caddymodule

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/promptwall/promptwall/store"
)

// testAdmin is the admin endpoint of the configs loaded here: where
// caddytest expects it for a test, so the integration tests can load theirs
// after; none for a benchmark, which runs after every test.
func testAdmin(tb testing.TB) string {
	if _, bench := tb.(*testing.B); bench {
		return `{"disabled":true}`
	}
	return `{"listen":"localhost:2999","config":{"persist":false}}`
}

// quietLogs keeps Caddy's log to errors, also across the loads here (a
// load logs with the logging of the config before it).
const quietLogs = `{"logs":{"default":{"level":"ERROR"}}}`

// provisionedHandler loads a config holding only the promptwall app, with
// an endpoint "io" screening both directions for secrets, and provisions a
// handler on it, to be called directly without a server in between.
func provisionedHandler(tb testing.TB) *Handler {
	tb.Helper()
	cfg, err := json.Marshal(map[string]any{
		"admin":   json.RawMessage(testAdmin(tb)),
		"logging": json.RawMessage(quietLogs),
		"apps": map[string]any{"promptwall": map[string]any{
			"storage": filepath.Join(tb.TempDir(), "pw.db"),
			"endpoints": []any{map[string]any{"name": "io", "scanners": []any{map[string]any{
				"detector":   map[string]any{"scanner": "secrets"},
				"directions": []string{"input", "output"},
			}}}},
		}},
	})
	if err != nil {
		tb.Fatal(err)
	}
	if err := caddy.Load(cfg, true); err != nil {
		tb.Fatalf("loading config: %v", err)
	}
	tb.Cleanup(func() {
		// Unloads the app (closing its store) and keeps the admin endpoint.
		_ = caddy.Load([]byte(`{"admin":`+testAdmin(tb)+`,"logging":`+quietLogs+`}`), true)
	})
	h := &Handler{Endpoint: "io"}
	if err := h.Provision(caddy.ActiveContext()); err != nil {
		tb.Fatal(err)
	}
	if err := h.Validate(); err != nil {
		tb.Fatal(err)
	}
	return h
}

// flushRecorder is the client's side of a response: it keeps the bytes and
// notes how much was written at each flush.
type flushRecorder struct {
	header  http.Header
	status  int
	body    strings.Builder
	flushes []int
	flushed chan struct{}
}

func newFlushRecorder() *flushRecorder {
	return &flushRecorder{header: http.Header{}, flushed: make(chan struct{}, 1024)}
}

func (f *flushRecorder) Header() http.Header         { return f.header }
func (f *flushRecorder) WriteHeader(status int)      { f.status = status }
func (f *flushRecorder) Write(b []byte) (int, error) { return f.body.WriteString(string(b)) }
func (f *flushRecorder) Flush() {
	f.flushes = append(f.flushes, f.body.Len())
	select {
	case f.flushed <- struct{}{}:
	default:
	}
}

func sseEvent(content string) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1767225600, "model": "gpt-4o-mini",
		"choices": []map[string]any{{"index": 0, "delta": map[string]string{"content": content}, "finish_reason": nil}},
	})
	return "data: " + string(b) + "\n\n"
}

const sseDone = "data: [DONE]\n\n"

// upstreamWrites answers with writes, one Write and Flush each, as
// reverse_proxy copies a streamed answer. When waitFirst is set, the second
// write waits until the client has had a flush.
func upstreamWrites(writes []string, waitFirst chan struct{}) caddyhttp.Handler {
	return caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for i, chunk := range writes {
			if i == 1 && waitFirst != nil {
				select {
				case <-waitFirst:
				case <-time.After(10 * time.Second):
					return fmt.Errorf("nothing was flushed to the client after the first write")
				}
			}
			if _, err := w.Write([]byte(chunk)); err != nil {
				return err
			}
			if err := http.NewResponseController(w).Flush(); err != nil {
				return err
			}
		}
		return nil
	})
}

func streamRequest() *http.Request {
	body := `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Tell me about herbs."}]}`
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return r.WithContext(context.WithValue(r.Context(), caddy.ReplacerCtxKey, caddy.NewReplacer()))
}

// tokens returns n events of a few words each, as a model streams them.
func tokens(n int) []string {
	words := strings.Fields("Water the herbs in the morning and mix compost into the raised bed each spring")
	out := make([]string, n)
	for i := range out {
		out[i] = sseEvent(" " + words[i%len(words)] + " " + words[(i+3)%len(words)])
	}
	return out
}

// group joins events into upstream writes of per events each.
func group(events []string, per int) []string {
	var writes []string
	for i := 0; i < len(events); i += per {
		writes = append(writes, strings.Join(events[i:min(i+per, len(events))], ""))
	}
	return writes
}

// TestScreenedStreamFlushesPerUpstreamWrite checks that a screened stream
// reaches the client whole and in order, flushed at most once per upstream
// write (not once per event), with the first event flushed before the
// upstream's next write.
func TestScreenedStreamFlushesPerUpstreamWrite(t *testing.T) {
	h := provisionedHandler(t)
	role := sseEvent("")
	words := tokens(60)
	split := role + words[0] + words[1]
	tests := []struct {
		name   string
		writes []string
	}{
		{"one event per write", append(append([]string{role}, words[:12]...), sseDone)},
		{"several events per write", append([]string{role}, group(append(words, sseDone), 5)...)},
		{"events cut across writes", []string{split[:len(role)+17], split[len(role)+17:] + words[2][:9], words[2][9:] + sseDone}},
		{"everything in one write", []string{role + strings.Join(words, "") + sseDone}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newFlushRecorder()
			next := upstreamWrites(tc.writes, w.flushed)
			if len(tc.writes) < 2 {
				next = upstreamWrites(tc.writes, nil)
			}
			if err := h.ServeHTTP(w, streamRequest(), next); err != nil {
				t.Fatal(err)
			}
			if want := strings.Join(tc.writes, ""); w.body.String() != want {
				t.Fatalf("client got\n%q\nwant\n%q", w.body.String(), want)
			}
			// With durability sync the last byte waits for the record's
			// commit and is flushed on its own.
			most := len(tc.writes)
			if h.app.durability == store.DurabilitySync {
				most++
			}
			if len(w.flushes) == 0 || len(w.flushes) > most {
				t.Errorf("%d flushes for %d upstream writes", len(w.flushes), len(tc.writes))
			}
			if last := w.flushes[len(w.flushes)-1]; last != w.body.Len() {
				t.Errorf("last flush at byte %d of %d: the end of the stream was not flushed", last, w.body.Len())
			}
		})
	}
}

// connWriter is a client connection as net/http's server holds it: writes
// are buffered, and a flush writes them to a loopback TCP socket.
type connWriter struct {
	header  http.Header
	status  int
	bw      *bufio.Writer
	flushes int
}

func (c *connWriter) Header() http.Header         { return c.header }
func (c *connWriter) WriteHeader(status int)      { c.status = status }
func (c *connWriter) Write(b []byte) (int, error) { return c.bw.Write(b) }
func (c *connWriter) FlushError() error {
	c.flushes++
	return c.bw.Flush()
}

// loopback returns the writing end of a TCP connection whose other end is
// read and discarded until the benchmark ends.
func loopback(b *testing.B) net.Conn {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	peer, err := ln.Accept()
	if err != nil {
		b.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, peer) }()
	b.Cleanup(func() {
		conn.Close()
		peer.Close()
	})
	return conn
}

// BenchmarkScreenedStream pushes a streamed answer of 50 short events, in
// upstream writes of 5 events each, through the handler's stream screening
// (secrets on the answer) to a client socket, and reports what one answer
// costs, flushes included.
func BenchmarkScreenedStream(b *testing.B) {
	h := provisionedHandler(b)
	writes := append([]string{sseEvent("")}, group(append(tokens(50), sseDone), 5)...)
	w := &connWriter{bw: bufio.NewWriterSize(loopback(b), 4<<10)}
	b.ReportAllocs()
	for b.Loop() {
		w.header = http.Header{}
		if err := h.ServeHTTP(w, streamRequest(), upstreamWrites(writes, nil)); err != nil || w.status != http.StatusOK {
			b.Fatalf("status %d, error %v", w.status, err)
		}
	}
	b.ReportMetric(float64(w.flushes)/float64(b.N), "flushes/op")
	b.ReportMetric(float64(len(writes)), "writes/op")
}
