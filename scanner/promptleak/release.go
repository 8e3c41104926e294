package promptleak

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/promptwall/promptwall/scanner"
)

// Hold implements scanner.Holder. An answer may still be leaking while it
// ends with the beginning of a canary (or of one of its encodings) or with
// words (MinOverlap at most, the last unfinished) that also follow one another in a system
// message: the next words may complete the run. Those words are held from
// their first; so is the last token unless it is a plain word, whose
// folded form cannot change.
func (s *Scanner) Hold(t *scanner.Target) int {
	answer := t.Text.Original
	hold := scanner.HeldToken(answer)
	for _, n := range s.needles {
		for k := min(len(n)-1, len(answer)); k > 0; k-- {
			if strings.HasSuffix(answer, n[:k]) {
				hold = min(hold, len(answer)-k)
				break
			}
		}
	}
	if t.Conversation == nil {
		return hold
	}
	view := t.Text.Folded()
	tail := lastWords(view.S, s.k)
	if len(tail) == 0 {
		return hold
	}
	// The last word is unfinished when the text ends inside it.
	open := tail[len(tail)-1].end == len(view.S)
	for _, m := range t.Conversation.Messages {
		if m.Role != scanner.RoleSystem || m.Text == "" {
			continue
		}
		sys := scanner.NewText(m.Text).Folded().S
		sw := words(sys)
		for j := len(tail); j > 0; j-- {
			if containsRun(sys, sw, view.S, tail[len(tail)-j:], open) {
				start, _ := view.Span(tail[len(tail)-j].start, tail[len(tail)-j].start)
				hold = min(hold, start)
				break
			}
		}
	}
	return hold
}

type word struct{ start, end int }

// words splits s into runs of letters and digits, as shingles does.
func words(s string) []word {
	var out []word
	start := -1
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			out = append(out, word{start, i})
			start = -1
		}
		i += size
	}
	if start >= 0 {
		out = append(out, word{start, len(s)})
	}
	return out
}

// lastWords returns up to n of the last words of s.
func lastWords(s string, n int) []word {
	w := words(s)
	return w[max(0, len(w)-n):]
}

// containsRun tells whether the words tail of a (in order) occur one after
// another in sys; the last one may be only the beginning of a word of sys
// when open.
func containsRun(sys string, sw []word, a string, tail []word, open bool) bool {
	for i := 0; i+len(tail) <= len(sw); i++ {
		ok := true
		for k, w := range tail {
			got, want := sys[sw[i+k].start:sw[i+k].end], a[w.start:w.end]
			if open && k == len(tail)-1 {
				ok = strings.HasPrefix(got, want)
			} else {
				ok = got == want
			}
			if !ok {
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

var _ scanner.Holder = (*Scanner)(nil)
