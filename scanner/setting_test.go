package scanner

import (
	"errors"
	"testing"
	"time"
)

func TestSettingValidate(t *testing.T) {
	ok := Setting{ID: "x", Enabled: true, Mode: ModeBlock, Blocking: true}
	with := func(f func(*Setting)) Setting {
		s := ok
		f(&s)
		return s
	}
	tests := []struct {
		name      string
		in        Setting
		wantField string // "" = valid
	}{
		{name: "minimal", in: ok},
		{name: "every field", in: Setting{ID: "inj", Version: "2", Mode: ModeFlag, Force: true, FlagMessage: "no",
			FailMode: FailOpen, Timeout: 250 * time.Millisecond, Directions: []Direction{Input, Output}}},
		{name: "missing id", in: with(func(s *Setting) { s.ID = "" }), wantField: "id"},
		{name: "missing mode", in: with(func(s *Setting) { s.Mode = "" }), wantField: "mode"},
		{name: "unknown mode", in: with(func(s *Setting) { s.Mode = "redact" }), wantField: "mode"},
		{name: "non-blocking block", in: with(func(s *Setting) { s.Blocking = false }), wantField: "blocking"},
		{name: "non-blocking modify", in: with(func(s *Setting) { s.Blocking, s.Mode = false, ModeModify }), wantField: "blocking"},
		{name: "non-blocking flag", in: with(func(s *Setting) { s.Blocking, s.Mode = false, ModeFlag })},
		{name: "unknown fail mode", in: with(func(s *Setting) { s.FailMode = 7 }), wantField: "failMode"},
		{name: "negative timeout", in: with(func(s *Setting) { s.Timeout = -time.Second }), wantField: "timeout"},
		{name: "no direction", in: with(func(s *Setting) { s.Directions = []Direction{} }), wantField: "directions"},
		{name: "bad direction", in: with(func(s *Setting) { s.Directions = []Direction{"both"} }), wantField: "directions"},
		{name: "direction twice", in: with(func(s *Setting) { s.Directions = []Direction{Output, Output} }), wantField: "directions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.in.Validate()
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var se *SettingError
			if !errors.As(err, &se) || se.Field != tt.wantField || !errors.Is(err, ErrInvalidSetting) {
				t.Fatalf("err = %v, want a SettingError on field %q", err, tt.wantField)
			}
		})
	}
}

func TestParseFailMode(t *testing.T) {
	tests := []struct {
		in      string
		want    FailMode
		wantErr bool
	}{
		{in: "", want: FailClosed},
		{in: "closed", want: FailClosed},
		{in: "open", want: FailOpen},
		{in: "shut", wantErr: true},
		{in: "Open", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseFailMode(tt.in)
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("ParseFailMode(%q) = %v, %v", tt.in, got, err)
		}
		if !tt.wantErr && tt.in != "" && got.String() != tt.in {
			t.Errorf("FailMode(%q).String() = %q", tt.in, got.String())
		}
	}
}
