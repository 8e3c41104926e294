package injection

import "fmt"

// pairedRule flags, in a trigger's rule list, a rule whose second slot is
// a plain list of words (no prefix, gap, option or negation): it can match
// only where the pair of its trigger word and the next word is in the
// ruleSet's pairFilter.
const pairedRule = 1 << 15

// pairFilter is a Bloom filter with one hash over the pairs (trigger word,
// second word) of the paired rules: a pair not in it is surely no rule's
// start, a pair in it usually is (a few percent are false positives, which
// the rule's own test then rejects). A bit array of 16 bits a pair keeps
// it a few kilobytes, in cache beside the trigger index.
type pairFilter struct {
	bits  []uint64
	shift uint8 // 64 - log2 of the number of bits
}

// pairKey mixes the two words' FNV-1a hashes; the filter takes its top
// bits.
func pairKey(first, second uint64) uint64 {
	return (first*0x9E3779B97F4A7C15 ^ second) * 0xD6E8FEB86659FD93
}

func (p *pairFilter) init(pairs int) {
	logBits := uint8(12)
	for 1<<logBits < 16*pairs {
		logBits++
	}
	p.bits = make([]uint64, 1<<logBits/64)
	p.shift = 64 - logBits
}

func (p *pairFilter) add(first, second uint64) {
	k := pairKey(first, second) >> p.shift
	p.bits[k>>6] |= 1 << (k & 63)
}

// has says whether the pair may be in the filter.
func (p *pairFilter) has(first, second uint64) bool {
	k := pairKey(first, second) >> (p.shift & 63)
	return p.bits[k>>6]&(1<<(k&63)) != 0
}

// paired says whether r's second slot is a plain word list.
func (r *rule) paired() bool {
	return r.second != nil && len(r.second.prefixes) == 0 && len(r.second.set) > 0
}

// pairRules fills the pair filter from the compiled rules and flags the
// paired rules in the triggers' lists.
func (rs *ruleSet) pairRules() error {
	if len(rs.rules) >= pairedRule {
		return fmt.Errorf("injection: %d rules, more than a trigger list can index", len(rs.rules))
	}
	pairs := 0
	for _, tr := range rs.triggers {
		for _, ri := range tr.rules {
			if r := &rs.rules[ri]; r.paired() {
				pairs += len(r.second.words)
			}
		}
	}
	rs.pairs.init(pairs)
	for t := range rs.triggers {
		tr := &rs.triggers[t]
		for k, ri := range tr.rules {
			r := &rs.rules[ri]
			if !r.paired() {
				tr.unpaired = true
				continue
			}
			for _, w := range r.second.words {
				rs.pairs.add(tr.hash, fnv64(w))
			}
			tr.rules[k] = ri | pairedRule
		}
	}
	return nil
}
