package injection

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	mathbits "math/bits"
	"sync"
)

// Model is a trained linear classifier: hashed n-gram weights (int8 with one
// scale) plus one weight per rule family. It is read only once built and
// safe for concurrent use.
type Model struct {
	spec featureSpec
	// window is the window length in bytes the model was validated with;
	// the default of Config.MaxWindow.
	window int
	// threshold is the probability cut-off chosen on cross-validated
	// predictions; the default of Config.Threshold.
	threshold float64
	bias      float32
	// fam weighs the rule families hit in the request zone, famZone those
	// hit in the content zone (zone.go).
	fam     [numFamilies]float32
	famZone [numFamilies]float32
	// size weighs a window by its length (sizeBucket) and by whether a
	// rule family is hit in it (sizeRow): a short text no rule explains is
	// rarely an attack, however its words weigh, and one that a rule
	// explains usually is.
	size  [sizeRows][sizeBuckets]float32
	scale float32
	w     []int8
	// zoneW is what a feature in the content zone weighs, by bucket,
	// built from w on first use (zoneWeights).
	zoneW struct {
		once sync.Once
		w    []int16
	}
}

// zoneWeights returns, for every bucket b, what a feature of bucket b
// ending in the content zone weighs: half its own weight plus the weight
// of its content-zone bucket (zone.go). Looking one number up per
// feature spares the scoring a hash and a second load per feature, and
// most of a pasted document is content zone. w never changes once the
// model is built, so neither does the table.
func (m *Model) zoneWeights() []int16 {
	m.zoneW.once.Do(func() {
		wz := make([]int16, len(m.w))
		for b := range wz {
			wz[b] = int16(m.w[b])>>1 + int16(m.w[zoneBucket(uint32(b), m.spec.bits)])
		}
		m.zoneW.w = wz
	})
	return m.zoneW.w
}

// Threshold is the probability cut-off chosen when the model was trained.
func (m *Model) Threshold() float64 { return m.threshold }

// SetThreshold records the cut-off the model ships with.
func (m *Model) SetThreshold(t float64) { m.threshold = t }

// Window is the window length in bytes the model was trained and validated with.
func (m *Model) Window() int { return m.window }

// NumBuckets is the number of hashed weights.
func (m *Model) NumBuckets() int { return len(m.w) }

// NumWeights is the number of hashed weights that are not zero.
func (m *Model) NumWeights() int {
	n := 0
	for _, x := range m.w {
		if x != 0 {
			n++
		}
	}
	return n
}

// Model file layout, little endian:
//
//	magic "PWIJ", version byte
//	bits, charMin, charMax, bigrams (bytes)
//	window uint32, threshold, bias, scale float32
//	number of families byte, family weights float32 each: the request
//	zone's, then the content zone's
//	the size weights, float32 each, one row of sizeBuckets per size row
//	(rowNone, rowRule, rowMention, rowPersona)
//	the 2^bits int8 weights, DEFLATE-compressed (most are zero or small)
const (
	modelMagic   = "PWIJ"
	modelVersion = 5
)

// ErrModel is wrapped by every error reading a model file.
var ErrModel = errors.New("injection: invalid model")

// MarshalBinary encodes the model in the model.bin format.
func (m *Model) MarshalBinary() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(modelMagic)
	buf.WriteByte(modelVersion)
	big := byte(0)
	if m.spec.bigrams {
		big = 1
	}
	buf.Write([]byte{m.spec.bits, m.spec.charMin, m.spec.charMax, big})
	le := binary.LittleEndian
	buf.Write(le.AppendUint32(nil, uint32(m.window)))
	for _, f := range []float32{float32(m.threshold), m.bias, m.scale} {
		buf.Write(le.AppendUint32(nil, math.Float32bits(f)))
	}
	buf.WriteByte(byte(numFamilies))
	for _, f := range append(m.fam[:], m.famZone[:]...) {
		buf.Write(le.AppendUint32(nil, math.Float32bits(f)))
	}
	for _, row := range m.size {
		for _, f := range row {
			buf.Write(le.AppendUint32(nil, math.Float32bits(f)))
		}
	}
	zw, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		return nil, err
	}
	raw := make([]byte, len(m.w))
	for i, x := range m.w {
		raw[i] = byte(x)
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// UnmarshalBinary decodes a model written by MarshalBinary.
func (m *Model) UnmarshalBinary(data []byte) error {
	const head = 4 + 1 + 4 + 4 + 3*4 + 1
	if len(data) < head || string(data[:4]) != modelMagic {
		return fmt.Errorf("%w: not a model file", ErrModel)
	}
	if data[4] != modelVersion {
		return fmt.Errorf("%w: version %d, want %d", ErrModel, data[4], modelVersion)
	}
	spec := featureSpec{bits: data[5], charMin: data[6], charMax: data[7], bigrams: data[8] == 1}
	if spec.bits < 8 || spec.bits > 24 || spec.charMin > spec.charMax || spec.charMax > 8 {
		return fmt.Errorf("%w: bad feature spec %+v", ErrModel, spec)
	}
	le := binary.LittleEndian
	p := data[9:]
	f32 := func() float32 { v := math.Float32frombits(le.Uint32(p)); p = p[4:]; return v }
	window := int(le.Uint32(p))
	p = p[4:]
	threshold, bias, scale := f32(), f32(), f32()
	nf := int(p[0])
	p = p[1:]
	if nf != int(numFamilies) || len(p) < 8*nf+4*sizeRows*sizeBuckets {
		return fmt.Errorf("%w: %d rule families, this build has %d", ErrModel, nf, numFamilies)
	}
	var fam, famZone [numFamilies]float32
	for i := range fam {
		fam[i] = f32()
	}
	for i := range famZone {
		famZone[i] = f32()
	}
	var size [sizeRows][sizeBuckets]float32
	for r := range size {
		for i := range size[r] {
			size[r][i] = f32()
		}
	}
	raw := make([]byte, 1<<spec.bits)
	zr := flate.NewReader(bytes.NewReader(p))
	if _, err := io.ReadFull(zr, raw); err != nil {
		return fmt.Errorf("%w: weights: %w", ErrModel, err)
	}
	w := make([]int8, len(raw))
	for i, b := range raw {
		w[i] = int8(b)
	}
	*m = Model{spec: spec, window: window, threshold: float64(threshold), bias: bias, fam: fam, famZone: famZone, size: size, scale: scale, w: w}
	return nil
}

// quantize stores float weights as int8 with one shared scale. The largest
// weight maps to 127; the rounding error is far below the weights that
// decide a score.
func quantize(w []float64) ([]int8, float32) {
	maxAbs := 0.0
	for _, x := range w {
		maxAbs = math.Max(maxAbs, math.Abs(x))
	}
	q := make([]int8, len(w))
	if maxAbs == 0 {
		return q, 1
	}
	scale := maxAbs / 127
	for i, x := range w {
		q[i] = int8(math.Round(x / scale))
	}
	return q, float32(scale)
}

// scratch holds the per-call buffers of a scoring; pooled so that a Scan
// allocates nothing on a clean text.
type scratch struct {
	out    featureSink
	hits   []hit
	blocks []block
	gloss  glossScratch
}

// block accumulates the features of half a window.
type block struct {
	sum  int32  // sum of the quantised weights
	n    int32  // number of feature occurrences
	fams uint32 // bit set of the rule families that start here (famBits)
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// windowScore is the verdict on the best window of a text.
type windowScore struct {
	margin     float64 // logit of the best window
	start, end int     // the best window in bytes of the folded view
	fams       uint32  // rule families hit inside it (famBits)
}

// zoneShift places the content zone's rule families in the high half of a
// family bit set: bit f is family f hit in the request zone, bit
// zoneShift+f the same family hit in the content zone.
const zoneShift = 16

// famBit is the bit of a rule hit starting at byte pos of a text whose
// content zone is z.
func famBit(f family, pos int, z zone) uint32 {
	if z.has(pos) {
		return 1 << (zoneShift + f)
	}
	if families[f].contentOnly {
		return 0
	}
	return 1 << f
}

// blockLayout returns the block length and count for a text of n bytes and
// windows of w bytes: a text that fits is one window; a longer one is cut
// into blocks of w/2 and every two adjacent blocks form a window, so windows
// overlap by half and a phrase is always wholly inside one of them.
func blockLayout(n, w int) (half, count int) {
	if n <= w || w < 2 {
		return n + 1, 1
	}
	half = w / 2
	return half, (n + half - 1) / half
}

// blockOf returns the block index of a byte offset.
func blockOf(pos, half, count int) int {
	b := pos / half
	if b >= count {
		b = count - 1
	}
	return b
}

// windowOfBlocks returns the byte range of the window that starts at block k.
func windowOfBlocks(k, half, count, n int) (int, int) {
	if count == 1 {
		return 0, n
	}
	return k * half, min((k+2)*half, n)
}

// famsIn is the set of rule families hit in the byte range [a, e) of a
// text whose content zone is z (famBit), from its hits on words toks.
func famsIn(hits []hit, toks []token, a, e int, z zone) uint32 {
	var fams uint32
	for _, h := range hits {
		if st := int(toks[h.from].start); st >= a && st < e {
			fams |= famBit(h.fam, st, z)
		}
	}
	return fams
}

// score scores the folded text s, whose content zone is z,
// in windows of w bytes and returns the best window. sc holds the words and
// rule hits afterwards.
func (m *Model) score(s string, z zone, window int, sc *scratch) windowScore {
	out := &sc.out
	m.spec.extract(s, out, nil)
	out.sum(m.w, m.zoneWeights(), z)
	sc.hits = matchRules(s, out.toks, sc.hits[:0])
	half, count := blockLayout(len(s), window)
	if cap(sc.blocks) < count {
		sc.blocks = make([]block, count)
	}
	blocks := sc.blocks[:count]
	clear(blocks)
	// A feature belongs to the block of its end offset (the last block
	// takes the tail). Features come in order of offset, so each block's
	// features are a run [from, to) and its sum a difference of running
	// sums.
	from := 0
	for k := range blocks {
		to := out.count()
		if k < count-1 {
			to = firstFeature(out.feats, (k+1)*half-1)
		}
		blocks[k].sum, blocks[k].n = out.cum[to]-out.cum[from], int32(to-from)
		from = to
	}
	toks := out.toks
	for _, h := range sc.hits {
		st := int(toks[h.from].start)
		blocks[blockOf(st, half, count)].fams |= famBit(h.fam, st, z)
	}
	best := windowScore{margin: math.Inf(-1)}
	last := max(count-1, 1)
	for k := 0; k < last; k++ {
		sum, n, fams := blocks[k].sum, blocks[k].n, blocks[k].fams
		if k+1 < count {
			sum += blocks[k+1].sum
			n += blocks[k+1].n
			fams |= blocks[k+1].fams
		}
		margin := m.margin(sum, n, fams)
		if margin > best.margin {
			start, end := windowOfBlocks(k, half, count, len(s))
			best = windowScore{margin: margin, start: start, end: end, fams: fams}
		}
	}
	// A phrase rule hit is also judged in its own neighbourhood, so that
	// an instruction planted in a table or a web page is not outweighed by
	// the document around it.
	for _, h := range sc.hits {
		a, e, ok := hitWindow(toks, h, len(s))
		if !ok {
			continue
		}
		i, j := firstFeature(out.feats, a), firstFeature(out.feats, e)
		fams := famsIn(sc.hits, toks, a, e, z)
		margin := m.margin(out.cum[j]-out.cum[i], int32(j-i), fams)
		if margin > best.margin {
			best = windowScore{margin: margin, start: a, end: e, fams: fams}
		}
	}
	forContentWindows(out.feats, z, func(a, e, i, j int) {
		fams := famsIn(sc.hits, toks, a, e, z)
		margin := m.margin(out.cum[j]-out.cum[i], int32(j-i), fams)
		if margin > best.margin {
			best = windowScore{margin: margin, start: a, end: e, fams: fams}
		}
	})
	return best
}

// An instruction planted in content is a sentence or two inside a document
// that may run to pages; the content zone is also scored in short windows
// of contentWindow bytes overlapping by half, so that such a sentence is
// judged nearly on its own rather than averaged with the document.
const (
	contentWindow = 160
	contentStride = contentWindow / 2
)

// forContentWindows calls fn with the byte range [a, e) of every short
// window of the content zone z and the range [i, j) of the features
// ending inside it. The features are in order of their end offset, so
// both bounds are found by binary search: a window holds about 200
// features, and stepping over them one by one cost more than the rest of
// the window's scoring.
func forContentWindows(feats []feature, z zone, fn func(a, e, i, j int)) {
	if z.from >= z.to {
		return
	}
	n := z.to
	for a := z.from; ; a += contentStride {
		e := min(a+contentWindow, n)
		fn(a, e, firstFeature(feats, a), firstFeature(feats, e))
		if e == n {
			return
		}
	}
}

// hitRadius is how many bytes around a rule hit its neighbourhood window
// takes in on either side: about a sentence.
const hitRadius = 128

// hitWindow returns the neighbourhood window of a rule hit, and false when
// it would be the whole text (already scored).
func hitWindow(toks []token, h hit, n int) (int, int, bool) {
	a := max(int(toks[h.from].start)-hitRadius, 0)
	e := min(int(toks[h.to-1].end)+hitRadius, n)
	return a, e, a > 0 || e < n
}

// firstFeature returns the index of the first feature ending after byte a,
// given the features' end offsets in order.
func firstFeature(feats []feature, a int) int {
	lo, hi := 0, len(feats)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if int(feats[mid].pos) <= a {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// margin is the logit of a window from its quantised weight sum, its
// feature count and the rule families hit in it.
func (m *Model) margin(sum, n int32, fams uint32) float64 {
	// A window with no word and no rule hit (an empty text, a masked
	// placeholder) holds no evidence either way; the bias alone was never
	// trained for it, as no training window is empty.
	if n == 0 && fams == 0 {
		return math.Inf(-1)
	}
	margin := float64(m.bias) + float64(m.size[sizeRow(fams)][sizeBucket(n)])
	if n > 0 {
		margin += float64(m.scale) * float64(sum) / math.Sqrt(float64(n))
	}
	if fams == 0 {
		return margin // most windows hit no rule family
	}
	for f := family(0); f < numFamilies; f++ {
		if fams&(1<<f) != 0 {
			margin += float64(m.fam[f])
		}
		if fams&(1<<(zoneShift+f)) != 0 {
			margin += float64(m.famZone[f])
		}
	}
	return margin
}

// Rows of Model.size: the length weights of a window by what its rule
// families say.
const (
	// rowNone: no rule family is hit.
	rowNone = iota
	// rowRule: a rule family is hit that says more than a mention.
	rowRule
	// rowMention: in the user's own request a credential, a key or a
	// system prompt is only named ("how do I reset my wifi password",
	// "write a system prompt for my bot"), or in pasted content a
	// credential is ("Translate: 'Please enter your password to
	// continue.'", "Summarize this email: 'the admin password rotates on
	// Friday'"). Such windows have length weights of their own, which like
	// rowNone's may only lower a score: a named password is no attack by
	// itself, and counted as a rule hit (rowRule) it flagged a quarter of
	// everyday requests about passwords, keys and system prompts, and most
	// of the notices, reviews and messages people paste to have them
	// translated or summarised. The mention family's own weight still
	// counts.
	rowMention
	// rowPersona: in the user's own request the only rule evidence is a
	// persona cue ("from now on you are a sommelier", "stay in
	// character"). Role-play is an everyday use of an assistant, and a
	// jailbreak persona is one only with more: restrictions dropped, a
	// harmful request, an override. Counted as a rule hit, one cue lifted
	// a role-play request from 0.02 to 0.94; its own length weights let
	// the data say what a persona cue alone is worth.
	rowPersona
	sizeRows
)

// requestMentions are the rule families that only name a credential, a
// system prompt, jailbreaking or developer mode, hit in the user's own
// request zone.
const requestMentions = 1<<famSecretWord | 1<<famPromptWord | 1<<famModeWord

// contentMentions are the mentions that stay mentions in pasted content:
// a credential named. A system prompt, jailbreaking or developer mode
// named in a document is rarer in everyday text and stays a rule hit
// there: counted as mentions too, they flagged 11 more of the read sets'
// everyday requests than the credential alone.
const contentMentions = 1 << (zoneShift + famSecretWord)

// sizeRow is the row of Model.size for a window whose rule families are
// fams. (Counting only the precise families as rule hits was measured
// and lost 9 points of cross-validated recall: a weak family's hit in a
// short text is evidence too; a bare mention in the request is the
// exception, rowMention.) A request about the form of the answer ("encode
// your answer in base64") in the user's own request zone does not count:
// it is the user's to make, and counting it let short formatting requests
// pass as attacks (leave-one-source-out recall at 1% false positives 0.44
// with it, 0.61 without). In the content zone both count, except a
// credential only named (contentMentions).
//
// The size row is chosen before the families' own weights are added, so
// the request zone's famOutput and mentions still add their learned
// weights to margin.
func sizeRow(fams uint32) int {
	switch rest := fams &^ (1 << famOutput); {
	case rest == 0:
		return rowNone
	case rest&^(requestMentions|contentMentions) == 0:
		return rowMention
	case rest&^(requestMentions|1<<famPersona) == 0:
		return rowPersona
	}
	return rowRule
}

// sizeBuckets is the number of window length classes: log2 of the feature
// count, the last class taking everything longer.
const sizeBuckets = 12

// sizeBucket is the length class of a window of n feature occurrences
// (about three per word).
func sizeBucket(n int32) int {
	return min(mathbits.Len32(uint32(n)), sizeBuckets-1)
}

// sigmoid maps a logit to a probability.
func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
