package secrets

// keywords is an Aho-Corasick automaton over lowercase ASCII keywords, run
// case-insensitively over the text. It is the prefilter that decides which
// rules run and where: a clean prompt costs one table walk and no regexp.
//
// The automaton is a full DFA over byte classes (bytes that occur in no
// keyword share class 0, upper-case letters share their lower-case class),
// so the scan loop is one table load per byte with no failure-link chasing
// and no allocation.
type keywords struct {
	class  [256]uint8
	nclass int
	// delta[state+class] is the next state, where states are stored
	// premultiplied by nclass; hasOut marks a next state with outputs, so
	// the scan loop tests one bit per byte.
	delta []uint32
	// outStart/outEnd (by state number) index into out: the keyword ids
	// that end at a state, suffix matches included.
	outStart []uint32
	outEnd   []uint32
	out      []uint16
	lens     []int // keyword id -> length in bytes
	maxLen   int
}

// kwHit is one keyword occurrence: [start, end) in the text.
type kwHit struct {
	start, end int32
	id         uint16
}

// streamHits is how many hits each of the two interleaved streams buffers
// before find falls back to one sequential pass.
const streamHits = 64

// find returns the keyword occurrences in s in order of start (within the
// two halves), using buf as storage so that nothing is allocated. It
// returns false when s holds more hits than buf; the caller then walks the
// text with next, handling hits as they come.
//
// A DFA walk is a chain of dependent loads, about 6 cycles a byte. find
// walks the two halves of the text in one loop with two independent
// states, which the CPU overlaps, nearly halving the time. The first
// stream runs maxLen-1 bytes past the middle and keeps only hits that
// start before it; the second keeps the rest.
func (k *keywords) find(s string, buf *[2 * streamHits]kwHit) ([]kwHit, bool) {
	if len(s) < 256 {
		return k.findShort(s, buf)
	}
	mid := len(s) / 2
	aEnd := min(len(s), mid+k.maxLen-1)
	a, b := buf[:0:streamHits], buf[streamHits:streamHits]
	delta, class := k.delta, &k.class
	sa, sb := uint32(0), uint32(0)
	n := len(s) - mid // >= mid
	t := s[mid:]
	for i := 0; i < mid; i++ {
		na := delta[sa+uint32(class[s[i]])]
		nb := delta[sb+uint32(class[t[i]])]
		sa, sb = na&^hasOut, nb&^hasOut
		if (na|nb)&hasOut == 0 {
			continue
		}
		var ok bool
		if na&hasOut != 0 {
			if a, ok = k.emit(a, sa, i+1, 0, mid); !ok {
				return nil, false
			}
		}
		if nb&hasOut != 0 {
			if b, ok = k.emit(b, sb, mid+i+1, mid, len(s)); !ok {
				return nil, false
			}
		}
	}
	// Tails: the first stream finishes keywords straddling the middle,
	// the second its last byte when the length is odd.
	var ok bool
	for i := mid; i < aEnd; i++ {
		na := delta[sa+uint32(class[s[i]])]
		sa = na &^ hasOut
		if na&hasOut != 0 {
			if a, ok = k.emit(a, sa, i+1, 0, mid); !ok {
				return nil, false
			}
		}
	}
	for i := mid; i < n; i++ {
		nb := delta[sb+uint32(class[t[i]])]
		sb = nb &^ hasOut
		if nb&hasOut != 0 {
			if b, ok = k.emit(b, sb, mid+i+1, mid, len(s)); !ok {
				return nil, false
			}
		}
	}
	// Close the gap so the hits are contiguous.
	m := copy(buf[len(a):], b)
	return buf[:len(a)+m], true
}

// findShort is the single-stream walk for texts too short to split.
func (k *keywords) findShort(s string, buf *[2 * streamHits]kwHit) ([]kwHit, bool) {
	hits := buf[:0]
	st := uint32(0)
	var ok bool
	for i := 0; i < len(s); i++ {
		next := k.delta[st+uint32(k.class[s[i]])]
		st = next &^ hasOut
		if next&hasOut != 0 {
			if hits, ok = k.emit(hits, st, i+1, 0, len(s)); !ok {
				return nil, false
			}
		}
	}
	return hits, true
}

// emit appends the outputs of state st at end position end whose start
// lies in [lo, hi); false when dst is full.
func (k *keywords) emit(dst []kwHit, st uint32, end, lo, hi int) ([]kwHit, bool) {
	n := st / uint32(k.nclass)
	for o := k.outStart[n]; o < k.outEnd[n]; o++ {
		id := k.out[o]
		start := end - k.lens[id]
		if start < lo || start >= hi {
			continue
		}
		if len(dst) == cap(dst) {
			return dst, false
		}
		dst = append(dst, kwHit{int32(start), int32(end), id})
	}
	return dst, true
}

// next advances the walk from state st over byte c and returns the new
// state and the range of out holding the keywords that end there.
func (k *keywords) next(st uint32, c byte) (uint32, uint32, uint32) {
	n := k.delta[st+uint32(k.class[c])]
	st = n &^ hasOut
	if n&hasOut == 0 {
		return st, 0, 0
	}
	q := st / uint32(k.nclass)
	return st, k.outStart[q], k.outEnd[q]
}

// hasOut flags a delta entry whose target state has outputs.
const hasOut = 1 << 31

// newKeywords builds the automaton. Keywords must be non-empty lowercase
// ASCII; ids are their indexes in words.
func newKeywords(words []string) *keywords {
	k := &keywords{lens: make([]int, len(words))}
	// Byte classes: 0 for bytes no keyword uses.
	k.nclass = 1
	for _, w := range words {
		for i := 0; i < len(w); i++ {
			c := w[i]
			if k.class[c] == 0 {
				k.class[c] = uint8(k.nclass)
				k.nclass++
			}
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		k.class[c] = k.class[c+'a'-'A']
	}
	// Trie.
	type node struct {
		next map[uint8]int
		fail int
		outs []uint16
	}
	nodes := []node{{next: map[uint8]int{}}}
	for id, w := range words {
		k.lens[id] = len(w)
		k.maxLen = max(k.maxLen, len(w))
		s := 0
		for i := 0; i < len(w); i++ {
			c := k.class[w[i]]
			n, ok := nodes[s].next[c]
			if !ok {
				n = len(nodes)
				nodes = append(nodes, node{next: map[uint8]int{}})
				nodes[s].next[c] = n
			}
			s = n
		}
		nodes[s].outs = append(nodes[s].outs, uint16(id))
	}
	if len(nodes)*k.nclass >= hasOut {
		panic("secrets: keyword automaton too large")
	}
	// Breadth-first failure links, folded into a complete transition table.
	next := make([]int, len(nodes)*k.nclass)
	queue := make([]int, 0, len(nodes))
	for c := 0; c < k.nclass; c++ {
		if n, ok := nodes[0].next[uint8(c)]; ok {
			next[c] = n
			queue = append(queue, n)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		f := nodes[s].fail
		nodes[s].outs = append(nodes[s].outs, nodes[f].outs...)
		for c := 0; c < k.nclass; c++ {
			if n, ok := nodes[s].next[uint8(c)]; ok {
				nodes[n].fail = next[f*k.nclass+c]
				next[s*k.nclass+c] = n
				queue = append(queue, n)
			} else {
				next[s*k.nclass+c] = next[f*k.nclass+c]
			}
		}
	}
	k.outStart = make([]uint32, len(nodes))
	k.outEnd = make([]uint32, len(nodes))
	for i, n := range nodes {
		k.outStart[i] = uint32(len(k.out))
		k.out = append(k.out, n.outs...)
		k.outEnd[i] = uint32(len(k.out))
	}
	k.delta = make([]uint32, len(next))
	for i, n := range next {
		k.delta[i] = uint32(n * k.nclass)
		if len(nodes[n].outs) > 0 {
			k.delta[i] |= hasOut
		}
	}
	return k
}
