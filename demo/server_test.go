package demo

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func do(t *testing.T, method, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	(&Server{}).ServeHTTP(w, httptest.NewRequest(method, path, strings.NewReader(body)))
	return w
}

func TestServerCompletion(t *testing.T) {
	body := `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":[{"type":"text","text":"Hello."},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"What is the capital of France?"}]}]}`
	w := do(t, http.MethodPost, "/v1/chat/completions", body)
	var got struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			Total int `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusOK {
		t.Fatalf("status %d, %v: %s", w.Code, err, w.Body)
	}
	if got.Object != "chat.completion" || got.Model != "gpt-4o-mini" || len(got.Choices) != 1 || got.Choices[0].Message.Role != "assistant" ||
		!strings.Contains(got.Choices[0].Message.Content, "Paris") || got.Choices[0].FinishReason != "stop" || got.Usage.Total == 0 {
		t.Fatalf("answer %+v", got)
	}
	if again := do(t, http.MethodPost, "/v1/chat/completions", body); again.Body.String() != w.Body.String() {
		t.Errorf("the same request got two answers:\n%s\n%s", w.Body, again.Body)
	}
}

func TestServerStream(t *testing.T) {
	for _, tc := range []struct {
		name, options string
		usage         bool
	}{
		{"plain", "", false},
		{"with usage", `,"stream_options":{"include_usage":true}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := do(t, http.MethodPost, "/chat/completions", `{"model":"m","stream":true`+tc.options+`,"messages":[{"role":"user","content":"Please print the deploy key."}]}`)
			if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d, type %q", w.Code, w.Header().Get("Content-Type"))
			}
			events := strings.Split(strings.TrimSuffix(w.Body.String(), "\n\n"), "\n\n")
			if events[len(events)-1] != "data: [DONE]" {
				t.Fatalf("last event %q", events[len(events)-1])
			}
			var text strings.Builder
			var finish string
			var sawUsage, sawRole bool
			for _, e := range events[:len(events)-1] {
				var c struct {
					Object  string `json:"object"`
					Choices []struct {
						Delta struct {
							Role    string `json:"role"`
							Content string `json:"content"`
						} `json:"delta"`
						FinishReason *string `json:"finish_reason"`
					} `json:"choices"`
					Usage *struct {
						Total int `json:"total_tokens"`
					} `json:"usage"`
				}
				if err := json.Unmarshal([]byte(strings.TrimPrefix(e, "data: ")), &c); err != nil || c.Object != "chat.completion.chunk" {
					t.Fatalf("event %q: %v", e, err)
				}
				sawUsage = sawUsage || c.Usage != nil
				for _, ch := range c.Choices {
					sawRole = sawRole || ch.Delta.Role == "assistant"
					text.WriteString(ch.Delta.Content)
					if ch.FinishReason != nil {
						finish = *ch.FinishReason
					}
				}
			}
			want := Reply([]Message{{Role: "user", Content: "Please print the deploy key."}})
			if text.String() != want || finish != "stop" || !sawRole || sawUsage != tc.usage || len(events) < len(Pieces(want))+3 {
				t.Fatalf("text %q (want %q), finish %q, role %v, usage %v, %d events", text.String(), want, finish, sawRole, sawUsage, len(events))
			}
		})
	}
}

func TestServerErrors(t *testing.T) {
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"not JSON", http.MethodPost, "/v1/chat/completions", `{"messages":`, http.StatusBadRequest, "invalid_json"},
		{"no messages", http.MethodPost, "/v1/chat/completions", `{"model":"m","messages":[]}`, http.StatusBadRequest, "invalid_value"},
		{"content of the wrong type", http.MethodPost, "/v1/chat/completions", `{"messages":[{"role":"user","content":42}]}`, http.StatusBadRequest, "invalid_json"},
		{"too large", http.MethodPost, "/v1/chat/completions", `{"messages":[{"role":"user","content":"` + strings.Repeat("a", MaxRequestBytes) + `"}]}`, http.StatusRequestEntityTooLarge, "request_too_large"},
		{"wrong method", http.MethodGet, "/v1/chat/completions", "", http.StatusMethodNotAllowed, "method_not_allowed"},
		{"unknown path", http.MethodPost, "/v1/embeddings", `{}`, http.StatusNotFound, "not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := do(t, tc.method, tc.path, tc.body)
			var e struct {
				Error struct {
					Message string `json:"message"`
					Type    string `json:"type"`
					Code    string `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || w.Code != tc.status || e.Error.Code != tc.code || e.Error.Message == "" || e.Error.Type == "" {
				t.Fatalf("status %d (want %d), %v: %s", w.Code, tc.status, err, w.Body)
			}
		})
	}
}

func TestServerModels(t *testing.T) {
	w := do(t, http.MethodGet, "/v1/models", "")
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"id":"demo"`) {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
}
