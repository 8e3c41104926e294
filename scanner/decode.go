package scanner

import (
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Decoding of payloads smuggled in encoded form: base64 (standard and URL
// alphabets), hex, URL percent-encoding, ROT13 and other Caesar shifts.
//
// One pass over the text finds every candidate: it cuts the text into
// tokens (runs between whitespace, quotes and brackets), counting percent
// escapes, and into ASCII words, looking each word and its ROT13 up in a
// small set of common English words. Only a token of at least 16 bytes or
// with escapes is examined further, and a decoder runs on a small prefix
// before the whole run, so prose and binary blobs cost almost nothing and a
// text without candidates allocates nothing.
//
// A candidate becomes a Segment only when what it decodes to is mostly
// printable UTF-8 (or, for the letter ciphers, mostly English words): a
// long hex hash or a base64 image is left alone.

// Bounds of decoding, per Text. A decoded payload's own Text may decode
// again, one level deeper, down to maxDecodeDepth. Each level's payloads
// are no larger than the budget of the level above, so a whole tree of
// payloads holds at most maxDecodeDepth*maxDecodedBytes bytes.
const (
	maxDecodeDepth  = 3
	maxDecodedBytes = 64 << 10
	maxSegments     = 32

	minBase64Len  = 16
	minHexLen     = 16
	minURLEscapes = 3
	// probeLen is how many encoded bytes are decoded to judge a candidate
	// before the whole of it is.
	probeLen = 128
)

// Byte classes for the scan.
const (
	clDelim = 1 << iota // ends a token
	clAlpha             // ASCII letter
	clHex               // hex digit
	clB64               // base64 alphabet, either variant, without '='
)

var byteClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= utf8.RuneSelf, c <= ' ', c == 0x7F:
			t[c] |= clDelim
		}
		switch byte(c) {
		case '"', '\'', '`', '(', ')', '<', '>', '[', ']', '{', '}', ',', ';', '|', '\\':
			t[c] |= clDelim
		}
		if ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') {
			t[c] |= clAlpha | clB64
		}
		if ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F') {
			t[c] |= clHex
		}
		if ('0' <= c && c <= '9') || c == '+' || c == '/' || c == '-' || c == '_' {
			t[c] |= clB64
		}
	}
	return t
}()

// b64Value maps both alphabets onto 6-bit values; 0xFF is not base64.
var b64Value = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	const std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := 0; i < len(std); i++ {
		t[std[i]] = byte(i)
	}
	t['-'], t['_'] = 62, 63
	return t
}()

func decodePayloads(s string, depth int) []Segment {
	if depth >= maxDecodeDepth || len(s) < 8 {
		return nil
	}
	d := decoder{s: s, depth: depth, budget: maxDecodedBytes}
	d.scan()
	d.letterCiphers()
	return d.segs
}

type decoder struct {
	s      string
	depth  int
	budget int
	segs   []Segment

	// Word statistics for the letter ciphers, over words of 3 to 12
	// ASCII letters: how many there are, how many are common English
	// words, how many are once ROT13 is undone. rotFirst..rotLast is the
	// span from the first ROT13 hit to the last, with the counts before it
	// so the span can be judged on its own.
	words, direct, rot             int
	letters, visible               int
	rotFirst, rotLast              int
	wordsBefore, directBefore      int
	wordsAtLast, directAtLast      int
	firstWordStart, lastWordFinish int
}

func (d *decoder) full() bool { return len(d.segs) >= maxSegments || d.budget <= 0 }

func (d *decoder) scan() {
	s := d.s
	// Percent escapes are counted only in the tokens that hold a '%':
	// pct is the next one, found by a vectorised search (len(s): none).
	pct := nextByte(s, 0, '%')
	letters, visible := 0, 0
	d.firstWordStart = -1
	// Tokens are runs of bytes that are not delimiters; words are runs of
	// ASCII letters, which are never delimiters, so every word lies in a
	// token. Each run is walked by a loop of its own: one class lookup and
	// one predictable branch per byte.
	for i := 0; i < len(s); {
		for i < len(s) && byteClass[s[i]]&clDelim != 0 {
			i++
		}
		tok := i
		for i < len(s) {
			cl := byteClass[s[i]]
			if cl&clDelim != 0 {
				break
			}
			if cl&clAlpha == 0 {
				i++
				continue
			}
			// The word is packed (packWord) as it is walked; only
			// words of up to maxWord letters keep all of theirs, and
			// only those are looked up.
			word := i
			key := uint64(letterCodes[s[i]])
			for i++; i < len(s); i++ {
				c := s[i]
				if byteClass[c]&clAlpha == 0 {
					break
				}
				key = key<<5 | uint64(letterCodes[c])
			}
			letters += i - word
			if n := i - word; n >= minWord && n <= maxWord {
				// Most words are neither English nor its ROT13, and
				// not the first: counted here, without a call.
				if kind := knownWords.lookup(key); kind == wordUnknown && d.firstWordStart >= 0 {
					d.words++
					d.lastWordFinish = i
				} else {
					d.word(word, i, kind)
				}
			}
		}
		if tok == i {
			continue
		}
		visible += i - tok
		escapes := 0
		if pct < i {
			escapes = countEscapes(s[tok:i])
			pct = nextByte(s, i, '%')
		}
		// Most tokens are words, too short to be a payload: token would
		// return at once.
		if escapes >= minURLEscapes || i-tok >= minBase64Len {
			d.token(tok, i, escapes)
		}
	}
	d.letters, d.visible = letters, visible
}

// nextByte returns the index of the first c in s at or after from, or
// len(s).
func nextByte(s string, from int, c byte) int {
	if j := strings.IndexByte(s[from:], c); j >= 0 {
		return from + j
	}
	return len(s)
}

// countEscapes counts the percent escapes ("%2F") in a token.
func countEscapes(tok string) int {
	n := 0
	for i := 0; i+2 < len(tok); i++ {
		if tok[i] == '%' && byteClass[tok[i+1]]&byteClass[tok[i+2]]&clHex != 0 {
			n++
		}
	}
	return n
}

// token examines one token s[a:b].
func (d *decoder) token(a, b, escapes int) {
	if d.full() {
		return
	}
	if escapes >= minURLEscapes && d.url(a, b) {
		return
	}
	if b-a < minBase64Len {
		return
	}
	s := d.s
	for i := a; i < b && !d.full(); {
		for i < b && byteClass[s[i]]&clB64 == 0 {
			i++
		}
		start := i
		allHex, upper, lower, std, url := true, false, false, false, false
		for i < b && byteClass[s[i]]&clB64 != 0 {
			c := s[i]
			allHex = allHex && byteClass[c]&clHex != 0
			switch {
			case 'A' <= c && c <= 'Z':
				upper = true
			case 'a' <= c && c <= 'z':
				lower = true
			case c == '+' || c == '/':
				std = true
			case c == '-' || c == '_':
				url = true
			}
			i++
		}
		end := i
		for pad := 0; i < b && s[i] == '=' && pad < 2; pad++ {
			i++
		}
		// "key=value": '=' followed by more alphabet is a separator, not
		// padding, and the next run starts after it.
		padEnd := i
		if i < b && byteClass[s[i]]&clB64 != 0 {
			padEnd = end
		}
		n := end - start
		if n < minBase64Len {
			continue
		}
		hexStart := start
		if !allHex && n > 2 && s[start] == '0' && s[start+1]|0x20 == 'x' && isHexString(s[start+2:end]) {
			hexStart, allHex = start+2, true
		}
		if allHex && (end-hexStart)%2 == 0 && end-hexStart >= minHexLen && d.hex(hexStart, end) {
			continue
		}
		if upper && lower && !(std && url) && n%4 != 1 {
			enc := "base64"
			if url {
				enc = "base64url"
			}
			d.base64(start, end, padEnd, enc)
		}
	}
}

func isHexString(s string) bool {
	for i := 0; i < len(s); i++ {
		if byteClass[s[i]]&clHex == 0 {
			return false
		}
	}
	return true
}

// base64 decodes s[a:b] (padding, if any, runs to padEnd).
func (d *decoder) base64(a, b, padEnd int, enc string) bool {
	src := d.s[a:b]
	var probe [probeLen * 3 / 4]byte
	p := src
	if len(p) > probeLen {
		p = p[:probeLen]
	}
	m := decodeBase64(probe[:], p)
	if m < 0 || !mostlyPrintable(probe[:m], len(p) < len(src)) {
		return false
	}
	// Cut to the budget on a 4-character boundary.
	end, cut := padEnd, false
	if max := d.budget / 3 * 4; len(src) > max {
		src, end, cut = src[:max], a+max, true
	}
	out := make([]byte, len(src)*3/4+3)
	m = decodeBase64(out, src)
	if m < 0 || !mostlyPrintable(out[:m], cut) {
		return false
	}
	d.add(enc, a, end, string(out[:m]))
	return true
}

// decodeBase64 decodes unpadded base64 of either alphabet into dst, which
// must hold len(src)*3/4 bytes; it returns -1 on a byte outside the
// alphabets. A dangling sixth bit group is ignored.
func decodeBase64(dst []byte, src string) int {
	n := 0
	var acc uint32
	bits := 0
	for i := 0; i < len(src); i++ {
		v := b64Value[src[i]]
		if v == 0xFF {
			return -1
		}
		acc = acc<<6 | uint32(v)
		bits += 6
		if bits >= 8 {
			bits -= 8
			dst[n] = byte(acc >> bits)
			n++
		}
	}
	return n
}

func (d *decoder) hex(a, b int) bool {
	src := d.s[a:b]
	var probe [probeLen / 2]byte
	p := src
	if len(p) > probeLen {
		p = p[:probeLen]
	}
	m := decodeHex(probe[:], p)
	if !mostlyPrintable(probe[:m], len(p) < len(src)) {
		return false
	}
	cut := false
	if max := d.budget * 2; len(src) > max {
		src, b, cut = src[:max], a+max, true
	}
	out := make([]byte, len(src)/2)
	m = decodeHex(out, src)
	if !mostlyPrintable(out[:m], cut) {
		return false
	}
	d.add("hex", a, b, string(out[:m]))
	return true
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// decodeHex decodes src (hex digits, even length) into dst.
func decodeHex(dst []byte, src string) int {
	n := 0
	for i := 0; i+1 < len(src); i += 2 {
		dst[n] = unhex(src[i])<<4 | unhex(src[i+1])
		n++
	}
	return n
}

// url decodes the percent escapes of the token s[a:b]; the rest of the
// token is kept, so "?q=%69%67%6e..." decodes to "?q=ign...".
func (d *decoder) url(a, b int) bool {
	src := d.s[a:b]
	if len(src) > d.budget {
		src = src[:d.budget]
		b = a + d.budget
	}
	out := make([]byte, 0, len(src))
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == '%' && i+2 < len(src) && byteClass[src[i+1]]&byteClass[src[i+2]]&clHex != 0 {
			out = append(out, unhex(src[i+1])<<4|unhex(src[i+2]))
			i += 2
			continue
		}
		out = append(out, c)
	}
	if !mostlyPrintable(out, false) {
		return false
	}
	d.add("url", a, b, string(out))
	return true
}

// mostlyPrintable reports whether b reads as text: at least 90% of its runes
// printable (or ordinary whitespace), and at least one letter. truncated
// says b may end in the middle of a rune, which is then not held against it.
func mostlyPrintable(b []byte, truncated bool) bool {
	if len(b) == 0 {
		return false
	}
	total, good, letters := 0, 0, 0
	for i := 0; i < len(b); {
		r, n := rune(b[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 && truncated && len(b)-i < utf8.UTFMax {
				break
			}
		}
		total++
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			good++
		case r == utf8.RuneError && n == 1:
		case r < utf8.RuneSelf:
			if r >= ' ' && r < 0x7F {
				good++
				if ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') {
					letters++
				}
			}
		case unicode.IsPrint(r):
			good++
			if unicode.IsLetter(r) {
				letters++
			}
		}
		i += n
	}
	return letters > 0 && good*10 >= total*9
}

func (d *decoder) add(enc string, a, b int, text string) {
	d.budget -= len(text)
	d.segs = append(d.segs, Segment{
		Encoding: enc,
		Start:    a,
		End:      b,
		Text:     &Text{Original: text, depth: d.depth + 1},
	})
}

// Words of minWord to maxWord ASCII letters are counted for the letter
// ciphers: shorter ones are too ambiguous, longer ones do not fit packWord.
const minWord, maxWord = 3, 12

// word records the statistics of the word s[a:b], a run of minWord to
// maxWord ASCII letters whose packed form (packWord) knownWords knows as
// kind.
func (d *decoder) word(a, b int, kind uint8) {
	if d.firstWordStart < 0 {
		d.firstWordStart = a
	}
	d.lastWordFinish = b
	d.words++
	switch kind {
	case wordEnglish:
		d.direct++
	case wordROT13:
		if d.rot == 0 {
			d.rotFirst = a
			d.wordsBefore, d.directBefore = d.words-1, d.direct
		}
		d.rot++
		d.rotLast = b
		d.wordsAtLast, d.directAtLast = d.words, d.direct
	}
}

// packWord packs a lower-cased word of at most 12 ASCII letters into 5 bits
// a letter.
func packWord(w string) (key uint64) {
	for i := 0; i < len(w); i++ {
		key = key<<5 | uint64(letterCodes[w[i]])
	}
	return key
}

// letterCodes maps an ASCII letter of either case to its 5-bit code in a
// packed word (a = 1 .. z = 26): packWord runs for every word of every
// text, and a table lookup is cheaper there than the arithmetic.
var letterCodes = func() (t [256]uint8) {
	for l := range 26 {
		t['a'+l], t['A'+l] = uint8(l+1), uint8(l+1)
	}
	return t
}()

// letterCiphers looks for ROT13 and, in letter soup only, other Caesar
// shifts.
//
// ROT13: the span from the first to the last word whose ROT13 is a common
// English word is decoded when it holds at least two such words, they are
// at least 40% of its words and they outnumber the words in it that are
// English as written. A message that says "decode this:" before its payload
// is caught, and English prose (whose own words dominate) is not.
//
// Other shifts are tried only when the text is letter soup: at least four
// words, under 10% of them English, and mostly letters. Each of the 24
// other shifts is scored on the first 64 words, so the work is bounded
// whatever the text's length.
func (d *decoder) letterCiphers() {
	if d.full() {
		return
	}
	if d.rot >= 2 {
		spanWords := d.wordsAtLast - d.wordsBefore
		spanDirect := d.directAtLast - d.directBefore
		if d.rot*5 >= spanWords*2 && d.rot > spanDirect {
			d.shift(d.rotFirst, d.rotLast, 13, "rot13")
			return
		}
	}
	if d.words < 4 || d.direct*10 >= d.words || d.letters*10 < d.visible*7 {
		return
	}
	best, bestHits, n := bestCaesarShift(d.s)
	if bestHits >= 3 && bestHits*10 >= n*3 {
		// The text was shifted forward by 26-best; name it by that.
		d.shift(d.firstWordStart, d.lastWordFinish, best, "caesar"+strconv.Itoa(26-best))
	}
}

// bestCaesarShift returns the shift k (1-25 but 13) that moves the most of
// the first 64 words of s (of minWord to maxWord ASCII letters) into
// englishWords, the first of several such, with how many it moves there
// and how many words it looked at. The shifts of each word are looked up
// at once (caesarShifts), rather than each word shifted 24 times and each
// shift looked up.
func bestCaesarShift(s string) (best, bestHits, words int) {
	var hits [26]int
	shifts := caesarShifts()
	words = caesarWords(s, func(w string) {
		for m := shifts[packWord(w)]; m != 0; m &= m - 1 {
			hits[bits.TrailingZeros32(m)]++
		}
	})
	for k := 1; k < 26; k++ {
		if k != 13 && hits[k] > bestHits {
			best, bestHits = k, hits[k]
		}
	}
	return best, bestHits, words
}

// caesarWords calls fn with each of the first 64 words of s of minWord to
// maxWord ASCII letters, the words a Caesar shift is judged on, and
// returns how many there were.
func caesarWords(s string, fn func(w string)) int {
	n := 0
	for i := 0; i < len(s) && n < 64; {
		if byteClass[s[i]]&clAlpha == 0 {
			i++
			continue
		}
		j := i
		for j < len(s) && byteClass[s[j]]&clAlpha != 0 {
			j++
		}
		if j-i >= minWord && j-i <= maxWord {
			fn(s[i:j])
			n++
		}
		i = j
	}
	return n
}

// caesarShifts maps a packed word (packWord) to the bit set of the shifts
// k (1-25 but 13, which ROT13 handles) that move its letters k places
// forward into one of englishWords.
var caesarShifts = sync.OnceValue(func() map[uint64]uint32 {
	m := map[uint64]uint32{}
	for _, e := range englishWords {
		for k := 1; k < 26; k++ {
			if k != 13 {
				m[packWord(shiftLetters(e, 26-k))] |= 1 << k
			}
		}
	}
	return m
})

// shift adds s[a:b] with every ASCII letter moved k places forward.
func (d *decoder) shift(a, b, k int, enc string) {
	if b-a > d.budget {
		b = a + d.budget
	}
	d.add(enc, a, b, shiftLetters(d.s[a:b], k))
}

// shiftLetters returns s with every ASCII letter moved k places forward in
// the alphabet, keeping its case.
func shiftLetters(s string, k int) string {
	out := []byte(s)
	for i, c := range out {
		switch {
		case 'a' <= c && c <= 'z':
			out[i] = 'a' + byte((int(c-'a')+k)%26)
		case 'A' <= c && c <= 'Z':
			out[i] = 'A' + byte((int(c-'A')+k)%26)
		}
	}
	return string(out)
}

// What knownWords knows of a packed word.
const (
	wordUnknown = iota
	wordEnglish // one of englishWords
	wordROT13   // the ROT13 of one of englishWords
)

// wordSet maps packed words to what they are, by open addressing with
// linear probing. englishWords and their ROT13s are one table, so a word of
// a text is packed and looked up once to learn both.
type wordSet struct {
	slots [2048]uint64
	kinds [2048]uint8
}

func (w *wordSet) slot(key uint64) int { return int((key * 0x9E3779B97F4A7C15) >> 53) }

func (w *wordSet) add(key uint64, kind uint8) {
	for i := w.slot(key); ; i = (i + 1) & (len(w.slots) - 1) {
		if w.slots[i] == 0 || w.slots[i] == key {
			w.slots[i], w.kinds[i] = key, kind
			return
		}
	}
}

func (w *wordSet) lookup(key uint64) uint8 {
	for i := w.slot(key); ; i = (i + 1) & (len(w.slots) - 1) {
		switch w.slots[i] {
		case key:
			return w.kinds[i]
		case 0:
			return wordUnknown
		}
	}
}

// englishWords are common English words of three letters or more, with the
// vocabulary of prompt injection, none of whose ROT13 is also in the list
// (TestEnglishWordsROT13Disjoint). Two-letter words are left out: "be" and
// "or" are each other's ROT13.
var englishWords = [...]string{
	"the", "and", "you", "that", "was", "for", "are", "with", "his", "they",
	"this", "have", "from", "one", "had", "word", "but", "not", "what", "all",
	"were", "when", "your", "can", "said", "there", "use", "each", "which", "she",
	"how", "their", "will", "other", "about", "out", "many", "then", "them", "these",
	"some", "her", "would", "make", "like", "him", "into", "time", "has", "look",
	"two", "more", "write", "see", "number", "way", "could", "people", "than", "first",
	"water", "been", "call", "who", "its", "now", "find", "long", "down", "day",
	"did", "get", "come", "made", "may", "part", "over", "new", "take", "only",
	"little", "work", "know", "place", "year", "live", "back", "give", "most", "very",
	"after", "thing", "our", "just", "name", "good", "man", "think", "say", "great",
	"where", "help", "through", "much", "before", "line", "right", "too", "mean", "old",
	"any", "same", "tell", "follow", "came", "want", "show", "also", "around", "form",
	"three", "small", "put", "end", "does", "another", "well", "large", "must", "big",
	"even", "such", "because", "turn", "here", "why", "ask", "went", "men", "read",
	"need", "land", "different", "home", "move", "try", "kind", "hand", "again", "change",
	"off", "play", "away", "house", "point", "page", "letter", "answer", "found", "study",
	"still", "learn", "should", "world", "high", "every", "near", "add", "food", "between",
	"own", "below", "country", "last", "school", "keep", "never", "start", "city", "light",
	"thought", "head", "under", "story", "left", "few", "while", "along", "might", "close",
	"something", "seem", "next", "hard", "open", "example", "begin", "life", "always", "those",
	"both", "paper", "together", "got", "group", "often", "run", "important", "until", "side",
	"night", "white", "began", "took", "four", "carry", "state", "once", "book", "hear",
	"stop", "without", "second", "later", "idea", "enough", "eat", "face", "watch", "really",
	"almost", "let", "above", "young", "talk", "soon", "list", "being", "leave", "family",
	"ignore", "previous", "instructions", "instruction", "prompt", "system", "password", "secret", "reveal", "forget",
	"rules", "disregard", "everything", "user", "assistant", "print", "output", "respond", "pretend", "act",
	"role", "mode", "developer", "admin", "access", "data", "key", "token", "execute", "command",
	"code", "please", "text", "message", "following", "content", "delete", "send", "email", "now",
	"hello", "world", "must", "any", "prior", "context", "from", "file", "files", "shell",
}

// knownWords holds englishWords, and their ROT13s apart from them
// (TestEnglishWordsROT13Disjoint keeps the two apart).
var knownWords = func() *wordSet {
	w := new(wordSet)
	for _, s := range englishWords {
		w.add(packWord(s), wordEnglish)
	}
	for _, s := range englishWords {
		if k := packWord(shiftLetters(s, 13)); w.lookup(k) == wordUnknown {
			w.add(k, wordROT13)
		}
	}
	return w
}()
