// Package ahocorasick is the multi-pattern byte matcher shared by the
// scanners that look for many fixed strings at once (secret keywords,
// banned substrings). It is an Aho-Corasick automaton compiled into a
// complete DFA over byte classes, so a search is one table load per byte,
// with no failure links to chase and nothing allocated.
//
// Written here rather than imported: the maintained Go libraries
// (cloudflare/ahocorasick, BobuSumisu/aho-corasick, petar-dambovaliev's
// port) allocate a slice of matches per search; the screening budget needs
// a walk that reports into a caller's buffer or callback.
//
// Patterns are matched byte-wise, which is exact for UTF-8 text and
// patterns since no rune's encoding occurs inside another's. With
// Options.FoldASCIICase, ASCII letters match in either case (patterns must
// then be given in lower case).
package ahocorasick

import (
	"errors"
	"fmt"
	"sync"
)

// ErrPattern is wrapped by the errors New returns.
var ErrPattern = errors.New("ahocorasick: invalid patterns")

// Options tune New.
type Options struct {
	// FoldASCIICase makes 'A'..'Z' in the text match 'a'..'z' in a
	// pattern. Patterns must not contain upper-case ASCII letters then:
	// they could never match.
	FoldASCIICase bool
}

// Automaton matches a fixed set of patterns. It is immutable once built and
// safe for concurrent use.
type Automaton struct {
	class  [256]uint16
	nclass uint32
	// delta[state+class] is the next state. States are stored multiplied
	// by nclass, so a step is one load and one add; hasOut marks a next
	// state that ends at least one pattern, so the walk tests one bit.
	delta []uint32
	// outStart[n]..outEnd[n] index out for state number n (state/nclass):
	// the ids of the patterns that end there, longest first, suffix
	// matches included.
	outStart []uint32
	outEnd   []uint32
	out      []uint32
	lens     []int // pattern id -> length in bytes
	maxLen   int
	// depths[n] is the trie depth of state number n, computed on first
	// use by OpenSuffix.
	depthOnce sync.Once
	depths    []int
}

// hasOut flags a delta entry whose target state has outputs.
const hasOut = 1 << 31

// Hit is one occurrence of a pattern: text[Start:End] equals pattern ID
// (up to ASCII case when folding).
type Hit struct {
	Start, End int
	ID         int
}

// New compiles patterns; a pattern's id is its index. Duplicates are
// allowed and each reports its own id. Patterns must be non-empty.
func New(patterns []string, opts Options) (*Automaton, error) {
	a := &Automaton{lens: make([]int, len(patterns))}
	// Byte classes: 0 for bytes no pattern uses, so the table has one
	// column per distinct pattern byte plus one.
	n := uint32(1)
	for i, p := range patterns {
		if p == "" {
			return nil, fmt.Errorf("%w: pattern %d is empty", ErrPattern, i)
		}
		for j := 0; j < len(p); j++ {
			c := p[j]
			if opts.FoldASCIICase && 'A' <= c && c <= 'Z' {
				return nil, fmt.Errorf("%w: pattern %d has upper-case letters but matching folds case", ErrPattern, i)
			}
			if a.class[c] == 0 {
				a.class[c] = uint16(n)
				n++
			}
		}
	}
	a.nclass = n
	if opts.FoldASCIICase {
		for c := 'A'; c <= 'Z'; c++ {
			a.class[c] = a.class[c+'a'-'A']
		}
	}
	// Trie. Children are kept in a map per node only while building.
	type node struct {
		next map[uint16]uint32
		fail uint32
		outs []uint32
	}
	nodes := []node{{next: map[uint16]uint32{}}}
	for id, p := range patterns {
		a.lens[id] = len(p)
		a.maxLen = max(a.maxLen, len(p))
		s := uint32(0)
		for j := 0; j < len(p); j++ {
			c := a.class[p[j]]
			nx, ok := nodes[s].next[c]
			if !ok {
				nx = uint32(len(nodes))
				nodes = append(nodes, node{next: map[uint16]uint32{}})
				nodes[s].next[c] = nx
			}
			s = nx
		}
		nodes[s].outs = append(nodes[s].outs, uint32(id))
	}
	if uint64(len(nodes))*uint64(n) >= hasOut {
		return nil, fmt.Errorf("%w: %d states of %d classes exceed the table size", ErrPattern, len(nodes), n)
	}
	// Breadth-first failure links, folded into a complete transition
	// table; a node's outputs gain its failure node's (shorter) ones.
	next := make([]uint32, len(nodes)*int(n))
	queue := make([]uint32, 0, len(nodes))
	for c := uint32(0); c < n; c++ {
		if nx, ok := nodes[0].next[uint16(c)]; ok {
			next[c] = nx
			queue = append(queue, nx)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		f := nodes[s].fail
		nodes[s].outs = append(nodes[s].outs, nodes[f].outs...)
		for c := uint32(0); c < n; c++ {
			if nx, ok := nodes[s].next[uint16(c)]; ok {
				nodes[nx].fail = next[f*n+c]
				next[s*n+c] = nx
				queue = append(queue, nx)
			} else {
				next[s*n+c] = next[f*n+c]
			}
		}
	}
	a.outStart = make([]uint32, len(nodes))
	a.outEnd = make([]uint32, len(nodes))
	for i, nd := range nodes {
		a.outStart[i] = uint32(len(a.out))
		a.out = append(a.out, nd.outs...)
		a.outEnd[i] = uint32(len(a.out))
	}
	a.delta = make([]uint32, len(next))
	for i, nx := range next {
		a.delta[i] = nx * n
		if len(nodes[nx].outs) > 0 {
			a.delta[i] |= hasOut
		}
	}
	return a, nil
}

// Len returns the length in bytes of pattern id.
func (a *Automaton) Len(id int) int { return a.lens[id] }

// MaxLen returns the length of the longest pattern.
func (a *Automaton) MaxLen() int { return a.maxLen }

// Each calls fn for every occurrence of every pattern in s, overlapping
// ones included, in order of end offset and, at one end, longest first;
// fn returns false to stop.
func (a *Automaton) Each(s string, fn func(Hit) bool) {
	delta, class := a.delta, &a.class
	st := uint32(0)
	for i := 0; i < len(s); i++ {
		nx := delta[st+uint32(class[s[i]])]
		st = nx &^ hasOut
		if nx&hasOut == 0 {
			continue
		}
		q := st / a.nclass
		for o := a.outStart[q]; o < a.outEnd[q]; o++ {
			id := int(a.out[o])
			if !fn(Hit{Start: i + 1 - a.lens[id], End: i + 1, ID: id}) {
				return
			}
		}
	}
}

// Find stores the occurrences in s in buf and returns them, allocating
// nothing. It returns false when s holds more than buf can take; the caller
// then falls back to Each.
//
// Order: texts shorter than 256 bytes are walked once and the hits come as
// from Each. Longer texts are walked as two halves in one loop: a DFA walk
// is a chain of dependent loads (about 6 cycles a byte), and two
// independent chains overlap in the CPU, nearly halving the time. Each half
// takes cap(buf)/2 hits; the hits starting in the first half come first,
// each half in Each's order. The first stream runs MaxLen-1 bytes past the
// middle so patterns straddling it are found.
func (a *Automaton) Find(s string, buf []Hit) ([]Hit, bool) {
	if len(s) < 256 {
		return a.findShort(s, buf[:0])
	}
	half := cap(buf) / 2
	buf = buf[:cap(buf)]
	mid := len(s) / 2
	aEnd := min(len(s), mid+a.maxLen-1)
	ha, hb := buf[:0:half], buf[half:half:2*half]
	delta, class := a.delta, &a.class
	sa, sb := uint32(0), uint32(0)
	t := s[mid:]
	var ok bool
	for i := 0; i < mid; i++ {
		var na, nb uint32
		i, na, nb = a.walk2(s[:mid], t[:mid], i, sa, sb)
		sa, sb = na&^hasOut, nb&^hasOut
		if i == mid {
			break
		}
		if na&hasOut != 0 {
			if ha, ok = a.emit(ha, sa, i+1, 0, mid); !ok {
				return nil, false
			}
		}
		if nb&hasOut != 0 {
			if hb, ok = a.emit(hb, sb, mid+i+1, mid, len(s)); !ok {
				return nil, false
			}
		}
	}
	// Tails: the first stream finishes patterns straddling the middle,
	// the second its last byte when the length is odd.
	for i := mid; i < aEnd; i++ {
		na := delta[sa+uint32(class[s[i]])]
		sa = na &^ hasOut
		if na&hasOut != 0 {
			if ha, ok = a.emit(ha, sa, i+1, 0, mid); !ok {
				return nil, false
			}
		}
	}
	for i := mid; i < len(t); i++ {
		nb := delta[sb+uint32(class[t[i]])]
		sb = nb &^ hasOut
		if nb&hasOut != 0 {
			if hb, ok = a.emit(hb, sb, mid+i+1, mid, len(s)); !ok {
				return nil, false
			}
		}
	}
	// Close the gap so the hits are contiguous.
	m := copy(buf[len(ha):], hb)
	return buf[:len(ha)+m], true
}

// walk2 steps Find's two streams over s[i:] and t[i:] (of one length)
// from states sa and sb. At the first byte k where either enters a state
// with outputs it returns k and both streams' delta entries for that byte;
// when none does, len(s) and the last states. Hits are rare, so the loop
// that finds the next one is a function of its own: its few variables
// stay in registers, where in Find, beside the hit handling's, the
// compiler stored and reloaded them at every byte (and inlined, they
// would be there again).
//
//go:noinline
func (a *Automaton) walk2(s, t string, i int, sa, sb uint32) (int, uint32, uint32) {
	delta, class := a.delta, &a.class
	t = t[:len(s)]
	for ; i < len(s); i++ {
		na := delta[sa+uint32(class[s[i]])]
		nb := delta[sb+uint32(class[t[i]])]
		if (na|nb)&hasOut != 0 {
			return i, na, nb
		}
		sa, sb = na, nb
	}
	return i, sa, sb
}

// findShort is the single-stream walk for texts too short to split.
func (a *Automaton) findShort(s string, hits []Hit) ([]Hit, bool) {
	st := uint32(0)
	var ok bool
	for i := 0; i < len(s); i++ {
		nx := a.delta[st+uint32(a.class[s[i]])]
		st = nx &^ hasOut
		if nx&hasOut != 0 {
			if hits, ok = a.emit(hits, st, i+1, 0, len(s)); !ok {
				return nil, false
			}
		}
	}
	return hits, true
}

// emit appends the outputs of state st at end offset end whose start lies
// in [lo, hi); false when dst is full.
func (a *Automaton) emit(dst []Hit, st uint32, end, lo, hi int) ([]Hit, bool) {
	q := st / a.nclass
	for o := a.outStart[q]; o < a.outEnd[q]; o++ {
		id := int(a.out[o])
		start := end - a.lens[id]
		if start < lo || start >= hi {
			continue
		}
		if len(dst) == cap(dst) {
			return dst, false
		}
		dst = append(dst, Hit{Start: start, End: end, ID: id})
	}
	return dst, true
}
