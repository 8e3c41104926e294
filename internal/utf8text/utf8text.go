// Package utf8text cuts and turns text without breaking UTF-8: stored
// records, logged errors and texts sent to classifiers stay valid UTF-8
// however long their source was, and a reversed text is its characters
// backwards, not its bytes.
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

// Reverse returns s with its characters (runes) in reverse order: the
// spelling-backwards of attacks and canaries.
func Reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}
