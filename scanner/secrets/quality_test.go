package secrets

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/internal/dataset"
	"github.com/promptwall/promptwall/scanner"
)

type devRow struct {
	Text  string `json:"text"`
	Label int    `json:"label"`
	Rule  string `json:"rule"`
}

// TestDevSet is the quality gate: recall >= 0.95 on the secrets dev set's
// positives and false-positive rate <= 0.05 on its near-miss negatives.
// It logs the misses and false positives per upstream rule.
func TestDevSet(t *testing.T) {
	path := dataset.Require(t, "secrets/dev.jsonl")
	rows, err := dataset.ReadJSONL[devRow](path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	var tp, fn, fp, neg int
	misses, fps := map[string]int{}, map[string]int{}
	for _, r := range rows {
		f, err := s.Scan(context.Background(), &scanner.Target{Text: scanner.NewText(r.Text)})
		if err != nil {
			t.Fatal(err)
		}
		if r.Label == 0 {
			neg++
		}
		switch {
		case r.Label == 1 && f.Detected:
			tp++
		case r.Label == 1:
			fn++
			misses[r.Rule]++
			if testing.Verbose() {
				t.Logf("miss %s: %.90q", r.Rule, r.Text)
			}
		case f.Detected:
			fp++
			fps[r.Rule]++
			t.Logf("false positive %s: %.90q -> %s", r.Rule, r.Text, kindsOf(f))
		}
	}
	t.Logf("per-rule misses:\n%s", table(misses))
	t.Logf("per-rule false positives:\n%s", table(fps))
	recall := float64(tp) / float64(tp+fn)
	fpr := float64(fp) / float64(neg)
	t.Logf("recall %.3f (%d/%d), false-positive rate %.3f (%d/%d)", recall, tp, tp+fn, fpr, fp, neg)
	if recall < 0.95 {
		t.Errorf("recall %.3f < 0.95", recall)
	}
	if fpr > 0.05 {
		t.Errorf("false-positive rate %.3f > 0.05", fpr)
	}
}

func kindsOf(f scanner.Finding) string {
	var ks []string
	for _, m := range f.Matches {
		ks = append(ks, m.Kind)
	}
	return strings.Join(ks, ",")
}

func table(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %3d  %s\n", m[k], k)
	}
	return b.String()
}
