package scanner

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestSettingFromStrings(t *testing.T) {
	tests := []struct {
		name      string
		in        SettingStrings
		want      Setting
		wantField string // "" = no error
	}{
		{
			name: "defaults",
			in:   SettingStrings{ID: "pii", Mode: "modify"},
			want: Setting{ID: "pii", Enabled: true, Mode: ModeModify, Blocking: true},
		},
		{
			name: "all fields",
			in: SettingStrings{ID: "inj", Version: "2", Enabled: "false", Mode: "flag", Blocking: "false",
				Force: "true", FlagMessage: "no", FailMode: "open", Timeout: "250", Directions: "input, output"},
			want: Setting{ID: "inj", Version: "2", Enabled: false, Mode: ModeFlag, Blocking: false, Force: true,
				FlagMessage: "no", FailMode: FailOpen, Timeout: 250 * time.Millisecond, Directions: []Direction{Input, Output}},
		},
		{name: "missing id", in: SettingStrings{Mode: "block"}, wantField: "id"},
		{name: "missing mode", in: SettingStrings{ID: "x"}, wantField: "mode"},
		{name: "unknown mode", in: SettingStrings{ID: "x", Mode: "redact"}, wantField: "mode"},
		{name: "bool not spec form", in: SettingStrings{ID: "x", Mode: "block", Enabled: "TRUE"}, wantField: "enabled"},
		{name: "bad blocking", in: SettingStrings{ID: "x", Mode: "block", Blocking: "yes"}, wantField: "blocking"},
		{name: "bad force", in: SettingStrings{ID: "x", Mode: "block", Force: "1"}, wantField: "force"},
		{name: "non-blocking block", in: SettingStrings{ID: "x", Mode: "block", Blocking: "false"}, wantField: "blocking"},
		{name: "non-blocking modify", in: SettingStrings{ID: "x", Mode: "modify", Blocking: "false"}, wantField: "blocking"},
		{name: "bad fail mode", in: SettingStrings{ID: "x", Mode: "block", FailMode: "shut"}, wantField: "failMode"},
		{name: "bad timeout", in: SettingStrings{ID: "x", Mode: "block", Timeout: "1s"}, wantField: "timeout"},
		{name: "zero timeout", in: SettingStrings{ID: "x", Mode: "block", Timeout: "0"}, wantField: "timeout"},
		{name: "bad direction", in: SettingStrings{ID: "x", Mode: "block", Directions: "input,both"}, wantField: "directions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SettingFromStrings(tt.in)
			if tt.wantField != "" {
				var se *SettingError
				if !errors.As(err, &se) || se.Field != tt.wantField || !errors.Is(err, ErrInvalidSetting) {
					t.Fatalf("err = %v, want a SettingError on field %q", err, tt.wantField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
			back, err := SettingFromStrings(got.Strings())
			if err != nil || !reflect.DeepEqual(back, got) {
				t.Fatalf("round trip: %+v, %v", back, err)
			}
		})
	}
}

func TestSettingStringsDefaultIsSpecForm(t *testing.T) {
	got := Setting{ID: "a", Version: "1", Enabled: true, Mode: ModeBlock, Blocking: true}.Strings()
	want := SettingStrings{ID: "a", Version: "1", Enabled: "true", Mode: "block", Blocking: "true", Force: "false"}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func set(id string, mode Mode, force bool) Setting {
	return Setting{ID: id, Enabled: true, Mode: mode, Blocking: true, Force: force}
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name                     string
		global, project, chatbot []Setting
		want                     []Setting
	}{
		{
			name:    "narrower overrides",
			global:  []Setting{set("a", ModeBlock, false)},
			project: []Setting{set("a", ModeFlag, false)},
			chatbot: []Setting{set("a", ModeModify, false)},
			want:    []Setting{set("a", ModeModify, false)},
		},
		{
			name:    "global force wins over project and chatbot",
			global:  []Setting{set("a", ModeBlock, true)},
			project: []Setting{set("a", ModeFlag, false)},
			chatbot: []Setting{set("a", ModeModify, false)},
			want:    []Setting{set("a", ModeBlock, true)},
		},
		{
			name:    "project force overrides global, binds chatbot",
			global:  []Setting{set("a", ModeBlock, false)},
			project: []Setting{set("a", ModeFlag, true)},
			chatbot: []Setting{set("a", ModeModify, false)},
			want:    []Setting{set("a", ModeFlag, true)},
		},
		{
			name:    "project cannot unforce global",
			global:  []Setting{set("a", ModeBlock, true)},
			project: []Setting{set("a", ModeFlag, false)},
			want:    []Setting{set("a", ModeBlock, true)},
		},
		{
			name:    "chatbot force binds nothing narrower",
			global:  []Setting{set("a", ModeBlock, false)},
			chatbot: []Setting{set("a", ModeFlag, true)},
			want:    []Setting{set("a", ModeFlag, true)},
		},
		{
			name:    "additions keep first-seen order",
			global:  []Setting{set("a", ModeBlock, false), set("b", ModeBlock, false)},
			project: []Setting{set("c", ModeFlag, false), set("a", ModeFlag, false)},
			chatbot: []Setting{set("d", ModeModify, false)},
			want:    []Setting{set("a", ModeFlag, false), set("b", ModeBlock, false), set("c", ModeFlag, false), set("d", ModeModify, false)},
		},
		{
			name:   "within a layer the last wins even over a forced entry",
			global: []Setting{set("a", ModeBlock, true), set("a", ModeFlag, false)},
			want:   []Setting{set("a", ModeFlag, false)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Resolve(tt.global, tt.project, tt.chatbot)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestResolveDoesNotAlias(t *testing.T) {
	g := []Setting{{ID: "a", Mode: ModeBlock, Directions: []Direction{Input}}}
	out := Resolve(g)
	out[0].Directions[0] = Output
	if g[0].Directions[0] != Input {
		t.Fatal("Resolve shares Directions with its input")
	}
}

func TestExpandPackages(t *testing.T) {
	catalog := []Package{
		{Name: "pii", Version: "1", Settings: []Setting{set("email", ModeModify, false), set("phone", ModeModify, false)}},
		{Name: "secrets", Settings: []Setting{set("aws", ModeBlock, false)}},
	}
	tests := []struct {
		name    string
		refs    []SettingStrings
		want    []Setting
		wantErr error
	}{
		{
			name: "as packaged",
			refs: []SettingStrings{{ID: "pii"}, {ID: "secrets"}},
			want: []Setting{set("email", ModeModify, false), set("phone", ModeModify, false), set("aws", ModeBlock, false)},
		},
		{
			name: "reference overrides every member",
			refs: []SettingStrings{{ID: "pii", Mode: "flag", Force: "true", FlagMessage: "m"}},
			want: []Setting{
				{ID: "email", Enabled: true, Mode: ModeFlag, Blocking: true, Force: true, FlagMessage: "m"},
				{ID: "phone", Enabled: true, Mode: ModeFlag, Blocking: true, Force: true, FlagMessage: "m"},
			},
		},
		{
			name: "disable a bundle",
			refs: []SettingStrings{{ID: "secrets", Enabled: "false"}},
			want: []Setting{{ID: "aws", Mode: ModeBlock, Blocking: true}},
		},
		{name: "matching version", refs: []SettingStrings{{ID: "pii", Version: "1"}}, want: []Setting{set("email", ModeModify, false), set("phone", ModeModify, false)}},
		{name: "unknown package", refs: []SettingStrings{{ID: "toxicity"}}, wantErr: ErrUnknownPackage},
		{name: "unknown version", refs: []SettingStrings{{ID: "pii", Version: "2"}}, wantErr: ErrUnknownPackage},
		{name: "override makes members invalid", refs: []SettingStrings{{ID: "secrets", Blocking: "false"}}, wantErr: ErrInvalidSetting},
		{name: "bad override value", refs: []SettingStrings{{ID: "secrets", Force: "maybe"}}, wantErr: ErrInvalidSetting},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExpandPackages(tt.refs, catalog)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
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
	if catalog[0].Settings[0].Mode != ModeModify {
		t.Fatal("ExpandPackages modified the catalog")
	}
}
