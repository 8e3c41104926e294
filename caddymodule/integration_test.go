package caddymodule_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"

	_ "github.com/promptwall/promptwall"
)

const (
	testToken   = "pw_test_0123456789abcdef0123456789abcdef0123456789abcdef"
	gatewayPort = 9480
	// fakeAWSKey and fakeAWSSecret are shaped like a real access key id
	// and secret; they are not ones. (A value with "EXAMPLE" in it is a
	// documentation placeholder, which the secrets scanner leaves alone.)
	fakeAWSKey    = "AKIAZ7VRSQ4LMXWB2PEH"
	fakeAWSSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8vN2kLp7Ht9"
)

const completion = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hi there."},"finish_reason":"stop"}]}`

// upstream is an OpenAI-shaped test server that remembers every body.
type upstream struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	answer string
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{answer: completion}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.bodies = append(u.bodies, b)
		answer := u.answer
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) received() [][]byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([][]byte(nil), u.bodies...)
}

// gatewayConfig is the test gateway in front of the provider "test".
func gatewayConfig(dbPath, upstreamAddr, extraGlobal, extraHandler string) string {
	return testCaddyfile(dbPath, upstreamAddr, extraGlobal, "provider test\n"+extraHandler)
}

// testCaddyfile is the Caddyfile every integration test starts from: the
// store at dbPath and the bootstrap token, global inside the promptwall
// global option, handler inside the promptwall handler of /v1/*, which
// proxies to upstreamAddr, and the API on /backend/v1/*.
func testCaddyfile(dbPath, upstreamAddr, global, handler string) string {
	return fmt.Sprintf(`{
	admin localhost:2999
	http_port %d
	https_port 9443
	grace_period 1ns
	promptwall {
		storage %s
		bootstrap_token %s
		%s
	}
}

:%d {
	handle /v1/* {
		promptwall {
			%s
		}
		reverse_proxy %s
	}
	handle /backend/v1/* {
		promptwall_api
	}
}
`, gatewayPort, dbPath, testToken, global, gatewayPort, handler, upstreamAddr)
}

func gatewayURL(path string) string { return fmt.Sprintf("http://localhost:%d%s", gatewayPort, path) }

func chatBody(content string) string {
	b, _ := json.Marshal(map[string]any{
		"model":    "gpt-test",
		"messages": []map[string]string{{"role": "system", "content": "You are terse."}, {"role": "user", "content": content}},
	})
	return string(b)
}

func post(t *testing.T, tester *caddytest.Tester, path, contentType, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, gatewayURL(path), strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := tester.Client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func apiGet(t *testing.T, tester *caddytest.Tester, path, token string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, gatewayURL(path), nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := tester.Client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

type scanList struct {
	Next  string `json:"next"`
	Prev  string `json:"prev"`
	Scans []struct {
		ID     string `json:"id"`
		Input  string `json:"input"`
		Type   string `json:"type"`
		Result struct {
			Outcome        string `json:"outcome"`
			ScannerResults []struct {
				ScannerID string `json:"scannerId"`
				Outcome   string `json:"outcome"`
				Data      struct {
					Type    string   `json:"type"`
					Matches [][2]int `json:"matches"`
				} `json:"data"`
			} `json:"scannerResults"`
		} `json:"result"`
	} `json:"scans"`
}

// waitForScans polls the API until n records are listed: records reach the
// store through the batching writer, a few milliseconds after the answer.
func waitForScans(t *testing.T, tester *caddytest.Tester, n int) scanList {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, body := apiGet(t, tester, "/backend/v1/scans?limit=100&onlyUser=false", testToken)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("scans: status %d: %s", resp.StatusCode, body)
		}
		var list scanList
		if err := json.Unmarshal(body, &list); err != nil {
			t.Fatalf("scans: %v: %s", err, body)
		}
		if len(list.Scans) >= n || time.Now().After(deadline) {
			if len(list.Scans) != n {
				t.Fatalf("scans: want %d records, got %d: %s", n, len(list.Scans), body)
			}
			return list
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestGatewayScreensForwardsAndRecords(t *testing.T) {
	up := newUpstream(t)
	dbPath := filepath.Join(t.TempDir(), "pw.db")
	tester := caddytest.NewTester(t)
	tester.InitServer(gatewayConfig(dbPath, up.Listener.Addr().String(), "", "max_body_size 64KiB"), "caddyfile")

	benign := chatBody("What is the capital of France?")
	resp, body := post(t, tester, "/v1/chat/completions", "application/json", benign)
	if resp.StatusCode != http.StatusOK || string(body) != completion {
		t.Fatalf("benign request: status %d body %s", resp.StatusCode, body)
	}
	if got := up.received(); len(got) != 1 || !bytes.Equal(got[0], []byte(benign)) {
		t.Fatalf("upstream must receive the request byte-identical; got %q", got)
	}
	if resp.Header.Get("X-Promptwall-Prompt-Id") == "" {
		t.Error("answer carries no X-Promptwall-Prompt-Id")
	}

	secret := chatBody("Deploy with aws_access_key_id=" + fakeAWSKey + " and aws_secret_access_key=" + fakeAWSSecret)
	resp, body = post(t, tester, "/v1/chat/completions", "application/json", secret)
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("secret request: want 403, got %d: %s", resp.StatusCode, body)
	}
	var oaiErr struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &oaiErr); err != nil || oaiErr.Error.Message == "" {
		t.Fatalf("blocked answer is not an OpenAI error: %s", body)
	}
	if !strings.Contains(oaiErr.Error.Message, "secret") {
		t.Errorf("blocked answer should carry the secrets scanner's flag message, got %q", oaiErr.Error.Message)
	}
	if n := len(up.received()); n != 1 {
		t.Fatalf("a blocked request must never reach the upstream; it received %d requests", n)
	}

	list := waitForScans(t, tester, 2)
	outcomes := map[string]string{}
	for _, s := range list.Scans {
		outcomes[s.Result.Outcome] = s.Input
		if strings.Contains(s.Input, fakeAWSKey) || strings.Contains(s.Input, fakeAWSSecret) {
			t.Errorf("a secret is stored in clear: %q", s.Input)
		}
		if s.Type != "prompt" {
			t.Errorf("record type: want prompt, got %q", s.Type)
		}
	}
	if outcomes["passed"] != "What is the capital of France?" {
		t.Errorf("passed record: input %q (outcomes %v)", outcomes["passed"], outcomes)
	}
	if _, ok := outcomes["blocked"]; !ok {
		t.Errorf("no blocked record: %v", outcomes)
	}
	// Newest first by default: the blocked request came second.
	if list.Scans[0].Result.Outcome != "blocked" {
		t.Errorf("default order must be newest first, got %q first", list.Scans[0].Result.Outcome)
	}

	// The prompt reads back by id with its memory.
	id := list.Scans[1].ID
	resp, body = apiGet(t, tester, "/backend/v1/prompts/"+id, testToken)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"prompt":"`+id+`"`) {
		t.Errorf("GET prompt: status %d body %s", resp.StatusCode, body)
	}

	// The database file never holds the secret in clear either.
	time.Sleep(50 * time.Millisecond)
	raw, err := os.ReadFile(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(fakeAWSKey)) || bytes.Contains(raw, []byte(fakeAWSSecret)) {
		t.Error("the database file holds the secret in clear")
	}
}

func TestGatewayRefusesBadRequests(t *testing.T) {
	up := newUpstream(t)
	dbPath := filepath.Join(t.TempDir(), "pw.db")
	tester := caddytest.NewTester(t)
	tester.InitServer(gatewayConfig(dbPath, up.Listener.Addr().String(), "", "max_body_size 1KiB"), "caddyfile")

	tests := []struct {
		name        string
		contentType string
		body        string
		status      int
	}{
		{"malformed JSON", "application/json", `{"model":"m","messages":[`, http.StatusBadRequest},
		{"missing messages", "application/json", `{"model":"m"}`, http.StatusBadRequest},
		{"messages of the wrong type", "application/json", `{"model":"m","messages":"hi"}`, http.StatusBadRequest},
		{"wrong content type", "text/plain", chatBody("hello"), http.StatusBadRequest},
		{"no content type", "", chatBody("hello"), http.StatusBadRequest},
		{"invalid UTF-8", "application/json", "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\"}]}", http.StatusBadRequest},
		{"oversized body", "application/json", chatBody(strings.Repeat("long prompt ", 200)), http.StatusRequestEntityTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := post(t, tester, "/v1/chat/completions", tc.contentType, tc.body)
			if resp.StatusCode != tc.status {
				t.Fatalf("want %d, got %d: %s", tc.status, resp.StatusCode, body)
			}
			var oaiErr struct {
				Error struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &oaiErr); err != nil || oaiErr.Error.Message == "" {
				t.Errorf("error body is not in OpenAI error format: %s", body)
			}
		})
	}
	if n := len(up.received()); n != 0 {
		t.Errorf("bad requests must never be forwarded; upstream received %d", n)
	}
	// Nothing was stored as a prompt.
	resp, body := apiGet(t, tester, "/backend/v1/scans?onlyUser=false", testToken)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"scans":[]`) {
		t.Errorf("bad requests must not be stored: %d %s", resp.StatusCode, body)
	}
}

func TestAPIAuthAndParameters(t *testing.T) {
	up := newUpstream(t)
	dbPath := filepath.Join(t.TempDir(), "pw.db")
	tester := caddytest.NewTester(t)
	tester.InitServer(gatewayConfig(dbPath, up.Listener.Addr().String(), "", ""), "caddyfile")

	tests := []struct {
		name   string
		path   string
		token  string
		status int
	}{
		{"no token", "/backend/v1/scans", "", http.StatusUnauthorized},
		{"wrong token", "/backend/v1/scans", "pw_wrong", http.StatusUnauthorized},
		{"limit=0", "/backend/v1/scans?limit=0", testToken, http.StatusBadRequest},
		{"limit=101", "/backend/v1/scans?limit=101", testToken, http.StatusBadRequest},
		{"ok", "/backend/v1/scans?limit=5", testToken, http.StatusOK},
		{"malformed prompt id", "/backend/v1/prompts/not-a-uuid", testToken, http.StatusBadRequest},
		{"unknown prompt id", "/backend/v1/prompts/0190b5b4-0000-7000-8000-000000000000", testToken, http.StatusNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := apiGet(t, tester, tc.path, tc.token)
			if resp.StatusCode != tc.status {
				t.Fatalf("want %d, got %d: %s", tc.status, resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("content type %q", ct)
			}
			if tc.status == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without WWW-Authenticate: Bearer")
			}
		})
	}
}

func TestReloadKeepsStoreOpenAndRecords(t *testing.T) {
	up := newUpstream(t)
	dbPath := filepath.Join(t.TempDir(), "pw.db")
	tester := caddytest.NewTester(t)
	tester.InitServer(gatewayConfig(dbPath, up.Listener.Addr().String(), "", ""), "caddyfile")

	for i := 0; i < 3; i++ {
		if resp, body := post(t, tester, "/v1/chat/completions", "application/json", chatBody(fmt.Sprintf("question %d", i))); resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
	}
	waitForScans(t, tester, 3)

	// A changed config is provisioned while the old one still holds the
	// database: the store must be shared, not reopened (which would hang on
	// bbolt's file lock).
	tester.InitServer(gatewayConfig(dbPath, up.Listener.Addr().String(), "retention 48h", "max_body_size 2MiB"), "caddyfile")
	if resp, body := post(t, tester, "/v1/chat/completions", "application/json", chatBody("after reload")); resp.StatusCode != http.StatusOK {
		t.Fatalf("after reload: status %d: %s", resp.StatusCode, body)
	}
	list := waitForScans(t, tester, 4)
	if list.Scans[0].Input != "after reload" {
		t.Errorf("newest record after reload: %q", list.Scans[0].Input)
	}
}
