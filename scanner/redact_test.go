package scanner

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMergeSpans(t *testing.T) {
	const text = "0123456789abcdefghij"
	tests := []struct {
		name string
		in   []Match
		want []Match
	}{
		{name: "none", in: nil, want: []Match{}},
		{name: "sorted", in: []Match{{Start: 5, End: 7, Kind: "B"}, {Start: 0, End: 2, Kind: "A"}},
			want: []Match{{Start: 0, End: 2, Kind: "A"}, {Start: 5, End: 7, Kind: "B"}}},
		{name: "adjacent stay apart", in: []Match{{Start: 0, End: 2, Kind: "A"}, {Start: 2, End: 4, Kind: "B"}},
			want: []Match{{Start: 0, End: 2, Kind: "A"}, {Start: 2, End: 4, Kind: "B"}}},
		{name: "overlap: union, longest kind", in: []Match{{Start: 0, End: 4, Kind: "SHORT"}, {Start: 2, End: 10, Kind: "LONG"}},
			want: []Match{{Start: 0, End: 10, Kind: "LONG"}}},
		{name: "same start: longest wins", in: []Match{{Start: 3, End: 5, Kind: "A"}, {Start: 3, End: 9, Kind: "B"}},
			want: []Match{{Start: 3, End: 9, Kind: "B"}}},
		{name: "equal length: earliest wins", in: []Match{{Start: 4, End: 8, Kind: "LATE"}, {Start: 2, End: 6, Kind: "EARLY"}},
			want: []Match{{Start: 2, End: 8, Kind: "EARLY"}}},
		{name: "contained", in: []Match{{Start: 0, End: 10, Kind: "OUT"}, {Start: 2, End: 3, Kind: "IN"}},
			want: []Match{{Start: 0, End: 10, Kind: "OUT"}}},
		{name: "chain", in: []Match{{Start: 0, End: 3, Kind: "A"}, {Start: 2, End: 6, Kind: "B"}, {Start: 5, End: 8, Kind: "C"}},
			want: []Match{{Start: 0, End: 8, Kind: "B"}}},
		{name: "clamped and empty dropped", in: []Match{{Start: -3, End: 2, Kind: "A"}, {Start: 18, End: 99, Kind: "B"}, {Start: 5, End: 5}},
			want: []Match{{Start: 0, End: 2, Kind: "A"}, {Start: 18, End: 20, Kind: "B"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mergeSpans(text, tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func spansOf(text string, kind string, values ...string) []Match {
	var out []Match
	for _, v := range values {
		for off := 0; ; {
			i := strings.Index(text[off:], v)
			if i < 0 {
				break
			}
			out = append(out, Match{Start: off + i, End: off + i + len(v), Kind: kind})
			off += i + len(v)
		}
	}
	return out
}

func TestVaultNumberingAndRestore(t *testing.T) {
	var v Vault
	msgs := []string{
		"mail a@x.io and b@y.io",
		"again a@x.io, phone 555-0100",
		"b@y.io",
	}
	want := []string{
		"mail [EMAIL_ADDRESS_1] and [EMAIL_ADDRESS_2]",
		"again [EMAIL_ADDRESS_1], phone [PHONE_NUMBER_1]",
		"[EMAIL_ADDRESS_2]",
	}
	for i, m := range msgs {
		matches := append(spansOf(m, "EMAIL_ADDRESS", "a@x.io", "b@y.io"), spansOf(m, "PHONE_NUMBER", "555-0100")...)
		if got := v.Redact(m, matches); got != want[i] {
			t.Fatalf("message %d: got %q, want %q", i, got, want[i])
		}
	}
	if v.Len() != 3 {
		t.Fatalf("vault holds %d values, want 3", v.Len())
	}
	tests := []struct{ in, want string }{
		{"Write to [EMAIL_ADDRESS_2] or call [PHONE_NUMBER_1].", "Write to b@y.io or call 555-0100."},
		{"[EMAIL_ADDRESS_1][EMAIL_ADDRESS_1]", "a@x.io" + "a@x.io"},
		{"unknown [EMAIL_ADDRESS_9] and [email_address_1] stay", "unknown [EMAIL_ADDRESS_9] and [email_address_1] stay"},
		{"[[EMAIL_ADDRESS_1]]", "[a@x.io]"},
		{"no placeholders", "no placeholders"},
		{"dangling [EMAIL_ADDRESS_1", "dangling [EMAIL_ADDRESS_1"},
	}
	for _, tt := range tests {
		if got := v.Restore(tt.in); got != tt.want {
			t.Errorf("Restore(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPlaceholderKindSanitised(t *testing.T) {
	var v Vault
	got := v.Redact("secret", []Match{{Start: 0, End: 6, Kind: "api-key]x"}})
	if got != "[API_KEY_X_1]" {
		t.Fatalf("got %q", got)
	}
	if got := v.Redact("other", []Match{{Start: 0, End: 5}}); got != "[REDACTED_1]" {
		t.Fatalf("empty kind: got %q", got)
	}
}

func TestMask(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		matches []Match
		want    string
	}{
		{"aws key keeps prefix", "key AKIAIOSFODNN7EXAMPLE end", []Match{{Start: 4, End: 24}}, "key AKIA**************** end"},
		{"short secret fully masked", "pw hunter2!", []Match{{Start: 3, End: 11}}, "pw ********"},
		{"15 chars fully masked", "x123456789012345", []Match{{Start: 1, End: 16}}, "x***************"},
		{"overlaps keep one prefix", "ghp_abcdefghijklmnopqrstuvwxyz", []Match{{Start: 0, End: 20}, {Start: 10, End: 30}}, "ghp_**************************"},
		{"no matches", "clean", nil, "clean"},
		{"multi-byte prefix keeps whole runes", "ééééééééééééééééé", []Match{{Start: 0, End: 34}}, "éééé" + strings.Repeat("*", 26)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Mask(tt.text, tt.matches)
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			if len(got) != len(tt.text) {
				t.Fatalf("length changed: %d -> %d", len(tt.text), len(got))
			}
		})
	}
}

// TestMaskNeverLeaks checks the storage guarantee on random input: inside a
// masked span, at most the first 4 characters of a span of 16 or more survive.
func TestMaskNeverLeaks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	for iter := 0; iter < 2000; iter++ {
		n := 1 + rng.IntN(80)
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		text := string(b)
		var matches []Match
		for k := rng.IntN(4); k >= 0; k-- {
			s := rng.IntN(n)
			matches = append(matches, Match{Start: s, End: s + 1 + rng.IntN(n-s)})
		}
		got := Mask(text, matches)
		covered := make([]bool, n)
		for _, m := range matches {
			for i := max(m.Start, 0); i < min(m.End, n); i++ {
				covered[i] = true
			}
		}
		for i := range covered {
			if !covered[i] && got[i] != text[i] {
				t.Fatalf("byte %d outside every match altered: %q -> %q", i, text, got)
			}
		}
		for _, m := range mergeSpans(text, matches) {
			keep := 0
			if m.End-m.Start >= maskKeepMin {
				keep = maskKeep
			}
			for i := m.Start; i < m.End; i++ {
				if i < m.Start+keep {
					if got[i] != text[i] {
						t.Fatalf("prefix altered: %q %v -> %q", text, matches, got)
					}
				} else if got[i] != '*' {
					t.Fatalf("leak at %d: %q %v -> %q", i, text, matches, got)
				}
			}
		}
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8: %q", got)
		}
	}
}
