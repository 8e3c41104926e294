package pii

import "github.com/promptwall/promptwall/scanner"

// Hold implements scanner.Holder. Personal data that may still grow at the
// end of a text is held: the last token (an e-mail address, an IP address,
// a number not yet ended) and, before it, the run of tokens on the same
// line that may belong to one identifier or name with it: tokens that begin
// with a digit, '+' or '(' (a card number in groups, a phone number) and,
// when a kind that starts with a capital is enabled (IBAN, names, places,
// addresses, dates), with an upper-case letter. The run ends at the first
// token that is none of these, such as a lower-case word: "4111 1111"
// waits for the rest of the card, "Paris is" does not. A plain last word
// leaves at once unless an enabled kind can grow from letters (an e-mail
// address or a domain name from its first word).
func (s *Scanner) Hold(t *scanner.Target) int {
	view := t.Text.Canonical()
	v := view.S
	orig := t.Text.Original
	hold := scanner.OpenToken(v)
	if tok := v[hold:]; tok != "" && !s.runToken(tok) {
		if !scanner.PlainWord(orig[scanner.OpenToken(orig):]) || s.enabled[kEmail] || s.enabled[kDomain] {
			start, _ := view.Span(hold, hold)
			return start
		}
		return len(orig)
	}
	for i := hold; i > 0; {
		j := i
		for j > 0 && (v[j-1] == ' ' || v[j-1] == '\t') {
			j--
		}
		if j == 0 || v[j-1] == '\n' || v[j-1] == '\r' {
			break
		}
		ps := scanner.OpenToken(v[:j])
		if !s.runToken(v[ps:j]) {
			break
		}
		hold, i = ps, ps
	}
	start, _ := view.Span(hold, hold)
	return start
}

// runToken tells whether a token may be part of an identifier or name that
// spans tokens.
func (s *Scanner) runToken(tok string) bool {
	switch c := tok[0]; {
	case c >= '0' && c <= '9', c == '+', c == '(':
		return true
	case c >= 'A' && c <= 'Z':
		return s.enabled[kIBAN] || s.enabled[kPerson] || s.enabled[kLocation] || s.enabled[kAddress] ||
			s.enabled[kDate] || s.enabled[kDriverLicense]
	}
	return false
}

var _ scanner.Holder = (*Scanner)(nil)

// Lookbehind implements scanner.Lookbehinder: what is held starts a match
// (Hold), and the cue words that accept a number (an SSN's, a licence's, a
// phone's "tel", "call") are looked for up to 48 bytes before it.
func (s *Scanner) Lookbehind() int { return 64 }

var _ scanner.Lookbehinder = (*Scanner)(nil)
