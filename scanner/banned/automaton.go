package banned

// automaton is an Aho-Corasick DFA over bytes. Patterns are UTF-8 (folded
// text), matched byte-wise, which is exact for UTF-8 since no rune's
// encoding occurs inside another's.
//
// Written here rather than imported: the maintained Go libraries
// (cloudflare/ahocorasick, BobuSumisu/aho-corasick, petar-dambovaliev's
// port) allocate a slice of matches per search; this one walks a dense
// table over byte classes and calls back, allocating nothing, which the
// screening budget needs.
type automaton struct {
	class  [256]uint16
	nclass int
	delta  []int32 // delta[state*nclass+class]
	// out[state] is the longest pattern ending at state (-1 for none); the
	// shorter ones are reached through dict links.
	out  []int32
	dict []int32 // next state on the suffix chain that has an output
	lens []int
}

func newAutomaton(patterns []string) *automaton {
	a := &automaton{lens: make([]int, len(patterns))}
	a.nclass = 1
	for _, p := range patterns {
		for i := 0; i < len(p); i++ {
			if a.class[p[i]] == 0 {
				a.class[p[i]] = uint16(a.nclass)
				a.nclass++
			}
		}
	}
	type node struct {
		next map[uint16]int32
		fail int32
		out  int32
	}
	nodes := []node{{next: map[uint16]int32{}, out: -1}}
	for id, p := range patterns {
		a.lens[id] = len(p)
		s := int32(0)
		for i := 0; i < len(p); i++ {
			c := a.class[p[i]]
			n, ok := nodes[s].next[c]
			if !ok {
				n = int32(len(nodes))
				nodes = append(nodes, node{next: map[uint16]int32{}, out: -1})
				nodes[s].next[c] = n
			}
			s = n
		}
		if nodes[s].out < 0 {
			nodes[s].out = int32(id)
		}
	}
	a.delta = make([]int32, len(nodes)*a.nclass)
	a.out = make([]int32, len(nodes))
	a.dict = make([]int32, len(nodes))
	queue := make([]int32, 0, len(nodes))
	for c := 0; c < a.nclass; c++ {
		if n, ok := nodes[0].next[uint16(c)]; ok {
			a.delta[c] = n
			queue = append(queue, n)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		f := nodes[s].fail
		if nodes[f].out >= 0 {
			a.dict[s] = f
		} else {
			a.dict[s] = a.dict[f]
		}
		for c := 0; c < a.nclass; c++ {
			if n, ok := nodes[s].next[uint16(c)]; ok {
				nodes[n].fail = a.delta[int(f)*a.nclass+c]
				a.delta[int(s)*a.nclass+c] = n
				queue = append(queue, n)
			} else {
				a.delta[int(s)*a.nclass+c] = a.delta[int(f)*a.nclass+c]
			}
		}
	}
	for i, n := range nodes {
		a.out[i] = n.out
	}
	return a
}

// each calls fn for every occurrence of every pattern, overlapping ones
// included, in order of end offset; fn returns false to stop.
func (a *automaton) each(s string, fn func(id, start, end int) bool) {
	st := int32(0)
	for i := 0; i < len(s); i++ {
		st = a.delta[int(st)*a.nclass+int(a.class[s[i]])]
		for o := st; o != 0; o = a.dict[o] {
			if id := a.out[o]; id >= 0 {
				if !fn(int(id), i+1-a.lens[id], i+1) {
					return
				}
			}
		}
	}
}
