package scanner

import (
	"encoding/binary"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/unicode/norm"

	"github.com/promptwall/promptwall/scanner/internal/swar"
)

//go:generate go run ../internal/gen/confusables -out confusables_table.go

// Kinds of the matches Text.Invisible reports.
const (
	// KindTagCharacter marks Unicode tag characters (U+E0000-U+E007F),
	// which can smuggle ASCII text past a human reader.
	KindTagCharacter = "TAG_CHARACTER"
	// KindInvisibleCharacter marks every other removed character:
	// zero-width, bidi controls, variation selectors, soft hyphens and
	// other format characters.
	KindInvisibleCharacter = "INVISIBLE_CHARACTER"
)

// InvisibleClass says what kind of invisible character a rune is.
type InvisibleClass uint8

// Invisible classes, as returned by ClassifyInvisible.
const (
	// Visible is every rune the Canonical view keeps.
	Visible InvisibleClass = iota
	// TagCharacter is U+E0000-U+E007F.
	TagCharacter
	// ZeroWidth is U+200B-U+200D, U+2060 and U+FEFF.
	ZeroWidth
	// BidiControl is U+061C, U+200E, U+200F, U+202A-U+202E and
	// U+2066-U+2069.
	BidiControl
	// VariationSelector is U+FE00-U+FE0F, U+E0100-U+E01EF and the
	// Mongolian free variation selectors.
	VariationSelector
	// FormatCharacter is the rest: soft hyphen, Hangul fillers, the
	// combining grapheme joiner and other default-ignorable format
	// characters (category Cf).
	FormatCharacter
)

// Kind returns the Match kind the class is reported with, or "" for Visible.
func (c InvisibleClass) Kind() string {
	switch c {
	case Visible:
		return ""
	case TagCharacter:
		return KindTagCharacter
	}
	return KindInvisibleCharacter
}

// String names the class in operator-facing reasons.
func (c InvisibleClass) String() string {
	switch c {
	case TagCharacter:
		return "tag character"
	case ZeroWidth:
		return "zero-width character"
	case BidiControl:
		return "bidi control"
	case VariationSelector:
		return "variation selector"
	case FormatCharacter:
		return "format character"
	}
	return "visible character"
}

// ClassifyInvisible says whether the Canonical view removes r, and why.
func ClassifyInvisible(r rune) InvisibleClass {
	if r < 0xAD {
		return Visible // ASCII and Latin-1 up to the soft hyphen: the hot path
	}
	switch {
	case r >= 0xE0000 && r <= 0xE007F:
		return TagCharacter
	case r >= 0x200B && r <= 0x200D, r == 0x2060, r == 0xFEFF:
		return ZeroWidth
	case r == 0x061C, r == 0x200E, r == 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return BidiControl
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF, r >= 0x180B && r <= 0x180D, r == 0x180F:
		return VariationSelector
	case r == 0xAD, r == 0x034F, r == 0x115F, r == 0x1160, r == 0x17B4, r == 0x17B5, r == 0x3164, r == 0xFFA0:
		// Default-ignorable code points outside Cf: soft hyphen (Cf too),
		// combining grapheme joiner, Hangul and Khmer fillers.
		return FormatCharacter
	case r >= 0x0600 && r <= 0x0605, r == 0x06DD, r == 0x070F, r == 0x0890, r == 0x0891, r == 0x08E2, r == 0x110BD, r == 0x110CD:
		// Prepended concatenation marks are Cf but visible: they carry
		// the number they span (Arabic end of ayah).
		return Visible
	case unicode.Is(unicode.Cf, r):
		return FormatCharacter
	}
	return Visible
}

// IsBidiControl reports whether r is a bidirectional formatting character.
func IsBidiControl(r rune) bool { return ClassifyInvisible(r) == BidiControl }

// confusable is one row of the generated table: a code point and the ASCII
// (or accented ASCII) text it imitates.
type confusable struct {
	from rune
	to   string
}

// confusableBMP has a bit set for every BMP code point in the table, so the
// common non-confusable rune (accented Latin, CJK, emoji) is rejected with
// one load instead of a binary search.
var confusableBMP = func() *[0x10000 / 64]uint64 {
	var b [0x10000 / 64]uint64
	for _, c := range confusables {
		if c.from < 0x10000 {
			b[c.from>>6] |= 1 << (c.from & 63)
		}
	}
	return &b
}()

// foldConfusable returns the prototype of r, if r is a confusable.
func foldConfusable(r rune) (string, bool) {
	if r < 0x10000 && confusableBMP[r>>6]&(1<<(r&63)) == 0 {
		return "", false
	}
	lo, hi := 0, len(confusables)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if confusables[m].from < r {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(confusables) && confusables[lo].from == r {
		return confusables[lo].to, true
	}
	return "", false
}

// canonicalize computes the Canonical view: NFKC, confusables folded to
// their Latin prototype, invisible characters removed and reported.
//
// ASCII text is already all three, so it is returned as the identity view
// without allocating. Otherwise ASCII runs are copied through and only the
// non-ASCII stretches (with the ASCII character before each, which a
// combining mark may attach to) go through the normaliser: every ASCII
// character is a normalisation boundary, so cutting there cannot change the
// result.
func canonicalize(s string) (View, []Match) {
	if len(s) > maxViewLen || isASCII(s) || alreadyCanonical(s) {
		return View{S: s}, nil
	}
	return buildCanonical(s)
}

// alreadyCanonical reports whether the Canonical view of s is s itself, as
// buildCanonical would find after copying it: every stretch buildCanonical
// normalises (the non-ASCII runs and the ASCII character before each) is
// valid UTF-8 already in NFKC, with no invisible character and no
// look-alike to fold. Most text in scripts without Latin look-alikes is, and
// this check reads it without writing a copy and a map of it.
func alreadyCanonical(s string) bool {
	plain := plainTwoByteLetters()
	for i := 0; i < len(s); {
		j := asciiEnd(s, i)
		if j == len(s) {
			return true
		}
		k := j + 1
		for k < len(s) && s[k] >= utf8.RuneSelf {
			k++
		}
		// Accented Latin ("migración", "Übersicht") is a run of one
		// letter of two bytes between ASCII: the set answers for it
		// without the normaliser's tables.
		if !allPlainTwoByte(s[j:k], plain) && !canonicalRun(s[max(j-1, i):k]) {
			return false
		}
		i = k
	}
	return true
}

// canonicalRun reports whether sub, a run of non-ASCII characters and the
// ASCII character before it if any, is its own Canonical view.
func canonicalRun(sub string) bool {
	if norm.NFKC.QuickSpanString(sub) != len(sub) {
		return false
	}
	for off := 0; off < len(sub); {
		r, n := utf8.DecodeRuneInString(sub[off:])
		if r == utf8.RuneError && n == 1 || ClassifyInvisible(r) != Visible {
			return false
		}
		if _, ok := foldConfusable(r); ok && r >= utf8.RuneSelf {
			return false
		}
		off += n
	}
	return true
}

// asciiEnd returns the offset of the first byte of s from i on that is
// not ASCII, len(s) if none: eight bytes at a time, as most of a text in a
// Latin script is ASCII.
func asciiEnd(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		if swar.Load(s[i:i+8])&swar.Lanes80 != 0 {
			break
		}
	}
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	return i
}

// allPlainTwoByte reports whether run is made of characters of two bytes
// that plain, a set by code point (plainTwoByteLetters), holds.
func allPlainTwoByte(run string, plain *[0x800 / 64]uint64) bool {
	if len(run)%2 != 0 {
		return false
	}
	for p := 0; p+1 < len(run); p += 2 {
		c0, c1 := run[p], run[p+1]
		if c0 < 0xc2 || c0 > 0xdf || c1&0xc0 != 0x80 {
			return false
		}
		r := uint32(c0&0x1f)<<6 | uint32(c1&0x3f)
		if plain[r/64]&(1<<(r%64)) == 0 {
			return false
		}
	}
	return true
}

// plainTwoByteLetters is the set of the characters of two bytes (U+0080
// to U+07FF) that are their own Canonical view wherever they stand among
// each other and ASCII: visible, no look-alike to fold, and in NFKC with
// nothing to compose with what comes before (quick check Yes), starting
// with no combining mark and of no combining class itself (so nothing to
// reorder): the normaliser's quick check then passes any run of them,
// after any ASCII character (TestPlainTwoByteLetters). Built on the first
// text that needs it.
var plainTwoByteLetters = sync.OnceValue(func() *[0x800 / 64]uint64 {
	var set [0x800 / 64]uint64
	for r := rune(utf8.RuneSelf); r < 0x800; r++ {
		s := string(r)
		p := norm.NFKC.PropertiesString(s)
		if norm.NFKC.QuickSpanString(s) != len(s) || p.CCC() != 0 || p.LeadCCC() != 0 {
			continue
		}
		if _, ok := foldConfusable(r); ok || ClassifyInvisible(r) != Visible {
			continue
		}
		set[r/64] |= 1 << (r % 64)
	}
	return &set
})

// buildCanonical computes the Canonical view of s (non-ASCII) by copying
// it through the normaliser.
func buildCanonical(s string) (View, []Match) {
	grow := len(s) + len(s)/8 + 8
	sc, _ := canonPool.Get().(*canonScratch)
	if sc == nil {
		sc = new(canonScratch)
	}
	b := canonBuilder{s: s, buf: reuse(sc.buf, grow), origin: reuse(sc.origin, grow+1)}
	defer func() {
		// The buffers go back to the pool whatever was returned: a view
		// that differs from s got copies of them.
		if cap(b.buf)+cap(b.origin)*4 <= maxPooledFold {
			sc.buf, sc.origin = b.buf, b.origin
			canonPool.Put(sc)
		}
	}()
	i := 0
	for i < len(s) {
		j := i
		for j < len(s) && s[j] < utf8.RuneSelf {
			j++
		}
		if j == len(s) {
			b.ascii(i, j)
			break
		}
		a := j
		if a > i {
			a--
		}
		b.ascii(i, a)
		k := j + 1
		for k < len(s) && s[k] >= utf8.RuneSelf {
			k++
		}
		b.chunk(a, k)
		i = k
	}
	if string(b.buf) == s {
		// Already canonical, as most text in other scripts than Latin's
		// confusables is: the identity view, as for ASCII, costs no copy
		// and keeps the Folded view's map sparse.
		return View{S: s}, b.inv
	}
	b.origin = append(b.origin, int32(len(s)))
	return View{S: string(b.buf), origin: slices.Clone(b.origin)}, b.inv
}

// canonScratch holds the buffers a Canonical view is built in; a view
// keeps copies of them only where it differs from its text.
type canonScratch struct {
	buf    []byte
	origin []int32
}

var canonPool sync.Pool

type canonBuilder struct {
	s      string
	buf    []byte
	origin []int32
	inv    []Match
	// lastClass is the class of the last reported match, so adjacent
	// invisibles of one class are reported as one span.
	lastClass InvisibleClass
	// prev is the last visible rune (after NFKC, before confusable
	// folding): joiners and variation selectors are judged by it.
	prev rune
	// vsRun counts the variation selectors since prev.
	vsRun int
	it    *norm.Iter
	// legitTagEnd is the end of a tag sequence that is part of an emoji
	// flag (England, Scotland, Wales), which is not reported.
	legitTagEnd int
}

func (b *canonBuilder) ascii(i, j int) {
	if i >= j {
		return
	}
	b.buf = append(b.buf, b.s[i:j]...)
	for k := i; k < j; k++ {
		b.origin = append(b.origin, int32(k))
	}
	b.prev = rune(b.s[j-1])
	b.vsRun = 0
}

// chunk normalises s[a:k], a stretch that starts and ends on a boundary.
func (b *canonBuilder) chunk(a, k int) {
	sub := b.s[a:k]
	if norm.NFKC.QuickSpanString(sub) == len(sub) { // already NFKC (IsNormalString allocates)
		for off := 0; off < len(sub); {
			r, n := utf8.DecodeRuneInString(sub[off:])
			b.rune(r, a+off, a+off+n, true)
			off += n
		}
		return
	}
	// Each iteration step turns one input segment (a starter and what
	// combines with it) into its normal form; the output's bytes map to
	// the segment's start, or byte for byte where NFKC left it alone.
	if b.it == nil {
		b.it = new(norm.Iter) // large: allocated once per text, not per chunk
	}
	it := b.it
	it.InitString(norm.NFKC, sub)
	for !it.Done() {
		p := it.Pos()
		out := it.Next()
		q := it.Pos()
		exact := string(out) == sub[p:q]
		for off := 0; off < len(out); {
			r, n := utf8.DecodeRune(out[off:])
			if exact {
				b.rune(r, a+p+off, a+p+off+n, true) // invalid bytes pass through
			} else {
				b.rune(r, a+p, a+q, false)
			}
			off += n
		}
	}
}

// rune emits one normalised rune that came from s[start:end]. exact says
// the rune's bytes are the original's, so they map byte for byte; an
// invalid byte becomes U+FFFD, whose three bytes all map to it.
func (b *canonBuilder) rune(r rune, start, end int, exact bool) {
	exact = exact && utf8.RuneLen(r) == end-start
	if c := ClassifyInvisible(r); c != Visible {
		b.invisible(r, c, start, end)
		return
	}
	b.prev = r
	b.vsRun = 0
	if r >= utf8.RuneSelf {
		if to, ok := foldConfusable(r); ok {
			b.buf = append(b.buf, to...)
			for range len(to) {
				b.origin = append(b.origin, int32(start))
			}
			return
		}
	}
	n := len(b.buf)
	b.buf = utf8.AppendRune(b.buf, r)
	for k := n; k < len(b.buf); k++ {
		if exact {
			b.origin = append(b.origin, int32(start+k-n))
		} else {
			b.origin = append(b.origin, int32(start))
		}
	}
}

// invisible drops r from the view and reports it unless it is doing its
// legitimate job: a joiner inside an emoji sequence or between letters of a
// script that needs it, one variation selector choosing a glyph, the tags
// of a subdivision flag, a byte-order mark at the start.
func (b *canonBuilder) invisible(r rune, c InvisibleClass, start, end int) {
	legit := b.legitimate(r, c, start, end)
	if c == VariationSelector {
		b.vsRun++
	}
	if legit {
		return
	}
	if n := len(b.inv); n > 0 && b.inv[n-1].End == start && b.lastClass == c {
		b.inv[n-1].End = end
		return
	}
	b.inv = append(b.inv, Match{Start: start, End: end, Kind: c.Kind(), Score: 1})
	b.lastClass = c
}

func (b *canonBuilder) legitimate(r rune, c InvisibleClass, start, end int) bool {
	next, _ := utf8.DecodeRuneInString(b.s[end:])
	switch c {
	case ZeroWidth:
		switch r {
		case 0xFEFF:
			return start == 0
		case 0x200D:
			if isEmojiish(b.prev) && isEmojiish(next) {
				return true
			}
			return complexLetter(b.prev) && complexLetter(next)
		case 0x200B, 0x200C:
			return complexLetter(b.prev) && complexLetter(next)
		}
	case VariationSelector:
		// One selector after a base; a run of them is the "emoji
		// smuggling" encoding of bytes and is reported whole.
		if b.vsRun > 0 || ClassifyInvisible(next) == VariationSelector {
			return false
		}
		switch {
		case r == 0xFE0E || r == 0xFE0F:
			return isEmojiish(b.prev) || next == 0x20E3
		case r >= 0x180B && r <= 0x180F:
			return unicode.Is(unicode.Mongolian, b.prev)
		default: // ideographic and standardized variation sequences
			return unicode.Is(unicode.Han, b.prev) || unicode.Is(unicode.Sm, b.prev)
		}
	case TagCharacter:
		if start < b.legitTagEnd {
			return true
		}
		if b.prev == 0x1F3F4 { // black flag: tag spec then cancel tag
			e, n := start, 0
			for e < len(b.s) {
				t, size := utf8.DecodeRuneInString(b.s[e:])
				if t < 0xE0000 || t > 0xE007F {
					break
				}
				e += size
				n++
				if t == 0xE007F {
					break
				}
			}
			last, _ := utf8.DecodeLastRuneInString(b.s[:e])
			if n >= 3 && n <= 8 && last == 0xE007F {
				b.legitTagEnd = e
				return true
			}
		}
	}
	return false
}

// isEmojiish approximates Extended_Pictographic and the emoji modifiers,
// which the standard library has no table for.
func isEmojiish(r rune) bool {
	switch {
	case r >= 0x1F000 && r <= 0x1FAFF:
		return true
	case r < 0xA9:
		return false
	case r == 0x203C, r == 0x2049:
		return true
	}
	return unicode.In(r, unicode.So, unicode.Sk)
}

// complexLetter reports whether r is a letter or mark of a script in which
// zero-width joiners and non-joiners are part of normal spelling (Arabic,
// Persian, the Indic scripts, Thai, ...), as opposed to Latin, Greek and
// Cyrillic, where they only split words.
func complexLetter(r rune) bool {
	if r < 0x0590 || !(unicode.IsLetter(r) || unicode.IsMark(r)) {
		return false
	}
	return !unicode.In(r, unicode.Latin, unicode.Greek, unicode.Cyrillic)
}

// fold computes the Folded view from the canonical one: lowercase, letters
// spaced out one by one joined again, whitespace runs collapsed to one
// space, then leetspeak folded in place (see leet.go). Folding leetspeak
// last lets "1 g n 0 r 3" be joined first and read as one word.
//
// Cost. This runs on every screened text, so the common case is kept to a
// copy: an ASCII word is lowercased in a tight loop, a word start is
// tested for letter spacing only when the next byte could continue a
// chain, and leetspeak is looked for only around digits and symbols.
//
// The map back to the original is sparse when Canonical is the identity
// (ASCII text): every folded byte then comes from one original byte in
// order, so the map is the identity with a shift that grows where bytes
// were dropped (a whitespace run, a chain's separators). Only the shifts
// are recorded, a handful per text, instead of four bytes per byte.
// Otherwise the dense map is composed with Canonical's.
//
// fold builds the view in sc's buffers when they are large enough and
// records there the ones it used, so that the Text's owner can hand them to
// another Text once nothing refers to the view (see Text.recycle).
func fold(c *View, original string, sc *foldScratch) (v View) {
	src := c.S
	if len(src) > maxViewLen {
		return *c
	}
	f := folder{src: src, corig: c.origin, sparse: c.origin == nil, spareOrigin: sc.origin}
	if f.sparse {
		// ASCII: one byte out per byte in at most.
		f.buf = reuse(sc.buf, len(src))
		if cap(sc.shifts) > 0 {
			f.shifts = sc.shifts[:0]
		}
	} else {
		// Lowercasing can lengthen a rune (U+023A to U+2C65, two bytes to
		// three); a little slack avoids a regrowth for the common case.
		n := len(src) + len(src)/16 + utf8.UTFMax
		f.buf = reuse(sc.buf, n)
		f.origin = reuse(sc.origin, n+1)
	}
	f.run()
	foldLeet(f.buf)
	n := len(f.buf)
	if n > 0 {
		// f.buf is not written again while the view lives (it goes back
		// to the pool only with the view, see Text.recycle): the view can
		// own it as a string without a copy.
		v.S = unsafe.String(unsafe.SliceData(f.buf), n)
	}
	if f.sparse {
		f.shiftTo(len(original), n)
		v.shifts = f.shifts
	} else {
		f.origin = append(f.origin, int32(len(original)))
		v.origin = f.origin
	}
	// Keep whichever buffers were used, grown or not, and the unused one
	// of the other mode for a later text.
	sc.buf = f.buf
	if f.shifts != nil {
		sc.shifts = f.shifts
	}
	if f.origin != nil {
		sc.origin = f.origin
	}
	return v
}

// foldScratch holds the buffers a Folded view is built in. A clean
// screening's views are dropped when it ends, so handing their buffers to
// the next screening spares the allocation of a text's length (and the
// garbage collections it brings: most of a screening's bytes were these).
type foldScratch struct {
	buf    []byte
	shifts []shift
	origin []int32
}

// foldPool holds *foldScratch sets no view refers to any more.
var foldPool sync.Pool

// maxPooledFold bounds the buffers kept in foldPool, in bytes: a set grown
// by one huge text is dropped rather than kept alive for ordinary prompts.
const maxPooledFold = 256 << 10

// pooled says whether sc is small enough to be kept for reuse.
func (sc *foldScratch) pooled() bool {
	return cap(sc.buf)+cap(sc.shifts)*int(unsafe.Sizeof(shift{}))+cap(sc.origin)*4 <= maxPooledFold
}

// reuse returns b emptied if it can hold n elements, else a new slice.
func reuse[T any](b []T, n int) []T {
	if cap(b) >= n {
		return b[:0]
	}
	return make([]T, 0, n)
}

type folder struct {
	src   string
	corig []int32 // Canonical's origin; nil when it is the identity
	buf   []byte
	// sparse says the map is kept as shifts (see fold); otherwise origin
	// holds one entry per byte of buf.
	sparse bool
	shifts []shift
	by     int32 // the current shift
	origin []int32
	// spareOrigin is the scratch's map buffer, for densify to reuse.
	spareOrigin []int32
	// noChainUntil stops a failed letter-spacing chain from being tried
	// again at each of its letters, which would be quadratic.
	noChainUntil int
}

// Byte classes of the fold.
const (
	fcSpace = 1 << iota // ASCII whitespace
	fcSep               // letter-spacing chain separator: ' ', '.', '-', '_'
	fcHigh              // part of a multi-byte rune
)

var foldClass = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = fcHigh
		case asciiSpace(byte(c)):
			t[c] = fcSpace
		}
		if isChainSep(byte(c)) {
			t[c] |= fcSep
		}
	}
	return t
}()

// lowerASCII lowercases ASCII letters and leaves every other byte as it is.
var lowerASCII = func() (t [256]byte) {
	for c := range 256 {
		t[c] = byte(c)
		if 'A' <= c && c <= 'Z' {
			t[c] += 'a' - 'A'
		}
	}
	return t
}()

func (f *folder) at(i int) int32 {
	if f.corig == nil {
		return int32(i)
	}
	return f.corig[i]
}

// shiftTo records, in sparse mode, that the next folded byte (at view
// offset n) comes from original byte i.
func (f *folder) shiftTo(i, n int) {
	if d := int32(i - n); d != f.by {
		f.by = d
		if f.shifts == nil {
			// Prose has a dropped run every paragraph or so: sized for
			// one per 32 bytes, growing is rare.
			f.shifts = make([]shift, 0, len(f.src)/32+4)
		}
		f.shifts = append(f.shifts, shift{at: int32(n), by: d})
	}
}

// densify turns a sparse map into a dense one, at the first character
// that folds to a different number of bytes in a text whose Canonical view
// is the identity (rare: ASCII and most accented prose never need it).
func (f *folder) densify() {
	if !f.sparse {
		return
	}
	v := View{S: unsafe.String(unsafe.SliceData(f.buf), len(f.buf)), shifts: f.shifts}
	f.origin = reuse(f.spareOrigin, cap(f.buf)+utf8.UTFMax+1)[:len(f.buf)]
	for k := range f.origin {
		f.origin[k] = int32(v.at(k))
	}
	f.sparse, f.shifts = false, nil
}

func (f *folder) emit(c byte, i int) {
	if f.sparse {
		f.shiftTo(i, len(f.buf))
	} else {
		f.origin = append(f.origin, f.at(i))
	}
	f.buf = append(f.buf, c)
}

func (f *folder) run() {
	src := f.src
	for i := 0; i < len(src); {
		c := src[i]
		if c < utf8.RuneSelf {
			// ASCII prose folds mostly to a lowercased copy of itself:
			// eight bytes at a time where plainBlock says the fold does
			// nothing else to them, byte by byte from the next token on
			// where it does. (It refuses a block that starts with a
			// byte beyond ASCII, so none is tried there.)
			if f.sparse && i+8 < len(src) {
				if j := f.plainBlocks(i); j > i {
					i = j
					continue
				}
			}
		} else if c >= 0xc2 && c <= 0xdf && i > 0 && i+1 < len(src) && foldClass[src[i-1]] == 0 && src[i+1]&0xc0 == 0x80 {
			// A character of two bytes after a word byte ("migración")
			// is what the byte path below would only lowercase (no
			// space, no chain can start there): lowercased here without
			// the decoder and the Unicode tables.
			if lo := lowerOfTwoBytes[uint32(c&0x1f)<<6|uint32(src[i+1]&0x3f)]; lo != 0 {
				f.appendRune(rune(lo), i, 2)
				i += 2
				continue
			}
		}
		cls := foldClass[c]
		if cls&fcSpace != 0 || (cls&fcHigh != 0 && spaceAt(src, i) > 0) {
			j := i + 1
			if cls&fcHigh != 0 {
				j = i + spaceAt(src, i)
			}
			for j < len(src) {
				if cl := foldClass[src[j]]; cl&fcSpace != 0 {
					j++
				} else if cl&fcHigh == 0 {
					break
				} else if m := spaceAt(src, j); m > 0 {
					j += m
				} else {
					break
				}
			}
			if f.sparse && int32(i-len(f.buf)) == f.by {
				// emit, for the common case: ASCII text where no byte
				// was dropped since the last shift.
				f.buf = append(f.buf, ' ')
			} else {
				f.emit(' ', i)
			}
			i = j
			continue
		}
		// A chain starts with a one-character token, so one ASCII byte
		// after the first that cannot end a token (a letter, digit or
		// symbol) rules it out without walking it.
		if (cls&fcHigh != 0 || i+1 >= len(src) || foldClass[src[i+1]] != 0) &&
			i >= f.noChainUntil && (i == 0 || foldClass[src[i-1]]&(fcSep|fcSpace) != 0 || spaceBefore(src, i)) {
			if end, ok := f.chain(i, false); ok {
				f.chain(i, true)
				i = end
				continue
			} else if end > i {
				f.noChainUntil = end
			}
		}
		if cls&fcHigh == 0 {
			// Copy the rest of an ASCII word lowercased, up to the next
			// space, non-ASCII byte or chain separator (after which a new
			// token may start): find its end, copy it, lowercase the
			// copy. The word maps byte for byte, so the map needs one
			// shift check for all of it, or one entry per byte.
			//
			// The word is copied as it is scanned, lowercased through a
			// table: one load, one store and one predictable branch a
			// byte. The buffer has room for the rest of src: every ASCII
			// byte gives at most one.
			n := len(f.buf)
			buf := slices.Grow(f.buf, len(src)-i)
			buf = buf[:n+1]
			buf[n] = lowerASCII[c]
			j := i + 1
			if cls&fcSep == 0 {
				for j < len(src) && foldClass[src[j]] == 0 {
					buf = append(buf, lowerASCII[src[j]])
					j++
				}
				if j < len(src) && foldClass[src[j]] == fcSep { // '.', '-', '_'
					buf = append(buf, src[j])
					j++
				}
			}
			if f.sparse {
				f.shiftTo(i, len(f.buf))
			} else if f.corig == nil {
				for k := i; k < j; k++ {
					f.origin = append(f.origin, int32(k))
				}
			} else {
				f.origin = append(f.origin, f.corig[i:j]...)
			}
			f.buf = buf
			i = j
			continue
		}
		r, n := utf8.DecodeRuneInString(src[i:])
		f.appendRune(unicode.ToLower(r), i, n)
		i += n
	}
}

// The lane constants of swar, by short names for the lane arithmetic here
// and in leet.go.
const (
	lanes01 = swar.Lanes01
	lanes80 = swar.Lanes80
)

// plainBlocks copies, lowercased, the blocks of eight bytes from src[i:]
// on for which the fold does nothing but lowercase, and returns where it
// stopped. That holds when a block is ASCII with no whitespace but single
// spaces, none next to whitespace outside the block either, and no byte
// where run would try a letter-spacing chain: one between a separator or
// space and a byte of another class than a word's (a one-character
// token). A block where that test is in doubt is refused; run then folds
// it byte by byte. Sparse mode only: the blocks map byte for byte.
//
// Each test is one lane-wise operation on the block as a word (SWAR),
// whose answer for a lane is the lane's top bit; the other bits are
// garbage, cleared once at the end. For an ASCII byte no lane carries or
// borrows into the next; a block with another byte is refused whatever
// its lanes say.
func (f *folder) plainBlocks(i int) int {
	src, buf := f.src, f.buf
	from := i
	// The class of the byte before the block, in lane 0's top bit: a
	// separator or space (sepBefore), a space (spaceBefore).
	var sepBefore, spaceBefore uint64 = 0x80, 0
	if i > 0 {
		before := foldClass[src[i-1]]
		if before&(fcSep|fcSpace) == 0 {
			sepBefore = 0
		}
		if before&fcSpace != 0 {
			spaceBefore = 0x80
		}
	}
	for ; i+8 < len(src); i += 8 {
		x := swar.Load(src[i : i+8])
		xh := x | lanes80
		// atLeast(v): the lanes holding a byte >= v.
		atLeast := func(v uint64) uint64 { return xh - v*lanes01 }
		// equal(v): the lanes holding v.
		equal := func(v uint64) uint64 { return ^((x ^ v*lanes01) + 0x7f*lanes01) }
		whitespace := atLeast('\t') &^ atLeast('\r'+1) // '\t', '\n', '\v', '\f', '\r'
		space := equal(' ')
		sep := space | atLeast('-')&^atLeast('.'+1) | equal('_') // isChainSep
		var spaceAfter, specialAfter uint64
		if after := foldClass[src[i+8]]; after != 0 {
			specialAfter = 0x80 << 56
			if after&fcSpace != 0 {
				spaceAfter = 0x80 << 56
			}
		}
		refused := x | whitespace |
			// Whitespace next to whitespace: a run the fold shortens.
			space&(space<<8|spaceBefore|space>>8|spaceAfter) |
			// A non-space byte with a separator or space before it
			// and a separator, space or anything but a word byte
			// after it: a one-character token, where run tries a
			// chain.
			^space&(sep<<8|sepBefore)&(sep>>8|specialAfter)
		if refused&lanes80 != 0 {
			break
		}
		upper := (atLeast('A') &^ atLeast('Z'+1)) & lanes80
		buf = binary.LittleEndian.AppendUint64(buf, x|upper>>2)
		sepBefore, spaceBefore = sep>>56&0x80, space>>56&0x80
	}
	if i > from {
		f.shiftTo(from, len(f.buf))
		f.buf = buf
	}
	return i
}

// lowerOfTwoBytes maps each character of two bytes (U+0080 to U+07FF) to
// its lower case when that is of two bytes too and the character is no
// space, 0 otherwise: what run needs to fold one inside a word.
var lowerOfTwoBytes = func() (lower [0x800]uint16) {
	for r := rune(utf8.RuneSelf); r < 0x800; r++ {
		if lo := unicode.ToLower(r); !unicode.IsSpace(r) && utf8.RuneLen(lo) == 2 {
			lower[r] = uint16(lo)
		}
	}
	return lower
}()

// appendRune appends r, the fold of the character of n bytes at src[i]. A
// character that folds to as many bytes maps byte for byte, which keeps a
// sparse map sparse: accented prose ("migración") stays on the eight-byte
// path. One that changes length ("İ" to "i̇") maps every byte to the
// character's start.
func (f *folder) appendRune(r rune, i, n int) {
	if utf8.RuneLen(r) == n {
		if f.sparse {
			f.shiftTo(i, len(f.buf))
		} else {
			for j := range n {
				f.origin = append(f.origin, f.at(i+j))
			}
		}
		f.buf = utf8.AppendRune(f.buf, r)
		return
	}
	f.densify()
	k := len(f.buf)
	f.buf = utf8.AppendRune(f.buf, r)
	o := f.at(i)
	for ; k < len(f.buf); k++ {
		f.origin = append(f.origin, o)
	}
}

// Letter-spacing collapse: a chain is a run of one-character tokens
// (letters, or leetspeak digits and symbols) separated by exactly one
// space, '.', '-' or '_', the same one throughout a word. A gap of two or
// more spaces, or one space after a word spelled with another separator,
// is a word break inside the chain when at least two more tokens follow. A chain of at least
// minChain tokens, at least half of them letters, is joined: "i g n o r e
// a l l" reads "ignore all".
const minChain = 4

// chain walks the chain starting at i. Without emit it reports where the
// chain ends and whether it qualifies; with emit it writes the joined form.
func (f *folder) chain(i int, emit bool) (end int, ok bool) {
	src := f.src
	tokens, letters := 0, 0
	var sep byte // the separator of the current word of the chain
	pos := i
	end = i
	for {
		n, letter := singleAt(src, pos)
		if n == 0 {
			break
		}
		tokens++
		if letter {
			letters++
		}
		if emit {
			f.lowerRune(pos, n)
		}
		end = pos + n
		if end >= len(src) {
			break
		}
		// The chain's separator again: join.
		if c := src[end]; (c == sep || (sep == 0 && isChainSep(c))) && end+1 < len(src) {
			if m, _ := singleAt(src, end+1); m > 0 {
				sep = c
				pos = end + 1
				continue
			}
		}
		// Spaces that are not the chain's separator (two or more, or one
		// after a chain of dots or dashes): a word break, if a new chain
		// of at least two tokens follows.
		g := end
		for g < len(src) && src[g] == ' ' {
			g++
		}
		if (g-end >= 2 || (g-end == 1 && sep != ' ')) && g < len(src) {
			if m, _ := singleAt(src, g); m > 0 && g+m+1 < len(src) && isChainSep(src[g+m]) {
				if m2, _ := singleAt(src, g+m+1); m2 > 0 {
					if emit {
						f.emit(' ', end)
					}
					pos, sep = g, 0
					continue
				}
			}
		}
		break
	}
	return end, tokens >= minChain && 2*letters >= tokens
}

func (f *folder) lowerRune(i, n int) {
	if n == 1 {
		c := f.src[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		f.emit(c, i)
		return
	}
	r, n := utf8.DecodeRuneInString(f.src[i:])
	f.appendRune(unicode.ToLower(r), i, n)
}

func isChainSep(c byte) bool { return c == ' ' || c == '.' || c == '-' || c == '_' }

// singleAt reports a one-character token at i: a letter, a digit or a
// leetspeak symbol with a chain separator, space or the end on both sides. It
// returns the token's byte length (0 if none) and whether it is a letter.
func singleAt(s string, i int) (int, bool) {
	if i >= len(s) {
		return 0, false
	}
	if i > 0 && !isChainSep(s[i-1]) && !spaceBefore(s, i) {
		return 0, false
	}
	r, n := rune(s[i]), 1
	if r >= utf8.RuneSelf {
		r, n = utf8.DecodeRuneInString(s[i:])
	}
	letter := unicode.IsLetter(r)
	if !letter && (r >= utf8.RuneSelf || leetOf(byte(r)) == 0 && !isDigit(byte(r))) {
		return 0, false
	}
	if j := i + n; j < len(s) && !isChainSep(s[j]) && spaceAt(s, j) == 0 {
		return 0, false
	}
	return n, letter
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// spaceAt returns the byte length of the whitespace rune at i, or 0.
func spaceAt(s string, i int) int {
	if i >= len(s) {
		return 0
	}
	c := s[i]
	if c < utf8.RuneSelf {
		switch c {
		case ' ', '\t', '\n', '\r', '\v', '\f':
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if unicode.IsSpace(r) {
		return n
	}
	return 0
}

func spaceBefore(s string, i int) bool {
	c := s[i-1]
	if c < utf8.RuneSelf {
		return spaceAt(s, i-1) == 1
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return unicode.IsSpace(r)
}
