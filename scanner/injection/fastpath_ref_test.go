package injection

import (
	"testing"

	"github.com/promptwall/promptwall/internal/dataset"
	"github.com/promptwall/promptwall/scanner"
)

// everydayTexts are the texts of the IFEval and MT-bench everyday sets:
// ordinary requests, long and short, with lists, code and quotations.
func everydayTexts(t *testing.T) []string {
	t.Helper()
	var texts []string
	for _, file := range []string{"testdata/everyday_ifeval.jsonl", "testdata/everyday_mtbench.jsonl"} {
		for _, r := range readTurns(t, file) {
			texts = append(texts, r.Text)
		}
	}
	return texts
}

// TestFastPathsMatchReferenceEveryday holds the feature walk and the
// scoring (the content-zone weight table, the content windows found by
// binary search) to their plain references, as the reference tests do
// on the dev set, on the everyday sets, whose texts the dev set lacks: a
// feature walk, a score or a window that differs there changes a
// verdict on ordinary traffic.
func TestFastPathsMatchReferenceEveryday(t *testing.T) {
	m, err := ShippedModel()
	if err != nil {
		t.Fatal(err)
	}
	texts := everydayTexts(t)
	if dir := dataset.Dir(); dir != "" {
		rows, err := dataset.ReadJSONL[Example](dir + "/injection/dev.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		// The dev set's texts as tool results and assistant turns:
		// other zones than TestScoreMatchesReference's.
		for _, r := range rows {
			texts = append(texts, r.Text)
		}
	}
	sc := new(scratch)
	for _, text := range texts {
		txt := scanner.NewText(text)
		view := txt.Folded()
		s := view.S
		checkExtract(t, s)
		for _, role := range []scanner.Role{scanner.RoleUser, scanner.RoleTool, scanner.RoleAssistant} {
			_, z := contentZone(txt, view, role)
			for _, w := range []int{m.window, minWindow} {
				if got, want := m.score(s, z, w, sc), refScore(m, s, z, w); got != want {
					t.Fatalf("role %s, window %d, zone %v, text %.60q: score %+v, reference %+v", role, w, z, text, got, want)
				}
			}
		}
	}
	t.Logf("%d texts agree", len(texts))
}
