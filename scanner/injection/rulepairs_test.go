package injection

import "testing"

// TestPairFilterHoldsEveryPair checks that the pair filter has no false
// negative on the shipped rules: a missing pair would silently drop a
// rule's hits wherever it starts with that pair.
func TestPairFilterHoldsEveryPair(t *testing.T) {
	paired := 0
	for _, tr := range rules.triggers {
		for _, ri := range tr.rules {
			r := &rules.rules[ri&^pairedRule]
			if (ri&pairedRule != 0) != r.paired() {
				t.Fatalf("rule %d: paired flag %v, paired() %v", ri&^pairedRule, ri&pairedRule != 0, r.paired())
			}
			if !r.paired() {
				if !tr.unpaired {
					t.Errorf("trigger %x starts unpaired rule %d but is not marked", tr.hash, ri)
				}
				continue
			}
			paired++
			for _, w := range r.second.words {
				if !rules.pairs.has(tr.hash, fnv64(w)) {
					t.Errorf("rule %d: pair (%x, %q) missing from the filter", ri&^pairedRule, tr.hash, w)
				}
			}
		}
	}
	if paired == 0 {
		t.Error("no paired rule: the filter is not exercised")
	}
}
