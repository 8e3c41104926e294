package caddymodule_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
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

// A secret, a card number and a banned phrase split across 2, 3 and 10
// events of a stream through the gateway: the stream ends with the
// provider's error instead of [DONE], the client has received no byte of
// the match, and the record says blocked.
func TestStreamedSecretSplitAcrossEventsIsBlocked(t *testing.T) {
	endpoint := `endpoint default {
			scanner secrets {
				direction input output
			}
			scanner pii {
				direction output
				entities CREDIT_CARD
			}
			scanner banned_substrings {
				direction output
				substrings "Project Nightingale"
			}
		}`
	var answer atomic.Pointer[[]string]
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range *answer.Load() {
			fmt.Fprint(w, ev)
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond)
		}
	}))
	t.Cleanup(up.Close)
	tester := caddytest.NewTester(t)
	tester.InitServer(gatewayConfig(filepath.Join(t.TempDir(), "pw.db"), up.Listener.Addr().String(), endpoint, ""), "caddyfile")
	recorded := 0
	for _, match := range []string{fakeAWSKey, "4111 1111 1111 1111", "Project Nightingale"} {
		for _, n := range []int{2, 3, 10} {
			t.Run(fmt.Sprintf("%.8s in %d", match, n), func(t *testing.T) {
				up := []string{sseChunk(""), sseChunk("Use "), sseChunk("this: ")}
				for i := range n {
					up = append(up, sseChunk(match[i*len(match)/n:(i+1)*len(match)/n]))
				}
				up = append(up, sseChunk(" now."), "data: [DONE]\n\n")
				answer.Store(&up)
				status, events := readEvents(t, tester, streamBody("Which one should I use?"))
				if status != http.StatusOK {
					t.Fatalf("status %d", status)
				}
				var text strings.Builder
				for _, ev := range events[:len(events)-1] {
					var c struct {
						Choices []struct {
							Delta struct{ Content string } `json:"delta"`
						} `json:"choices"`
					}
					if err := json.Unmarshal([]byte(ev.data), &c); err != nil || len(c.Choices) != 1 {
						t.Fatalf("event %q: %v", ev.data, err)
					}
					text.WriteString(c.Choices[0].Delta.Content)
				}
				if got := text.String(); !strings.HasPrefix("Use this: ", got) {
					t.Fatalf("the client received %q, past the match's start", got)
				}
				last := events[len(events)-1].data
				if last == "[DONE]" || !strings.Contains(last, `"error"`) {
					t.Fatalf("a blocked stream must end with an error event and no [DONE]; last event %q", last)
				}
				recorded++
				list := waitForScans(t, tester, recorded)
				if list.Scans[0].Result.Outcome != "blocked" {
					t.Errorf("recorded outcome %q", list.Scans[0].Result.Outcome)
				}
			})
		}
	}
}
