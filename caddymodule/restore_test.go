package caddymodule_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddytest"
)

// With modify mode the provider never sees the e-mail address; with
// restore_placeholders the user still reads it in the answer.
func TestRedactedValuesRestoredInAnswer(t *testing.T) {
	const email = "ada.lovelace@example.org"
	tests := []struct {
		name    string
		restore string
		want    string
	}{
		{"placeholders kept", "", "I will write to [EMAIL_ADDRESS_1] today."},
		{"placeholders restored", "restore_placeholders", "I will write to " + email + " today."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var seen string
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				seen = string(b)
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"I will write to [EMAIL_ADDRESS_1] today."},"finish_reason":"stop"}]}`)
			}))
			t.Cleanup(up.Close)
			endpoint := `endpoint default {
			` + tc.restore + `
			scanner pii {
				mode modify
			}
		}`
			tester := caddytest.NewTester(t)
			tester.InitServer(gatewayConfig(filepath.Join(t.TempDir(), "pw.db"), up.Listener.Addr().String(), endpoint, ""), "caddyfile")
			resp, body := post(t, tester, "/v1/chat/completions", "application/json", chatBody("Please email "+email+" about the invoice."))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if strings.Contains(seen, email) || !strings.Contains(seen, "[EMAIL_ADDRESS_1]") {
				t.Fatalf("the provider must see the placeholder, not the address: %s", seen)
			}
			var out struct {
				Choices []struct {
					Message struct{ Content string } `json:"message"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(body, &out); err != nil || len(out.Choices) == 0 {
				t.Fatalf("answer: %s", body)
			}
			if got := out.Choices[0].Message.Content; got != tc.want {
				t.Errorf("answer text %q, want %q", got, tc.want)
			}
		})
	}
}
