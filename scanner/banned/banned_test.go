package banned

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/promptwall/promptwall/scanner/internal/scannertest"
)

func TestScan(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		text string
		want []string // matched substrings of the original text
		kind string
	}{
		{"plain", Config{Substrings: []string{"project falcon"}}, "status of Project Falcon?", []string{"Project Falcon"}, DefaultKind},
		{"case folded", Config{Substrings: []string{"Falcon"}}, "FALCON and falcon", []string{"FALCON", "falcon"}, DefaultKind},
		{"absent", Config{Substrings: []string{"falcon"}}, "the falco project", nil, ""},
		{"inside a word by default", Config{Substrings: []string{"cat"}}, "concatenate", []string{"cat"}, DefaultKind},
		{"whole words", Config{Substrings: []string{"cat"}, MatchWholeWords: true}, "concatenate a cat.", []string{"cat"}, DefaultKind},
		{"whole words at edges", Config{Substrings: []string{"cat"}, MatchWholeWords: true}, "cat", []string{"cat"}, DefaultKind},
		{"overlap leftmost longest", Config{Substrings: []string{"abc", "bcd", "abcde"}}, "xabcdey", []string{"abcde"}, DefaultKind},
		{"unicode before", Config{Substrings: []string{"falcon"}}, "Ünïcödé — falcon", []string{"falcon"}, DefaultKind},
		{"unicode substring", Config{Substrings: []string{"Straße"}}, "nein, die straße", []string{"straße"}, DefaultKind},
		{"zero width inside", Config{Substrings: []string{"falcon"}}, "fal\u200bcon", []string{"fal\u200bcon"}, DefaultKind},
		{"custom kind", Config{Substrings: []string{"falcon"}, Kind: "CODENAME"}, "falcon", []string{"falcon"}, "CODENAME"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			f := scannertest.Scan(t, s, tt.text)
			if f.Detected != (len(tt.want) > 0) || len(f.Matches) != len(tt.want) {
				t.Fatalf("got %+v, want %q", f, tt.want)
			}
			for i, m := range f.Matches {
				if got := tt.text[m.Start:m.End]; got != tt.want[i] || m.Kind != tt.kind {
					t.Errorf("match %d = %q %s, want %q %s", i, got, m.Kind, tt.want[i], tt.kind)
				}
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"none", Config{}, "no substrings"},
		{"empty entry", Config{Substrings: []string{"ok", " "}}, "substrings[1]"},
		{"bad kind", Config{Substrings: []string{"x"}, Kind: "Bad-Kind"}, "UPPER_SNAKE_CASE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrConfig containing %q", err, tt.want)
			}
		})
	}
}

func TestConcurrentScan(t *testing.T) {
	s, err := New(Config{Substrings: []string{"falcon"}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			for j := 0; j < 200; j++ {
				if f := scannertest.Scan(t, s, "ü falcon"); len(f.Matches) != 1 || f.Matches[0].Start != 3 {
					t.Errorf("got %+v", f)
					return
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkScan(b *testing.B) {
	words := []string{"project falcon", "project osprey", "internal only", "do not distribute", "confidential", "acme-secret", "codename", "salary band"}
	s, err := New(Config{Substrings: words})
	if err != nil {
		b.Fatal(err)
	}
	base := strings.Repeat("The warehouse service records pallets as they move between bays and trucks. ", 27)[:2048]
	three := "Project Falcon " + base[:600] + " confidential " + base[600:1400] + " salary band"
	for _, bc := range []struct {
		name string
		text string
	}{{"clean_2KB", base}, {"clean_16KB", strings.Repeat(base, 8)}, {"3_matches_2KB", three}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			b.ReportAllocs()
			for b.Loop() {
				scannertest.Scan(b, s, bc.text)
			}
		})
	}
}
