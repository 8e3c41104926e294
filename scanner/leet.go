package scanner

import (
	"encoding/binary"
	"math/bits"
	"strings"
)

// Leetspeak folding for the Folded view.
//
// Digits and symbols stand for letters only inside words, so the rules look
// at the token around a candidate: a token is a maximal run of ASCII
// letters, digits and leetspeak symbols; a group is a maximal run of
// non-letters inside it. A group is folded when every character in it has a
// letter reading and it is at most maxLeetGroup long, and
//
//   - it sits between two letters ("h4ck", "l33t", "pa$$word"), or
//   - it is one digit, '@' or '$' starting a token that goes on with a letter
//     and holds at least three letters ("1gnore", "0bey", "@dmin"), or
//   - it is one digit, '@' or '$' ending a token in which another group
//     was already folded ("h4ck3", "1gn0r3"): the token is evidently
//     leetspeak.
//
// So "version 3.5", phone numbers, "mp3", "python3", "10am", "5th" and
// "sha256" are left alone (no letters around, a digit ending a word that
// shows no other leetspeak, a digit starting a word too short to be one, a
// group with digits that have no letter reading), and '!', '|' and '(' are
// read as letters only between letters, never as punctuation at a word's
// edge ("hello!", "(see").

// maxLeetGroup bounds a folded group: "ab1000cd" is an identifier.
const maxLeetGroup = 3

// leetOf returns the letter c stands for, or 0.
func leetOf(c byte) byte {
	switch c {
	case '0':
		return 'o'
	case '1':
		return 'i'
	case '3':
		return 'e'
	case '4':
		return 'a'
	case '5':
		return 's'
	case '6':
		return 'g'
	case '7':
		return 't'
	case '8':
		return 'b'
	case '9':
		return 'g'
	case '@':
		return 'a'
	case '$':
		return 's'
	case '!':
		return 'i'
	case '|':
		return 'l'
	case '(':
		return 'c'
	case '+':
		return 't'
	}
	return 0
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }

// leetTokenByte reports whether c can be part of a token: a lower-case
// letter (the view is already lower-cased), a digit or a leet symbol.
func leetTokenByte(c byte) bool {
	return isLower(c) || ('0' <= c && c <= '9') || leetOf(c) != 0
}

// edgeFoldable is what may be folded at a token's edge: digits, '@', '$'.
func edgeFoldable(c byte) bool { return ('0' <= c && c <= '9') || c == '@' || c == '$' }

// evidentStartFoldable and evidentEndFoldable widen edgeFoldable for a
// text evidently in leetspeak: '!' and '+' begin words there ("!6n0r3",
// "+h3") and '|' ends them ("in+3rn4|"), as does '+' in a group with a
// digit ("vis1+", "transl4+3"), where in ordinary text '!' ends a sentence
// and '+' a sum ("c++", "+1").
func evidentStartFoldable(c byte) bool { return edgeFoldable(c) || c == '!' || c == '+' }
func evidentEndFoldable(c byte, withDigit bool) bool {
	return edgeFoldable(c) || c == '|' || c == '+' && withDigit
}

// maxLeetWord bounds a token of digits and symbols alone that a text
// evidently in leetspeak folds as a word ("4|1", "!5", "@+"): one with a
// symbol that is no digit, so numbers stay.
const maxLeetWord = 4

// Classes of a byte for foldLeet, so its scan is one load per byte.
const (
	lcToken = 1 << iota // may be part of a token: leetTokenByte
	lcLeet              // a digit or symbol that may stand for a letter
)

var leetClass = func() (t [256]uint8) {
	for c := range 256 {
		if leetTokenByte(byte(c)) {
			t[c] |= lcToken
			if !isLower(byte(c)) {
				t[c] |= lcLeet
			}
		}
	}
	return t
}()

// leetEvident is how many tokens the rules above must fold before a text is
// taken to be written in leetspeak; then every token with a letter whose
// digits and symbols all read as letters is folded too ("4ll", "7h3",
// "5how"), which the rules alone leave for fear of "mp3" and "4 cats".
const leetEvident = 2

// foldLeet rewrites b in place; every replacement is one ASCII byte for one,
// so the origin map stays valid. Only tokens with a digit or symbol in them
// can change, so it skips from one such byte to the next (most text has
// few) and examines the token around it.
//
// The second pass, for a text evidently in leetspeak, visits only the
// tokens the first one examined, which it remembers (up to len(seen) of
// them; more and it walks the text again). That is exact: folding turns
// digits and symbols into letters, all of them token bytes, so it moves
// no token boundary and only removes digits and symbols, and every token
// holding one after the first pass held it before.
func foldLeet(b []byte) {
	// 4 KB of stack: a 16 KB prompt has a few hundred such tokens.
	var seen [512]leetToken
	n, tokens := forEachLeetToken(b, foldToken, seen[:0])
	if n < leetEvident {
		return
	}
	if len(tokens) == cap(tokens) {
		forEachLeetToken(b, foldTokenEvident, nil)
		return
	}
	for _, tk := range tokens {
		t := b[tk.start:tk.end]
		letters, leet := 0, false
		for _, c := range t {
			if isLower(c) {
				letters++
			} else {
				leet = true
			}
		}
		if leet {
			foldTokenEvident(t, letters)
		}
	}
}

// leetToken is a token forEachLeetToken examined: b[start:end].
type leetToken struct{ start, end int32 }

// forEachLeetToken calls fold on every token of b that holds a digit or
// symbol, with its letter count, and returns how many it folded. It
// appends the tokens it examines to seen while seen has room, and returns
// seen too.
func forEachLeetToken(b []byte, fold func(t []byte, letters int) bool, seen []leetToken) (int, []leetToken) {
	n := 0
	for i := 0; i < len(b); {
		// Most text has no such byte for long: eight bytes a step to the
		// first that may be one (maybeLeet), then byte by byte.
		for i+8 <= len(b) {
			m := maybeLeet(b[i : i+8])
			if m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < len(b) && leetClass[b[i]]&lcLeet == 0 {
			i++
		}
		if i == len(b) {
			return n, seen
		}
		// The token around b[i]: back to its start (never into the last
		// token examined, which ended before a non-token byte), then on
		// to its end.
		j := i
		for j > 0 && leetClass[b[j-1]]&lcToken != 0 {
			j--
		}
		letters := 0
		for i = j; i < len(b) && leetClass[b[i]]&lcToken != 0; i++ {
			if isLower(b[i]) {
				letters++
			}
		}
		if len(seen) < cap(seen) {
			seen = append(seen, leetToken{int32(j), int32(i)})
		}
		if fold(b[j:i], letters) {
			n++
		}
	}
	return n, seen
}

// maybeLeet returns, for the eight bytes of w, 0x80 in the lane of every
// byte that may be a digit or leetspeak symbol (lcLeet) and in some lanes
// after the first such; none when no byte of w is one. The lanes are
// tested as one word (SWAR): a digit, or a byte in '!'..'+' (which holds
// '!', '$', '(' and '+', and some punctuation), or '@' or '|'. Bytes
// above 0x7f are masked to seven bits and then excluded, so no lane
// carries into the next; 0x80 in a later lane is harmless, as the caller
// stops at the first.
func maybeLeet(w []byte) uint64 {
	x := binary.LittleEndian.Uint64(w)
	x7 := x & (0x7f * lanes01)
	// atLeast(v): 0x80 in the lanes holding a byte >= v (of 7 bits).
	atLeast := func(v uint64) uint64 { return ((x7 | lanes80) - v*lanes01) & lanes80 }
	// equal(v): 0x80 in the lanes holding v (of 7 bits).
	equal := func(v uint64) uint64 { return ^((x7 ^ v*lanes01) + 0x7f*lanes01) & lanes80 }
	m := atLeast('0') &^ atLeast('9'+1)
	m |= atLeast('!') &^ atLeast('+'+1)
	m |= equal('@') | equal('|')
	return m &^ x
}

// foldTokenEvident folds a token of a text evidently in leetspeak: every
// group of digits and symbols in it, if all of them read as letters, none
// is longer than maxLeetGroup, and a group at the token's start holds only
// digits, '@', '$', '!' and '+', one at its end only digits, '@', '$' and
// '|' (a '!' ending a word, a '(' opening one are punctuation).
func foldTokenEvident(t []byte, letters int) bool {
	if letters == 0 {
		return foldLetterless(t)
	}
	for i := 0; i < len(t); {
		if isLower(t[i]) {
			i++
			continue
		}
		j := i
		for j < len(t) && !isLower(t[j]) {
			if leetOf(t[j]) == 0 {
				return false
			}
			j++
		}
		if j-i > maxLeetGroup {
			return false
		}
		withDigit := false
		for k := i; k < j; k++ {
			withDigit = withDigit || '0' <= t[k] && t[k] <= '9'
		}
		for k := i; k < j; k++ {
			if i == 0 && !evidentStartFoldable(t[k]) || j == len(t) && !evidentEndFoldable(t[k], withDigit) {
				return false
			}
		}
		i = j
	}
	foldGroup(t, 0, len(t))
	return true
}

// foldLetterless folds a token of digits and symbols alone in a text
// evidently in leetspeak, when it is short, every byte reads as a letter,
// a symbol other than '(' follows its first byte, and it does not open as
// money or a signed number does ("4|1" is "all", "@+" is "at"; "70", "$5",
// "+1" and "(555" stay).
func foldLetterless(t []byte) bool {
	if len(t) < 2 || len(t) > maxLeetWord || t[0] == '$' || t[0] == '+' || t[0] == '(' {
		return false
	}
	symbol := false
	for k, c := range t {
		if leetOf(c) == 0 || c == '(' {
			return false
		}
		symbol = symbol || k > 0 && (c < '0' || c > '9')
	}
	if symbol {
		foldGroup(t, 0, len(t))
	}
	return symbol
}

func foldToken(t []byte, letters int) bool {
	if letters == 0 {
		return false
	}
	folded := false
	var endGroup [2]int // start and end of a trailing group, if any
	for i := 0; i < len(t); {
		if isLower(t[i]) {
			i++
			continue
		}
		j := i
		mappable := true
		for j < len(t) && !isLower(t[j]) {
			if leetOf(t[j]) == 0 {
				mappable = false
			}
			j++
		}
		n := j - i
		switch {
		case !mappable || n > maxLeetGroup:
		case i > 0 && j < len(t):
			foldGroup(t, i, j)
			folded = true
		case i == 0 && j < len(t):
			if n == 1 && edgeFoldable(t[0]) && letters >= 3 {
				foldGroup(t, i, j)
				folded = true
			}
		case i > 0 && j == len(t):
			if n == 1 && edgeFoldable(t[i]) {
				endGroup = [2]int{i, j}
			}
		}
		i = j
	}
	if folded && endGroup[1] > 0 {
		foldGroup(t, endGroup[0], endGroup[1])
	}
	return folded
}

// foldGroup replaces the digits and symbols of t[i:j] by the letters they
// read as; letters stay. A '1' stands for 'l' as often as for 'i'; readsL
// decides by English spelling.
func foldGroup(t []byte, i, j int) {
	for k := i; k < j; k++ {
		c := t[k]
		switch {
		case isLower(c):
		case c == '1' && readsL(t, k):
			t[k] = 'l'
		default:
			t[k] = leetOf(c)
		}
	}
}

// readsL reports whether the '1' at t[k] reads as 'l'. The letter after it
// is read through leetspeak too ("f1o4t" has an 'o' after the '1'); the one
// before is already folded (a '|' there is an 'l' by now). It is an 'l'
//   - before another '1' or a '|' ("a11", "he1|0"), or after an 'l' or a
//     '|' at a word's end ("@l1", "4|1");
//   - ending a word of four letters or more ("intern@1"; "h1" is "hi");
//   - before an 'l' after a vowel ("te1l", "wi1l"; "k1ll" is "kill");
//   - before a vowel at a word's start or after a vowel ("1ast", "1ink",
//     "de1ete", "fi1e") or after a consonant that English clusters with
//     an 'l' ("p1ay", "rep1y", "c1ear", "f1ag", "tab1e"; "pr3v1ous",
//     "med1a" keep an 'i').
//
// Everything else is an 'i' ("1gnore", "l1ne", "m0r4l1z1ng").
func readsL(t []byte, k int) bool {
	var prev, next byte
	if k > 0 {
		prev = t[k-1]
	}
	if k+1 < len(t) {
		next = t[k+1]
		if next != '1' && next != '|' && !isLower(next) {
			if l := leetOf(next); l != 0 {
				next = l
			}
		}
	}
	switch {
	case next == '1' || next == '|':
		return true
	case next == 0:
		return prev == 'l' || len(t) >= 4
	case next == 'l':
		return isVowel(prev)
	case isVowel(next) || next == 'y':
		return prev == 0 || isVowel(prev) || strings.IndexByte("bcfgps", prev) >= 0
	}
	return false
}

func isVowel(c byte) bool { return strings.IndexByte("aeiou", c) >= 0 }
