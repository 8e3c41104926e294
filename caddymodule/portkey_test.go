package caddymodule_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/promptwall/promptwall/internal/testsvc"
)

// portkeyDir holds the package.json and package-lock.json that pin the
// Portkey gateway; `npm ci` there installs it (.ci/run does).
const portkeyDir = "../guardrail/testdata/portkey"

// boundedBuffer keeps the first bytes of a child's output for diagnostics.
type boundedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := 64<<10 - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func freePort(t *testing.T) int {
	t.Helper()
	port, err := testsvc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// startPortkey runs the open-source Portkey gateway on loopback, trusting
// the test certificate, and waits until it answers.
func startPortkey(t *testing.T, certFile string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: install Debian's nodejs and npm, then run `npm ci --prefix guardrail/testdata/portkey` (.ci/run does)")
	}
	script, err := filepath.Abs(filepath.Join(portkeyDir, "node_modules", "@portkey-ai", "gateway", "build", "start-server.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Skip("the Portkey gateway is not installed: run `npm ci --prefix guardrail/testdata/portkey` (.ci/run does)")
	}
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, script, "--port="+strconv.Itoa(port), "--headless")
	cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+certFile, "NODE_ENV=production")
	out := &boundedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("portkey output:\n%s", out.String())
		}
	})
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	// Node needs a few seconds to load the gateway on a busy machine.
	for range 600 {
		resp, err := http.Get(base + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if cmd.ProcessState != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the Portkey gateway did not start:\n%s", out.String())
	return ""
}

// TestPortkeyGateway puts Promptwall behind a real Portkey gateway, as its
// webhook guardrail and as its promptsecurity plugin's Prompt Security API:
// a benign prompt reaches the (mock) model, a prompt with a secret is
// refused by Portkey because Promptwall said so, and every check is a scan
// record in GET /backend/v1/scans.
func TestPortkeyGateway(t *testing.T) {
	s := startGuardrail(t)
	base := startPortkey(t, s.certFile)
	up := newUpstream(t)

	webhook := map[string]any{
		"id": "default.webhook",
		"parameters": map[string]any{
			"webhookURL": guardURL("/portkey/webhook"),
			"headers":    map[string]string{"Authorization": "Bearer " + s.userToken},
		},
	}
	protect := map[string]any{
		"id": "promptsecurity.protectPrompt",
		"parameters": map[string]any{
			"credentials": map[string]string{"apiDomain": fmt.Sprintf("127.0.0.1:%d", guardHTTPSPort), "apiKey": s.userToken},
		},
	}
	tests := []struct {
		name, guard, prompt string
		check               map[string]any
		status              int
		outcome             string
	}{
		{"webhook benign", "portkey", "What is the capital of France?", webhook, http.StatusOK, "passed"},
		{"webhook secret", "portkey", "deploy with " + fakeAWSKey + " please", webhook, 446, "blocked"},
		{"promptsecurity benign", "prompt_security", "Name three rivers in Spain.", protect, http.StatusOK, "passed"},
		{"promptsecurity secret", "prompt_security", "the key is " + fakeAWSKey, protect, 446, "blocked"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(up.received())
			config, _ := json.Marshal(map[string]any{
				"provider":    "openai",
				"api_key":     "sk-test",
				"custom_host": up.URL + "/v1",
				"before_request_hooks": []map[string]any{{
					"type": "guardrail", "id": "promptwall", "deny": true,
					"checks": []map[string]any{tc.check},
				}},
			})
			req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(chatBody(tc.prompt)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("x-portkey-config", string(config))
			_, body := answerWith(t, http.DefaultClient, req, tc.status)
			forwarded := len(up.received()) - before
			if (tc.outcome == "passed") != (forwarded == 1) {
				t.Fatalf("outcome %s but the model was called %d times", tc.outcome, forwarded)
			}
			// Portkey's refusal carries Promptwall's answer in its hook
			// results: the endpoint's flag message, never the secret.
			if tc.outcome == "blocked" {
				if !bytes.Contains(body, []byte("hooks_failed")) || !bytes.Contains(body, []byte("Remove the secret and try again.")) {
					t.Errorf("the refusal does not carry Promptwall's verdict: %s", body)
				}
				if bytes.Contains(body, []byte(fakeAWSKey)) {
					t.Errorf("the refusal quotes the secret: %s", body)
				}
			}
		})
	}

	// Each check is a scan record of the token's user, with the caller
	// named in its metadata.
	want := map[string]int{}
	for _, tc := range tests {
		want[tc.guard+"/"+tc.outcome]++
	}
	got := map[string]int{}
	for range 200 {
		got = s.scansByCaller(t)
		if fmt.Sprint(got) == fmt.Sprint(want) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("scans by caller/outcome %v, want %v", got, want)
	}
}

// scansByCaller counts the scans in GET /backend/v1/scans by caller and
// outcome.
func (s *guardServer) scansByCaller(t *testing.T) map[string]int {
	t.Helper()
	resp, b := s.do(t, http.MethodGet, guardURL("/backend/v1/scans?limit=100"), map[string]string{"Authorization": "Bearer " + s.userToken}, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scans: %d %s", resp.StatusCode, b)
	}
	var page struct {
		Scans []scanRecord `json:"scans"`
	}
	if err := json.Unmarshal(b, &page); err != nil {
		t.Fatalf("scans %s: %v", b, err)
	}
	out := map[string]int{}
	for _, rec := range page.Scans {
		var md struct{ Caller string }
		_ = json.Unmarshal([]byte(rec.ExternalMetadata), &md)
		if rec.Type != "scan" {
			t.Errorf("record %s has type %q", rec.ID, rec.Type)
		}
		out[md.Caller+"/"+rec.Result.Outcome]++
	}
	return out
}
