// Package twobyte answers, without the UTF-8 decoder or the Unicode
// tables, whether a character written in two bytes (U+0080 to U+07FF:
// accented Latin, Greek, Cyrillic, Hebrew, Arabic ...) is in a class a
// scanner walks words by. Texts in those scripts are mostly such
// characters, and a bit set probed with the bytes' payload costs a
// fraction of utf8.DecodeRune and unicode.Is for each.
package twobyte

import (
	"unicode/utf8"
)

// Set is a class of the characters U+0080 to U+07FF.
type Set [0x800 / 64]uint64

// NewSet returns the set of the characters below U+0800 for which in is
// true.
func NewSet(in func(rune) bool) *Set {
	var set Set
	for r := rune(utf8.RuneSelf); r < 0x800; r++ {
		if in(r) {
			set[r/64] |= 1 << (r % 64)
		}
	}
	return &set
}

// Has reports whether c0 c1 is a well-formed two-byte character in the
// set. A lead byte of another length, an overlong form (0xc0, 0xc1) or a
// second byte that is no continuation byte is not.
func (set *Set) Has(c0, c1 byte) bool {
	if c0 < 0xc2 || c0 > 0xdf || c1&0xc0 != 0x80 {
		return false
	}
	r := uint32(c0&0x1f)<<6 | uint32(c1&0x3f)
	return set[r/64]&(1<<(r%64)) != 0
}
