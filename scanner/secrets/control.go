package secrets

import (
	"strings"

	"github.com/promptwall/promptwall/scanner/internal/swar"
)

// Control characters inside a token ("AKIAZ7VR\x00SQ4L...") are invisible
// in most viewers and in logs, yet they break every pattern that expects
// the token's bytes to be contiguous. The scanner matches on the text
// without them and maps offsets back. Tab, line feed, carriage return,
// vertical tab and form feed are whitespace and stay: a key split across
// lines is two fragments, not a hidden key. The same holds for a control
// character written as an escape between two letters or digits
// ("AKIAZ7VR\u0000SQ4L" pasted from JSON or code).

// controlView is a text with its control characters removed, and the map
// of its offsets back to the text it came from.
type controlView struct {
	s string
	// cuts lists, in order, the offsets of s at which control bytes were
	// removed and how many bytes had been removed up to there in total.
	// Empty means s is the original.
	cuts []cut
}

type cut struct{ at, removed int32 }

// isControl marks the bytes removed: C0 controls other than whitespace,
// and DEL. C1 controls (U+0080-U+009F) are two bytes, 0xC2 0x80-0x9F.
var isControl = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = c < '\t' || c > '\r'
	}
	t[0x7f] = true
	return t
}()

// c1At reports whether s has a C1 control character at i.
func c1At(s string, i int) bool {
	return s[i] == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f
}

// dropControls returns s without control characters. It allocates only
// when s has some.
func dropControls(s string) controlView {
	first := firstControl(s)
	if e := firstEscapedControl(s); e >= 0 && (first < 0 || e < first) {
		first = e
	}
	if first < 0 || len(s) > maxViewLen {
		return controlView{s: s}
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:first]...)
	var cv controlView
	removed := 0
	for i := first; i < len(s); {
		n := 0
		switch {
		case isControl[s[i]]:
			n = 1
		case c1At(s, i):
			n = 2
		case s[i] == '\\':
			n = escapedControlAt(s, i)
		}
		if n == 0 {
			b = append(b, s[i])
			i++
			continue
		}
		removed += n
		i += n
		if k := len(cv.cuts); k > 0 && int(cv.cuts[k-1].at) == len(b) {
			cv.cuts[k-1].removed = int32(removed)
		} else {
			cv.cuts = append(cv.cuts, cut{int32(len(b)), int32(removed)})
		}
	}
	cv.s = string(b)
	return cv
}

// maxViewLen keeps offsets within int32.
const maxViewLen = 1<<31 - 1

// at maps offset k of the view back to the original. A removed run maps
// to the original offset just after it, so a span starting at a cut
// starts at the token's first kept byte.
func (v controlView) at(k int) int {
	removed := 0
	for _, c := range v.cuts {
		if int(c.at) > k {
			break
		}
		removed = int(c.removed)
	}
	return k + removed
}

// span maps a view span back to the original; control characters inside
// the span are part of it, so a redaction covers them too.
func (v controlView) span(start, end int) (int, int) {
	if len(v.cuts) == 0 {
		return start, end
	}
	os := v.at(start)
	// The end maps to just after the last kept byte of the span.
	oe := v.at(end-1) + 1
	if end == start {
		oe = os
	}
	return os, oe
}

// firstControl returns the offset of the first control character of s,
// or -1. It tests eight bytes at a time for a byte below 0x20 or at or
// above 0x7f, and looks at single bytes only in words that have one (line
// breaks, non-ASCII text). An exact test of the control set per word was
// tried and was slower: words with a line break are too few to matter.
func firstControl(s string) int {
	const lo, hi = swar.Lanes01, swar.Lanes80
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := swar.Load(s[i : i+8])
		// Borrows and carries can flag a clean byte next to a flagged
		// one; the byte loop decides.
		if ((w-0x20*lo)&^w|(w+lo)|w)&hi == 0 {
			continue
		}
		// Most flagged words hold a line break or a tab, or a letter of
		// another language than English: the exact test of the ASCII
		// bytes (high bit set first so no borrow crosses a byte), and in
		// a word with others no 0xC2, the first byte of a C1 control,
		// lets them pass without the byte loop.
		x := w | hi
		ge := func(n uint64) uint64 { return (x - n*lo) & hi }
		if w&hi == 0 {
			if (^ge(0x09)|ge(0x0e)&^ge(0x20)|ge(0x7f))&hi == 0 {
				continue
			}
		} else if z := w ^ 0xc2*lo; (^ge(0x09)|ge(0x0e)&^ge(0x20)|ge(0x7f))&^w&hi == 0 && (z-lo)&^z&hi == 0 {
			continue
		}
		for j := i; j < i+8; j++ {
			if isControl[s[j]] || c1At(s, j) {
				return j
			}
		}
	}
	for ; i < len(s); i++ {
		if isControl[s[i]] || c1At(s, i) {
			return i
		}
	}
	return -1
}

// escapedControlAt returns the length of the escaped control character
// ("\u0000", "\x1b") at s[i] when it sits between two letters or digits,
// else 0.
func escapedControlAt(s string, i int) int {
	if i == 0 || !isAlnum(s[i-1]) || i+1 >= len(s) {
		return 0
	}
	var hex string
	n := 0
	switch {
	case s[i+1] == 'u' && i+6 <= len(s) && s[i+2:i+4] == "00":
		hex, n = s[i+4:i+6], 6
	case s[i+1] == 'x' && i+4 <= len(s):
		hex, n = s[i+2:i+4], 4
	default:
		return 0
	}
	hi, ok1 := hexValue(hex[0])
	lo, ok2 := hexValue(hex[1])
	if !ok1 || !ok2 || !isControl[hi<<4|lo] || i+n >= len(s) || !isAlnum(s[i+n]) {
		return 0
	}
	return n
}

// firstEscapedControl returns the offset of the first escaped control
// character between two letters or digits, or -1.
func firstEscapedControl(s string) int {
	for k := 0; ; {
		j := strings.IndexByte(s[k:], '\\')
		if j < 0 {
			return -1
		}
		k += j
		if escapedControlAt(s, k) > 0 {
			return k
		}
		k++
	}
}

func isAlnum(c byte) bool { return c >= '0' && c <= '9' || isLetter(c) }

func hexValue(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
