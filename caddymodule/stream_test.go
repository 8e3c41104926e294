package caddymodule_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"
)

func sseChunk(content string) string {
	b, _ := json.Marshal(map[string]any{
		"id": "c1", "object": "chat.completion.chunk",
		"choices": []map[string]any{{"index": 0, "delta": map[string]string{"content": content}}},
	})
	return "data: " + string(b) + "\n\n"
}

// streamingUpstream sends events with a pause between them, as a model
// generating tokens does; release lets the test pace it.
func streamingUpstream(t *testing.T, events []string, pause time.Duration) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, ev := range events {
			fmt.Fprint(w, ev)
			w.(http.Flusher).Flush()
			time.Sleep(pause)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

const streamingEndpoint = `endpoint default {
			scanner secrets {
				direction input output
			}
		}`

type timedEvent struct {
	data string
	at   time.Duration
}

func readEvents(t *testing.T, tester *caddytest.Tester, body string) (int, []timedEvent) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, gatewayURL("/v1/chat/completions"), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := tester.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var events []timedEvent
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "data: ") {
			events = append(events, timedEvent{data: strings.TrimPrefix(line, "data: "), at: time.Since(start)})
		}
	}
	return resp.StatusCode, events
}

func streamBody(content string) string {
	b, _ := json.Marshal(map[string]any{
		"model": "gpt-test", "stream": true,
		"messages": []map[string]string{{"role": "user", "content": content}},
	})
	return string(b)
}

func TestStreamedAnswerIsScreenedEventByEvent(t *testing.T) {
	const pause = 150 * time.Millisecond
	clean := []string{sseChunk(""), sseChunk("Paris "), sseChunk("is the capital "), sseChunk("of France."), "data: [DONE]\n\n"}
	up := streamingUpstream(t, clean, pause)
	tester := caddytest.NewTester(t)
	tester.InitServer(gatewayConfig(filepath.Join(t.TempDir(), "pw.db"), up.Listener.Addr().String(), streamingEndpoint, "stream_hold_back 8"), "caddyfile")

	status, events := readEvents(t, tester, streamBody("What is the capital of France?"))
	if status != http.StatusOK || len(events) != len(clean) {
		t.Fatalf("status %d, %d events (want %d): %+v", status, len(events), len(clean), events)
	}
	if events[len(events)-1].data != "[DONE]" {
		t.Errorf("a clean stream keeps its terminator, got %q", events[len(events)-1].data)
	}
	// Chunk timing is preserved: events arrive spread over the upstream's
	// pace, not all at once at the end.
	if spread := events[len(events)-1].at - events[0].at; spread < 2*pause {
		t.Errorf("events arrived within %v: they were coalesced, not streamed", spread)
	}
	if events[0].at > 3*pause {
		t.Errorf("the first (text-less) event took %v: it was held back", events[0].at)
	}
}

func TestStreamedSecretSplitAcrossEventsIsBlocked(t *testing.T) {
	leaky := []string{sseChunk(""), sseChunk("Use "), sseChunk(fakeAWSKey[:6]), sseChunk(fakeAWSKey[6:13]), sseChunk(fakeAWSKey[13:]), sseChunk(" now."), "data: [DONE]\n\n"}
	up := streamingUpstream(t, leaky, 10*time.Millisecond)
	tester := caddytest.NewTester(t)
	tester.InitServer(gatewayConfig(filepath.Join(t.TempDir(), "pw.db"), up.Listener.Addr().String(), streamingEndpoint, ""), "caddyfile")

	status, events := readEvents(t, tester, streamBody("Which key should I use?"))
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	var all strings.Builder
	for _, ev := range events {
		all.WriteString(ev.data)
	}
	for _, part := range []string{fakeAWSKey[:6], fakeAWSKey[6:13], fakeAWSKey[13:]} {
		if strings.Contains(all.String(), part) {
			t.Fatalf("part %q of the secret reached the client: %s", part, all.String())
		}
	}
	last := events[len(events)-1].data
	if last == "[DONE]" || !strings.Contains(last, `"error"`) {
		t.Fatalf("a blocked stream must end with an error event and no [DONE]; last event %q", last)
	}
	list := waitForScans(t, tester, 1)
	if list.Scans[0].Result.Outcome != "blocked" {
		t.Errorf("recorded outcome %q", list.Scans[0].Result.Outcome)
	}
}
