package regex

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/promptwall/promptwall/scanner/internal/scannertest"
)

func TestScan(t *testing.T) {
	ticket := Pattern{Name: "ticket id", Pattern: `\bTCK-[0-9]{6}\b`}
	tests := []struct {
		name string
		cfg  Config
		text string
		want []string // matched substrings of text
		kind string
	}{
		{"match", Config{Patterns: []Pattern{ticket}}, "see TCK-123456 please", []string{"TCK-123456"}, "TICKET_ID"},
		{"two matches", Config{Patterns: []Pattern{ticket}}, "TCK-000001 and TCK-000002", []string{"TCK-000001", "TCK-000002"}, "TICKET_ID"},
		{"near miss", Config{Patterns: []Pattern{ticket}}, "TCK-12345 is short", nil, ""},
		{"case sensitive by default", Config{Patterns: []Pattern{ticket}}, "tck-123456", nil, ""},
		{"case insensitive", Config{Patterns: []Pattern{ticket}, CaseInsensitive: true}, "tck-123456", []string{"tck-123456"}, "TICKET_ID"},
		{"explicit kind", Config{Patterns: []Pattern{{Name: "t", Pattern: `TCK-\d+`, Kind: "INTERNAL_TICKET"}}}, "x TCK-1", []string{"TCK-1"}, "INTERNAL_TICKET"},
		{"offsets after unicode", Config{Patterns: []Pattern{ticket}}, "Grüße — TCK-654321", []string{"TCK-654321"}, "TICKET_ID"},
		{"canonical removes zero-width", Config{Patterns: []Pattern{ticket}}, "TCK-12\u200b3456", []string{"TCK-12\u200b3456"}, "TICKET_ID"},
		{"original keeps zero-width", Config{Patterns: []Pattern{ticket}, MatchOn: MatchOriginal}, "TCK-12\u200b3456", nil, ""},
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
		{"no patterns", Config{}, "no patterns"},
		{"bad regexp names pattern", Config{Patterns: []Pattern{{Name: "acct", Pattern: `(`}}}, `"acct"`},
		{"backreference is not RE2", Config{Patterns: []Pattern{{Name: "dup", Pattern: `(a)\1`}}}, `"dup"`},
		{"missing name", Config{Patterns: []Pattern{{Pattern: `x`}}}, "name is required"},
		{"duplicate name", Config{Patterns: []Pattern{{Name: "a", Pattern: "x"}, {Name: "a", Pattern: "y"}}}, "duplicate"},
		{"empty pattern", Config{Patterns: []Pattern{{Name: "a"}}}, "pattern is required"},
		{"matches empty", Config{Patterns: []Pattern{{Name: "a", Pattern: "x*"}}}, "empty string"},
		{"bad kind", Config{Patterns: []Pattern{{Name: "a", Pattern: "x", Kind: "lower"}}}, "UPPER_SNAKE_CASE"},
		{"bad match_on", Config{Patterns: []Pattern{{Name: "a", Pattern: "x"}}, MatchOn: "folded"}, "match_on"},
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

func TestKindOf(t *testing.T) {
	for in, want := range map[string]string{"ticket id": "TICKET_ID", "acct-no.": "ACCT_NO", "IBAN": "IBAN", "x--y": "X_Y"} {
		if got := kindOf(in); got != want {
			t.Errorf("kindOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConcurrentScan(t *testing.T) {
	s, err := New(Config{Patterns: []Pattern{{Name: "t", Pattern: `TCK-\d{6}`}}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			for j := 0; j < 200; j++ {
				if f := scannertest.Scan(t, s, "a TCK-123456 b"); len(f.Matches) != 1 || f.Matches[0].Start != 2 {
					t.Errorf("got %+v", f)
					return
				}
			}
		})
	}
	wg.Wait()
}

func benchText(kb int, withMatches bool) string {
	base := strings.Repeat("The warehouse service records pallets as they move between bays and trucks. ", 27)[:2048]
	if withMatches {
		base = "ref TCK-100001 " + base[:600] + " TCK-100002 " + base[600:1400] + " TCK-100003"
	}
	return strings.Repeat(base, kb/2)
}

func BenchmarkScan(b *testing.B) {
	s, err := New(Config{Patterns: []Pattern{
		{Name: "ticket", Pattern: `TCK-[0-9]{6}`},
		{Name: "employee", Pattern: `\bEMP[0-9]{5}\b`},
		{Name: "project", Pattern: `(?i)project (?:falcon|osprey)`},
	}})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		text string
	}{{"clean_2KB", benchText(2, false)}, {"clean_16KB", benchText(16, false)}, {"3_matches_2KB", benchText(2, true)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			b.ReportAllocs()
			for b.Loop() {
				scannertest.Scan(b, s, bc.text)
			}
		})
	}
}
