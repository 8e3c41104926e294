package pii

import (
	"github.com/nyaruka/phonenumbers"
)

// Cue words looked for near a candidate. They raise a shape-only match
// (an undashed SSN, a foreign phone number) to a report; lower case ASCII.
var (
	ssnCues     = []string{"ssn", "social security", "social sec", "ss#", "ss #", "ss no"}
	licenseCues = []string{"driver's licen", "drivers licen", "driver licen", "driving licen", "licence number", "license number", "license no", "dl#", "dl #", "dl no"}
	phoneCues   = []string{"phone", "tel", "call", "mobile", "cell", "fax", "desk", "office", "contact", "whatsapp", "sms", "text me", "reach me", "answering at", "messages to", "registered", "landline", "dial", "ring"}
	phoneAfter  = []string{"office", "fax", "mobile", "cell", "home", "work"}
	yearCues    = []string{"in", "since", "during", "of", "year", "a", "on", "by", "from", "until", "till", "before", "after", "circa", "born", "founded", "est"}
)

// numRun is a candidate number: digit groups joined by phone or card
// punctuation, with an optional leading '+' or '(' and trailing extension.
type numRun struct {
	start, end int // the whole candidate, extension included
	mainEnd    int // end of the last digit group before any extension
	digits     int // digits before the extension
	groups     int
	lens       [8]uint8 // lengths of the first eight groups
	plus       bool
	paren      bool // any '(' or ')'
	seps       uint8
	ext        bool
}

// Separator bits of numRun.seps.
const (
	sepSpace = 1 << iota
	sepDash
	sepDot
	sepSlash
	sepParen
)

// scanRun reads the longest phone/card-shaped candidate at i. Separators
// are at most two characters from " -./()", so a sentence such as
// "room 12. Call 555" or a list "1, 2, 3" does not glue numbers together.
func scanRun(s string, i int) numRun {
	r := numRun{start: i}
	j := i
	if s[j] == '+' {
		r.plus = true
		j++
	}
	open := 0
	if j < len(s) && s[j] == '(' {
		r.paren = true
		open++
		j++
	}
	for {
		g := digitsAt(s, j)
		if g == j {
			break
		}
		if r.groups < len(r.lens) {
			r.lens[r.groups] = uint8(min(g-j, 255))
		}
		r.groups++
		r.digits += g - j
		j = g
		r.mainEnd = j
		if r.digits > 20 {
			break
		}
		// Separator: up to two bytes of punctuation, at most one space,
		// closing only a parenthesis that was opened.
		k := j
		var seps uint8
		spaces := 0
		o := open
		for k < len(s) && k-j < 3 {
			c := s[k]
			switch c {
			case ' ':
				spaces++
				seps |= sepSpace
			case '-':
				seps |= sepDash
			case '.':
				seps |= sepDot
			case '/':
				seps |= sepSlash
			case '(':
				seps |= sepParen
				o++
			case ')':
				if o == 0 {
					goto done
				}
				seps |= sepParen
				o--
			default:
				goto done
			}
			k++
		}
	done:
		if k == j || spaces > 1 || k-j > 3 || k >= len(s) || !isDigit(s[k]) {
			// A ')' directly after the digits closes a group that the
			// candidate keeps: "(0)" inside "+41 (0)96 ...".
			break
		}
		if seps&sepDot != 0 && k-j > 1 {
			break // ". " ends a sentence, not a group
		}
		r.seps |= seps
		if seps&sepParen != 0 {
			r.paren = true
		}
		open = o
		j = k
	}
	r.end = r.mainEnd
	if open > 0 && s[r.start] == '(' {
		// An unclosed '(' belongs to the surrounding prose, not the
		// number: "(555 0100 is ours" keeps only the digits.
		r.start++
	}
	// Extension: "x123", " x123", " ext. 123".
	if e := extensionAt(s, r.mainEnd); e > r.mainEnd {
		r.ext = true
		r.end = e
	}
	return r
}

// extensionAt returns the end of a phone extension at j, or j.
func extensionAt(s string, j int) int {
	k := j
	if k < len(s) && s[k] == ' ' {
		k++
	}
	switch {
	case k < len(s) && (s[k] == 'x' || s[k] == 'X'):
		k++
	case hasFoldPrefix(s[k:], "ext"):
		k += 3
		if k < len(s) && s[k] == '.' {
			k++
		}
		if k < len(s) && s[k] == ' ' {
			k++
		}
	default:
		return j
	}
	e := digitsAt(s, k)
	if e == k || e-k > 6 || !boundaryAfter(s, e) {
		return j
	}
	return e
}

// number handles a candidate starting at a digit, '+' or '('.
func (p *pass) number(i int) int {
	s := p.s
	if isDigit(s[i]) && maySeparateFields(s, digitsAt(s, i)) {
		if end, ok := ipv4At(s, i); ok {
			p.add(i, end, kIP, 0.95)
			return end
		}
		if colonSoon(s, i) {
			if end, ok := p.ipv6(i); ok {
				return end
			}
		}
		if end, ok := dateAt(s, i); ok {
			p.add(i, end, kDate, 0.85)
			return end
		}
	}
	r := scanRun(s, i)
	if r.groups == 0 {
		return i + 1
	}
	if !boundaryAfter(s, r.end) || r.digits > 19 {
		return skipToken(s, r.end)
	}
	text := s[r.start:r.end]
	// The identifiers (SSN, licence, card, phone) all have six digits or
	// more; most numbers in prose have fewer and skip their checks.
	long := r.digits >= 6
	switch {
	case p.streetNumber(&r):
	case long && p.ssn(&r, text):
	case long && p.license(&r):
	case long && p.card(&r, text):
	case long && p.phone(&r, text):
	case p.shortNumber(&r):
	}
	return r.end
}

// maySeparateFields reports whether the byte at j, right after a number's
// first digits, can continue it into what ipv4At, ipv6 or dateAt match: a
// '.', ':', '-' or '/', or a hex letter of an IPv6 group. Most numbers in
// prose are followed by none of them and skip those matchers.
func maySeparateFields(s string, j int) bool {
	if j >= len(s) {
		return false
	}
	c := s[j]
	return c == '.' || c == ':' || c == '-' || c == '/' || class[c]&cHex != 0
}

// ipv4At matches a dotted quad at i, each octet 0..255 without a leading
// zero, not part of a longer dotted sequence (a version "1.2.3.4.5").
func ipv4At(s string, i int) (int, bool) {
	j := i
	for k := 0; k < 4; k++ {
		if k > 0 {
			if j >= len(s) || s[j] != '.' {
				return 0, false
			}
			j++
		}
		e := digitsAt(s, j)
		if e == j || e-j > 3 || (e-j > 1 && s[j] == '0') || atoi(s[j:e]) > 255 {
			return 0, false
		}
		j = e
	}
	if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
		return 0, false
	}
	if !boundaryAfter(s, j) {
		return 0, false
	}
	return j, true
}

// ssn reports a US social security number: 3-2-4 digits with dashes (or,
// next to a cue word, spaces or none), with the SSA's never-issued values
// rejected: area 000, 666 or 9xx, group 00, serial 0000.
func (p *pass) ssn(r *numRun, text string) bool {
	if r.plus || r.paren || r.ext || r.digits != 9 {
		return false
	}
	dashed := r.groups == 3 && r.lens[0] == 3 && r.lens[1] == 2 && r.lens[2] == 4
	switch {
	case dashed && r.seps == sepDash:
	case (dashed && r.seps == sepSpace) || r.groups == 1:
		if !cueIn(before(p.s, r.start, 48), ssnCues) {
			return false
		}
	default:
		return false
	}
	var buf [9]byte
	d := digitsOf(text, buf[:0])
	area, group, serial := atoi(d[:3]), atoi(d[3:5]), atoi(d[5:])
	if area == 0 || area == 666 || area >= 900 || group == 0 || serial == 0 {
		return false
	}
	// A run of one repeated digit or the well-known advertising number is
	// a placeholder, not a person's SSN.
	if allSame(d) || string(d) == "078051120" || string(d) == "123456789" {
		return false
	}
	score := 0.85
	if r.seps == sepDash {
		score = 0.95
	}
	p.add(r.start, r.end, kSSN, score)
	return true
}

func allSame(d []byte) bool {
	for _, c := range d {
		if c != d[0] {
			return false
		}
	}
	return true
}

// license reports a US driver's licence number, which has no checksum and
// a per-state shape; it is only reported next to an explicit cue.
func (p *pass) license(r *numRun) bool {
	if r.plus || r.paren || r.ext || r.digits < 6 || r.digits > 14 {
		return false
	}
	if !cueIn(before(p.s, r.start, 40), licenseCues) {
		return false
	}
	p.add(r.start, r.end, kDriverLicense, 0.65)
	return true
}

// card reports a payment card number: 12 to 19 digits in one block or in
// the printed 4-4-4-4 (Amex 4-6-5, Diners 4-6-4) grouping with one kind of
// separator, a known issuer prefix, and a valid Luhn check digit.
func (p *pass) card(r *numRun, text string) bool {
	if r.plus || r.paren || r.ext || r.digits < 12 || r.digits > 19 {
		return false
	}
	if r.groups > 1 {
		if r.seps != sepSpace && r.seps != sepDash {
			return false
		}
		if !cardGrouping(r) {
			return false
		}
	}
	var buf [19]byte
	d := digitsOf(text, buf[:0])
	if !knownIIN(d) || !luhn(d) {
		return false
	}
	p.add(r.start, r.end, kCreditCard, 1)
	return true
}

func cardGrouping(r *numRun) bool {
	if r.groups > len(r.lens) {
		return false
	}
	l := r.lens[:r.groups]
	if r.groups == 3 && l[0] == 4 && l[1] == 6 && (l[2] == 5 || l[2] == 4) {
		return true
	}
	for k, n := range l {
		if k < len(l)-1 && n != 4 {
			return false
		}
		if k == len(l)-1 && (n < 1 || n > 4) {
			return false
		}
	}
	return true
}

// knownIIN checks the issuer prefix and length against the major schemes'
// published ranges (Visa, Mastercard, Amex, Discover, Diners, JCB,
// UnionPay, Maestro). Unknown prefixes are rejected: Luhn alone passes one
// random number in ten.
func knownIIN(d []byte) bool {
	n := len(d)
	p2 := int(d[0]-'0')*10 + int(d[1]-'0')
	p3 := p2*10 + int(d[2]-'0')
	p4 := p3*10 + int(d[3]-'0')
	switch {
	case d[0] == '4': // Visa
		return n == 13 || n == 16 || n == 19
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720: // Mastercard
		return n == 16
	case p2 == 34 || p2 == 37: // Amex
		return n == 15
	case p4 == 6011, p3 >= 644 && p3 <= 649, p2 == 65: // Discover
		return n >= 16 && n <= 19
	case p3 >= 300 && p3 <= 305, p2 == 36, p2 == 38, p2 == 39, p3 == 309: // Diners
		return n >= 14 && n <= 19
	case p2 == 35: // JCB: 3528-3589 assigned; test generators use all of 35xx
		return n >= 16 && n <= 19
	case p4 == 1800 || p4 == 2131: // JCB (legacy 15-digit)
		return n == 15
	case p2 == 62: // UnionPay
		return n >= 16 && n <= 19
	case p2 == 50, p2 >= 56 && p2 <= 69: // Maestro
		return n >= 12 && n <= 19
	}
	return false
}

// luhn validates the ISO/IEC 7812 check digit.
func luhn(d []byte) bool {
	sum := 0
	for k := len(d) - 1; k >= 0; k-- {
		v := int(d[k] - '0')
		if (len(d)-1-k)%2 == 1 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

// phone reports a phone number. A number libphonenumber validates (in the
// "+CC" form, or national in one of the configured regions) scores 0.9; a
// phone-shaped number libphonenumber cannot place is reported at 0.6 only
// next to a cue word, so a bare 8-digit order number is left alone.
func (p *pass) phone(r *numRun, text string) bool {
	if r.digits < 7 || r.digits > 15 {
		return false
	}
	if p.validPhone(r, text) {
		p.add(r.start, r.end, kPhone, 0.9)
		return true
	}
	if p.sc.strict || !phoneShaped(r) {
		return false
	}
	if !cueIn(before(p.s, r.start, 40), phoneCues) && !cueIn(after(p.s, r.end, 12), phoneAfter) {
		return false
	}
	p.add(r.start, r.end, kPhone, 0.6)
	return true
}

func (p *pass) validPhone(r *numRun, text string) bool {
	// libphonenumber's parser runs regular expressions over its input;
	// handing it only the digits (and the '+') of the main number, without
	// punctuation or extension, roughly halves its cost. Validity does not
	// depend on either.
	var buf [21]byte
	b := buf[:0]
	if r.plus {
		b = append(b, '+')
	}
	b = append(b, digitsOf(text[:r.mainEnd-r.start], buf[len(b):len(b):cap(buf)])...)
	digits := string(b)
	if r.plus {
		num, err := phonenumbers.Parse(digits, "ZZ")
		return err == nil && phonenumbers.IsValidNumber(num)
	}
	// A national number needs some structure or a full national length:
	// a bare 7-digit block is more often an order or account number.
	if r.groups == 1 && r.digits < 10 {
		return false
	}
	for _, region := range p.sc.regions {
		num, err := phonenumbers.Parse(digits, region)
		if err == nil && int(num.GetCountryCode()) == phonenumbers.GetCountryCodeForRegion(region) && phonenumbers.IsValidNumber(num) {
			return true
		}
	}
	return false
}

// phoneShaped accepts the groupings phone numbers are written in: several
// groups of 2 to 5 digits (a first group of 1..4, a last group up to 8, as
// in "0393 1144137"), or one block of 10 to 12 digits.
func phoneShaped(r *numRun) bool {
	if r.seps&sepSlash != 0 && r.seps != sepSlash {
		return false
	}
	if r.groups == 1 {
		return r.digits >= 10 && r.digits <= 12 || r.plus
	}
	if r.groups > len(r.lens) {
		return false
	}
	for k, n := range r.lens[:r.groups] {
		switch {
		case k == 0 && r.plus && (n < 1 || n > 7): // "+447700 900 123": code and prefix fused
			return false
		case k == 0 && !r.plus && (n < 1 || n > 5):
			return false
		case k == r.groups-1 && (n < 2 || n > 8):
			return false
		case k > 0 && k < r.groups-1 && (n < 1 || n > 5):
			return false
		}
	}
	return true
}

// streetNumber reports a street address starting with the run's house
// number ("12 Main St", "5533 119 Countess Close"), tried before phone
// numbers because "office at 17031 2202 Rissik St" has phone cues too.
func (p *pass) streetNumber(r *numRun) bool {
	if r.plus || r.paren || r.ext || r.groups > 2 || (r.groups == 2 && r.seps != sepSpace) || r.lens[0] > 6 {
		return false
	}
	return p.address(r.start, r.start+int(r.lens[0])) > 0
}

// shortNumber classifies the remaining standalone numbers: a year after a
// preposition, a ZIP code after a state code, the house number of a street
// address.
func (p *pass) shortNumber(r *numRun) bool {
	if r.plus || r.paren || r.ext {
		return false
	}
	s := p.s
	if r.groups == 1 {
		n := r.digits
		if n == 4 {
			if y := atoi(s[r.start:r.end]); y >= 1900 && y <= 2099 && yearCue(s, r.start) {
				p.add(r.start, r.end, kDate, 0.6)
				return true
			}
		}
		if n == 5 && zipCue(s, r.start) {
			p.add(r.start, r.end, kZip, 0.6)
			return true
		}
	}
	if r.groups == 2 && r.seps == sepDash && r.lens[0] == 5 && r.lens[1] == 4 && zipCue(s, r.start) {
		p.add(r.start, r.end, kZip, 0.7)
		return true
	}
	return false
}

// yearCue reports whether the word before i is one of yearCues.
func yearCue(s string, i int) bool {
	j := i
	if j > 0 && s[j-1] == ' ' {
		j--
	} else {
		return false
	}
	k := j
	for k > 0 && isAlpha(s[k-1]) {
		k--
	}
	if k == j || j-k > 8 {
		return false
	}
	w := s[k:j]
	for _, c := range yearCues {
		if len(c) == len(w) && hasFoldPrefix(w, c) {
			return true
		}
	}
	return false
}

// zipCue reports a US state code right before i ("PA 73161", "NY, 10001").
func zipCue(s string, i int) bool {
	j := i
	for j > 0 && (s[j-1] == ' ' || s[j-1] == ',') && i-j < 2 {
		j--
	}
	if j == i || j < 2 || !isUpper(s[j-1]) || !isUpper(s[j-2]) || (j > 2 && isAlpha(s[j-3])) {
		return false
	}
	return usStates[s[j-2:j]]
}

// dateAt matches numeric dates and times at i: ISO "2006-01-02" with an
// optional " 15:04:05" or "T15:04:05Z", "1/2/2006", "02.01.2006", "15:04(:05)".
func dateAt(s string, i int) (int, bool) {
	a := digitsAt(s, i)
	la := a - i
	if a >= len(s) {
		return 0, false
	}
	sep := s[a]
	switch {
	case la == 4 && (sep == '-' || sep == '/'):
		b := digitsAt(s, a+1)
		if b-a-1 < 1 || b-a-1 > 2 || b >= len(s) || s[b] != sep {
			return 0, false
		}
		c := digitsAt(s, b+1)
		if c-b-1 < 1 || c-b-1 > 2 {
			return 0, false
		}
		if !validMonthDay(atoi(s[a+1:b]), atoi(s[b+1:c])) {
			return 0, false
		}
		end := c
		if c+1 < len(s) && (s[c] == ' ' || s[c] == 'T') {
			if e, ok := timeAt(s, c+1); ok {
				end = e
			}
		}
		return end, boundaryAfter(s, end)
	case la >= 1 && la <= 2 && (sep == '/' || sep == '.' || sep == '-'):
		b := digitsAt(s, a+1)
		if b-a-1 < 1 || b-a-1 > 2 || b >= len(s) || s[b] != sep {
			return 0, false
		}
		c := digitsAt(s, b+1)
		if c-b-1 != 4 && !(c-b-1 == 2 && sep == '/') {
			return 0, false
		}
		x, y := atoi(s[i:a]), atoi(s[a+1:b])
		if !validMonthDay(x, y) && !validMonthDay(y, x) {
			return 0, false
		}
		if c < len(s) && (s[c] == sep || (s[c] == '.' && c+1 < len(s) && isDigit(s[c+1]))) {
			return 0, false
		}
		end := c
		if c+1 < len(s) && s[c] == ' ' {
			if e, ok := timeAt(s, c+1); ok {
				end = e
			}
		}
		return end, boundaryAfter(s, end)
	case la >= 1 && la <= 2 && sep == ':':
		return timeAt(s, i)
	}
	return 0, false
}

func validMonthDay(m, d int) bool { return m >= 1 && m <= 12 && d >= 1 && d <= 31 }

// timeAt matches "15:04", "15:04:05", optional fraction, zone or am/pm.
func timeAt(s string, i int) (int, bool) {
	a := digitsAt(s, i)
	if a-i < 1 || a-i > 2 || a >= len(s) || s[a] != ':' || atoi(s[i:a]) > 23 {
		return 0, false
	}
	b := digitsAt(s, a+1)
	if b-a-1 != 2 || atoi(s[a+1:b]) > 59 {
		return 0, false
	}
	end := b
	if b+2 < len(s) && s[b] == ':' {
		c := digitsAt(s, b+1)
		if c-b-1 == 2 && atoi(s[b+1:c]) <= 60 {
			end = c
			if c+1 < len(s) && s[c] == '.' {
				if f := digitsAt(s, c+1); f > c+1 {
					end = f
				}
			}
		}
	}
	switch {
	case end < len(s) && s[end] == 'Z':
		end++
	case end+1 < len(s) && s[end] == ' ' && (hasFoldPrefix(s[end+1:], "am") || hasFoldPrefix(s[end+1:], "pm")) && boundaryAfter(s, end+3):
		end += 3
	}
	if !boundaryAfter(s, end) {
		return 0, false
	}
	return end, true
}

// validRegion reports whether libphonenumber has metadata for region.
func validRegion(region string) bool {
	return phonenumbers.GetSupportedRegions()[region]
}

// colonSoon reports a ':' within the five bytes after i, the only way a
// digit can start an IPv6 address.
func colonSoon(s string, i int) bool {
	for k := i + 1; k < len(s) && k <= i+5; k++ {
		if s[k] == ':' {
			return true
		}
		if class[s[k]]&cHex == 0 {
			return false
		}
	}
	return false
}
