// Package evasion holds the obfuscations attackers wrap a prompt injection
// in, as pure, deterministic text transformations, so detection tests can
// check that the normalised views undo them. Test helpers only: nothing in
// the gateway uses it.
package evasion

import (
	"encoding/base64"
	"strings"
	"unicode"
)

// Transform is one named obfuscation.
type Transform struct {
	Name string
	Fn   func(string) string
}

// All lists every transformation, in a fixed order.
var All = []Transform{
	{"base64", Base64},
	{"leetspeak", Leet},
	{"leetspeak with symbols", LeetSymbols},
	{"confusables", Confusables},
	{"invisible", Invisible},
	{"spacing", Spaced},
}

// Base64 encodes the whole text (standard alphabet, padded).
func Base64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

var leet = map[rune]rune{'a': '4', 'e': '3', 'i': '1', 'o': '0', 's': '5', 't': '7', 'A': '4', 'E': '3', 'I': '1', 'O': '0', 'S': '5', 'T': '7'}

// Leet replaces vowels and some consonants with look-alike digits.
func Leet(s string) string {
	return strings.Map(func(r rune) rune {
		if l, ok := leet[r]; ok {
			return l
		}
		return r
	}, s)
}

// leetSymbols lists, per letter, the digits and symbols that stand for it;
// LeetSymbols takes them in turn.
var leetSymbols = map[rune][]string{
	'a': {"4", "@"}, 'b': {"8"}, 'e': {"3"}, 'g': {"9", "6"}, 'i': {"1", "!"},
	'l': {"1", "|"}, 'o': {"0"}, 's': {"5", "$"}, 't': {"7", "+"},
}

// LeetSymbols is leetspeak as people type it: digits and symbols mixed
// ("!6n0r3 @l1 pr3v10u$ in57ruc7!0ns"). Letters with a substitute take
// them in turn, and every fourth such letter stays as it is, so the text
// stays readable, as a human attacker's would.
func LeetSymbols(s string) string {
	var b strings.Builder
	k := 0
	for _, r := range s {
		subs, ok := leetSymbols[unicode.ToLower(r)]
		if !ok {
			b.WriteRune(r)
			continue
		}
		if k%4 == 3 {
			b.WriteRune(r)
		} else {
			b.WriteString(subs[k%len(subs)])
		}
		k++
	}
	return b.String()
}

// homoglyphs maps Latin letters to Cyrillic and Greek look-alikes.
var homoglyphs = map[rune]rune{
	'a': 'а', 'c': 'с', 'e': 'е', 'i': 'і', 'o': 'ο', 'p': 'р', 'x': 'х', 'y': 'у', 's': 'ѕ', 'j': 'ј',
	'A': 'Α', 'B': 'Β', 'C': 'С', 'E': 'Ε', 'H': 'Η', 'K': 'Κ', 'M': 'Μ', 'N': 'Ν', 'O': 'Ο', 'P': 'Ρ', 'T': 'Τ', 'X': 'Χ', 'Y': 'Υ', 'Z': 'Ζ',
}

// Confusables swaps Latin letters for Cyrillic and Greek homoglyphs.
func Confusables(s string) string {
	return strings.Map(func(r rune) rune {
		if h, ok := homoglyphs[r]; ok {
			return h
		}
		return r
	}, s)
}

// Invisible interleaves invisible characters after letters: zero-width
// spaces, zero-width joiners and the tag character U+E0001, in turn.
func Invisible(s string) string {
	var b strings.Builder
	i := 0
	for _, r := range s {
		b.WriteRune(r)
		if unicode.IsLetter(r) {
			switch i % 3 {
			case 0:
				b.WriteRune('\u200b')
			case 1:
				b.WriteRune('\u200d')
			default:
				b.WriteRune(0xE0001)
			}
			i++
		}
	}
	return b.String()
}

// Spaced writes every word one character per token ("i g n o r e"),
// words kept apart by three spaces.
func Spaced(s string) string {
	var b strings.Builder
	for i, w := range strings.Fields(s) {
		if i > 0 {
			b.WriteString("   ")
		}
		for j, r := range w {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}
