package injection

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/promptwall/promptwall/scanner/internal/twobyte"
)

// featureSpec fixes how a folded text is turned into hashed features. It is
// stored in the model file, so a model is always scored with the features it
// was trained on.
type featureSpec struct {
	// bits is log2 of the number of hash buckets.
	bits uint8
	// charMin and charMax bound the character n-gram lengths (0 = none).
	charMin, charMax uint8
	// bigrams adds word bigrams to the word unigrams.
	bigrams bool
}

// defaultSpec is the feature set the shipped model uses; the training
// program can override it to compare variants.
var defaultSpec = featureSpec{bits: 17, charMin: 4, charMax: 4, bigrams: true}

// feature is one hashed feature occurrence: the bucket and the byte offset in
// the folded view where it ends, which places it in a window.
type feature struct {
	pos    uint32
	bucket uint32
}

// token is one word of the folded view.
type token struct {
	start, end uint32
	hash       uint64
}

// placeholder is the literal GPTFuzzer templates leave where the harmful
// question goes. It is masked (treated as blank) in training and scoring so
// the model cannot learn to key on it: it marks where the attack goes, not
// the attack.
const placeholder = "insert prompt here"

// Seeds that keep the feature kinds apart in the hash space.
const (
	seedUnigram = 0x8f1bbcdc
	seedBigram  = 0xca62c1d6
	seedChar    = 0x5a827999
	seedZone    = 0x6ed9eba1
)

// FNV-1a parameters: extract hashes each word as it walks it.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnv64 hashes a word (FNV-1a), as extract does; rules use the same hash to
// find triggers.
func fnv64(s string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// mix turns a 64-bit key into a bucket of the given width: one multiply
// by an odd constant whose high bits are kept (Fibonacci hashing), after
// folding the high half in so keys that differ only there spread too.
//
// The shift is masked to 63 (bits is 8..24, so this changes nothing): it
// tells the compiler the shift never reaches 64, which spares the hot loop
// the code for that case.
func mix(x uint64, bits uint8) uint32 {
	x ^= x >> 31
	return uint32((x * 0x9E3779B97F4A7C15) >> ((64 - bits) & 63))
}

// wordByte reports whether a byte is an ASCII letter or digit, part of a
// word; bytes of multi-byte characters are not.
var wordByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	t['_'] = false
	return t
}()

// wordStep classes a byte for the walk's loops, so that each tests a byte
// with one load and one compare: an ASCII separator (stepSep), a word
// byte (stepWord), the placeholder's first byte, also a word byte
// (stepPlaceholder), or a byte of a multi-byte character (stepHigh).
var wordStep = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = stepHigh
		case wordByte[c]:
			t[c] = stepWord
		}
	}
	t[placeholder[0]] = stepPlaceholder
	return t
}()

const (
	stepSep = iota
	stepWord
	stepPlaceholder
	stepHigh
)

// featureSink receives the features extract finds, in order of their end
// offset, and when scoring the running sum of their weights. A window's sum
// is then a difference of two running sums, found by binary search on the
// offsets, so nothing is summed twice.
type featureSink struct {
	feats []feature
	// cum[k] is the sum of the weights of features 0..k-1 (scoring only).
	cum  []int32
	toks []token
	// wideFrom is where the first character of three bytes or more
	// (U+0800 on) starts, the text's length if it has none: the gloss
	// looks for the scripts written without spaces only from there, and
	// most texts in other languages than English have no such letter.
	wideFrom int
}

// reset prepares the sink for a text of n bytes, keeping its buffers.
// Features are written by index, so the buffer is sized for the most a
// text of n bytes can give: each byte pushes at most one character (a
// letter or the space a separator becomes) and so (charMax-charMin+1)
// n-grams; words are at least one byte apart, so unigrams and bigrams add
// at most n+1.
func (o *featureSink) reset(sp *featureSpec, n int) {
	limit := n + 1
	if sp.charMin > 0 {
		limit += n * int(sp.charMax-sp.charMin+1)
	}
	o.feats = grow(o.feats, limit)
	// Words are at least one byte apart: sized so that the walk writes
	// them by index, never growing the slice.
	o.toks = grow(o.toks, n/2+1)[:0]
}

func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// count is the number of features found.
func (o *featureSink) count() int { return len(o.feats) }

// sum fills cum with the running sums of the weights w of the features
// found. Kept apart from the walk: a tight loop of loads and adds, where
// the walk has enough state to keep the registers busy.
//
// Features ending inside the content zone z (zone.go) weigh wz[bucket]
// instead: half their own weight plus their content-zone weight
// (zoneWeights). wz may be nil when z is empty.
func (o *featureSink) sum(w []int8, wz []int16, z zone) {
	o.cum = grow(o.cum, len(o.feats)+1)
	o.cum[0] = 0
	kz, ke := firstFeature(o.feats, z.from), firstFeature(o.feats, z.to)
	sum := sumRun(w, o.feats[:kz], o.cum[1:kz+1], 0)
	if ke > kz {
		sum = sumRun(wz, o.feats[kz:ke], o.cum[kz+1:ke+1], sum)
	}
	sumRun(w, o.feats[ke:], o.cum[ke+1:], sum)
}

// sumRun writes to cum the running sums, from sum on, of the weights w
// of feats (cum has room for them all) and returns the last.
func sumRun[W int8 | int16](w []W, feats []feature, cum []int32, sum int32) int32 {
	cum = cum[:len(feats)]
	for k, f := range feats {
		sum += int32(w[f.bucket])
		cum[k] = sum
	}
	return sum
}

// charGrams holds what the character n-grams of a spec need per length n:
// the mask keeping n bytes of the stream and the salt that keeps lengths
// apart in the hash space.
type charGrams struct {
	lo, hi int
	bits   uint8
	mask   [9]uint64
	salt   [9]uint64
}

func (sp *featureSpec) charGrams() charGrams {
	g := charGrams{lo: int(sp.charMin), hi: int(sp.charMax), bits: sp.bits}
	if g.lo == 0 {
		g.hi = -1
	}
	for n := g.lo; n <= g.hi; n++ {
		g.mask[n] = 1<<(8*uint64(n)) - 1
		g.salt[n] = uint64(n)<<58 ^ seedChar
	}
	return g
}

// put writes the character n-grams ending at offset p of the stream roll
// holds (rollLen bytes so far) from feature k on, and returns the next k.
func (g *charGrams) put(feats []feature, k, p int, roll uint64, rollLen int) int {
	for n := g.lo; n <= g.hi && n <= rollLen; n++ {
		feats[k] = feature{pos: uint32(p), bucket: mix(roll&g.mask[n]^g.salt[n], g.bits)}
		k++
	}
	return k
}

// walk is the state of extract's walk over a text.
type walk struct {
	g        charGrams
	bigrams  bool
	feats    []feature
	k        int     // features written
	toks     []token // words found
	roll     uint64  // the last 8 bytes of the character stream
	rollLen  int     // bytes pushed into roll
	lastSp   bool    // the previous stream byte was a space
	wordFrom int     // start of the current word, -1 outside a word
	wordHash uint64  // FNV-1a of the current word so far
	prevWord uint64  // hash of the previous word, for bigrams
	havePrev bool
	cjk      int // script of the last CJK letter (cjkScript)
	cjkEnd   int // offset just after it
}

// wordByte pushes byte c of a word, which ends at offset p.
func (w *walk) wordByte(c byte, i, p int) {
	if w.wordFrom < 0 {
		w.wordFrom, w.wordHash = i, fnvOffset
	}
	w.wordHash = (w.wordHash ^ uint64(c)) * fnvPrime
	w.roll = w.roll<<8 | uint64(c)
	w.rollLen++
	w.k = w.g.put(w.feats, w.k, p, w.roll, w.rollLen)
	w.lastSp = false
}

// separator ends the current word at offset i and pushes one space into
// the stream, ending at offset p, unless the last byte was one already.
func (w *walk) separator(i, p int) {
	w.endWord(i)
	if !w.lastSp {
		w.roll = w.roll<<8 | ' '
		w.rollLen++
		w.k = w.g.put(w.feats, w.k, p, w.roll, w.rollLen)
		w.lastSp = true
	}
}

// endWord closes the current word, if any, at offset i: its unigram, its
// bigram with the previous word, its token.
func (w *walk) endWord(i int) {
	if w.wordFrom < 0 {
		return
	}
	h, bits := w.wordHash, w.g.bits
	w.toks = append(w.toks, token{start: uint32(w.wordFrom), end: uint32(i), hash: h})
	w.feats[w.k] = feature{pos: uint32(i), bucket: mix(h^seedUnigram, bits)}
	w.k++
	if w.bigrams && w.havePrev {
		w.feats[w.k] = feature{pos: uint32(i), bucket: mix(w.prevWord*31+h^seedBigram, bits)}
		w.k++
	}
	w.prevWord, w.havePrev = w.wordHash, true
	w.wordFrom = -1
}

// ascii walks s from i over ASCII bytes, words and separators alike, up to
// the first multi-byte character or a possible placeholder, and returns
// where it stopped. It is the hottest loop of a scan. For the shipped
// spec (defaultSpec: 4-grams, 2^17 buckets, bigrams) it does inline, in
// local variables and with the spec's numbers as constants, what wordByte
// and separator do, and calls nothing: the compiler then keeps the loop's
// state in registers, where around a call, or with a few more variables,
// it stores and reloads them at every byte. Other specs (the training
// program's experiments) and the stream's first bytes, before a whole
// n-gram, take the general path.
func (w *walk) ascii(s string, i int) int {
	const n, bits = 4, 17
	fast := w.g.lo == n && w.g.hi == n && w.g.bits == bits && w.bigrams
	for ; i < len(s) && s[i] < utf8.RuneSelf && (!fast || w.rollLen < n); i++ {
		c := s[i]
		if maybePlaceholder(s, i) {
			return i
		}
		if wordByte[c] {
			w.wordByte(c, i, i+1)
		} else {
			w.separator(i, i+1)
		}
	}
	if i == len(s) || s[i] >= utf8.RuneSelf || maybePlaceholder(s, i) {
		return i
	}
	const salt = uint64(n)<<58 ^ seedChar
	feats, k := w.feats, w.k
	toks := w.toks[:cap(w.toks)]
	nt := len(w.toks)
	// The stream's last byte is in roll (at least n are): it is a space
	// exactly when lastSp would be true, one variable less to keep.
	roll := w.roll
	wordFrom, h := w.wordFrom, w.wordHash
	prevWord, havePrev := w.prevWord, w.havePrev
walk:
	for i < len(s) {
		c := s[i]
		if wordByte[c] {
			// A word: its bytes in a loop of their own. A placeholder
			// starts with "insert p": one 8-byte compare, made only at
			// an 'i'; the caller decides.
			if c == placeholder[0] && len(s)-i >= len(placeholder) && s[i:i+8] == placeholder[:8] {
				break
			}
			if wordFrom < 0 {
				wordFrom, h = i, fnvOffset
			}
			for {
				h = (h ^ uint64(c)) * fnvPrime
				roll = roll<<8 | uint64(c)
				i++
				feats[k] = feature{pos: uint32(i), bucket: mix(uint64(uint32(roll))^salt, bits)}
				k++
				if i == len(s) {
					break walk
				}
				// One load and one test a byte: wordStep folds the
				// word-byte test and the test for the placeholder's
				// first byte into one class.
				if c = s[i]; wordStep[c] != stepWord {
					if wordStep[c] != stepPlaceholder {
						break
					}
					if len(s)-i >= len(placeholder) && maybePlaceholder(s, i) {
						break walk
					}
				}
			}
			// On with the separator c that ended the word, in this
			// iteration: a pass through the loop's head costs more
			// than its body, as the compiler shuffles the state
			// between registers there.
		}
		if c >= utf8.RuneSelf {
			break
		}
		if wordFrom >= 0 {
			// endWord, inline.
			toks[nt] = token{start: uint32(wordFrom), end: uint32(i), hash: h}
			nt++
			feats[k] = feature{pos: uint32(i), bucket: mix(h^seedUnigram, bits)}
			k++
			if havePrev {
				feats[k] = feature{pos: uint32(i), bucket: mix(prevWord*31+h^seedBigram, bits)}
				k++
			}
			prevWord, havePrev = h, true
			wordFrom = -1
		}
		if byte(roll) != ' ' {
			roll = roll<<8 | ' '
			feats[k] = feature{pos: uint32(i + 1), bucket: mix(uint64(uint32(roll))^salt, bits)}
			k++
		}
		// The rest of a run of ASCII separators adds nothing: the
		// word is closed and the space pushed.
		for i++; i < len(s) && wordStep[s[i]] == stepSep; i++ {
		}
	}
	w.k, w.toks, w.roll, w.lastSp = k, toks[:nt], roll, byte(roll) == ' '
	w.wordFrom, w.wordHash, w.prevWord, w.havePrev = wordFrom, h, prevWord, havePrev
	return i
}

// letterOfTwo reports whether s[i:] starts with a letter, digit or mark
// written in two bytes (U+0080 to U+07FF): part of a word to extract, and
// none of the letters cjkScript classes.
func letterOfTwo(s string, i int) bool {
	return i+1 < len(s) && wordRunesOfTwo.Has(s[i], s[i+1])
}

// wordRunesOfTwo is the set of the letters, digits and marks below
// U+0800.
var wordRunesOfTwo = twobyte.NewSet(func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) })

// cjkScript classes the letters of Chinese and Japanese: 1 Han (hanzi,
// kanji), 2 hiragana, 3 katakana (with the prolonged sound mark "ー"); 0 any
// other. Neither language writes spaces between words. Japanese changes
// script at most word boundaries (a katakana loanword, a hiragana
// particle), so a change of script ends a word: "パスワードは何ですか" holds
// the word "パスワード". A Han character is a word of its own, as search
// engines index Chinese: "忽略以前的指示" is seven words, the word bigrams
// are the character pairs ("忽略", "指示") a rule or a weight can key on,
// where the whole run as one word would never recur.
func cjkScript(r rune) int {
	if r < firstCJK {
		// The letters of most other scripts (Latin, Cyrillic, Arabic,
		// Thai, those of India ...) come before the first of these: one
		// compare spares them three searches of the tables.
		return 0
	}
	switch {
	case r == '\u30fc' || unicode.Is(unicode.Katakana, r):
		return 3
	case unicode.Is(unicode.Hiragana, r):
		return 2
	case unicode.Is(unicode.Han, r):
		return 1
	}
	return 0
}

// firstCJK is the first letter cjkScript classes: a Han radical.
const firstCJK = '\u2e80'

// maybePlaceholder reports whether the placeholder may start at s[i]; the
// walk then stops for extract to check it in full.
func maybePlaceholder(s string, i int) bool {
	return s[i] == placeholder[0] && strings.HasPrefix(s[i:], placeholder[:8])
}

// extract finds the hashed features and the word tokens of the folded text
// s. Words are maximal runs of letters, digits and marks; everything else
// separates them and is a single space in the character stream the n-grams
// are taken from, so "Ignore   previous" and "ignore\nprevious" give the
// same features. Features come in order of their end offset. With weights
// w, the running sums are filled in too (featureSink.sum).
//
// The placeholder is recognised where the walk meets an 'i' that starts
// it, not by a search over the whole text; it is blanked out like a
// separator, and the words on either side of it are not a bigram.
func (sp *featureSpec) extract(s string, out *featureSink, weights []int8) {
	out.reset(sp, len(s))
	w := walk{g: sp.charGrams(), bigrams: sp.bigrams, feats: out.feats, toks: out.toks, lastSp: true, wordFrom: -1}
	out.wideFrom = len(s)
	for i := 0; ; {
		i = w.ascii(s, i)
		if i == len(s) {
			break
		}
		if strings.HasPrefix(s[i:], placeholder) {
			w.separator(i, i)
			i += len(placeholder)
			w.havePrev = false
			continue
		}
		if c := s[i]; c < utf8.RuneSelf {
			// Only the start of the placeholder: an ordinary word byte.
			w.wordByte(c, i, i+1)
			i++
			continue
		}
		if letterOfTwo(s, i) {
			// Most letters beyond ASCII (Latin, Greek, Cyrillic, Arabic
			// ...), which need neither the decoder nor the tables: no
			// separator, and no letter cjkScript classes.
			w.wordByte(s[i], i, i+1)
			w.wordByte(s[i+1], i+1, i+2)
			i += 2
			continue
		}
		if s[i] >= 0xe0 && i < out.wideFrom {
			out.wideFrom = i
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) {
			w.separator(i, i+size)
			i += size
			continue
		}
		c := cjkScript(r)
		if c != 0 {
			if w.wordFrom >= 0 && (c == 1 || w.cjkEnd == i && c != w.cjk) {
				w.endWord(i)
			}
			w.cjk, w.cjkEnd = c, i+size
		}
		for end := i + size; i < end; i++ {
			w.wordByte(s[i], i, i+1)
		}
		if c == 1 {
			w.endWord(i)
		}
	}
	w.endWord(len(s))
	out.toks = w.toks
	out.feats = w.feats[:w.k]
	if weights != nil {
		out.sum(weights, nil, zone{len(s), len(s)})
	}
}
