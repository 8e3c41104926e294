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

// featureSink receives the features extract finds: for each, its end
// offset, and either its bucket (training, w nil) or, when scoring, the
// running sum of the weights. A window's sum is then a difference of two
// running sums, found by binary search on the offsets: nothing is summed
// twice and the buckets are never stored.
type featureSink struct {
	// w are the model's weights; nil keeps the buckets instead.
	w []int8
	// pos[k] is the end offset of feature k in the folded view.
	pos []uint32
	// bucket[k] is feature k's bucket (training only).
	bucket []uint32
	// cum[k] is the sum of the weights of features 0..k-1 (scoring only).
	cum  []int32
	toks []token
}

// reset prepares the sink for a text of n bytes, keeping its buffers.
// Features are written by index, so every buffer is sized for the most a
// text of n bytes can give: each byte pushes at most one character (a
// letter or the space a separator becomes) and so (charMax-charMin+1)
// n-grams; words are at least one byte apart, so unigrams and bigrams add
// at most n+1.
func (o *featureSink) reset(w []int8, sp *featureSpec, n int) {
	o.w = w
	limit := n + 1
	if sp.charMin > 0 {
		limit += n * int(sp.charMax-sp.charMin+1)
	}
	o.pos = grow(o.pos, limit)
	if w == nil {
		o.bucket = grow(o.bucket, limit)
	} else {
		o.cum = grow(o.cum, limit+1)
	}
	o.toks = o.toks[:0]
}

func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// count is the number of features found (after trim).
func (o *featureSink) count() int { return len(o.pos) }

// trim cuts the buffers to the k features found.
func (o *featureSink) trim(k int) {
	o.pos = o.pos[:k]
	if o.w == nil {
		o.bucket = o.bucket[:k]
	} else {
		o.cum = o.cum[:k+1]
	}
}

// feature returns feature k (training only).
func (o *featureSink) feature(k int) feature { return feature{pos: o.pos[k], bucket: o.bucket[k]} }

// put records feature k at end offset p with bucket b and returns k+1 and
// the new running sum. A function of values rather than a method, so that
// once inlined the walk keeps its state in registers.
func put(o *featureSink, k int, sum int32, p int, b uint32) (int, int32) {
	o.pos[k] = uint32(p)
	if o.w != nil {
		sum += int32(o.w[b])
		o.cum[k+1] = sum
	} else {
		o.bucket[k] = b
	}
	return k + 1, sum
}

// extract finds the hashed features and the word tokens of the folded text
// s. Words are maximal runs of letters, digits and marks; everything else
// separates them and is a single space in the character stream the n-grams
// are taken from, so "Ignore   previous" and "ignore\nprevious" give the
// same features. Features come in order of their end offset.
//
// This is the hottest loop of a scan. Its state lives in local variables,
// not in closures (which would keep it in memory), and features are
// written by index into buffers reset sized.
func (sp *featureSpec) extract(s string, out *featureSink, w []int8) {
	out.reset(w, sp, len(s))
	maskAt := strings.Index(s, placeholder)
	var (
		roll     uint64 // the last 8 bytes of the character stream
		rollLen  int    // bytes pushed into roll
		lastSp   = true // the previous stream byte was a space
		wordFrom = -1   // start of the current word, -1 outside a word
		wordHash uint64 // FNV-1a of the current word so far
		prevWord uint64 // hash of the previous word, for bigrams
		havePrev bool
		k        int   // features written
		sum      int32 // running sum of their weights
		toks     = out.toks
	)
	lo, hi := int(sp.charMin), int(sp.charMax)
	if lo == 0 {
		hi = -1
	}
	bits := sp.bits
	for i := 0; i <= len(s); {
		// What the byte at i is: part of a word (size bytes), a
		// separator, or the end of the text.
		size, inWord, end := 1, false, i == len(s)
		masked := !end && maskAt >= 0 && i >= maskAt
		if !end && !masked {
			if c := s[i]; c < utf8.RuneSelf {
				inWord = wordByte[c]
			} else {
				var r rune
				r, size = utf8.DecodeRuneInString(s[i:])
				inWord = unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
			}
		}
		if inWord {
			if wordFrom < 0 {
				wordFrom, wordHash = i, fnvOffset
			}
			for j := i; j < i+size; j++ {
				c := s[j]
				wordHash = (wordHash ^ uint64(c)) * fnvPrime
				roll = roll<<8 | uint64(c)
				rollLen++
				for n := lo; n <= hi && n <= rollLen; n++ {
					k, sum = put(out, k, sum, j+1, charBucket(roll, n, bits))
				}
			}
			lastSp = false
			i += size
			continue
		}
		// A separator, the placeholder or the end: the word ends here.
		if wordFrom >= 0 {
			h := wordHash
			toks = append(toks, token{start: uint32(wordFrom), end: uint32(i), hash: h})
			k, sum = put(out, k, sum, i, mix(h^seedUnigram, bits))
			if sp.bigrams && havePrev {
				k, sum = put(out, k, sum, i, mix(prevWord*31+h^seedBigram, bits))
			}
			prevWord, havePrev = h, true
			wordFrom = -1
		}
		if end {
			break
		}
		// The separator is one space in the character stream; the
		// placeholder is blanked out the same way at its start.
		if !lastSp {
			p := i + size
			if masked {
				p = i
			}
			roll = roll<<8 | ' '
			rollLen++
			for n := lo; n <= hi && n <= rollLen; n++ {
				k, sum = put(out, k, sum, p, charBucket(roll, n, bits))
			}
			lastSp = true
		}
		if masked {
			i = maskAt + len(placeholder)
			havePrev = false
			if j := strings.Index(s[i:], placeholder); j >= 0 {
				maskAt = i + j
			} else {
				maskAt = -1
			}
			continue
		}
		i += size
	}
	out.toks = toks
	out.trim(k)
}

// charBucket is the bucket of the character n-gram of length n ending the
// stream roll holds.
func charBucket(roll uint64, n int, bits uint8) uint32 {
	return mix(roll&(1<<(8*uint64(n))-1)^uint64(n)<<58^seedChar, bits)
}
