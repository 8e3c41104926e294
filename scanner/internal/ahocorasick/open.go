package ahocorasick

// OpenSuffix returns the length of the longest suffix of s that is a
// prefix of a pattern: the bytes a stream must not release yet, because
// the next bytes may complete a pattern that starts with them. A pattern
// already complete at the end of s counts too (a longer one may start
// with it).
func (a *Automaton) OpenSuffix(s string) int {
	delta, class := a.delta, &a.class
	st := uint32(0)
	for i := 0; i < len(s); i++ {
		st = delta[st+uint32(class[s[i]])] &^ hasOut
	}
	a.depthOnce.Do(a.computeDepths)
	return a.depths[st/a.nclass]
}

// computeDepths finds each state's trie depth as its distance from the
// root in the transition table: the shortest input reaching a state is
// the trie path that created it, since every input reaching it ends with
// that path.
func (a *Automaton) computeDepths() {
	n := len(a.outStart)
	depths := make([]int, n)
	seen := make([]bool, n)
	seen[0] = true
	queue := []uint32{0}
	for len(queue) > 0 {
		q := queue[0]
		queue = queue[1:]
		row := q * a.nclass
		for c := uint32(0); c < a.nclass; c++ {
			nx := (a.delta[row+c] &^ hasOut) / a.nclass
			if !seen[nx] {
				seen[nx] = true
				depths[nx] = depths[q] + 1
				queue = append(queue, nx)
			}
		}
	}
	a.depths = depths
}
