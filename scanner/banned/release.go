package banned

import "github.com/promptwall/promptwall/scanner"

// Hold implements scanner.Holder: the longest end of the folded text that
// begins a banned substring is held, so a phrase split across a stream's
// events is whole before any of it leaves ("ignore previous" waits for
// "instructions"), and so is the last token, whose folded form may still
// change.
func (s *Scanner) Hold(t *scanner.Target) int {
	view := t.Text.Folded()
	hold := min(scanner.OpenToken(view.S), len(view.S)-s.ac.OpenSuffix(view.S))
	start, _ := view.Span(hold, hold)
	return start
}

var _ scanner.Holder = (*Scanner)(nil)
