package caddymodule

import (
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func TestDemoModelCaddyfile(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		delay       time.Duration // after Provision
		err         string
	}{
		{"defaults", "promptwall_demo", DefaultDemoChunkDelay, ""},
		{"chunk delay", "promptwall_demo {\n chunk_delay 5ms\n}", 5 * time.Millisecond, ""},
		{"back to back", "promptwall_demo {\n chunk_delay 0s\n}", 0, ""},
		{"argument", "promptwall_demo fast", 0, "wrong argument count"},
		{"unknown option", "promptwall_demo {\n speed 2\n}", 0, `unknown promptwall_demo option "speed"`},
		{"twice", "promptwall_demo {\n chunk_delay 5ms\n chunk_delay 6ms\n}", 0, "chunk_delay given twice"},
		{"not a duration", "promptwall_demo {\n chunk_delay soon\n}", 0, "chunk_delay"},
		{"negative", "promptwall_demo {\n chunk_delay -1s\n}", 0, "between 0s and 10s"},
		{"too long", "promptwall_demo {\n chunk_delay 1m\n}", 0, "between 0s and 10s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := new(DemoModel)
			err := m.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.input))
			if err == nil {
				err = m.Validate()
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Provision(caddy.Context{}); err != nil {
				t.Fatal(err)
			}
			if m.server.ChunkDelay != tc.delay {
				t.Errorf("chunk delay %v, want %v", m.server.ChunkDelay, tc.delay)
			}
		})
	}
}
