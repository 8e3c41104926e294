// Package jsonstr quotes JSON strings for the hand-written encoders of the
// wire formats and the store, which skip encoding/json on hot paths.
package jsonstr

import "unicode/utf8"

// plain and plainHTML tell which ASCII bytes are copied unescaped.
var plain, plainHTML = func() (p, h [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		p[c] = c != '"' && c != '\\'
		h[c] = p[c] && c != '<' && c != '>' && c != '&'
	}
	return p, h
}()

// Append appends s to dst as a JSON string. Invalid UTF-8 becomes U+FFFD so
// the output is always valid JSON; U+2028 and U+2029 are escaped because
// some JavaScript consumers treat them as line ends. With escapeHTML, <, >
// and & are escaped too, as encoding/json does by default, so the text is
// safe to embed in HTML.
func Append(dst []byte, s string, escapeHTML bool) []byte {
	const hex = "0123456789abcdef"
	table := &plain
	if escapeHTML {
		table = &plainHTML
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if table[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
