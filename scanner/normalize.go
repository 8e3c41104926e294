package scanner

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// canonicalize computes the Canonical view. First cut: invisible characters
// removed and reported; NFKC and confusables come with the normalisation work.
func canonicalize(s string) (View, []Match) {
	if isASCII(s) {
		return View{S: s}, nil
	}
	var b strings.Builder
	origin := make([]int, 0, len(s)+1)
	var invisible []Match
	for i, r := range s {
		size := utf8.RuneLen(r)
		if r >= 0xE0000 && r <= 0xE007F {
			invisible = append(invisible, Match{Start: i, End: i + size, Kind: "TAG_CHARACTER", Score: 1})
			continue
		}
		if unicode.Is(unicode.Cf, r) {
			invisible = append(invisible, Match{Start: i, End: i + size, Kind: "INVISIBLE_CHARACTER", Score: 1})
			continue
		}
		for k := 0; k < size; k++ {
			origin = append(origin, i)
		}
		b.WriteRune(r)
	}
	origin = append(origin, len(s))
	return View{S: b.String(), origin: origin}, invisible
}

// fold computes the Folded view from the canonical one: lowercase only, for now.
func fold(c *View, original string) View {
	lower := strings.ToLower(c.S)
	if len(lower) != len(c.S) {
		return *c
	}
	return View{S: lower, origin: c.origin}
}

// decodePayloads finds encoded payloads; filled in by the normalisation work.
func decodePayloads(s string, depth int) []Segment { return nil }
