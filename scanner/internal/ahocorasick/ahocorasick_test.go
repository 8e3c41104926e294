package ahocorasick

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// naive lists every occurrence of every pattern by brute force, in Each's
// order: by end offset, then longest first, then by id.
func naive(patterns []string, s string, fold bool) []Hit {
	text := s
	if fold {
		text = asciiLower(s)
	}
	var hits []Hit
	for id, p := range patterns {
		for i := 0; i+len(p) <= len(text); i++ {
			if text[i:i+len(p)] == p {
				hits = append(hits, Hit{Start: i, End: i + len(p), ID: id})
			}
		}
	}
	slices.SortStableFunc(hits, func(a, b Hit) int {
		if a.End != b.End {
			return a.End - b.End
		}
		if a.Start != b.Start {
			return a.Start - b.Start // longest first
		}
		return a.ID - b.ID
	})
	return hits
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func each(a *Automaton, s string) []Hit {
	var hits []Hit
	a.Each(s, func(h Hit) bool { hits = append(hits, h); return true })
	return hits
}

func mustNew(t testing.TB, patterns []string, opts Options) *Automaton {
	t.Helper()
	a, err := New(patterns, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestEach(t *testing.T) {
	tests := []struct {
		name     string
		patterns []string
		fold     bool
		text     string
		want     []Hit
	}{
		{
			name:     "classic overlapping",
			patterns: []string{"he", "she", "his", "hers"},
			text:     "ushers",
			want:     []Hit{{1, 4, 1}, {2, 4, 0}, {2, 6, 3}},
		},
		{
			name:     "suffix chain longest first",
			patterns: []string{"a", "aa", "aaa"},
			text:     "aaa",
			want:     []Hit{{0, 1, 0}, {0, 2, 1}, {1, 2, 0}, {0, 3, 2}, {1, 3, 1}, {2, 3, 0}},
		},
		{
			name:     "duplicates report each id",
			patterns: []string{"ab", "ab"},
			text:     "xab",
			want:     []Hit{{1, 3, 0}, {1, 3, 1}},
		},
		{
			name:     "no match",
			patterns: []string{"falcon"},
			text:     "the falco flew",
		},
		{
			name:     "case sensitive by default",
			patterns: []string{"key"},
			text:     "KEY key",
			want:     []Hit{{4, 7, 0}},
		},
		{
			name:     "ascii case folding",
			patterns: []string{"api_key", "ghp_"},
			fold:     true,
			text:     "API_KEY=GHP_x",
			want:     []Hit{{0, 7, 0}, {8, 12, 1}},
		},
		{
			name:     "utf-8 patterns match whole runes",
			patterns: []string{"ü", "größe"},
			text:     "ü größe",
			want:     []Hit{{0, 2, 0}, {3, 10, 1}},
		},
		{
			name:     "empty text",
			patterns: []string{"x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mustNew(t, tt.patterns, Options{FoldASCIICase: tt.fold})
			got := each(a, tt.text)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Each = %v, want %v", got, tt.want)
			}
			if n := naive(tt.patterns, tt.text, tt.fold); !slices.Equal(got, n) {
				t.Errorf("Each = %v, brute force finds %v", got, n)
			}
			f, ok := a.Find(tt.text, make([]Hit, 0, 16))
			if !ok || !slices.Equal(f, tt.want) {
				t.Errorf("Find = %v, %v; want %v", f, ok, tt.want)
			}
		})
	}
}

func TestEachStops(t *testing.T) {
	a := mustNew(t, []string{"a"}, Options{})
	n := 0
	a.Each("aaaa", func(Hit) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("fn called %d times after returning false, want 2", n)
	}
}

func TestNewErrors(t *testing.T) {
	for _, tt := range []struct {
		name     string
		patterns []string
		opts     Options
	}{
		{"empty pattern", []string{"a", ""}, Options{}},
		{"upper case when folding", []string{"Key"}, Options{FoldASCIICase: true}},
	} {
		if _, err := New(tt.patterns, tt.opts); !errors.Is(err, ErrPattern) {
			t.Errorf("%s: err = %v, want ErrPattern", tt.name, err)
		}
	}
	a := mustNew(t, nil, Options{})
	if h := each(a, "anything"); len(h) != 0 {
		t.Errorf("no patterns found %v", h)
	}
}

// TestFindMatchesEach checks the two-stream walk against the single one on
// random texts long enough to be split, including patterns that straddle
// the middle: Find returns the same set, first-half starts first.
func TestFindMatchesEach(t *testing.T) {
	patterns := []string{"ab", "abc", "bca", "cab", "aaaa", "b", "cccccccccccc"}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 300; trial++ {
		n := 200 + rng.IntN(400)
		b := make([]byte, n)
		for i := range b {
			b[i] = "abcdABCD "[rng.IntN(9)]
		}
		s := string(b)
		for _, fold := range []bool{false, true} {
			a := mustNew(t, patterns, Options{FoldASCIICase: fold})
			all := each(a, s)
			if want := naive(patterns, s, fold); !slices.Equal(all, want) {
				t.Fatalf("Each disagrees with brute force on %q", s)
			}
			got, ok := a.Find(s, make([]Hit, 0, 2*len(all)+2))
			if !ok {
				t.Fatalf("Find overflowed a buffer twice the hit count")
			}
			var first, second []Hit
			mid := len(s) / 2
			if len(s) < 256 {
				mid = len(s)
			}
			for _, h := range all {
				if h.Start < mid {
					first = append(first, h)
				} else {
					second = append(second, h)
				}
			}
			if want := append(first, second...); !slices.Equal(got, want) {
				t.Fatalf("Find on %d bytes (fold %v):\n got %v\nwant %v", len(s), fold, got, want)
			}
		}
	}
}

func TestFindOverflow(t *testing.T) {
	a := mustNew(t, []string{"x"}, Options{})
	for _, s := range []string{strings.Repeat("x", 10), strings.Repeat("x", 300)} {
		if _, ok := a.Find(s, make([]Hit, 0, 8)); ok {
			t.Errorf("Find of %d hits into 8 slots reported ok", len(s))
		}
		if got, ok := a.Find(s, make([]Hit, 0, 2*len(s))); !ok || len(got) != len(s) {
			t.Errorf("Find = %d hits, %v; want %d", len(got), ok, len(s))
		}
	}
}

func TestNoAllocation(t *testing.T) {
	a := mustNew(t, []string{"password", "secret", "api_key"}, Options{FoldASCIICase: true})
	text := strings.Repeat("The PASSWORD field and the api_key go in the vault. ", 40)
	var buf [128]Hit
	if n := testing.AllocsPerRun(100, func() {
		if _, ok := a.Find(text, buf[:0]); !ok {
			t.Fatal("overflow")
		}
		a.Each(text, func(Hit) bool { return true })
	}); n != 0 {
		t.Errorf("%v allocations per search, want 0", n)
	}
}

func BenchmarkFind(b *testing.B) {
	words := []string{"password", "passwd", "secret", "token", "api_key", "apikey", "ghp_", "xoxb-", "akia", "sk-", "-----begin", "://"}
	a := mustNew(b, words, Options{FoldASCIICase: true})
	text := strings.Repeat("The warehouse service records pallets as they move between bays and trucks. ", 27)[:2048]
	var buf [128]Hit
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := a.Find(text, buf[:0]); !ok {
			b.Fatal("overflow")
		}
	}
}

func BenchmarkEach(b *testing.B) {
	words := []string{"project falcon", "project osprey", "internal only", "confidential"}
	a := mustNew(b, words, Options{})
	text := strings.Repeat("the warehouse service records pallets as they move between bays and trucks. ", 27)[:2048]
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		a.Each(text, func(Hit) bool { return true })
	}
}
