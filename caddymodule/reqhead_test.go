package caddymodule_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/promptwall/promptwall/internal/reqhead"
)

// Over-long request lines and headers are refused in the JSON error shape
// of the route (the provider's on the gateway, the API's on the API), as
// the shipped Caddyfile lets such heads reach the handlers.
func TestLongHeadsRefusedAsJSON(t *testing.T) {
	tester := caddytest.NewTester(t)
	tester.InitServer(quickStartConfig(t), "caddyfile")
	over := strings.Repeat("a", reqhead.MaxBytes)
	cases := []struct {
		name, method, path, header string
		status                     int
		// code is the error code of a JSON refusal, "" for a plain-text one.
		code string
	}{
		{"gateway, query over 64KB", http.MethodPost, "/v1/chat/completions?q=" + over, "", http.StatusRequestHeaderFieldsTooLarge, reqhead.Code},
		{"gateway GET, query over 64KB", http.MethodGet, "/v1/models?q=" + over, "", http.StatusRequestHeaderFieldsTooLarge, reqhead.Code},
		{"gateway, header over 64KB", http.MethodPost, "/v1/chat/completions", over, http.StatusRequestHeaderFieldsTooLarge, reqhead.Code},
		{"API, query over 64KB", http.MethodGet, "/backend/v1/prompts?q=" + over, "", http.StatusRequestHeaderFieldsTooLarge, reqhead.Code},
		{"API, header over 64KB", http.MethodGet, "/backend/v1/prompts", over, http.StatusRequestHeaderFieldsTooLarge, reqhead.Code},
		{"gateway, query under 64KB", http.MethodPost, "/v1/chat/completions?q=" + over[:60<<10], "", http.StatusOK, ""},
		// Beyond the server's max_header_size Go answers before any handler.
		{"over the server's 1MB", http.MethodGet, "/v1/models?q=" + strings.Repeat(over, 17), "", http.StatusRequestHeaderFieldsTooLarge, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, gatewayURL(tc.path), strings.NewReader(chatBody("hello")))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+testToken)
			if tc.header != "" {
				req.Header.Set("X-Long", tc.header)
			}
			if tc.method == http.MethodGet {
				req.Body, req.ContentLength = nil, 0
			}
			resp, b := answerWith(t, tester.Client, req, tc.status)
			if tc.status == http.StatusOK {
				return
			}
			var e struct {
				Error struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			err := json.Unmarshal(b, &e)
			if tc.code == "" {
				if err == nil {
					t.Fatalf("want Go's plain-text refusal, got JSON %s", b)
				}
				return
			}
			if err != nil || e.Error.Code != tc.code || !strings.Contains(e.Error.Message, "limit is 65536") {
				t.Fatalf("want JSON error code %q stating the limit, got %q (%v)", tc.code, b, err)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}
