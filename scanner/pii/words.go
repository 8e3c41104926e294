package pii

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// wordInfo describes one word: letters and digits, with inner apostrophes
// and hyphens ("O'Neil", "Jean-Luc").
type wordInfo struct {
	start, end int
	upper      bool // first letter upper case
	allUpper   bool // no lower-case letter
	digit      bool // contains a digit
	hex        bool // only hex digits
}

func scanWord(s string, i int) wordInfo {
	w := wordInfo{start: i, allUpper: true, hex: true}
	// ASCII letters and digits, the common case, only accumulate their
	// classes (those some byte has, those every byte has); the flags are
	// derived once after the loop.
	var some, every uint8 = 0, 0xff
	j := i
	for j < len(s) {
		c := s[j]
		if c < utf8.RuneSelf {
			cl := class[c]
			if cl&cAlnum != 0 {
				some |= cl
				every &= cl
				j++
				continue
			}
			if (c == '\'' || c == '-') && j > i && j+1 < len(s) && isAlpha(s[j+1]) {
				w.hex = false
				j++
				continue
			}
			break
		}
		r, size := utf8.DecodeRuneInString(s[j:])
		if !unicode.IsLetter(r) && !unicode.Is(unicode.Mn, r) {
			break
		}
		if j == i {
			w.upper = unicode.IsUpper(r)
		}
		if unicode.IsLower(r) {
			w.allUpper = false
		}
		w.hex = false
		j += size
	}
	if j == i {
		_, size := utf8.DecodeRuneInString(s[i:])
		j = i + size
	} else if s[i] < utf8.RuneSelf {
		// The word starts with an ASCII letter or digit: a leading
		// apostrophe or hyphen ends the word before it starts.
		w.upper = class[s[i]]&cUpper != 0
	}
	w.allUpper = w.allUpper && some&cLower == 0
	w.digit = some&cDigit != 0
	w.hex = w.hex && every&cHex != 0
	w.end = j
	return w
}

// word handles a word starting at i and returns where scanning resumes.
func (p *pass) word(i int) int {
	s := p.s
	w := scanWord(s, i)
	n := w.end - w.start
	if w.hex && n <= 4 && w.end < len(s) && s[w.end] == ':' {
		if end, ok := p.ipv6(i); ok {
			return end
		}
	}
	if n >= 3 && n <= 5 && w.end < len(s) && (s[w.end] == ':' || s[w.end] == '.') {
		lw := s[w.start:w.end]
		if hasFoldPrefix(lw, "http") || hasFoldPrefix(lw, "ftp") || hasFoldPrefix(lw, "www") {
			if end, ok := p.url(w.start, w.end); ok {
				return end
			}
		}
	}
	if w.digit {
		if n >= 4 && isUpper(s[i]) && isUpper(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) {
			if end, ok := p.iban(i); ok {
				return end
			}
		}
		p.alnumLicense(w)
		return w.end
	}
	if !w.upper {
		// Weekdays are dates in lower case too; the suffix test keeps
		// the map lookup off ordinary words.
		if n >= 6 && n <= 9 && hasFoldSuffix(s[w.start:w.end], "day") && lookup(s[w.start:w.end])&fWeekday != 0 {
			p.add(w.start, w.end, kDate, 0.5)
		}
		return w.end
	}
	return p.capitalised(w)
}

// alnumLicense reports a letter-prefixed licence number ("F1628235401")
// next to a licence cue.
func (p *pass) alnumLicense(w wordInfo) {
	s := p.s
	k := w.start
	for k < w.end && isUpper(s[k]) {
		k++
	}
	if k == w.start || k-w.start > 2 || w.end-k < 5 || w.end-k > 14 || digitsAt(s, k) != w.end {
		return
	}
	if cueIn(before(s, w.start, 40), licenseCues) {
		p.add(w.start, w.end, kDriverLicense, 0.65)
	}
}

// Lexicon flags of a folded word or phrase.
const (
	fFirst       = 1 << iota // given name
	fLast                    // surname
	fPlace                   // country, state, big city
	fPhrase                  // first word of a multi-word place
	fMonth                   // month name
	fWeekday                 // day of the week
	fTitle                   // honorific before a name
	fStreet                  // street type after the name ("Street", "Ave")
	fStreetFirst             // street type before the name ("Rue", "Via")
	fUnit                    // unit designator ("Apt", "Suite")
	fStop                    // capitalised function word: never a name
)

// fold lower-cases the ASCII letters of w into buf (gazetteer keys are
// folded the same way) so ALL-CAPS and Title-case forms share one entry.
// It returns nil when w does not fit.
func fold(w string, buf []byte) []byte {
	if len(w) > cap(buf) {
		return nil
	}
	buf = buf[:len(w)]
	for k := 0; k < len(w); k++ {
		buf[k] = lowerASCII(w[k])
	}
	return buf
}

// lexFilter is a 64 Ki-bit membership filter over a cheap hash of each
// lexicon key, so most capitalised words are rejected without hashing the
// whole word for a map lookup.
var lexFilter [1024]uint64

func lexHash(w string) uint32 {
	n := len(w)
	h := uint32(lowerASCII(w[0]))*131 + uint32(lowerASCII(w[n-1]))*7 + uint32(n)*1009
	if n > 1 {
		h = h*31 + uint32(lowerASCII(w[1]))
	}
	return h & 0xffff
}

func lookup(w string) uint16 {
	if len(w) == 0 {
		return 0
	}
	if h := lexHash(w); lexFilter[h>>6]&(1<<(h&63)) == 0 {
		return 0
	}
	if len(w) > maxLexWord {
		return 0
	}
	// Fold and hash in one pass, then probe lexTable: a Go map would
	// hash the folded word again, with more work per byte.
	var buf [maxLexWord]byte
	h := uint32(fnv32Offset)
	for k := 0; k < len(w); k++ {
		c := lowerASCII(w[k])
		buf[k] = c
		h = (h ^ uint32(c)) * fnv32Prime
	}
	b := buf[:len(w)]
	slots, mask := lexTable.slots, uint32(len(lexTable.slots)-1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := slots[i]
		if e == 0 {
			return 0
		}
		if e>>16 == h>>16 {
			if en := &lexTable.entries[e&0xffff-1]; en.key == string(b) {
				return en.flags
			}
		}
	}
}

// maxLexWord is the longest word lookup folds; a longer one is in no
// gazetteer list.
const maxLexWord = 40

// FNV-1a, 32 bits: lookup hashes the folded word as it folds it.
const (
	fnv32Offset = 2166136261
	fnv32Prime  = 16777619
)

// lexTable holds lexicon for lookup: an open-addressed table at most half
// full, each slot the high 16 bits of its key's hash and 1 + the index of
// its entry (0: empty), so a probe compares a key only where 16 more
// bits of the hash agree.
var lexTable = func() (t struct {
	slots   []uint32
	entries []lexEntry
}) {
	size := 16
	for size < 2*len(lexicon) {
		size *= 2
	}
	if len(lexicon) >= 0xffff {
		panic("pii: the lexicon outgrew lexTable's 16-bit entry index")
	}
	t.slots = make([]uint32, size)
	keys := make([]string, 0, len(lexicon))
	for k := range lexicon {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the same table every run
	for _, k := range keys {
		h := uint32(fnv32Offset)
		for i := 0; i < len(k); i++ {
			h = (h ^ uint32(k[i])) * fnv32Prime
		}
		t.entries = append(t.entries, lexEntry{key: k, flags: lexicon[k]})
		i := h & uint32(size-1)
		for t.slots[i] != 0 {
			i = (i + 1) & uint32(size-1)
		}
		t.slots[i] = h>>16<<16 | uint32(len(t.entries))
	}
	return t
}()

type lexEntry struct {
	key   string
	flags uint16
}

// nextWord returns the capitalised word after a single space (or ", " when
// comma is set) at j, or ok false.
func nextWord(s string, j int) (wordInfo, bool) {
	if j+1 >= len(s) || s[j] != ' ' {
		return wordInfo{}, false
	}
	if c := s[j+1]; c < utf8.RuneSelf && !isUpper(c) {
		// Not a capitalised word, and callers ignore the word when ok
		// is false: skip scanning it.
		return wordInfo{}, false
	}
	w := scanWord(s, j+1)
	if w.end == j+1 || w.digit || !w.upper {
		return w, false
	}
	return w, true
}

// capitalised handles a capitalised word: places, names, dates and street
// names from the gazetteer, with the cue words around them.
func (p *pass) capitalised(w wordInfo) int {
	s := p.s
	f := lookup(s[w.start:w.end])
	// Multi-word places first: "United States", "New South Wales".
	if f&fPhrase != 0 {
		end := w.end
		best := 0
		for k := 0; k < 3; k++ {
			nw, ok := nextWord(s, end)
			if !ok {
				break
			}
			end = nw.end
			if lookup(s[w.start:end])&fPlace != 0 {
				best = end
			}
		}
		if best > 0 {
			p.add(w.start, best, kLocation, 0.7)
			return best
		}
	}
	if f&fStop != 0 {
		return w.end
	}
	switch {
	case f&fUnit != 0:
		if end := unitAt(s, w.start); end > 0 {
			p.add(w.start, end, kAddress, 0.5)
			return end
		}
	case f&fStreetFirst != 0:
		if end := p.prefixStreet(w); end > 0 {
			return end
		}
	case f&fTitle != 0:
		j := w.end
		if j < len(s) && s[j] == '.' {
			j++
		}
		if nw, ok := nextWord(s, j); ok {
			end := nameEnd(s, nw)
			p.add(nw.start, end, kPerson, 0.7)
			return end
		}
		return w.end
	case f&(fMonth|fWeekday) != 0:
		if end := p.dateWords(w, f); end > 0 {
			return end
		}
	}
	if compoundStreet(s[w.start:w.end]) {
		if end := numberAfter(s, w.end); end > 0 {
			p.add(w.start, end, kAddress, 0.5)
			return end
		}
	}
	if w.allUpper && w.end-w.start > 1 {
		// Headings and acronyms are upper case; only known places are
		// reported ("LONDON"), never names.
		if f&fPlace != 0 {
			p.add(w.start, w.end, kLocation, 0.5)
		}
		return w.end
	}
	nw, hasNext := nextWord(s, w.end)
	nf := uint16(0)
	if hasNext {
		nf = lookup(s[nw.start:nw.end])
	}
	switch {
	case f&fFirst != 0 && (f&fPlace == 0 || (hasNext && nf&(fPlace|fStop) == 0)):
		end := nameEnd(s, w)
		score := 0.5
		if end > w.end {
			score = 0.7
		}
		p.add(w.start, end, kPerson, score)
		return end
	case f&fPlace != 0:
		p.add(w.start, w.end, kLocation, 0.6)
		return w.end
	case f&fLast != 0 && !sentenceStart(s, w.start):
		p.add(w.start, w.end, kPerson, 0.4)
		return w.end
	case personCue(s, w.start):
		end := nameEnd(s, w)
		p.add(w.start, end, kPerson, 0.6)
		return end
	}
	return w.end
}

// nameEnd extends a name from its first word over following capitalised
// words, initials ("J", "D.") and surname particles ("van de"), up to four
// words, stopping at known places and function words.
func nameEnd(s string, w wordInfo) int {
	end := w.end
	for k := 0; k < 4; k++ {
		j := end
		if j+1 >= len(s) || s[j] != ' ' {
			break
		}
		nw := scanWord(s, j+1)
		if nw.end == j+1 || nw.digit {
			break
		}
		word := s[nw.start:nw.end]
		if !nw.upper {
			// Particles ("van der", "de la") join only when a
			// capitalised word follows them.
			e := nw.end
			for particle(s[nw.start:nw.end]) {
				if nn, ok := nextWord(s, e); ok {
					end = nn.end
					break
				}
				if e == len(s) {
					break // a particle ends the text: "Hi John de"
				}
				nw = scanWord(s, e+1)
				if e+1 >= len(s) || s[e] != ' ' || nw.end == e+1 {
					break
				}
				e = nw.end
			}
			if end != nw.end && end <= j {
				break
			}
			k++
			continue
		}
		f := lookup(word)
		if f&(fStop|fPlace|fMonth|fWeekday|fStreet|fUnit|fTitle) != 0 && f&(fFirst|fLast) == 0 {
			break
		}
		if nw.allUpper && nw.end-nw.start > 1 {
			break
		}
		end = nw.end
		if nw.end-nw.start == 1 && end < len(s) && s[end] == '.' {
			end++
		}
	}
	return end
}

func particle(w string) bool {
	switch w {
	case "van", "de", "der", "den", "von", "da", "di", "del", "della", "du", "le", "la", "bin", "al", "ten", "ter", "dos", "das":
		return true
	}
	return false
}

// personCue reports a phrase that introduces a name right before i: "my
// name is", "Name:", "I'm", "I am", "called", "Dear", "Hi", "Hello",
// "thanks", "by". Only the previous word is examined, so the check costs a
// few comparisons per capitalised word.
func personCue(s string, i int) bool {
	j := i
	if j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	} else {
		return false
	}
	colon := j > 0 && s[j-1] == ':'
	if colon {
		j--
	}
	k := j
	for k > 0 && (isAlpha(s[k-1]) || s[k-1] == '\'') {
		k--
	}
	w := s[k:j]
	if colon {
		return strings.EqualFold(w, "name")
	}
	switch len(w) {
	case 2:
		if strings.EqualFold(w, "is") {
			return k >= 6 && strings.EqualFold(s[k-5:k-1], "name")
		}
		return strings.EqualFold(w, "am") && k >= 2 && (s[k-2] == 'I' || s[k-2] == 'i') || strings.EqualFold(w, "hi") || strings.EqualFold(w, "by")
	case 3:
		return strings.EqualFold(w, "i'm")
	case 4:
		return strings.EqualFold(w, "dear")
	case 5:
		return strings.EqualFold(w, "hello")
	case 6:
		return strings.EqualFold(w, "called") || strings.EqualFold(w, "thanks")
	}
	return false
}

// sentenceStart reports whether the word at i begins a sentence, where
// capitalisation says nothing about names.
func sentenceStart(s string, i int) bool {
	j := i
	for j > 0 && (s[j-1] == ' ' || s[j-1] == '"' || s[j-1] == '\'') {
		j--
	}
	if j == 0 {
		return true
	}
	switch s[j-1] {
	case '.', '!', '?', '\n', ':':
		return true
	}
	return false
}

// dateWords matches "Monday", "March 5", "March 5, 2020", "March 2020".
// A month name alone is not reported: "May" and "March" are also verbs.
func (p *pass) dateWords(w wordInfo, f uint16) int {
	s := p.s
	if f&fWeekday != 0 {
		end := w.end
		if end+2 < len(s) && s[end] == ',' && s[end+1] == ' ' {
			if e := monthPhrase(s, end+2); e > 0 {
				end = e
			}
		}
		p.add(w.start, end, kDate, 0.6)
		return end
	}
	if e := monthPhrase(s, w.start); e > 0 {
		p.add(w.start, e, kDate, 0.7)
		return e
	}
	return 0
}

// monthPhrase matches a month name followed by a day and/or year at i.
func monthPhrase(s string, i int) int {
	w := scanWord(s, i)
	if lookup(s[w.start:w.end])&fMonth == 0 {
		return 0
	}
	j := w.end
	if j < len(s) && s[j] == '.' {
		j++
	}
	if j+1 >= len(s) || s[j] != ' ' || !isDigit(s[j+1]) {
		return 0
	}
	d := digitsAt(s, j+1)
	switch n := d - j - 1; {
	case n == 4:
		return d
	case n <= 2 && atoi(s[j+1:d]) >= 1 && atoi(s[j+1:d]) <= 31:
		end := d
		for _, suf := range []string{"st", "nd", "rd", "th"} {
			if strings.HasPrefix(s[end:], suf) {
				end += 2
				break
			}
		}
		k := end
		if k < len(s) && s[k] == ',' {
			k++
		}
		if k+5 <= len(s) && s[k] == ' ' && digitsAt(s, k+1) == k+5 {
			end = k + 5
		}
		if !boundaryAfter(s, end) {
			return 0
		}
		return end
	}
	return 0
}

// unitAt matches "Apt. 12", "Suite 400", "Unit 3B" at i.
func unitAt(s string, i int) int {
	w := scanWord(s, i)
	j := w.end
	if j < len(s) && s[j] == '.' {
		j++
	}
	if j < len(s) && s[j] == ' ' {
		j++
	}
	if j < len(s) && s[j] == '#' {
		j++
	}
	e := digitsAt(s, j)
	if e == j || e-j > 6 {
		return 0
	}
	if e < len(s) && isUpper(s[e]) && boundaryAfter(s, e+1) {
		e++
	}
	if !boundaryAfter(s, e) {
		return 0
	}
	return e
}

// numberAfter returns the end of " 12" (a house number after a street
// name) at j, or 0.
func numberAfter(s string, j int) int {
	if j+1 >= len(s) || s[j] != ' ' {
		return 0
	}
	e := digitsAt(s, j+1)
	if e == j+1 || e-j-1 > 5 {
		return 0
	}
	if e < len(s) && isAlpha(s[e]) && boundaryAfter(s, e+1) {
		e++
	}
	if !boundaryAfter(s, e) {
		return 0
	}
	return e
}

// streetEndings are the street words that languages write fused to the
// name ("Kungsgatan", "Hauptstraße", "Nybyvägen").
var streetEndings = []string{"straße", "strasse", "straat", "gatan", "vägen", "vegen", "veien", "gasse", "allee", "laan", "weg", "gade", "vej", "katu", "tie", "utca", "gränd", "platz", "plein", "ring", "dreef", "kade", "gracht"}

// streetEndingTails holds, for each possible last byte of a street ending,
// a bit per byte before it (folded to five bits, so both cases share one),
// which turns most words away from compoundStreet before the loop.
var streetEndingTails = func() (t [256]uint32) {
	for _, e := range streetEndings {
		last, prev := e[len(e)-1], e[len(e)-2]
		t[last] |= 1 << (prev & 31)
		if 'a' <= last && last <= 'z' {
			t[last-'a'+'A'] |= 1 << (prev & 31)
		}
	}
	return t
}()

func compoundStreet(w string) bool {
	if len(w) < 6 || streetEndingTails[w[len(w)-1]]&(1<<(w[len(w)-2]&31)) == 0 {
		return false
	}
	for _, e := range streetEndings {
		if len(w) > len(e)+2 && hasFoldSuffix(w, e) {
			return true
		}
	}
	return false
}

func hasFoldSuffix(s, suf string) bool {
	if len(s) < len(suf) {
		return false
	}
	return hasFoldPrefix(s[len(s)-len(suf):], suf)
}

// prefixStreet matches "Rue de la Paix 12", "Via Roma 5", "Avenue Foch":
// a street type written first, its name, and an optional house number.
func (p *pass) prefixStreet(w wordInfo) int {
	s := p.s
	end := w.end
	if end < len(s) && s[end] == '.' {
		end++
	}
	words := 0
	for k := 0; k < 5; k++ {
		if end+1 >= len(s) || s[end] != ' ' {
			break
		}
		nw := scanWord(s, end+1)
		if nw.end == end+1 || nw.digit {
			break
		}
		if !nw.upper && !particle(s[nw.start:nw.end]) && !strings.HasPrefix(s[nw.start:nw.end], "d'") {
			break
		}
		end = nw.end
		if nw.upper {
			words++
		}
	}
	if words == 0 {
		return 0
	}
	if e := numberAfter(s, end); e > 0 {
		end = e
	}
	p.add(w.start, end, kAddress, 0.5)
	return end
}

// address matches a street address whose house number (or "number
// number" as in some European formats) spans i..j: up to five capitalised
// words ending in a street type ("12 Main St", "4 Privet Drive"), or a
// street type first ("20 Rue Hsine Eloued"), then an optional unit and
// continuation lines (unit, city, "Country 12345" or "City, ST 12345").
// It returns 0 when the words do not make a street.
func (p *pass) address(i, j int) int {
	s := p.s
	// Both a second number and a street name start after a space with a
	// digit or a capital (or a non-ASCII letter); prose after a number
	// ("12 ms") has neither.
	if j+1 >= len(s) || s[j] != ' ' || (s[j+1] < utf8.RuneSelf && class[s[j+1]]&(cDigit|cUpper) == 0) {
		return 0
	}
	end := 0
	k := j
	// A second number ("5533 119 Countess Close").
	if e := numberAfter(s, k); e > 0 && e-k <= 4 {
		k = e
	}
	for n := 0; n < 5; n++ {
		w, ok := nextWord(s, k)
		if !ok {
			break
		}
		f := lookup(s[w.start:w.end])
		k = w.end
		if k+1 < len(s) && s[k] == '.' && s[k+1] == ' ' {
			k++ // an abbreviation: "St. John Street"
		}
		if f&fStreetFirst != 0 && n == 0 {
			if e := p.prefixStreetEnd(w); e > 0 {
				end = e
				break
			}
		}
		if f&fStreet != 0 && n > 0 {
			end = w.end
			if end < len(s) && s[end] == '.' && (end+1 == len(s) || !isAlpha(s[end+1])) {
				end++
			}
			// "Station Road" is a name; "St John Street" ends later.
			if nw, ok := nextWord(s, k); ok && lookup(s[nw.start:nw.end])&fStreet != 0 {
				end = nw.end
			}
			break
		}
		if compoundStreet(s[w.start:w.end]) {
			end = k
			if e := numberAfter(s, end); e > 0 {
				end = e
			}
			break
		}
	}
	if end == 0 {
		return 0
	}
	end = addressTail(s, end)
	p.add(i, end, kAddress, 0.6)
	return end
}

// prefixStreetEnd is prefixStreet without recording, for use inside
// address.
func (p *pass) prefixStreetEnd(w wordInfo) int {
	saved := len(p.out)
	end := p.prefixStreet(w)
	p.out = p.out[:saved]
	return end
}

// addressTail extends an address over a unit ("Apt. 5"), then ", City,
// ST 12345" on the same line.
func addressTail(s string, end int) int {
	k := end
	if k < len(s) && s[k] == ',' {
		k++
	}
	if k < len(s) && s[k] == ' ' {
		if w := scanWord(s, k+1); w.end > k+1 && lookup(s[w.start:w.end])&fUnit != 0 {
			if e := unitAt(s, k+1); e > 0 {
				end = e
			}
		}
	}
	// ", City, ST 12345"
	k = end
	if k+2 < len(s) && s[k] == ',' && s[k+1] == ' ' {
		c := k + 2
		for n := 0; n < 3; n++ {
			w := scanWord(s, c)
			if w.end == c || !w.upper || w.digit {
				break
			}
			c = w.end
			if c < len(s) && s[c] == ' ' && c+1 < len(s) && isUpper(s[c+1]) && !(c+3 < len(s) && isUpper(s[c+2]) && s[c+3] == ' ') {
				c++
				continue
			}
			break
		}
		if c+3 < len(s) && s[c] == ',' && s[c+1] == ' ' && usStates[s[c+2:min(len(s), c+4)]] {
			st := c + 4
			if st+6 <= len(s) && s[st] == ' ' && digitsAt(s, st+1) == st+6 && boundaryAfter(s, st+6) {
				return st + 6
			}
			return st
		}
	}
	return end
}
