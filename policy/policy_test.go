package policy

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/promptwall/promptwall/scanner"
)

// sc is a declared scanner whose detector is named after the layer that
// declared it, so a test can tell which declaration won.
func sc(id string, mode scanner.Mode, force bool, detector string) Scanner[string] {
	return Scanner[string]{
		Setting:  scanner.Setting{ID: id, Enabled: true, Mode: mode, Blocking: true, Force: force},
		Detector: detector,
	}
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name                     string
		global, project, chatbot []Scanner[string]
		want                     []Scanner[string]
	}{
		{
			name:    "narrower overrides",
			global:  []Scanner[string]{sc("a", scanner.ModeBlock, false, "g")},
			project: []Scanner[string]{sc("a", scanner.ModeFlag, false, "p")},
			chatbot: []Scanner[string]{sc("a", scanner.ModeModify, false, "c")},
			want:    []Scanner[string]{sc("a", scanner.ModeModify, false, "c")},
		},
		{
			name:    "global force wins over project and chatbot, detector included",
			global:  []Scanner[string]{sc("a", scanner.ModeBlock, true, "g")},
			project: []Scanner[string]{sc("a", scanner.ModeFlag, false, "p")},
			chatbot: []Scanner[string]{sc("a", scanner.ModeModify, false, "c")},
			want:    []Scanner[string]{sc("a", scanner.ModeBlock, true, "g")},
		},
		{
			name:    "project force overrides global, binds chatbot",
			global:  []Scanner[string]{sc("a", scanner.ModeBlock, false, "g")},
			project: []Scanner[string]{sc("a", scanner.ModeFlag, true, "p")},
			chatbot: []Scanner[string]{sc("a", scanner.ModeModify, false, "c")},
			want:    []Scanner[string]{sc("a", scanner.ModeFlag, true, "p")},
		},
		{
			name:    "project cannot unforce global",
			global:  []Scanner[string]{sc("a", scanner.ModeBlock, true, "g")},
			project: []Scanner[string]{sc("a", scanner.ModeFlag, false, "p")},
			want:    []Scanner[string]{sc("a", scanner.ModeBlock, true, "g")},
		},
		{
			name:    "chatbot force binds nothing narrower",
			global:  []Scanner[string]{sc("a", scanner.ModeBlock, false, "g")},
			chatbot: []Scanner[string]{sc("a", scanner.ModeFlag, true, "c")},
			want:    []Scanner[string]{sc("a", scanner.ModeFlag, true, "c")},
		},
		{
			name:    "additions keep first-seen order",
			global:  []Scanner[string]{sc("a", scanner.ModeBlock, false, "g"), sc("b", scanner.ModeBlock, false, "g")},
			project: []Scanner[string]{sc("c", scanner.ModeFlag, false, "p"), sc("a", scanner.ModeFlag, false, "p")},
			chatbot: []Scanner[string]{sc("d", scanner.ModeModify, false, "c")},
			want: []Scanner[string]{sc("a", scanner.ModeFlag, false, "p"), sc("b", scanner.ModeBlock, false, "g"),
				sc("c", scanner.ModeFlag, false, "p"), sc("d", scanner.ModeModify, false, "c")},
		},
		{
			name:   "within a layer the last wins even over a forced entry",
			global: []Scanner[string]{sc("a", scanner.ModeBlock, true, "g1"), sc("a", scanner.ModeFlag, false, "g2")},
			want:   []Scanner[string]{sc("a", scanner.ModeFlag, false, "g2")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Merge(tt.global, tt.project, tt.chatbot)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestMergeDoesNotAlias(t *testing.T) {
	g := []Scanner[string]{{Setting: scanner.Setting{ID: "a", Mode: scanner.ModeBlock, Directions: []scanner.Direction{scanner.Input}}}}
	out := Merge(g)
	out[0].Setting.Directions[0] = scanner.Output
	if g[0].Setting.Directions[0] != scanner.Input {
		t.Fatal("Merge shares Directions with its input")
	}
}

func ids(ss []Scanner[string]) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Setting.ID + "/" + s.Detector
	}
	return out
}

func TestConfigResolve(t *testing.T) {
	cfg := Config[string]{
		Global: []Scanner[string]{sc("secrets", scanner.ModeBlock, true, "global")},
		Packages: map[string][]Scanner[string]{
			"pii": {sc("email", scanner.ModeModify, false, "pkg"), sc("phone", scanner.ModeModify, false, "pkg")},
		},
		Endpoints: []Endpoint[string]{
			{Name: "plain"},
			{Name: "project", ProjectID: "p1", Packages: []string{"pii"},
				Scanners: []Scanner[string]{sc("phone", scanner.ModeFlag, false, "project"), sc("secrets", scanner.ModeFlag, false, "project")}},
			{Name: "bot", ProjectID: "p1", ChatbotID: "c1", Scanners: []Scanner[string]{sc("urls", scanner.ModeBlock, false, "bot")}},
			{Name: "orphan bot", ProjectID: "p2", ChatbotID: "c2"},
			{Name: "chatbot only", ChatbotID: "c3"},
			{Name: "bad", Packages: []string{"toxicity"}},
		},
	}
	tests := []struct {
		endpoint int
		want     []string
		wantErr  error
	}{
		{endpoint: 0, want: []string{"secrets/global"}},
		// A package's member is refined by the endpoint's own scanner of
		// the same id; the forced global scanner stays.
		{endpoint: 1, want: []string{"secrets/global", "email/pkg", "phone/project"}},
		// A chatbot inherits its project's default endpoint.
		{endpoint: 2, want: []string{"secrets/global", "email/pkg", "phone/project", "urls/bot"}},
		// A project with no default endpoint adds nothing.
		{endpoint: 3, want: []string{"secrets/global"}},
		// Without a project a chatbot inherits only the global scanners.
		{endpoint: 4, want: []string{"secrets/global"}},
		{endpoint: 5, wantErr: ErrUnknownPackage},
	}
	for _, tt := range tests {
		t.Run(cfg.Endpoints[tt.endpoint].Name, func(t *testing.T) {
			got, err := cfg.Resolve(tt.endpoint)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g := ids(got); !reflect.DeepEqual(g, tt.want) {
				t.Fatalf("got %v, want %v", g, tt.want)
			}
		})
	}
	if cfg.Packages["pii"][1].Setting.Mode != scanner.ModeModify {
		t.Fatal("Resolve modified a package")
	}
}

func TestComplete(t *testing.T) {
	tests := []struct {
		name       string
		in         scanner.Setting
		outputOnly bool
		want       scanner.Setting
		wantErr    bool
	}{
		{
			name: "defaults",
			in:   scanner.Setting{ID: "pii", Enabled: true, Blocking: true},
			want: scanner.Setting{ID: "pii", Version: "1", Enabled: true, Mode: scanner.ModeBlock, Blocking: true,
				FlagMessage: DefaultFlagMessage, Directions: []scanner.Direction{scanner.Input}},
		},
		{
			name: "output-only detector defaults to answers", outputOnly: true,
			in: scanner.Setting{ID: "leak", Enabled: true, Blocking: true},
			want: scanner.Setting{ID: "leak", Version: "1", Enabled: true, Mode: scanner.ModeBlock, Blocking: true,
				FlagMessage: DefaultFlagMessage, Directions: []scanner.Direction{scanner.Output}},
		},
		{
			name: "declared values kept", outputOnly: true,
			in: scanner.Setting{ID: "x", Version: "3", Mode: scanner.ModeFlag, FlagMessage: "m", FailMode: scanner.FailOpen,
				Timeout: time.Second, Directions: []scanner.Direction{scanner.Input}},
			want: scanner.Setting{ID: "x", Version: "3", Mode: scanner.ModeFlag, FlagMessage: "m", FailMode: scanner.FailOpen,
				Timeout: time.Second, Directions: []scanner.Direction{scanner.Input}},
		},
		{name: "unknown mode", in: scanner.Setting{ID: "x", Mode: "redact", Blocking: true}, wantErr: true},
		{name: "bad direction", in: scanner.Setting{ID: "x", Blocking: true, Directions: []scanner.Direction{"both"}}, wantErr: true},
		{name: "non-blocking block", in: scanner.Setting{ID: "x", Mode: scanner.ModeBlock}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Complete(tt.in, tt.outputOnly)
			if tt.wantErr {
				if !errors.Is(err, scanner.ErrInvalidSetting) {
					t.Fatalf("err = %v, want an invalid setting", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestSidesOf(t *testing.T) {
	in := scanner.Setting{ID: "in", Enabled: true, Mode: scanner.ModeBlock, Blocking: true, Directions: []scanner.Direction{scanner.Input}}
	out := scanner.Setting{ID: "out", Enabled: true, Mode: scanner.ModeBlock, Blocking: true, Directions: []scanner.Direction{scanner.Output}}
	later := scanner.Setting{ID: "later", Enabled: true, Mode: scanner.ModeFlag, Directions: []scanner.Direction{scanner.Input}}
	off := out
	off.Enabled = false
	tests := []struct {
		name string
		in   []scanner.Setting
		want Sides
	}{
		{name: "none"},
		{name: "input", in: []scanner.Setting{in}, want: Sides{Input: true}},
		{name: "output", in: []scanner.Setting{out}, want: Sides{Output: true}},
		{name: "deferred", in: []scanner.Setting{later}, want: Sides{Input: true, Deferred: true}},
		{name: "disabled asks nothing", in: []scanner.Setting{in, off}, want: Sides{Input: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var resolved []Scanner[string]
			for _, s := range tt.in {
				resolved = append(resolved, Scanner[string]{Setting: s})
			}
			if got := SidesOf(resolved); got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	base := []Scanner[string]{sc("a", scanner.ModeBlock, false, `{"pattern":"x"}`)}
	raw := func(d string) []byte { return []byte(d) }
	v := Version(base, raw)
	tests := []struct {
		name string
		in   []Scanner[string]
		same bool
	}{
		{name: "same policy", in: []Scanner[string]{sc("a", scanner.ModeBlock, false, `{"pattern":"x"}`)}, same: true},
		{name: "setting changed", in: []Scanner[string]{sc("a", scanner.ModeFlag, false, `{"pattern":"x"}`)}},
		{name: "detector config changed", in: []Scanner[string]{sc("a", scanner.ModeBlock, false, `{"pattern":"y"}`)}},
		{name: "scanner added", in: append(base[:1:1], sc("b", scanner.ModeBlock, false, ""))},
	}
	for _, tt := range tests {
		if got := Version(tt.in, raw); (got == v) != tt.same {
			t.Errorf("%s: version %s vs %s, want same=%v", tt.name, got, v, tt.same)
		}
	}
}

func TestStrings(t *testing.T) {
	tests := []struct {
		name string
		in   scanner.Setting
		want SettingStrings
	}{
		{
			name: "a default setting reads as the spec's seven fields",
			in:   scanner.Setting{ID: "a", Version: "1", Enabled: true, Mode: scanner.ModeBlock, Blocking: true},
			want: SettingStrings{ID: "a", Version: "1", Enabled: "true", Mode: "block", Blocking: "true", Force: "false"},
		},
		{
			name: "extensions",
			in: scanner.Setting{ID: "b", Version: "2", Mode: scanner.ModeFlag, Force: true, FlagMessage: "m",
				FailMode: scanner.FailOpen, Timeout: 250 * time.Millisecond, Directions: []scanner.Direction{scanner.Input, scanner.Output}},
			want: SettingStrings{ID: "b", Version: "2", Enabled: "false", Mode: "flag", Blocking: "false", Force: "true",
				FlagMessage: "m", FailMode: "open", Timeout: "250", Directions: "input,output"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Strings(tt.in)
			if got != tt.want {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
			spec := got.Spec()
			if spec.FailMode != "" || spec.Timeout != "" || spec.Directions != "" || spec.ID != tt.want.ID || spec.Mode != tt.want.Mode {
				t.Fatalf("Spec() = %+v", spec)
			}
		})
	}
}
