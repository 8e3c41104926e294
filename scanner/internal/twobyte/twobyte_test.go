package twobyte

import (
	"testing"
	"unicode"
	"unicode/utf8"
)

// Every pair of bytes answers as the decoder and the class do.
func TestHasMatchesDecoder(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   func(rune) bool
	}{
		{"letters", unicode.IsLetter},
		{"letters, digits and marks", func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			set := NewSet(tt.in)
			for c0 := 0; c0 < 256; c0++ {
				for c1 := 0; c1 < 256; c1++ {
					b := []byte{byte(c0), byte(c1)}
					r, size := utf8.DecodeRune(b)
					want := size == 2 && r != utf8.RuneError && tt.in(r)
					if got := set.Has(byte(c0), byte(c1)); got != want {
						t.Fatalf("Has(% x) = %v, want %v", b, got, want)
					}
				}
			}
		})
	}
}
