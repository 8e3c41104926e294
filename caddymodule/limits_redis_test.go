package caddymodule

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
)

func TestUnmarshalLimitsEngine(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		want    map[string]any
		wantErr string
	}{
		{
			name:  "redis with every option",
			input: "promptwall {\n limits redis {\n  addr r:6379\n  username u\n  password p\n  db 2\n  prefix x:\n  lease_ttl 5s\n  timeout 1s\n  pool_size 4\n  fail_mode closed\n }\n}",
			want: map[string]any{"engine": "redis", "addr": "r:6379", "username": "u", "password": "p", "db": 2.0,
				"prefix": "x:", "lease_ttl": 5e9, "timeout": 1e9, "pool_size": 4.0, "fail_mode": "closed"},
		},
		{name: "no engine", input: "promptwall {\n limits\n}", wantErr: "wrong argument count"},
		{name: "unknown engine", input: "promptwall {\n limits memcached {\n }\n}", wantErr: "promptwall.limits.memcached"},
		{name: "unknown option", input: "promptwall {\n limits redis {\n  adr r:6379\n }\n}", wantErr: `unknown limits redis sub-directive "adr", at Testfile:3`},
		{name: "duplicate option", input: "promptwall {\n limits redis {\n  addr a:1\n  addr b:2\n }\n}", wantErr: `duplicate limits redis sub-directive "addr"`},
		{name: "twice", input: "promptwall {\n limits redis {\n  addr a:1\n }\n limits redis {\n  addr a:1\n }\n}", wantErr: `duplicate sub-directive "limits"`},
		{name: "bad lease", input: "promptwall {\n limits redis {\n  lease_ttl long\n }\n}", wantErr: `bad duration "long"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := unmarshalCase[App](t, tc.input, tc.wantErr)
			if a == nil {
				return
			}
			var got map[string]any
			if err := json.Unmarshal(a.LimitsRaw, &got); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
		})
	}
}

func TestRedisLimitsValidate(t *testing.T) {
	tests := []struct {
		name    string
		r       RedisLimits
		wantErr string
	}{
		{"ok closed", RedisLimits{Addr: "r:1", FailMode: "closed"}, ""},
		{"ok open", RedisLimits{Addr: "r:1", FailMode: "open"}, ""},
		{"no addr", RedisLimits{FailMode: "closed"}, "addr is required"},
		{"bad fail mode", RedisLimits{Addr: "r:1", FailMode: "sometimes"}, `fail_mode must be "open" or "closed"`},
		{"negative lease", RedisLimits{Addr: "r:1", FailMode: "closed", LeaseTTL: -1}, "must not be negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.r.Validate()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Validate = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestMultiInstanceExampleAdapts keeps the README's example configs valid:
// both instances on PostgreSQL and Redis.
func TestMultiInstanceExampleAdapts(t *testing.T) {
	for _, name := range []string{"gateway-a.Caddyfile", "gateway-b.Caddyfile"} {
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile("../examples/multi-instance/" + name)
			if err != nil {
				t.Fatal(err)
			}
			out, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt(body, map[string]any{"filename": name})
			if err != nil {
				t.Fatalf("adapt: %v", err)
			}
			for _, w := range warnings {
				t.Errorf("adapt warning: %s", w.Message)
			}
			var cfg struct {
				Apps struct {
					Promptwall struct {
						Limits     map[string]any `json:"limits"`
						Storage    map[string]any `json:"storage"`
						Durability string         `json:"durability"`
					} `json:"promptwall"`
				} `json:"apps"`
			}
			if err := json.Unmarshal(out, &cfg); err != nil {
				t.Fatal(err)
			}
			pw := cfg.Apps.Promptwall
			if l := pw.Limits; l["engine"] != "redis" || l["fail_mode"] != "closed" {
				t.Errorf("example limits = %v, want the redis engine failing closed", l)
			}
			if s := pw.Storage; s["engine"] != "postgres" || s["dsn"] != "{env.PROMPTWALL_PG_DSN}" || s["cursor_key"] != "{env.PROMPTWALL_CURSOR_KEY}" {
				t.Errorf("example storage = %v, want postgres with the DSN and cursor key from the environment", s)
			}
			if pw.Durability != "sync" {
				t.Errorf("example durability %q, want sync", pw.Durability)
			}
		})
	}
}
