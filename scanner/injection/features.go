package injection

import (
	"strings"
	"unicode"
	"unicode/utf8"
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
// the model cannot learn to key on it (see the data README).
const placeholder = "insert prompt here"

// Seeds that keep the feature kinds apart in the hash space.
const (
	seedUnigram = 0x8f1bbcdc
	seedBigram  = 0xca62c1d6
	seedChar    = 0x5a827999
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
func mix(x uint64, bits uint8) uint32 {
	x ^= x >> 31
	return uint32((x * 0x9E3779B97F4A7C15) >> (64 - bits))
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

// featureSink receives the features extract finds, in order of their end
// offset, and when scoring the running sum of their weights. A window's sum
// is then a difference of two running sums, found by binary search on the
// offsets, so nothing is summed twice.
type featureSink struct {
	feats []feature
	// cum[k] is the sum of the weights of features 0..k-1 (scoring only).
	cum  []int32
	toks []token
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
	o.toks = o.toks[:0]
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
func (o *featureSink) sum(w []int8) {
	o.cum = grow(o.cum, len(o.feats)+1)
	cum := o.cum[1:]
	var sum int32
	for k, f := range o.feats {
		sum += int32(w[f.bucket])
		cum[k] = sum
	}
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

// stream is the state of the walk over the character stream that outlives
// a word.
type stream struct {
	roll    uint64 // the last 8 bytes of the character stream
	rollLen int    // bytes pushed into roll
}

// asciiRun pushes the ASCII word bytes from s[i] on into the stream and the
// word hash h, up to the first other byte or the placeholder, and returns
// where it stopped, the hash and the next feature index. It is the hottest
// loop of a scan and a function of its own so that its few variables stay
// in registers: the rest of the walk has too many for the compiler to keep
// them there.
func (g *charGrams) asciiRun(s string, i int, h uint64, st *stream, feats []feature, k int) (int, uint64, int) {
	roll, rollLen := st.roll, st.rollLen
	if g.lo == g.hi && g.lo > 0 {
		// One n-gram length (the shipped spec): no inner loop.
		n := g.lo
		mask, salt, bits := g.mask[n], g.salt[n], g.bits
		for ; i < len(s); i++ {
			c := s[i]
			if !wordByte[c] || c == placeholder[0] && strings.HasPrefix(s[i:], placeholder) {
				break
			}
			h = (h ^ uint64(c)) * fnvPrime
			roll = roll<<8 | uint64(c)
			rollLen++
			if rollLen >= n {
				feats[k] = feature{pos: uint32(i + 1), bucket: mix(roll&mask^salt, bits)}
				k++
			}
		}
	} else {
		for ; i < len(s); i++ {
			c := s[i]
			if !wordByte[c] || c == placeholder[0] && strings.HasPrefix(s[i:], placeholder) {
				break
			}
			h = (h ^ uint64(c)) * fnvPrime
			roll = roll<<8 | uint64(c)
			rollLen++
			k = g.put(feats, k, i+1, roll, rollLen)
		}
	}
	st.roll, st.rollLen = roll, rollLen
	return i, h, k
}

// extract finds the hashed features and the word tokens of the folded text
// s. Words are maximal runs of letters, digits and marks; everything else
// separates them and is a single space in the character stream the n-grams
// are taken from, so "Ignore   previous" and "ignore\nprevious" give the
// same features. Features come in order of their end offset. With weights
// w, the running sums are filled in too (featureSink.sum).
func (sp *featureSpec) extract(s string, out *featureSink, w []int8) {
	out.reset(sp, len(s))
	feats, toks := out.feats, out.toks
	g := sp.charGrams()
	bits := sp.bits
	// The placeholder is found as the walk meets an 'i' that starts it
	// (asciiRun stops there), not by a search over the whole text; maskAt
	// is where the current one starts, len(s) while there is none.
	maskAt := len(s)
	var (
		st       stream
		lastSp   = true // the previous stream byte was a space
		wordFrom = -1   // start of the current word, -1 outside a word
		wordHash uint64 // FNV-1a of the current word so far
		prevWord uint64 // hash of the previous word, for bigrams
		havePrev bool
		k        int // features written
	)
	for i := 0; ; {
		// What the byte at i is: part of a word (size bytes), a
		// separator, the placeholder or the end of the text.
		size := 1
		if i < maskAt {
			c := s[i]
			inWord := false
			if c < utf8.RuneSelf {
				if wordByte[c] {
					if c == placeholder[0] && strings.HasPrefix(s[i:], placeholder) {
						maskAt = i
						continue
					}
					if wordFrom < 0 {
						wordFrom, wordHash = i, fnvOffset
					}
					i, wordHash, k = g.asciiRun(s, i, wordHash, &st, feats, k)
					lastSp = false
					continue
				}
			} else {
				var r rune
				r, size = utf8.DecodeRuneInString(s[i:])
				inWord = unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
			}
			if inWord {
				if wordFrom < 0 {
					wordFrom, wordHash = i, fnvOffset
				}
				for end := i + size; i < end; {
					c := s[i]
					wordHash = (wordHash ^ uint64(c)) * fnvPrime
					st.roll = st.roll<<8 | uint64(c)
					st.rollLen++
					i++
					k = g.put(feats, k, i, st.roll, st.rollLen)
				}
				lastSp = false
				continue
			}
		}
		// A separator, the placeholder or the end: the word ends here.
		if wordFrom >= 0 {
			h := wordHash
			toks = append(toks, token{start: uint32(wordFrom), end: uint32(i), hash: h})
			feats[k] = feature{pos: uint32(i), bucket: mix(h^seedUnigram, bits)}
			k++
			if sp.bigrams && havePrev {
				feats[k] = feature{pos: uint32(i), bucket: mix(prevWord*31+h^seedBigram, bits)}
				k++
			}
			prevWord, havePrev = h, true
			wordFrom = -1
		}
		if i == len(s) {
			break
		}
		masked := i >= maskAt
		// The separator is one space in the character stream; the
		// placeholder is blanked out the same way at its start.
		if !lastSp {
			p := i + size
			if masked {
				p = i
			}
			st.roll = st.roll<<8 | ' '
			st.rollLen++
			k = g.put(feats, k, p, st.roll, st.rollLen)
			lastSp = true
		}
		if masked {
			i = maskAt + len(placeholder)
			havePrev = false
			maskAt = len(s)
			continue
		}
		i += size
	}
	out.toks = toks
	out.feats = feats[:k]
	if w != nil {
		out.sum(w)
	}
}
