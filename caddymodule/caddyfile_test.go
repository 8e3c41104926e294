package caddymodule

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddytest"
)

func TestUnmarshalGlobalOption(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		wantErr string
		check   func(t *testing.T, a *App)
	}{
		{
			name: "storage and store tuning",
			input: `promptwall {
				storage /var/lib/pw.db
				retention 72h
				queue_size 1000
				enqueue_wait 250ms
				verdict_cache_size 8MiB
			}`,
			check: func(t *testing.T, a *App) {
				if string(a.StorageRaw) != `"/var/lib/pw.db"` || a.QueueSize != 1000 || a.VerdictCacheBytes != 8<<20 {
					t.Errorf("got %+v", a)
				}
				if time.Duration(a.Retention) != 72*time.Hour {
					t.Errorf("retention %v", a.Retention)
				}
			},
		},
		{
			name: "endpoint with scanners and detector options",
			input: `promptwall {
				endpoint support {
					project proj-1
					on_block completion
					block_status 451
					scanner secrets {
						mode block
						flag_message "No secrets, please."
						fail_mode open
						timeout 50ms
						direction input output
					}
					scanner banned_substrings banned {
						mode flag
						force
						substrings alpha beta
						substrings gamma
					}
				}
			}`,
			check: func(t *testing.T, a *App) {
				if len(a.Endpoints) != 1 {
					t.Fatalf("endpoints: %d", len(a.Endpoints))
				}
				ep := a.Endpoints[0]
				if ep.Name != "support" || ep.ProjectID != "proj-1" || ep.OnBlock != "completion" || ep.BlockStatus != 451 {
					t.Errorf("endpoint %+v", ep)
				}
				if len(ep.Scanners) != 2 {
					t.Fatalf("scanners: %d", len(ep.Scanners))
				}
				s := ep.Scanners[0]
				if s.Mode != "block" || s.FlagMessage != "No secrets, please." || s.FailMode != "open" || len(s.Directions) != 2 {
					t.Errorf("secrets setting %+v", s)
				}
				b := ep.Scanners[1]
				if b.ID != "banned" || !b.Force {
					t.Errorf("banned setting %+v", b)
				}
				var det map[string]any
				if err := json.Unmarshal(b.DetectorRaw, &det); err != nil {
					t.Fatal(err)
				}
				if det["scanner"] != "banned_substrings" {
					t.Errorf("detector module: %v", det)
				}
				if subs, _ := det["substrings"].([]any); len(subs) != 3 {
					t.Errorf("list options must accumulate across lines: %v", det["substrings"])
				}
			},
		},
		{
			name:    "unknown sub-directive",
			input:   "promptwall {\n\tstorage a.db\n\tstorgae b.db\n}",
			wantErr: `unknown promptwall sub-directive "storgae", at Testfile:3`,
		},
		{
			name:    "duplicate sub-directive",
			input:   "promptwall {\n storage a.db\n storage b.db\n}",
			wantErr: `duplicate sub-directive "storage"`,
		},
		{
			name:  "storage engine bolt",
			input: "promptwall {\n storage bolt {\n  path /var/lib/pw.db\n }\n}",
			check: func(t *testing.T, a *App) {
				if got := string(a.StorageRaw); got != `{"engine":"bolt","path":"/var/lib/pw.db"}` {
					t.Errorf("storage %s", got)
				}
			},
		},
		{
			name:  "storage engine postgres",
			input: "promptwall {\n storage postgres {\n  dsn {env.PROMPTWALL_PG_DSN}\n  cursor_key {env.KEY}\n  max_conns 4\n }\n}",
			check: func(t *testing.T, a *App) {
				if got := string(a.StorageRaw); got != `{"cursor_key":"{env.KEY}","dsn":"{env.PROMPTWALL_PG_DSN}","engine":"postgres","max_conns":4}` {
					t.Errorf("storage %s", got)
				}
			},
		},
		{
			name:    "storage path with a block",
			input:   "promptwall {\n storage pw.db {\n  dsn x\n }\n}",
			wantErr: `storage "pw.db" is not a storage engine`,
		},
		{
			name:    "storage path with two arguments",
			input:   "promptwall {\n storage a.db b.db\n}",
			wantErr: "wrong argument count",
		},
		{
			name:    "storage postgres unknown option",
			input:   "promptwall {\n storage postgres {\n  dns x\n }\n}",
			wantErr: `unknown storage postgres sub-directive "dns"`,
		},
		{
			name:    "storage postgres duplicate option",
			input:   "promptwall {\n storage postgres {\n  dsn x\n  dsn y\n }\n}",
			wantErr: `duplicate storage postgres sub-directive "dsn"`,
		},
		{
			name:    "storage bolt unknown option",
			input:   "promptwall {\n storage bolt {\n  dsn x\n }\n}",
			wantErr: `unknown storage bolt sub-directive "dsn"`,
		},
		{
			name:    "unknown scanner module",
			input:   "promptwall {\n endpoint e {\n  scanner nosuch\n }\n}",
			wantErr: `unknown scanner module "nosuch"`,
		},
		{
			name:    "unknown detector option",
			input:   "promptwall {\n endpoint e {\n  scanner secrets {\n   rulez aws\n  }\n }\n}",
			wantErr: `unknown option "rulez", at Testfile:4`,
		},
		{
			name:    "duplicate scanner setting",
			input:   "promptwall {\n endpoint e {\n  scanner secrets {\n   mode block\n   mode flag\n  }\n }\n}",
			wantErr: `duplicate scanner option "mode"`,
		},
		{
			name:    "unknown endpoint sub-directive",
			input:   "promptwall {\n endpoint e {\n  projcet p\n }\n}",
			wantErr: `unknown endpoint sub-directive "projcet"`,
		},
		{
			name:    "bad duration",
			input:   "promptwall {\n retention soon\n}",
			wantErr: `bad duration "soon"`,
		},
		{
			name:    "argument on the option line",
			input:   "promptwall extra {\n}",
			wantErr: "wrong argument count",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := unmarshalCase[App](t, tc.input, tc.wantErr)
			if a == nil {
				return
			}
			tc.check(t, a)
		})
	}
}

func TestUnmarshalHandler(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		want    Handler
		wantErr string
	}{
		{name: "bare", input: "promptwall", want: Handler{}},
		{name: "endpoint argument", input: "promptwall support", want: Handler{Endpoint: "support"}},
		{
			name: "every option",
			input: `promptwall {
				endpoint support
				format anthropic_messages
				max_body_size 1MiB
				max_response_size 2MB
				provider anthropic
				project p1
			}`,
			want: Handler{Endpoint: "support", Format: "anthropic_messages", MaxBodySize: 1 << 20, MaxResponseSize: 2_000_000, Provider: "anthropic", ProjectID: "p1"},
		},
		{name: "unknown", input: "promptwall {\n  endpont x\n}", wantErr: `unknown promptwall sub-directive "endpont", at Testfile:2`},
		{name: "duplicate", input: "promptwall {\n format a\n format b\n}", wantErr: `duplicate sub-directive "format"`},
		{name: "endpoint twice", input: "promptwall a {\n endpoint b\n}", wantErr: "endpoint given twice"},
		{name: "bad size", input: "promptwall {\n max_body_size lots\n}", wantErr: `bad size "lots"`},
		{name: "pass through", input: "promptwall {\n pass_through upgrade multipart\n stream_hold_back 128\n}", want: Handler{PassThrough: []string{"upgrade", "multipart"}, StreamHoldBack: 128}},
		{name: "bad pass through", input: "promptwall {\n pass_through everything\n}", wantErr: `unknown kind "everything"`},
		{name: "too many args", input: "promptwall a b", wantErr: "wrong argument count"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := unmarshalCase[Handler](t, tc.input, tc.wantErr)
			if h == nil {
				return
			}
			if !reflect.DeepEqual(*h, tc.want) {
				t.Errorf("got %+v, want %+v", h, tc.want)
			}
		})
	}
}

// TestAdapt checks every Caddyfile form against its JSON, from the fixtures
// in testdata/adapt (Caddyfile, a line of dashes, the expected JSON).
func TestAdapt(t *testing.T) {
	files, err := filepath.Glob("testdata/adapt/*.caddyfiletest")
	if err != nil || len(files) == 0 {
		t.Fatalf("no adapt fixtures: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			caddyfileText, wantJSON, ok := strings.Cut(string(data), "\n----------\n")
			if !ok {
				t.Fatalf("fixture %s lacks the ---------- separator", f)
			}
			if !caddytest.CompareAdapt(t, f, caddyfileText, "caddyfile", wantJSON) {
				t.Fail()
			}
		})
	}
}

func TestUnmarshalOrgBlock(t *testing.T) {
	a := new(App)
	err := a.UnmarshalCaddyfile(caddyfile.NewTestDispenser(`promptwall {
		org acme {
			application_url https://pw.acme.example
			require_mfa
			feature red_team true
			feature max_concurrent_custom 4
			user alice@acme.example owner Alice Liddell
			user bob@acme.example
		}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Orgs) != 1 {
		t.Fatalf("orgs %+v", a.Orgs)
	}
	o := a.Orgs[0]
	if o.Name != "acme" || !o.RequireMFA || o.ApplicationURL != "https://pw.acme.example" {
		t.Errorf("org %+v", o)
	}
	if o.Features == nil || o.Features.RedTeam == nil || !*o.Features.RedTeam || o.Features.MaxConcurrentCustom == nil || *o.Features.MaxConcurrentCustom != 4 {
		t.Errorf("features %+v", o.Features)
	}
	if len(o.Users) != 2 || o.Users[0].Role != "owner" || o.Users[0].Name != "Alice Liddell" || o.Users[1].Email != "bob@acme.example" {
		t.Errorf("users %+v", o.Users)
	}
	bad := new(App)
	if err := bad.UnmarshalCaddyfile(caddyfile.NewTestDispenser("promptwall {\n org x {\n  feature flying true\n }\n}")); err == nil || !strings.Contains(err.Error(), `unknown option "flying"`) {
		t.Errorf("unknown feature must be an error, got %v", err)
	}
}
