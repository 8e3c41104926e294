package caddymodule_test

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddytest"
)

// A reload that fails at any step of provisioning or starting must leave
// the running config's provider limits in force: Caddy keeps the old
// config, so the shared limiter must too.
func TestRejectedReloadKeepsLimits(t *testing.T) {
	up := newCountingUpstream(t, 500*time.Millisecond)
	dbPath := filepath.Join(t.TempDir(), "pw.db")
	// A port held by the test makes the HTTP app fail in Start, after the
	// promptwall app provisioned (and possibly started).
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	heldPort := held.Addr().(*net.TCPAddr).Port

	good := providerConfig(dbPath, up.Listener.Addr().String(), "request_concurrency_limit 1", "")
	tester := caddytest.NewTester(t)
	tester.InitServer(good, "caddyfile")

	loose := "request_concurrency_limit 100\n\t\t\tmax_requests_per_second 1000"
	cases := []struct {
		name string
		// global is added inside the promptwall block, handler inside the
		// promptwall handler, site after the gateway's site.
		global, handler, site string
	}{
		{name: "endpoint compile fails", global: "endpoint broken {\n\t\t\tpackages nosuchpackage\n\t\t}"},
		{name: "campaign fails", global: "campaign c1 {\n\t\t\tproviders nosuchprovider\n\t\t}"},
		{name: "handler provisioning fails", handler: "endpoint nosuchendpoint"},
		{name: "another app fails to start", site: fmt.Sprintf("http://127.0.0.1:%d {\n\trespond ok\n}", heldPort)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := providerConfig(dbPath, up.Listener.Addr().String(), loose+"\n\t\t}\n\t\t"+tc.global+"\n\t\tprovider unused {\n\t\t\ttype openai\n\t\t\tbase_url http://127.0.0.1:1", tc.handler) + tc.site
			cfg, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(bad), nil)
			if err != nil {
				t.Fatalf("adapting: %v", err)
			}
			if err := caddy.Load(cfg, true); err == nil {
				t.Fatal("the broken config was loaded")
			}
			// The running config's limit is 1: with one request in flight,
			// a second one is refused.
			done := make(chan int)
			go func() {
				resp, _ := postWithKey(t, tester.Client, "", chatBody("slow one"))
				done <- resp.StatusCode
			}()
			for up.inFlight.Load() == 0 {
				time.Sleep(5 * time.Millisecond)
			}
			resp, body := postWithKey(t, tester.Client, "", chatBody("second"))
			if code := <-done; code != http.StatusOK {
				t.Fatalf("the first request: %d", code)
			}
			if resp.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("a rejected reload changed the live concurrency limit: second request got %d %s", resp.StatusCode, body)
			}
		})
	}
}
