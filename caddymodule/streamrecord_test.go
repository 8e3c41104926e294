package caddymodule_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"
)

// chatDelta is an OpenAI chat stream event whose delta has the fields given.
func chatDelta(delta map[string]string) string {
	b, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk",
		"choices": []map[string]any{{"index": 0, "delta": delta}}})
	return "data: " + string(b) + "\n\n"
}

// chatUpstream answers OpenAI chat completions: non-streamed with content and
// reasoning_content joined, streamed as the given events (one flush each).
func chatUpstream(t *testing.T, content, reasoning []string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream bool `json:"stream"`
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &req)
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			msg, _ := json.Marshal(map[string]string{"role": "assistant",
				"content": strings.Join(content, ""), "reasoning_content": strings.Join(reasoning, "")})
			fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":%s,"finish_reason":"stop"}]}`, msg)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range reasoning {
			io.WriteString(w, chatDelta(map[string]string{"reasoning_content": c}))
			w.(http.Flusher).Flush()
		}
		for _, c := range content {
			io.WriteString(w, chatDelta(map[string]string{"content": c}))
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// chatAnswer is what a client assembles from a chat answer, streamed or not.
type chatAnswer struct {
	content, reasoning string
	// errMessage is a streamed error event's message.
	errMessage string
}

func postChat(t *testing.T, tester *caddytest.Tester, body string, stream bool) (int, chatAnswer) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, gatewayURL("/v1/chat/completions"), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := tester.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out chatAnswer
	type message struct {
		Content          string `json:"content"`
		ReasoningContent string `json:"reasoning_content"`
	}
	var ev struct {
		Choices []struct {
			Message message `json:"message"`
			Delta   message `json:"delta"`
		} `json:"choices"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if !stream {
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatalf("answer %s: %v", b, err)
		}
		if ev.Error != nil {
			out.errMessage = ev.Error.Message
		}
		if len(ev.Choices) > 0 {
			out.content, out.reasoning = ev.Choices[0].Message.Content, ev.Choices[0].Message.ReasoningContent
		}
		return resp.StatusCode, out
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		ev.Choices, ev.Error = nil, nil
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %s: %v", data, err)
		}
		if ev.Error != nil {
			out.errMessage = ev.Error.Message
		}
		for _, c := range ev.Choices {
			out.content += c.Delta.Content
			out.reasoning += c.Delta.ReasoningContent
		}
	}
	return resp.StatusCode, out
}

// storedRecords returns the records' JSON as the API lists them, once n are
// there: records reach the store a few milliseconds after the answer.
func storedRecords(t *testing.T, tester *caddytest.Tester, n int) string {
	t.Helper()
	waitForScans(t, tester, n)
	resp, body := apiGet(t, tester, "/backend/v1/scans?limit=100&onlyUser=false", testToken)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scans: status %d: %s", resp.StatusCode, body)
	}
	return string(body)
}

// TestReasoningSecretScreenedAndMaskedInRecord sends a secret in
// reasoning_content (the field DeepSeek and vLLM add to OpenAI's answers),
// split across three stream events or whole in a non-streamed answer.
// Blocking, the client gets the error and no byte of the key; redacting,
// it gets the reasoning with the key replaced; either way the stored
// record shows the finding and never the key.
func TestReasoningSecretScreenedAndMaskedInRecord(t *testing.T) {
	reasoning := []string{"The user wants the key AKIAZ7V", "RSQ4LMX", "WB2PEH, I will not repeat it."}
	content := []string{"I cannot share ", "credentials."}
	tests := []struct {
		name    string
		mode    string
		stream  bool
		outcome string
	}{
		{"block, streamed", "block", true, "blocked"},
		{"block, not streamed", "block", false, "blocked"},
		{"redact, streamed", "modify", true, "modified"},
		{"redact, not streamed", "modify", false, "modified"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Join(reasoning, "") != "The user wants the key "+fakeAWSKey+", I will not repeat it." {
				t.Fatal("the reasoning must carry the test key")
			}
			up := chatUpstream(t, content, reasoning)
			tester := caddytest.NewTester(t)
			endpoint := `endpoint default {
			scanner secrets {
				direction output
				mode ` + tc.mode + `
				flag_message "` + sdkFlagMessage + `"
			}
		}`
			tester.InitServer(gatewayConfig(filepath.Join(t.TempDir(), "pw.db"), up.Listener.Addr().String(), endpoint, ""), "caddyfile")
			body := chatBody("Think about the key first.")
			if tc.stream {
				body = streamBody("Think about the key first.")
			}
			status, got := postChat(t, tester, body, tc.stream)
			if strings.Contains(got.reasoning+got.content, fakeAWSKey[:8]) || strings.Contains(got.reasoning, "Z7VRSQ4") {
				t.Errorf("the key reached the client: %+v", got)
			}
			switch tc.mode {
			case "block":
				if got.errMessage != sdkFlagMessage || got.content != "" {
					t.Errorf("status %d, answer %+v; want the flag message and no content", status, got)
				}
			case "modify":
				if status != http.StatusOK || got.content != strings.Join(content, "") ||
					!strings.HasPrefix(got.reasoning, "The user wants the key ") || !strings.HasSuffix(got.reasoning, ", I will not repeat it.") {
					t.Errorf("status %d, answer %+v; want the answer with the key redacted from the reasoning", status, got)
				}
			}
			records := storedRecords(t, tester, 1)
			if strings.Contains(records, fakeAWSKey) || strings.Contains(records, "Z7VRSQ4") {
				t.Errorf("the stored record holds the key: %s", records)
			}
			var list scanList
			if err := json.Unmarshal([]byte(records), &list); err != nil {
				t.Fatal(err)
			}
			if out := list.Scans[0].Result.Outcome; out != tc.outcome {
				t.Errorf("record outcome %q, want %q", out, tc.outcome)
			}
		})
	}
}

// TestStreamedPlaceholdersRestoredThroughGateway: with modify mode the
// provider sees [EMAIL_ADDRESS_1] instead of the address, and with
// restore_placeholders the streamed answer gives the user the address back,
// also when the placeholder arrives split across events; the record keeps
// the placeholder.
func TestStreamedPlaceholdersRestoredThroughGateway(t *testing.T) {
	const email = "ada.lovelace@example.org"
	tests := []struct {
		name   string
		chunks []string
	}{
		{"placeholder in one event", []string{"I will write to ", "[EMAIL_ADDRESS_1]", " today."}},
		{"placeholder split in two", []string{"I will write to [EMAIL_", "ADDRESS_1] today."}},
		{"placeholder split in four", []string{"I will write to [EM", "AIL_ADD", "RESS_", "1] today."}},
		{"placeholder at the end", []string{"Write to [EMAIL_ADDRE", "SS_1]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var seen string
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				seen = string(b)
				w.Header().Set("Content-Type", "text/event-stream")
				for _, c := range tc.chunks {
					io.WriteString(w, chatDelta(map[string]string{"content": c}))
					w.(http.Flusher).Flush()
					// Separate upstream writes, so the gateway sees the
					// events one at a time as a model sends them.
					time.Sleep(5 * time.Millisecond)
				}
				io.WriteString(w, "data: [DONE]\n\n")
			}))
			t.Cleanup(up.Close)
			endpoint := `endpoint default {
			restore_placeholders
			scanner pii {
				mode modify
			}
		}`
			tester := caddytest.NewTester(t)
			tester.InitServer(gatewayConfig(filepath.Join(t.TempDir(), "pw.db"), up.Listener.Addr().String(), endpoint, ""), "caddyfile")
			status, got := postChat(t, tester, streamBody("Please email "+email+" about the invoice."), true)
			if strings.Contains(seen, email) || !strings.Contains(seen, "[EMAIL_ADDRESS_1]") {
				t.Fatalf("the provider must see the placeholder, not the address: %s", seen)
			}
			want := strings.ReplaceAll(strings.Join(tc.chunks, ""), "[EMAIL_ADDRESS_1]", email)
			if status != http.StatusOK || got.content != want || got.errMessage != "" {
				t.Errorf("status %d, streamed text %q (error %q); want %q", status, got.content, got.errMessage, want)
			}
			records := storedRecords(t, tester, 1)
			if strings.Contains(records, email) {
				t.Errorf("the record holds the restored address: %s", records)
			}
		})
	}
}
