package pii

import "github.com/promptwall/promptwall/scanner"

// Hold implements scanner.Holder. Personal data that may still grow at the
// end of a text is held: the last token (an e-mail address, an IP address,
// a number not yet ended) and, before it, the run of tokens on the same
// line that may belong to one identifier or name with it: tokens that begin
// with a digit, an upper-case letter, '+' or '(' (a card number in groups,
// a phone number, an IBAN, a date, a street address, a full name). The run
// ends at the first token that is none of these, such as a lower-case
// word: "4111 1111" waits for the rest of the card, "Paris is" does not.
func (s *Scanner) Hold(t *scanner.Target) int {
	view := t.Text.Canonical()
	v := view.S
	hold := scanner.OpenToken(v)
	if hold < len(v) && !runToken(v[hold:]) {
		start, _ := view.Span(hold, hold)
		return start
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
		if !runToken(v[ps:j]) {
			break
		}
		hold, i = ps, ps
	}
	start, _ := view.Span(hold, hold)
	return start
}

// runToken tells whether a token may be part of an identifier or name that
// spans tokens.
func runToken(tok string) bool {
	c := tok[0]
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c == '+' || c == '('
}

var _ scanner.Holder = (*Scanner)(nil)
