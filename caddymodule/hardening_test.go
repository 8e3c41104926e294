package caddymodule_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddytest"
)

func TestGatewayRefusesUnscreenableInput(t *testing.T) {
	up := newUpstream(t)
	tester := caddytest.NewTester(t)
	tester.InitServer(gatewayConfig(filepath.Join(t.TempDir(), "pw.db"), up.Listener.Addr().String(), "", ""), "caddyfile")
	cases := []struct {
		name, method, body string
		status             int
		forwarded          bool
	}{
		{"GET with a body", http.MethodGet, chatBody("AKIAZ7VRSQ4LMXWB2PEH"), http.StatusBadRequest, false},
		{"OPTIONS with a body", http.MethodOptions, chatBody("hello"), http.StatusBadRequest, false},
		{"HEAD with a body", http.MethodHead, chatBody("AKIAZ7VRSQ4LMXWB2PEH"), http.StatusBadRequest, false},
		{"DELETE with a secret", http.MethodDelete, chatBody("AKIAZ7VRSQ4LMXWB2PEH"), http.StatusForbidden, false},
		{"GET without a body", http.MethodGet, "", http.StatusOK, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(up.received())
			req, _ := http.NewRequest(tc.method, gatewayURL("/v1/chat/completions"), strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			_, b := answerWith(t, tester.Client, req, tc.status)
			if tc.status != http.StatusOK && tc.method != http.MethodHead && !json.Valid(b) {
				t.Fatalf("refusal is not JSON: %s", b)
			}
			if got := len(up.received()) > before; got != tc.forwarded {
				t.Fatalf("forwarded = %v, want %v", got, tc.forwarded)
			}
		})
	}
}

// The stored answer masks what the input's scanners found, when the model
// echoes it, as the input and the raw provider answer do.
func TestEchoedPersonalDataMaskedInResponse(t *testing.T) {
	up := newUpstream(t)
	const email = "ada.lovelace@example.org"
	up.answer = `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"I will write to ` + email + ` today."},"finish_reason":"stop"}]}`
	tester := caddytest.NewTester(t)
	tester.InitServer(gatewayConfig(filepath.Join(t.TempDir(), "pw.db"), up.Listener.Addr().String(), "", ""), "caddyfile")
	resp, body := post(t, tester, "/v1/chat/completions", "application/json", chatBody("Please email me at "+email))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	id := resp.Header.Get("X-Promptwall-Prompt-Id")
	// Read at once: the id in the header is readable without waiting.
	r, rec := apiGet(t, tester, "/backend/v1/prompts/"+id, testToken)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET prompt: %d %s", r.StatusCode, rec)
	}
	if strings.Contains(string(rec), email) {
		t.Fatalf("the record holds the address in clear: %s", rec)
	}
	if !strings.Contains(string(rec), `"response":"I will write to `) {
		t.Fatalf("the record lost its response: %s", rec)
	}
}

// The token is accepted only in headers: Caddy logs request URIs.
func TestTokenInQueryRefused(t *testing.T) {
	up := newCountingUpstream(t, 0)
	tester := caddytest.NewTester(t)
	tester.InitServer(providerConfig(filepath.Join(t.TempDir(), "pw.db"), up.Listener.Addr().String(), "", "authenticate"), "caddyfile")
	for _, tc := range []struct {
		name, query, header string
		status              int
	}{
		{"token in ?key=", "?key=" + testToken, "", http.StatusUnauthorized},
		{"token in ?key= and a header", "?key=" + testToken, testToken, http.StatusUnauthorized},
		{"token in a header", "", testToken, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := up.total.Load()
			req, _ := http.NewRequest(http.MethodPost, gatewayURL("/v1/chat/completions"+tc.query), strings.NewReader(chatBody("hello")))
			req.Header.Set("Content-Type", "application/json")
			if tc.header != "" {
				req.Header.Set("Authorization", "Bearer "+tc.header)
			}
			_, b := answerWith(t, tester.Client, req, tc.status)
			if tc.status != http.StatusOK && (up.total.Load() != before || !strings.Contains(string(b), "header")) {
				t.Fatalf("forwarded, or the refusal does not say where the token goes: %s", b)
			}
		})
	}
}

// A body that stalls gets 408 and one that is malformed 400, both in the
// format's JSON error shape.
func TestUnreadableBodies(t *testing.T) {
	up := newUpstream(t)
	tester := caddytest.NewTester(t)
	tester.InitServer(gatewayConfig(filepath.Join(t.TempDir(), "pw.db"), up.Listener.Addr().String(), "", "body_read_timeout 200ms"), "caddyfile")
	head := "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
	cases := []struct {
		name, raw string
		status    int
		code      string
	}{
		{"stalled body", head + "Content-Length: 100\r\n\r\n{\"model\":", http.StatusRequestTimeout, "request_timeout"},
		{"bad chunk size", head + "Transfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n", http.StatusBadRequest, "invalid_request"},
		{"invalid UTF-8", head + "Content-Length: 16\r\n\r\n{\"model\":\"\xff\xfe\"}  ", http.StatusBadRequest, "invalid_request"},
		{"not JSON", head + "Content-Length: 5\r\n\r\nhello", http.StatusBadRequest, "invalid_json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(gatewayURL(""), "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, tc.raw); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var e struct {
				Error struct{ Code string } `json:"error"`
			}
			if err := json.Unmarshal(b, &e); err != nil || resp.StatusCode != tc.status || e.Error.Code != tc.code {
				t.Fatalf("got %d %q, want %d with a JSON error of code %s", resp.StatusCode, b, tc.status, tc.code)
			}
		})
	}
	if n := len(up.received()); n != 0 {
		t.Fatalf("%d unreadable bodies were forwarded", n)
	}
}
