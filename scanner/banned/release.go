package banned

import "github.com/promptwall/promptwall/scanner"

// Hold implements scanner.Holder: the longest end of the folded text that
// begins a banned substring is held, so a phrase split across a stream's
// events is whole before any of it leaves ("ignore previous" waits for
// "instructions"), and so is the last token unless it is a plain word,
// whose folded form cannot change.
func (s *Scanner) Hold(t *scanner.Target) int {
	view := t.Text.Folded()
	open, _ := view.Span(len(view.S)-s.ac.OpenSuffix(view.S), len(view.S))
	// Plainness is judged on the original: folding turns "re5t" into a
	// plain-looking "rest" whose next byte may still change it.
	return min(scanner.HeldToken(t.Text.Original), open)
}

// Lookbehind implements scanner.Lookbehinder: a phrase starts where Hold
// holds, and substrings need no boundary before them; the few bytes
// before it keep the folding of the point's first character (a combining
// mark, a confusable pair) the same as in the whole answer.
func (s *Scanner) Lookbehind() int { return 16 }

var (
	_ scanner.Holder       = (*Scanner)(nil)
	_ scanner.Lookbehinder = (*Scanner)(nil)
)
