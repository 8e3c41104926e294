package pii

import (
	"unicode"
	"unicode/utf8"

	"github.com/promptwall/promptwall/scanner/internal/twobyte"
)

// Byte classes for the single pass. A lookup table keeps the hot loop to
// one load and a mask per byte on clean text.
const (
	cDigit = 1 << iota
	cUpper
	cLower
	cHex
	cLocal  // allowed in an e-mail local part besides letters and digits
	cDomain // allowed in a host name besides letters and digits
	// cStart marks the bytes pass.run has a handler for (letters, digits,
	// '+', '(', '@', ':', non-ASCII); it steps over all others at once.
	cStart
	// cAfterWord marks the bytes after a lower-case word that may make it
	// more than prose (see lowerWordMatters): ':', '.', '\'', '-',
	// non-ASCII.
	cAfterWord
)

const cAlpha = cUpper | cLower
const cAlnum = cAlpha | cDigit

var class = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] |= cDigit | cHex
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] |= cUpper
		t[c+'a'-'A'] |= cLower
	}
	for _, c := range "abcdefABCDEF" {
		t[c] |= cHex
	}
	for _, c := range "._%+-'" {
		t[c] |= cLocal
	}
	t['-'] |= cDomain
	for c := 0; c < 256; c++ {
		if t[c]&(cDigit|cUpper|cLower) != 0 || c >= utf8.RuneSelf {
			t[c] |= cStart
		}
	}
	for _, c := range "+(@:" {
		t[c] |= cStart
	}
	for c := utf8.RuneSelf; c < 256; c++ {
		t[c] |= cAfterWord
	}
	for _, c := range ":.'-" {
		t[c] |= cAfterWord
	}
	return t
}()

func isDigit(c byte) bool { return class[c]&cDigit != 0 }
func isAlnum(c byte) bool { return class[c]&cAlnum != 0 }
func isUpper(c byte) bool { return class[c]&cUpper != 0 }
func isAlpha(c byte) bool { return class[c]&cAlpha != 0 }

// pass is the state of one scan of one text.
type pass struct {
	sc  *Scanner
	s   string
	out []found
}

func (p *pass) add(start, end int, k kind, score float64) {
	p.out = append(p.out, found{start: start, end: end, kind: k, score: score})
}

// run walks the text once. Each handler is entered on a cheap trigger (a
// digit, a letter, '@', "::") and returns where scanning resumes, so no byte
// is examined by more than a handful of handlers.
func (p *pass) run() {
	s := p.s
	n := len(s)
	for i := 0; i < n; {
		c := s[i]
		cl := class[c]
		if cl&cStart == 0 {
			// Spaces and most punctuation start nothing.
			i++
			continue
		}
		switch {
		case cl&cLower != 0:
			// Most words are lower-case prose: skip them, and the single
			// spaces between them, in a tight loop, and call the word
			// handler only for the few that can start something.
			j := i + 1
			for {
				for j < n && class[s[j]]&cAlnum != 0 {
					j++
				}
				// The common case first: a word ended by a space with
				// another lower-case word after it. A space never makes
				// lowerWordMatters look at a word, a "day" ending does.
				if j+1 < n && s[j] == ' ' && class[s[j+1]]&cLower != 0 && !weekdayShaped(s, i, j) {
					i, j = j+1, j+2
					continue
				}
				// Same as lowerWordMatters(s, i, j), with its cheap
				// tests inline so most words do not make a call.
				if (j < n && class[s[j]]&cAfterWord != 0 && lowerWordMatters(s, i, j)) || weekdayShaped(s, i, j) {
					if j < n && s[j] >= 0xc2 {
						j = p.lowerWord(i, j)
					} else {
						j = p.word(i)
					}
				}
				break
			}
			i = j
		case cl&cDigit != 0:
			if i > 0 && gluedNumber(s, i) {
				i = skipToken(s, i)
				continue
			}
			i = p.number(i)
		case cl&cUpper != 0:
			i = p.word(i)
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s[i:])
			if unicode.IsLetter(r) {
				i = p.word(i)
			} else {
				i += size
			}
		case c == '+' || c == '(':
			if i+1 < n && isDigit(s[i+1]) && (i == 0 || !isAlnum(s[i-1])) {
				i = p.number(i)
			} else {
				i++
			}
		case c == '@':
			i = p.email(i)
		case c == ':':
			if i+1 < n && s[i+1] == ':' && (i == 0 || class[s[i-1]]&cHex == 0) {
				if end, ok := p.ipv6(i); ok {
					i = end
					continue
				}
			}
			i++
		default:
			i++
		}
	}
}

// lowerWord handles the lower-case word at i that run's loop stopped at
// j, at a byte beyond ASCII, and would hand to the word handler, and
// returns where scanning resumes. A letter or mark of two bytes at j
// ("migración") goes on with the word, as scanWord takes it: the handler
// there did nothing but find the word's end, as a word with one is no
// weekday (their names are ASCII) and no hex. At the word's end the
// loop's test is made again, and the handler called where it says so (a
// host name's start, a weekday's shape).
func (p *pass) lowerWord(i, j int) int {
	s := p.s
	if j+1 >= len(s) || !letterOrMarkOfTwo(s[j], s[j+1]) {
		return p.word(i)
	}
	for j+1 < len(s) && letterOrMarkOfTwo(s[j], s[j+1]) {
		for j += 2; j < len(s) && class[s[j]]&cAlnum != 0; j++ {
		}
	}
	if (j < len(s) && class[s[j]]&cAfterWord != 0 && lowerWordMatters(s, i, j)) || weekdayShaped(s, i, j) {
		return p.word(i)
	}
	return j
}

// letterOrMarkOfTwo reports whether c0 c1 is a character of two bytes
// (U+0080 to U+07FF) that scanWord takes into a word: a letter or a
// non-spacing mark.
func letterOrMarkOfTwo(c0, c1 byte) bool { return wordRunesOfTwo.Has(c0, c1) }

// wordRunesOfTwo is the set of the letters and non-spacing marks below
// U+0800.
var wordRunesOfTwo = twobyte.NewSet(func(r rune) bool { return unicode.IsLetter(r) || unicode.Is(unicode.Mn, r) })

// lowerWordMatters reports whether the lower-case word s[i:j] (letters and
// digits) may start something pass.word finds: a hex group before ':', a
// "www."/"http:" prefix, a word continued by a non-ASCII letter, an
// apostrophe or a hyphen, or a weekday.
func lowerWordMatters(s string, i, j int) bool {
	if j < len(s) && class[s[j]]&cAfterWord != 0 {
		switch s[j] {
		case ':':
			if j-i <= 5 {
				return true
			}
		case '.':
			// Ends a sentence more often than it starts a host name:
			// only "www.", "ftp." and "http." go on.
			if j-i <= 5 && (s[i] == 'w' || s[i] == 'f' || s[i] == 'h') {
				return true
			}
		default:
			return true
		}
	}
	return weekdayShaped(s, i, j)
}

// weekdayShaped reports whether the word s[i:j] may be a weekday: six
// letters or more ending in "day".
func weekdayShaped(s string, i, j int) bool {
	return j-i >= 6 && s[j-1] == 'y' && s[j-2] == 'a' && s[j-3] == 'd'
}

// gluedNumber reports whether the digit at i continues a token such as a
// version ("v1.2.3"), a path or an identifier ("ab_12"): numbers glued to a
// word by '.', '-', '_' or '/' are not standalone identifiers.
func gluedNumber(s string, i int) bool {
	c := s[i-1]
	if isAlnum(c) {
		return true
	}
	if (c == '.' || c == '-' || c == '_' || c == '/') && i >= 2 && isAlnum(s[i-2]) {
		return true
	}
	return false
}

// skipToken skips letters, digits and the punctuation that glues them.
func skipToken(s string, i int) int {
	for i < len(s) {
		c := s[i]
		if isAlnum(c) || c == '.' || c == '-' || c == '_' || c == '/' {
			i++
			continue
		}
		break
	}
	return i
}

// lowerASCII folds one ASCII letter to lower case.
func lowerASCII(c byte) byte {
	if isUpper(c) {
		return c + 'a' - 'A'
	}
	return c
}

// hasFoldPrefix reports whether s starts with the lower-case ASCII word w,
// ignoring case.
func hasFoldPrefix(s, w string) bool {
	if len(s) < len(w) {
		return false
	}
	for k := 0; k < len(w); k++ {
		if lowerASCII(s[k]) != w[k] {
			return false
		}
	}
	return true
}

// cueIn reports whether one of the lower-case cue words starts at a word
// boundary in s, ignoring case. Cues are checked only around candidates, so
// a linear search over a short window is cheaper than any index.
func cueIn(s string, cues []string) bool {
	for k := 0; k < len(s); k++ {
		if k > 0 && isAlpha(s[k-1]) {
			continue
		}
		c := lowerASCII(s[k])
		for _, w := range cues {
			if w[0] == c && hasFoldPrefix(s[k:], w) {
				return true
			}
		}
	}
	return false
}

// window returns the up-to-n bytes of s before i and after j.
func before(s string, i, n int) string { return s[max(0, i-n):i] }
func after(s string, j, n int) string  { return s[j:min(len(s), j+n)] }

// digitsOf copies the ASCII digits of s into buf and returns them; buf on
// the caller's stack keeps validation allocation-free.
func digitsOf(s string, buf []byte) []byte {
	buf = buf[:0]
	for k := 0; k < len(s) && len(buf) < cap(buf); k++ {
		if isDigit(s[k]) {
			buf = append(buf, s[k])
		}
	}
	return buf
}

// atoi parses a short run of ASCII digits.
func atoi[T string | []byte](s T) int {
	n := 0
	for k := 0; k < len(s); k++ {
		n = n*10 + int(s[k]-'0')
	}
	return n
}

// digitsAt returns the end of the run of ASCII digits starting at i.
func digitsAt(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// boundaryAfter reports whether nothing word-like continues at j.
func boundaryAfter(s string, j int) bool {
	if j >= len(s) {
		return true
	}
	c := s[j]
	if isAlnum(c) || c == '_' || c == '@' {
		return false
	}
	if c >= utf8.RuneSelf {
		r, _ := utf8.DecodeRuneInString(s[j:])
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}
	return true
}
