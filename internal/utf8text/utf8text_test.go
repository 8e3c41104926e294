package utf8text

import (
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"short enough", "hello", 10, "hello"},
		{"exact", "hello", 5, "hello"},
		{"ascii cut", "hello", 3, "hel"},
		{"cut inside a two-byte rune backs off", "aé", 2, "a"},
		{"cut after a two-byte rune keeps it", "aéb", 3, "aé"},
		{"cut inside a four-byte rune backs off", "x😀y", 4, "x"},
		{"zero", "é", 0, ""},
		{"negative", "abc", -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Truncate(tt.in, tt.n)
			if got != tt.want {
				t.Errorf("Truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("result %q is not valid UTF-8", got)
			}
			if b := Truncate([]byte(tt.in), tt.n); string(b) != tt.want {
				t.Errorf("Truncate([]byte(%q), %d) = %q, want %q", tt.in, tt.n, b, tt.want)
			}
		})
	}
}

func TestReverse(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"abc", "cba"},
		{"aé😀", "😀éa"},
	}
	for _, tc := range tests {
		if got := Reverse(tc.in); got != tc.want {
			t.Errorf("Reverse(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
