package scanner

import (
	"context"
	"strings"
	"testing"
)

// wordScanner matches a fixed word and holds from its last occurrence of
// the word's first letter, to make Pipeline.Hold's combination visible.
type wordScanner struct{ word string }

func (w wordScanner) Type() string { return "word" }

func (w wordScanner) Scan(_ context.Context, t *Target) (Finding, error) {
	if i := strings.Index(t.Text.Original, w.word); i >= 0 {
		return Finding{Detected: true, Matches: []Match{{Start: i, End: i + len(w.word), Kind: "WORD"}}}, nil
	}
	return Finding{}, nil
}

func (w wordScanner) Hold(t *Target) int {
	if i := strings.LastIndexByte(t.Text.Original, w.word[0]); i >= 0 {
		return i
	}
	return len(t.Text.Original)
}

// plainScanner cannot compute release points.
type plainScanner struct{}

func (plainScanner) Type() string                                   { return "plain" }
func (plainScanner) Scan(context.Context, *Target) (Finding, error) { return Finding{}, nil }

func TestPipelineHold(t *testing.T) {
	stage := func(id string, mode Mode, enabled bool, sc Scanner) Stage {
		return Stage{Setting: Setting{ID: id, Version: "1", Enabled: enabled, Mode: mode, Blocking: true,
			Directions: []Direction{Output}}, Scanner: sc}
	}
	const text = "a quiet zone, then more words"
	tests := []struct {
		name   string
		stages []Stage
		want   int
	}{
		{"no scanners: nothing held", nil, 29},
		{"earliest hold wins", []Stage{
			stage("a", ModeBlock, true, wordScanner{"zone"}),
			stage("b", ModeModify, true, wordScanner{"quiet"}),
		}, 2},
		{"a flagging scanner holds nothing", []Stage{
			stage("a", ModeBlock, true, wordScanner{"zone"}),
			stage("b", ModeFlag, true, wordScanner{"quiet"}),
		}, 8},
		{"a disabled scanner holds nothing", []Stage{
			stage("a", ModeBlock, false, wordScanner{"quiet"}),
		}, 29},
		{"a scanner without release points holds all", []Stage{
			stage("a", ModeBlock, true, wordScanner{"zone"}),
			stage("b", ModeBlock, true, plainScanner{}),
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPipeline(tt.stages, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Hold(text, Output, nil); got != tt.want {
				t.Errorf("Hold = %d (%q released), want %d", got, text[:got], tt.want)
			}
		})
	}
}

func TestPlainWord(t *testing.T) {
	tests := []struct {
		tok  string
		want bool
	}{
		{"the", true},
		{"Paris,", true},
		{"really?", true},
		{"abcdefghijkl", true},
		{"abcdefghijklm", false},
		{"Paris.", false},
		{"w0001", false},
		{"don't", false},
		{"café", false},
		{"", false},
		{",", false},
	}
	for _, tt := range tests {
		if got := PlainWord(tt.tok); got != tt.want {
			t.Errorf("PlainWord(%q) = %v, want %v", tt.tok, got, tt.want)
		}
	}
}

func TestOpenToken(t *testing.T) {
	tests := []struct {
		s    string
		want int
	}{
		{"", 0},
		{"word", 0},
		{"two words", 4},
		{"ends with space ", 16},
		{"line\nbreak", 5},
		{"no\u00a0break", 0},
	}
	for _, tt := range tests {
		if got := OpenToken(tt.s); got != tt.want {
			t.Errorf("OpenToken(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}
