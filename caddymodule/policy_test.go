package caddymodule_test

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/caddyserver/caddy/v2/caddytest"
)

// A scanner the global block forces keeps its own detector: an endpoint
// that declares a scanner of the same id with another configuration cannot
// swap what it looks for.
func TestForcedScannerKeepsItsDetector(t *testing.T) {
	up := newUpstream(t)
	dbPath := filepath.Join(t.TempDir(), "pw.db")
	global := `scanner banned_substrings guard {
			force
			substrings alpha
		}
		endpoint support {
			scanner banned_substrings guard {
				substrings beta
			}
		}`
	tester := caddytest.NewTester(t)
	tester.InitServer(gatewayConfig(dbPath, up.Listener.Addr().String(), global, "endpoint support"), "caddyfile")

	tests := []struct {
		prompt string
		status int
	}{
		{"tell me about alpha", http.StatusForbidden},
		{"tell me about beta", http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.prompt, func(t *testing.T) {
			resp, body := post(t, tester, "/v1/chat/completions", "application/json", chatBody(tc.prompt))
			if resp.StatusCode != tc.status {
				t.Fatalf("want %d, got %d: %s", tc.status, resp.StatusCode, body)
			}
		})
	}
}
