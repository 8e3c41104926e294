package scanner

import (
	"sync"
	"unicode/utf8"

	"github.com/promptwall/promptwall/scanner/internal/swar"
)

// View is a rewritten form of an original text with the map back to it, so a
// detector can match on the rewritten form and still report offsets into the
// original.
type View struct {
	// S is the rewritten text.
	S string
	// The map from view offsets to original offsets, in one of three
	// forms. origin, when set, is dense: origin[i] is the byte offset in
	// the original of the byte that produced S[i], and origin[len(S)] is
	// the original's length. Otherwise shifts, when set, say the map is
	// the identity plus a shift that changes at a few places (see shift).
	// Neither means S is the original itself (the identity, no
	// allocation). Offsets are int32 to halve the dense map: views are
	// built only for texts under maxViewLen.
	origin []int32
	shifts []shift
}

// shift says that from view byte at on (up to the next shift), view byte k
// comes from original byte k+by. Shifts are sorted by at, and by only
// grows: bytes are dropped, never added. The last shift also places
// len(S), which maps to the original's length.
type shift struct{ at, by int32 }

// maxViewLen is the longest text the normalised views are built for; a
// longer one is screened as it is (int32 offsets). Request bodies are
// capped far below this.
const maxViewLen = 1<<31 - 1

// at returns the original offset of view offset k, 0 <= k <= len(S).
func (v *View) at(k int) int {
	if v.origin != nil {
		return int(v.origin[k])
	}
	if len(v.shifts) == 0 {
		return k
	}
	// The last shift at or before k.
	lo, hi := 0, len(v.shifts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if int(v.shifts[m].at) <= k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return k
	}
	return k + int(v.shifts[lo-1].by)
}

// Span maps a half-open byte range of the view back to the original text.
// Out-of-range arguments are clamped to the view. A range that ends inside
// the output of one original character (half of the "fi" NFKC makes of
// 'ﬁ') is widened to that character's end, so the result always covers
// whole original characters.
func (v *View) Span(start, end int) (int, int) {
	start = max(0, min(start, len(v.S)))
	end = max(start, min(end, len(v.S)))
	if v.origin == nil && v.shifts == nil {
		return start, end
	}
	if start == end {
		o := v.at(start)
		return o, o
	}
	// The end of a range is the end of the original bytes that produced
	// the view's last byte: the origin of the first later view byte that
	// came from a later original character (the map is non-decreasing
	// and maps len(S) to the original's length).
	last := v.at(end - 1)
	o := v.at(end)
	for e := end; o <= last && e < len(v.S); {
		e++
		o = v.at(e)
	}
	if o <= last {
		o = last + 1
	}
	return v.at(start), o
}

// Segment is a decoded payload found inside a text (base64, hex, URL or
// Caesar-shifted content), to be screened again.
type Segment struct {
	// Encoding names the decoder ("base64", "hex", "url", "rot13", ...).
	Encoding string
	// Start and End locate the encoded bytes in the original text.
	Start, End int
	// Text is the decoded payload with its own views; matches inside it are
	// reported at Start..End of the enclosing text.
	Text *Text
}

// Text is one original string with the normalised views detectors match on.
// Views are computed lazily, at most once, and the Text is safe for
// concurrent use once created.
type Text struct {
	// Original is the text as received.
	Original string

	depth int

	canonOnce sync.Once
	canonical View
	invisible []Match

	foldOnce sync.Once
	folded   View
	// foldBufs holds folded's buffers, for recycle, and foldBox is the
	// pool's box they came in (nil if the pool was empty), kept to carry
	// them back without an allocation.
	foldBufs foldScratch
	foldBox  *foldScratch

	decodeOnce sync.Once
	decoded    []Segment
}

// NewText wraps s for screening.
func NewText(s string) *Text { return &Text{Original: s} }

// NewFoldedText wraps s, a text already in the form Folded gives, for the
// phrase detectors that judge a rewriting of a folded text (a gloss, a
// translation): its Canonical and Folded views are s itself, so it is not
// normalised a second time, which would cost as much as the judging.
func NewFoldedText(s string) *Text {
	t := &Text{Original: s}
	t.canonOnce.Do(func() { t.canonical = View{S: s} })
	t.foldOnce.Do(func() { t.folded = View{S: s} })
	return t
}

// Canonical is the text after Unicode NFKC, confusable folding and removal of
// invisible characters (zero-width, bidi controls, tag characters), with case
// preserved. Secret, PII and regex detectors match on it.
func (t *Text) Canonical() *View {
	t.canonOnce.Do(func() { t.canonical, t.invisible = canonicalize(t.Original) })
	return &t.canonical
}

// Invisible reports the invisible characters Canonical removed, as spans of
// the original text with Kind "INVISIBLE_CHARACTER" or "TAG_CHARACTER".
func (t *Text) Invisible() []Match {
	t.Canonical()
	return t.invisible
}

// Folded is Canonical lowercased, with leetspeak digits and symbols folded
// to letters and letter-by-letter spacing ("i g n o r e") collapsed.
// Phrase detectors (injection, banned substrings) match on it.
func (t *Text) Folded() *View {
	t.foldOnce.Do(func() {
		if box, _ := foldPool.Get().(*foldScratch); box != nil {
			t.foldBufs, t.foldBox = *box, box
			*box = foldScratch{}
		}
		t.folded = fold(t.Canonical(), t.Original, &t.foldBufs)
	})
	return &t.folded
}

// recycle hands the Folded view's buffers to the next Text that folds, and
// empties the view. The caller guarantees that nothing refers to the view
// or a string or slice of it any more and that no other goroutine uses t:
// the buffers will be overwritten. A Text built by NewText is never
// recycled, so its views stay valid for as long as its owner keeps them.
func (t *Text) recycle() {
	if t.foldBufs.buf == nil {
		return // never folded
	}
	box := t.foldBox
	if box == nil {
		box = new(foldScratch)
	}
	*box = t.foldBufs
	t.folded, t.foldBufs, t.foldBox = View{}, foldScratch{}, nil
	if box.pooled() {
		foldPool.Put(box)
	}
}

// Decoded returns the encoded payloads found in the text, decoded, each to be
// screened like the text itself. Nesting depth and sizes are bounded.
func (t *Text) Decoded() []Segment {
	t.decodeOnce.Do(func() { t.decoded = decodePayloads(t.Original, t.depth) })
	return t.decoded
}

// isASCII reports whether s has no multi-byte runes. It tests sixteen
// bytes at a time: this is the whole cost of the Canonical view of ASCII
// text.
func isASCII(s string) bool {
	for ; len(s) >= 16; s = s[16:] {
		if (swar.Load(s[:8])|swar.Load(s[8:16]))&0x8080808080808080 != 0 {
			return false
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
