package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddytest"
)

// A reload that fails at any step of provisioning or starting must leave
// the running config's provider limits and declared identities in force:
// Caddy keeps the old config, so the shared limiter and the store must
// too.
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

	// The running config declares ada a member; every rejected one makes
	// her an owner and declares eve.
	declare := func(users string) string {
		return "org default {\n\t\t\t" + users + "\n\t\t}\n\t\tprovider unused {\n\t\t\ttype openai\n\t\t\tbase_url http://127.0.0.1:1"
	}
	good := providerConfig(dbPath, up.Listener.Addr().String(), "request_concurrency_limit 1\n\t\t}\n\t\t"+declare("user ada@example.org member"), "")
	tester := caddytest.NewTester(t)
	tester.InitServer(good, "caddyfile")
	// A file where a directory is needed: the store cannot be opened.
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	loose := "request_concurrency_limit 100\n\t\t\tmax_requests_per_second 1000"
	cases := []struct {
		name string
		// global is added inside the promptwall block, handler inside the
		// promptwall handler, site after the gateway's site.
		global, handler, site string
		// set overrides fields of the adapted promptwall app, for values
		// the Caddyfile parser already refuses.
		set map[string]any
		// started: the promptwall app may have started, and been stopped,
		// before the failure. Config as code creates and never deletes, so
		// only then may a user the rejected config declared stay created.
		started bool
	}{
		{name: "durability invalid", set: map[string]any{"durability": "sometimes"}},
		{name: "store cannot be opened", set: map[string]any{"storage": filepath.Join(notDir, "pw.db")}},
		{name: "declared user invalid", global: "org acme {\n\t\t\tuser not-an-address\n\t\t}"},
		{name: "provider invalid", global: "provider broken {\n\t\t\ttype nosuchtype\n\t\t}"},
		{name: "provider declared twice", global: "provider unused {\n\t\t\ttype openai\n\t\t}"},
		{name: "endpoint compile fails", global: "endpoint broken {\n\t\t\tpackages nosuchpackage\n\t\t}"},
		{name: "campaign fails", global: "campaign c1 {\n\t\t\tproviders nosuchprovider\n\t\t}"},
		{name: "handler provisioning fails", handler: "endpoint nosuchendpoint"},
		{name: "another app fails to start", site: fmt.Sprintf("http://127.0.0.1:%d {\n\trespond ok\n}", heldPort), started: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := providerConfig(dbPath, up.Listener.Addr().String(), loose+"\n\t\t}\n\t\t"+tc.global+"\n\t\t"+
				declare("user ada@example.org owner\n\t\t\tuser eve@example.org owner"), tc.handler) + tc.site
			cfg, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(bad), nil)
			if err != nil {
				t.Fatalf("adapting: %v", err)
			}
			if tc.set != nil {
				cfg = setAppFields(t, cfg, tc.set)
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
			roles := declaredRoles(t, tester)
			if roles["ada@example.org"] != "member" {
				t.Errorf("a rejected reload changed a declared user's role: ada is %q", roles["ada@example.org"])
			}
			if _, ok := roles["eve@example.org"]; ok && !tc.started {
				t.Errorf("a config rejected while provisioning created a user: %v", roles)
			}
		})
	}
}

// declaredRoles returns the default organization's users by e-mail with
// their role.
func declaredRoles(t *testing.T, tester *caddytest.Tester) map[string]string {
	t.Helper()
	resp, body := apiGet(t, tester, "/backend/v1/users?includeRoles=true&limit=100", testToken)
	var list struct {
		Users []struct {
			Email string   `json:"email"`
			Roles []string `json:"roles"`
		} `json:"users"`
	}
	if err := json.Unmarshal(body, &list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /users: %d %s", resp.StatusCode, body)
	}
	roles := map[string]string{}
	for _, u := range list.Users {
		roles[u.Email] = strings.Join(u.Roles, ",")
	}
	return roles
}

// setAppFields overrides fields of the promptwall app in an adapted config.
func setAppFields(t *testing.T, cfg []byte, set map[string]any) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(cfg, &doc); err != nil {
		t.Fatal(err)
	}
	app := doc["apps"].(map[string]any)["promptwall"].(map[string]any)
	for k, v := range set {
		app[k] = v
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
