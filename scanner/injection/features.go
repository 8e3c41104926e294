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

// fnv64 hashes a word (FNV-1a); rules use the same hash to find triggers.
func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
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

// wordByte reports whether an ASCII byte belongs to a word.
var wordByte = func() (t [128]bool) {
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

// extract appends the hashed features and the word tokens of the folded text
// s to feats and toks. Words are maximal runs of letters, digits and marks;
// everything else separates them and is a single space in the character
// stream the n-grams are taken from, so "Ignore   previous" and
// "ignore\nprevious" give the same features.
func (sp *featureSpec) extract(s string, feats []feature, toks []token) ([]feature, []token) {
	maskAt := strings.Index(s, placeholder)
	var (
		roll     uint64 // the last 8 bytes of the character stream
		rollLen  int    // bytes pushed into roll
		lastSp   = true // the previous stream byte was a space
		wordFrom = -1   // start of the current word, -1 outside a word
		prevWord uint64 // hash of the previous word, for bigrams
		havePrev bool
	)
	// The character n-grams of the byte just pushed: written out rather
	// than in a helper closure, as this is the hottest loop of a scan.
	var masks [9]uint64
	for n := 1; n <= 8; n++ {
		masks[n] = 1<<(8*uint64(n)) - 1
	}
	lo, hi := int(sp.charMin), int(sp.charMax)
	if lo == 0 {
		hi = -1
	}
	pushChar := func(c byte, pos int) {
		roll = roll<<8 | uint64(c)
		rollLen++
		for n := lo; n <= hi && n <= rollLen; n++ {
			key := roll&masks[n] ^ uint64(n)<<58 ^ seedChar
			feats = append(feats, feature{pos: uint32(pos), bucket: mix(key, sp.bits)})
		}
	}
	endWord := func(end int) {
		if wordFrom < 0 {
			return
		}
		w := s[wordFrom:end]
		h := fnv64(w)
		toks = append(toks, token{start: uint32(wordFrom), end: uint32(end), hash: h})
		feats = append(feats, feature{pos: uint32(end), bucket: mix(h^seedUnigram, sp.bits)})
		if sp.bigrams && havePrev {
			feats = append(feats, feature{pos: uint32(end), bucket: mix(prevWord*31+h^seedBigram, sp.bits)})
		}
		prevWord, havePrev = h, true
		wordFrom = -1
	}
	for i := 0; i < len(s); {
		if maskAt >= 0 && i >= maskAt {
			// Blank out the placeholder: it ends the word before it and
			// leaves a space in the character stream.
			endWord(i)
			if !lastSp {
				pushChar(' ', i)
				lastSp = true
			}
			i = maskAt + len(placeholder)
			havePrev = false
			if j := strings.Index(s[i:], placeholder); j >= 0 {
				maskAt = i + j
			} else {
				maskAt = -1
			}
			continue
		}
		c := s[i]
		size := 1
		inWord := false
		if c < utf8.RuneSelf {
			inWord = wordByte[c]
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			inWord = unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
		}
		if inWord {
			if wordFrom < 0 {
				wordFrom = i
			}
			for k := 0; k < size; k++ {
				pushChar(s[i+k], i+k+1)
			}
			lastSp = false
		} else {
			endWord(i)
			if !lastSp {
				pushChar(' ', i+size)
				lastSp = true
			}
		}
		i += size
	}
	endWord(len(s))
	return feats, toks
}
