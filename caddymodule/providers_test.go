package caddymodule_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/promptwall/promptwall/caddymodule"
)

const providerSecret = "sk-provider-secret-0123456789abcdefghij"

// countingUpstream counts requests in flight and remembers the credentials
// it was sent.
type countingUpstream struct {
	*httptest.Server
	inFlight, maxInFlight, total atomic.Int64
	mu                           sync.Mutex
	auth                         []string
	delay                        time.Duration
}

func newCountingUpstream(t *testing.T, delay time.Duration) *countingUpstream {
	u := &countingUpstream{delay: delay}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := u.inFlight.Add(1)
		defer u.inFlight.Add(-1)
		for {
			m := u.maxInFlight.Load()
			if n <= m || u.maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		u.total.Add(1)
		u.mu.Lock()
		u.auth = append(u.auth, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Api-Key"))
		u.mu.Unlock()
		io.Copy(io.Discard, r.Body)
		time.Sleep(u.delay)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, completion)
	}))
	t.Cleanup(u.Close)
	return u
}

// providerConfig is the test gateway in front of a declared OpenAI
// provider at upstream; limitsBlock goes into the provider's block.
func providerConfig(dbPath, upstream, limitsBlock, handlerExtra string) string {
	return testCaddyfile(dbPath, upstream, openaiProvider(upstream, limitsBlock), "provider openai\n"+handlerExtra)
}

// openaiProvider declares the provider "openai" at upstream with the test
// key; extra goes into its block.
func openaiProvider(upstream, extra string) string {
	return fmt.Sprintf(`provider openai {
			type openai
			base_url http://%s
			secret api_key %s
			%s
		}`, upstream, providerSecret, extra)
}

func postWithKey(t *testing.T, client *http.Client, key, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, gatewayURL("/v1/chat/completions"), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestVirtualKeys(t *testing.T) {
	up := newCountingUpstream(t, 0)
	dbPath := filepath.Join(t.TempDir(), "pw.db")
	tester := caddytest.NewTester(t)
	tester.InitServer(providerConfig(dbPath, up.Listener.Addr().String(), "", "authenticate"), "caddyfile")

	// A user with their own token, created through the running app's store.
	app, err := caddy.ActiveContext().App("promptwall")
	if err != nil {
		t.Fatal(err)
	}
	st := app.(*caddymodule.App).Store()
	userToken := createUserToken(t, st)

	tests := []struct {
		name   string
		key    string
		status int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"wrong token", "pw_not-a-real-token", http.StatusUnauthorized},
		{"the client's own provider key is not a gateway token", "sk-client-own-key", http.StatusUnauthorized},
		{"bootstrap token", testToken, http.StatusOK},
		{"user token", userToken, http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := up.total.Load()
			resp, body := postWithKey(t, tester.Client, tc.key, chatBody("hello"))
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			forwarded := up.total.Load() - before
			if (tc.status == http.StatusOK) != (forwarded == 1) {
				t.Fatalf("forwarded %d requests", forwarded)
			}
		})
	}
	for _, a := range up.auth {
		if a != "Bearer "+providerSecret+"|" {
			t.Errorf("the upstream must see the provider's secret and nothing else, saw %q", a)
		}
	}
	// The user's record is attributed to the user: visible with onlyUser.
	list := waitForScans(t, tester, 2)
	_ = list
	resp, body := apiGet(t, tester, "/backend/v1/scans?onlyUser=true", userToken)
	if resp.StatusCode != http.StatusOK || strings.Count(string(body), `"id":`) != 1 {
		t.Errorf("the user's own records: %d %s", resp.StatusCode, body)
	}
	// No secret or token anywhere in API answers or the database file.
	resp, body = apiGet(t, tester, "/backend/v1/providers", testToken)
	for _, secret := range []string{providerSecret, userToken, testToken} {
		if strings.Contains(string(body), secret) {
			t.Errorf("a secret appears in GET /providers (%d)", resp.StatusCode)
		}
	}
	time.Sleep(50 * time.Millisecond)
	raw, _ := os.ReadFile(dbPath)
	for _, secret := range []string{providerSecret, userToken, testToken} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the database file holds a secret in clear")
		}
	}
}

func TestConcurrencyLimitIsExact(t *testing.T) {
	tests := []struct {
		name      string
		handler   string
		want429   bool
		wantAllOK bool
	}{
		{"no queue wait: over the limit gets 429", "", true, false},
		{"queue wait: every request waits its turn", "max_queue_wait 10s", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			up := newCountingUpstream(t, 150*time.Millisecond)
			tester := caddytest.NewTester(t)
			tester.InitServer(providerConfig(filepath.Join(t.TempDir(), "pw.db"), up.Listener.Addr().String(), "request_concurrency_limit 2", tc.handler), "caddyfile")
			var wg sync.WaitGroup
			var ok, limited atomic.Int64
			var badRetry atomic.Bool
			for i := 0; i < 8; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					resp, _ := postWithKey(t, tester.Client, "", chatBody("hello"))
					switch resp.StatusCode {
					case http.StatusOK:
						ok.Add(1)
					case http.StatusTooManyRequests:
						limited.Add(1)
						if resp.Header.Get("Retry-After") == "" {
							badRetry.Store(true)
						}
					}
				}()
			}
			wg.Wait()
			if m := up.maxInFlight.Load(); m > 2 {
				t.Fatalf("limit 2, but %d requests were in flight upstream at once", m)
			}
			if tc.want429 && limited.Load() == 0 {
				t.Error("requests over the limit with no queue wait must get 429")
			}
			if badRetry.Load() {
				t.Error("a 429 must carry Retry-After")
			}
			if tc.wantAllOK && ok.Load() != 8 {
				t.Errorf("with a queue wait all 8 should pass, %d did (%d limited)", ok.Load(), limited.Load())
			}
		})
	}
}

// A reload must neither reset the limiter nor leak the slots that requests
// in flight hold.
func TestReloadKeepsLimits(t *testing.T) {
	up := newCountingUpstream(t, 700*time.Millisecond)
	dbPath := filepath.Join(t.TempDir(), "pw.db")
	tester := caddytest.NewTester(t)
	cfg := func(extra string) string {
		return providerConfig(dbPath, up.Listener.Addr().String(), "request_concurrency_limit 1", extra)
	}
	tester.InitServer(cfg(""), "caddyfile")
	done := make(chan int)
	go func() {
		resp, _ := postWithKey(t, tester.Client, "", chatBody("slow one"))
		done <- resp.StatusCode
	}()
	time.Sleep(200 * time.Millisecond) // the slow request holds the only slot
	tester.InitServer(cfg("max_body_size 1MiB"), "caddyfile")
	resp, body := postWithKey(t, tester.Client, "", chatBody("during the slow one"))
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("after a reload the held slot must still count: status %d %s", resp.StatusCode, body)
	}
	if code := <-done; code != http.StatusOK {
		t.Fatalf("the slow request: %d", code)
	}
	// Once it finished, its slot is free again (no leak across the reload).
	if resp, body := postWithKey(t, tester.Client, "", chatBody("after")); resp.StatusCode != http.StatusOK {
		t.Fatalf("the slot leaked across the reload: %d %s", resp.StatusCode, body)
	}
}

func TestRateLimit(t *testing.T) {
	up := newCountingUpstream(t, 0)
	tester := caddytest.NewTester(t)
	tester.InitServer(providerConfig(filepath.Join(t.TempDir(), "pw.db"), up.Listener.Addr().String(), "max_requests_per_second 2", ""), "caddyfile")
	var ok, limited int
	for i := 0; i < 6; i++ {
		resp, _ := postWithKey(t, tester.Client, "", chatBody("hello"))
		switch resp.StatusCode {
		case http.StatusOK:
			ok++
		case http.StatusTooManyRequests:
			limited++
		}
	}
	// A burst of 2 at 2/s: six back-to-back requests let 2 (or 3 if a
	// token refilled meanwhile) through.
	if ok < 2 || ok > 3 || limited != 6-ok {
		t.Errorf("ok %d, limited %d", ok, limited)
	}
}
