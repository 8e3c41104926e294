// Package utf8text cuts text without breaking UTF-8: stored records, logged
// errors and texts sent to classifiers stay valid UTF-8 however long their
// source was.
package utf8text

import "unicode/utf8"

// Truncate returns the longest prefix of s that is at most n bytes long and
// does not end inside a multi-byte character.
func Truncate[T string | []byte](s T, n int) T {
	if len(s) <= n {
		return s
	}
	if n < 0 {
		n = 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
