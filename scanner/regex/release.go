package regex

import "github.com/promptwall/promptwall/scanner"

// Hold implements scanner.Holder: each pattern is run as a partial match
// over the text it is matched on, and the earliest offset from which one
// could still match once more text arrives is held (a pattern of digits
// and dashes that has seen "123-45-" so far holds from its first digit).
// A pattern that cannot be analysed holds the whole text. The last token
// is held unless it is a plain word, whose canonical form cannot change.
func (s *Scanner) Hold(t *scanner.Target) int {
	s.partialsOnce.Do(s.compilePartials)
	text := t.Text.Original
	var view *scanner.View
	if !s.original {
		view = t.Text.Canonical()
		text = view.S
	}
	hold := len(text)
	for _, p := range s.partials {
		if hold == 0 {
			break
		}
		if p == nil {
			return 0
		}
		hold = min(hold, p.Open(text))
	}
	if view != nil {
		hold, _ = view.Span(hold, hold)
	}
	return min(hold, scanner.HeldToken(t.Text.Original))
}

func (s *Scanner) compilePartials() {
	s.partials = make([]*scanner.Partial, len(s.patterns))
	for i, p := range s.patterns {
		// A nil entry (an expression the partial matcher rejects, which
		// regexp accepted) makes Hold hold everything.
		s.partials[i], _ = scanner.NewPartial(p.re.String())
	}
}

var _ scanner.Holder = (*Scanner)(nil)
