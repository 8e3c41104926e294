package pii

import (
	"net/netip"
)

// email handles an '@' at at: it reads the local part backwards and the
// host forwards, and requires a dotted host with an alphabetic TLD.
func (p *pass) email(at int) int {
	s := p.s
	st := at
	for st > 0 && at-st < 64 {
		c := s[st-1]
		if !isAlnum(c) && class[c]&cLocal == 0 {
			break
		}
		st--
	}
	// Leading punctuation ("'", ".", "-") is quoting, not address.
	for st < at && !isAlnum(s[st]) {
		st++
	}
	if st == at || s[at-1] == '.' {
		return at + 1
	}
	labels, lastStart, end := 0, 0, 0
	for j := at + 1; ; {
		k := j
		for k < len(s) && (isAlnum(s[k]) || s[k] == '-') {
			k++
		}
		if k == j || k-j > 63 || s[j] == '-' || s[k-1] == '-' {
			break
		}
		labels++
		lastStart, end = j, k
		if k+1 < len(s) && s[k] == '.' && isAlnum(s[k+1]) {
			j = k + 1
			continue
		}
		break
	}
	if labels < 2 || end-lastStart < 2 || !boundaryAfter(s, end) {
		return at + 1
	}
	for k := lastStart; k < end; k++ {
		if !isAlpha(s[k]) {
			return at + 1
		}
	}
	p.add(st, end, kEmail, 1)
	return end
}

// ipv6 matches an IPv6 address at i (a hex group followed by ':' or a
// leading "::"), validated by net/netip. Clock times ("12:30:45") and MAC
// addresses fail the shape pre-check or the parse.
func (p *pass) ipv6(i int) (int, bool) {
	s := p.s
	j, colons, double := i, 0, false
	for j < len(s) && j-i < 45 {
		c := s[j]
		switch {
		case c == ':':
			colons++
			if j > i && s[j-1] == ':' {
				double = true
			}
		case class[c]&cHex != 0, c == '.':
		default:
			goto done
		}
		j++
	}
done:
	// Trailing sentence punctuation is not part of the address.
	for j > i && (s[j-1] == '.' || (s[j-1] == ':' && (j-i < 2 || s[j-2] != ':'))) {
		j--
	}
	if colons < 2 || (!double && colons != 7) || !boundaryAfter(s, j) {
		return 0, false
	}
	a, err := netip.ParseAddr(s[i:j])
	if err != nil || !a.Is6() {
		return 0, false
	}
	p.add(i, j, kIP, 0.95)
	return j, true
}

// ibanLen is the IBAN length of each country in the SWIFT registry,
// indexed by the two letters; zero means no IBAN.
var ibanLen = func() (t [26 * 26]uint8) {
	for _, e := range []struct {
		cc string
		n  uint8
	}{
		{"AD", 24}, {"AE", 23}, {"AL", 28}, {"AT", 20}, {"AZ", 28}, {"BA", 20}, {"BE", 16},
		{"BG", 22}, {"BH", 22}, {"BI", 27}, {"BR", 29}, {"BY", 28}, {"CH", 21}, {"CR", 22},
		{"CY", 28}, {"CZ", 24}, {"DE", 22}, {"DJ", 27}, {"DK", 18}, {"DO", 28}, {"EE", 20},
		{"EG", 29}, {"ES", 24}, {"FI", 18}, {"FK", 18}, {"FO", 18}, {"FR", 27}, {"GB", 22},
		{"GE", 22}, {"GI", 23}, {"GL", 18}, {"GR", 27}, {"GT", 28}, {"HN", 28}, {"HR", 21},
		{"HU", 28}, {"IE", 22}, {"IL", 23}, {"IQ", 23}, {"IS", 26}, {"IT", 27}, {"JO", 30},
		{"KW", 30}, {"KZ", 20}, {"LB", 28}, {"LC", 32}, {"LI", 21}, {"LT", 20}, {"LU", 20},
		{"LV", 21}, {"LY", 25}, {"MC", 27}, {"MD", 24}, {"ME", 22}, {"MK", 19}, {"MN", 20},
		{"MR", 27}, {"MT", 31}, {"MU", 30}, {"NI", 28}, {"NL", 18}, {"NO", 15}, {"OM", 23},
		{"PK", 24}, {"PL", 28}, {"PS", 29}, {"PT", 25}, {"QA", 29}, {"RO", 24}, {"RS", 22},
		{"RU", 33}, {"SA", 24}, {"SC", 31}, {"SD", 18}, {"SE", 24}, {"SI", 19}, {"SK", 24},
		{"SM", 27}, {"SO", 23}, {"ST", 25}, {"SV", 28}, {"TL", 23}, {"TN", 24}, {"TR", 26},
		{"UA", 29}, {"VA", 22}, {"VG", 24}, {"XK", 20},
	} {
		t[int(e.cc[0]-'A')*26+int(e.cc[1]-'A')] = e.n
	}
	return t
}()

// iban matches an IBAN at i, electronic ("GB82WEST12345698765432") or
// printed in groups of four, with the country's length and a valid ISO
// 13616 mod-97 check.
func (p *pass) iban(i int) (int, bool) {
	s := p.s
	want := int(ibanLen[int(s[i]-'A')*26+int(s[i+1]-'A')])
	if want == 0 {
		return 0, false
	}
	var buf [34]byte
	n, j, end := 0, i, i
	for j < len(s) && n < want {
		c := s[j]
		switch {
		case isDigit(c) || isUpper(c):
			buf[n] = c
			n++
			j++
			end = j
		case c == ' ' && n%4 == 0 && j+1 < len(s) && (isDigit(s[j+1]) || isUpper(s[j+1])):
			j++
		default:
			return 0, false
		}
	}
	if n != want || !boundaryAfter(s, end) || !mod97(buf[:n]) {
		return 0, false
	}
	p.add(i, end, kIBAN, 1)
	return end, true
}

// mod97 computes the IBAN check: the first four characters moved to the
// end, letters as 10..35, the number mod 97 must be 1.
func mod97(b []byte) bool {
	r := 0
	for k := range b {
		c := b[(k+4)%len(b)]
		if isDigit(c) {
			r = (r*10 + int(c-'0')) % 97
		} else {
			r = (r*100 + int(c-'A') + 10) % 97
		}
	}
	return r == 1
}

// url matches a URL at i whose scheme word ends at j ("http", "https",
// "ftp"), or a "www." host, and reports it as DOMAIN_NAME. Trailing
// sentence punctuation is left out; the path's final '/' is kept.
func (p *pass) url(i, j int) (int, bool) {
	s := p.s
	hostStart := j
	if hasFoldPrefix(s[j:], "://") {
		hostStart = j + 3
	} else if !(j-i == 3 && j < len(s) && s[j] == '.') {
		return 0, false
	} else {
		hostStart = i
	}
	// Host: labels of letters, digits and '-', at least one dot.
	k, dots := hostStart, 0
	for k < len(s) && (isAlnum(s[k]) || s[k] == '-' || (s[k] == '.' && k+1 < len(s) && isAlnum(s[k+1]))) {
		if s[k] == '.' {
			dots++
		}
		k++
	}
	if dots == 0 || k == hostStart {
		return 0, false
	}
	end := k
	for end < len(s) && urlByte(s[end]) {
		end++
	}
	for end > k && trailingPunct(s[end-1]) {
		end--
	}
	p.add(i, end, kDomain, 0.9)
	return end, true
}

func urlByte(c byte) bool {
	return c > ' ' && c < 0x7f && c != '"' && c != '<' && c != '>' && c != '`' && c != '\\' && c != '{' && c != '}' && c != '|'
}

func trailingPunct(c byte) bool {
	switch c {
	case '.', ',', ';', ':', '!', '?', ')', ']', '\'', '"':
		return true
	}
	return false
}
