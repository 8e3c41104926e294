package secrets

import (
	"strings"
	"sync"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/internal/ahocorasick"
)

// Hold implements scanner.Holder: the offset from which a secret could
// still be completed by text appended to t. Two things keep a secret open:
//
//   - its token has not ended: every token-shaped credential, and every
//     keyword a rule waits for, lies inside the text's last token, which
//     is held whole (scanner.OpenToken) unless it is a plain word that is
//     not the beginning of a keyword ("the", "capital" leave at once;
//     "sk", "AKI", "pass" wait for the next bytes). A secret whose rule
//     finds it by a keyword well inside it (an Azure DevOps PAT's marker
//     at byte 76) or by its shape alone (an unknown provider's
//     "<prefix>_<random>") can have its first letters released, at most
//     twelve, as a plain word: the provider's prefix, never a byte of the
//     random body, which holds a digit, a symbol or is longer;
//   - a rule found its keyword and its pattern can still match from there
//     with more text ("api_key = " before its value, "password for user
//     'x' is" before the quoted password, a URI whose authority runs to
//     the end). The hold starts at the match's earliest possible start.
//
// Rules whose window around a keyword ends inside the text are settled:
// Scan sees all the bytes they could ever look at.
func (s *Scanner) Hold(t *scanner.Target) int {
	// Plainness is judged on the original: a confusable or an invisible
	// character is not plain, whatever its canonical form.
	orig := t.Text.Original
	tokHold := scanner.OpenToken(orig)
	if tok := orig[tokHold:]; scanner.PlainWord(tok) && !s.keywordStart(tok) {
		tokHold = len(orig)
	}
	if tokHold == 0 {
		return 0
	}
	view := t.Text.Canonical()
	text := view.S
	hold := len(text)
	if tokHold < len(orig) {
		// The same token in the view: no rule needs to be looked at
		// from there on.
		hold = scanner.OpenToken(text)
	}
	s.kw.Each(text, func(kh ahocorasick.Hit) bool {
		for _, ri := range s.kwRules[kh.ID] {
			if from := s.rules[ri].open(text, kh.Start, kh.End, hold); from < hold {
				hold = from
			}
		}
		return hold > 0
	})
	hold = s.openPEM(text, hold)
	start, _ := view.Span(hold, hold)
	return min(start, tokHold)
}

// pemBegin opens a PEM block. The private-key rule's keyword is the end of
// the block's header ("PRIVATE KEY-----"), after the header's first tokens,
// which its match covers: those are held from "-----BEGIN" on while the
// header may still become a private key's.
const pemBegin = "-----BEGIN"

func (s *Scanner) openPEM(text string, hold int) int {
	for off := 0; off < hold; {
		i := strings.Index(text[off:hold], pemBegin)
		if i < 0 {
			break
		}
		i += off
		for _, r := range s.rules {
			if r.id == "private-key" && partialOf(r).OpenAt(text, i) == i {
				return i
			}
		}
		off = i + len(pemBegin)
	}
	return hold
}

// keywordStart tells whether tok, a plain word, is the beginning of one of
// the scanner's keywords, so the next bytes may complete it.
func (s *Scanner) keywordStart(tok string) bool {
	if strings.ContainsAny(tok, ",;!?") {
		return false // the punctuation ended the word
	}
	// The longest end of tok that begins a keyword is all of it.
	return s.kw.OpenSuffix(tok) == len(tok)
}

// open returns where a match of r at the keyword hit [ks, ke) could still
// start if text grew, or len(text) when it could not. hold is the offset
// already held: a start at or after it needs no work.
func (r *rule) open(text string, ks, ke, hold int) int {
	none := len(text)
	switch {
	case r.match != nil:
		if ks >= hold {
			return none
		}
		return r.openMatch(text, ks, ke)
	case r.anchored:
		if ks >= hold || ke+r.after <= len(text) {
			return none
		}
		if r.boundary && ks > 0 && isWordByte(text[ks-1]) {
			return none
		}
		return partialOf(r).OpenAt(text, ks)
	default:
		ws := max(0, ks-r.before)
		if ws >= hold || ke+r.after <= len(text) {
			return none
		}
		return ws + partialOf(r).Open(text[ws:])
	}
}

// openMatch is open for the rules written as code.
func (r *rule) openMatch(text string, ks, ke int) int {
	switch r.id {
	case "connection-uri", "url-credentials":
		if ss, ok := uriOpen(text, ks); ok {
			return ss
		}
	case "generic-password", "generic-secret", "generic-key":
		// The rule's own keyword test first: "api" inside "capital" or a
		// short "pass" inside a word names no key, so prose holds nothing.
		if (r.id == "generic-key" || r.id == "generic-password" && ke-ks <= 4) && !keywordSegment(text, ks, ke) {
			return len(text)
		}
		if assignmentOpen(text, ks, ke) {
			return ks
		}
	case "generic-chosen-secret":
		if ke < len(text) && isLetter(text[ke]) {
			return len(text)
		}
		if assignmentOpen(text, ks, ke) {
			return ks
		}
	case "generic-b64-json":
		// Its token is one run of base64 bytes from the keyword: a run
		// that ended was judged for good, and one that runs to the end of
		// the text is the text's last token, which Hold keeps anyway.
		return len(text)
	case "generic-connection-call":
		if ss, _, _, st := connectionCall(text, ks); st == callOpen {
			return ss
		}
	case "jwt-secret":
		if jwtSecretOpen(text, ke) {
			return ks
		}
	case "generic-near-token":
		// Its token is one run of token bytes after the word: a run that
		// ended was judged for good, and one that runs to the end of the
		// text is the text's last token, which Hold keeps anyway.
		return len(text)
	case "generic-cli-password":
		if cliOpen(text, ks, ke) {
			return ks
		}
	case "generic-url-token":
		if urlOpen(text, ks) {
			return ks
		}
	case "generic-cookie":
		if cookieOpen(text, ke) {
			return ks
		}
	default:
		// A rule written as code that has no open form here is held
		// from its keyword while its keyword is in the text.
		return ks
	}
	return len(text)
}

// uriOpen tells whether the URI whose "://" is at ks may still gain the
// user:password@ that uriCredentials looks for: its authority runs to the
// end of the text. It returns the scheme's start.
func uriOpen(s string, ks int) (int, bool) {
	ss := ks
	for ss > 0 && ks-ss < 32 && (isWordByte(s[ss-1]) || s[ss-1] == '+' || s[ss-1] == '.' || s[ss-1] == ':' || s[ss-1] == '-') {
		ss--
	}
	if ss == ks {
		return 0, false
	}
	for ae := ks + 3; ae < len(s); ae++ {
		c := s[ae]
		if ae-(ks+3) >= 512 || c == '/' || c == '?' || c == '#' || c <= ' ' || c == '"' || c == '\'' || c == '`' || c == '<' || c == '>' || c == '\\' {
			return 0, false
		}
	}
	return ss, true
}

// jwtSecretOpen tells whether matchJWTSecret, after the keyword "jwt"
// ending at ke, may still find a secret assignment: the 48 bytes it looks
// at are not all there yet and nothing in them has ruled it out, or the
// assignment it found is open.
func jwtSecretOpen(s string, ke int) bool {
	end := min(len(s), ke+48)
	for i := ke; i < end; i++ {
		c := s[i]
		if !isIdent(c) && c != ':' && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '"' && c != '\'' && c != '{' {
			return false
		}
		switch {
		case hasWordFold(s, i, "secret"):
			return assignmentOpen(s, i, i+6)
		case hasWordFold(s, i, "key"):
			return assignmentOpen(s, i, i+3)
		}
	}
	return ke+48 > len(s)
}

// cliOpen tells whether matchCLIPassword, after "-u " at [ks, ke), ran
// out of text before it could decide: the user, the password flag or the
// value may still be completed.
func cliOpen(s string, ks, ke int) bool {
	i := skipSpaces(s, ke)
	j := i
	for j < len(s) && j-i < 64 && !isValueStop(s[j]) {
		j++
	}
	k := skipSpaces(s, j)
	if k >= len(s)-1 {
		return true
	}
	if j == i || k == j || !strings.HasPrefix(s[k:], passwordFlag(s, ks)) {
		return false
	}
	k = skipSpaces(s, k+2)
	e := k
	for e < len(s) && e-k < 128 && !isValueStop(s[e]) {
		e++
	}
	return e == len(s)
}

// urlOpen tells whether the URL whose "://" is at ks runs to the end of
// the text, so matchURLToken may still find a token in its path.
func urlOpen(s string, ks int) bool {
	for i := ks + 3; i < len(s); i++ {
		if isURLStop(s[i]) {
			return false
		}
	}
	return true
}

// assignmentOpen tells whether parseAssignment, at the keyword [ks, ke),
// ran out of text before it could decide: the name, the operator or the
// value may still be completed. It follows parseAssignment step by step.
func assignmentOpen(s string, ks, ke int) bool {
	i := ke
	for i < len(s) && i-ke < 40 && isIdent(s[i]) {
		i++
	}
	if i == len(s) {
		return true
	}
	start := ks
	for start > 0 && ks-start < 64 && isIdent(s[start-1]) {
		start--
	}
	if start > 0 && s[start-1] == '<' && s[i] == '>' {
		return elementOpen(s, s[start:i], i+1)
	}
	if s[i] == '(' {
		// key.equals("..."): open while its quoted value is.
		if _, ok := cutEqualsCall(s[ks:i]); !ok {
			return false
		}
		j := skipSpaces(s, i+1)
		if j >= len(s) {
			return true
		}
		return isQuote(s[j]) && quotedOpen(s, j)
	}
	if s[i] == '\\' {
		if i+1 == len(s) {
			return true
		}
		if isQuote(s[i+1]) {
			i += 2
		}
	} else if isQuote(s[i]) || s[i] == ']' {
		i++
		if i == len(s) {
			return true
		}
		if s[i] == ']' {
			i++
		}
	}
	if open, pair := attrPairOpen(s, start, i); pair {
		return open
	}
	j := skipSpaces(s, i)
	opStart := j
	for j < len(s) && j-opStart < 3 && strings.IndexByte(":=>!", s[j]) >= 0 {
		j++
	}
	if j == len(s) {
		return true
	}
	op := s[opStart:j]
	switch op {
	case "=", ":", ":=", "=>", "==", "===", "!=", "!==":
	case "":
		if j == i {
			return false
		}
	default:
		return false
	}
	j = skipSpaces(s, j)
	if j < len(s) && s[j] == '\\' {
		if j+1 == len(s) {
			return true
		}
		if isQuote(s[j+1]) {
			j++
		}
	}
	if j >= len(s) {
		return true
	}
	if isQuote(s[j]) {
		return quotedOpen(s, j)
	}
	if op == "" {
		return false
	}
	end := j
	for end < len(s) && end-j < 256 && !isValueStop(s[end]) {
		end++
	}
	return end == len(s)
}

// elementOpen tells whether the text of the XML element key, starting at
// s[j], may still be read as its value (see elementValue): it runs to the
// end of the text, or what follows it there begins its closing tag.
func elementOpen(s, key string, j int) bool {
	end := j
	for end < len(s) && end-j < maxQuoted && s[end] != '<' && s[end] > ' ' {
		end++
	}
	if end == len(s) {
		return true
	}
	closing := "</" + key + ">"
	return s[end] == '<' && len(s)-end < len(closing) && strings.HasPrefix(closing, s[end:])
}

// attrPairOpen tells whether the quoted name s[start:i] (closing quote
// included) begins a name/value pair of XML attributes (see
// attrPairValue), and if so whether its value may still grow: the text
// ends in `value="`, a part of it, or the quoted value.
func attrPairOpen(s string, start, i int) (open, pair bool) {
	if i == start || !attrPairName(s, start, i) {
		return false, false
	}
	j := skipSpaces(s, i)
	if j == len(s) {
		return true, true
	}
	if j == i {
		return false, false
	}
	const attr = "value="
	if rest := s[j:]; len(rest) <= len(attr) {
		return strings.EqualFold(rest, attr[:len(rest)]), true
	}
	if q := attrPairValue(s, start, i); q > 0 {
		return quotedOpen(s, q), true
	}
	return false, false
}

// cookieOpen tells whether the Cookie header whose keyword ends at ke may
// still gain a value (see matchCookie): it runs to the end of the text.
func cookieOpen(s string, ke int) bool {
	i := ke
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || isQuote(s[i])) {
		i++
	}
	for ; i < len(s); i++ {
		if i-ke > 32*maxQuoted || isCookieEnd(s[i]) {
			return false
		}
	}
	return true
}

// quotedOpen tells whether the quoted value starting at s[j] runs to the
// end of the text without its closing quote.
func quotedOpen(s string, j int) bool {
	q := s[j]
	end := j + 1
	for end < len(s) && end-j < maxQuoted && s[end] != q && s[end] != '\n' {
		end++
	}
	return end == len(s)
}

// partials holds each regexp rule's partial matcher, compiled the first
// time a stream needs it: most rules never see a keyword at a stream's end.
var partials sync.Map // *rule -> *scanner.Partial

func partialOf(r *rule) *scanner.Partial {
	if p, ok := partials.Load(r); ok {
		return p.(*scanner.Partial)
	}
	p, err := scanner.NewPartial(r.re.String())
	if err != nil {
		// The expression compiled as a regexp, so this cannot happen;
		// holding from the keyword on would still be safe.
		panic("secrets: rule " + r.id + ": " + err.Error())
	}
	got, _ := partials.LoadOrStore(r, p)
	return got.(*scanner.Partial)
}

var _ scanner.Holder = (*Scanner)(nil)

// lookbehind is what Scan reads before a release point. A match starts
// after it (Hold) except for the first letters of its token, released as
// a plain word (at most twelve and a punctuation mark): a token turns
// non-plain at most once, and is held from its start from then on. What
// Scan reads before a match in the same token (the rest of a key name, a
// URI's scheme, the byte before a keyword) is therefore at most 13 bytes
// back. Reaching furthest is the generic evidence for a token after a
// credential word, whose word is released as prose: the token may start
// nearWindow bytes after the word's end, the word is up to 11 bytes long
// ("private key"), and the words before it that make it a public key's
// are read up to 64 bytes back. Less far reach the connection-call rule
// (the scheme, quote, spaces and parenthesis before "://": 74 bytes) and
// the command-line rule (the command before "-u ": 64 bytes).
const lookbehind = nearWindow + 11 + 64 + 5

// Lookbehind implements scanner.Lookbehinder.
func (s *Scanner) Lookbehind() int { return lookbehind }

var _ scanner.Lookbehinder = (*Scanner)(nil)
