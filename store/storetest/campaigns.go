package storetest

import (
	"errors"
	"testing"

	"github.com/promptwall/promptwall/store"
)

// RunCampaigns runs the red-team campaigns conformance suite: campaigns,
// runs, attack runs and their results.
func RunCampaigns(t *testing.T, h Harness) {
	suite{
		{"CampaignRunStorage", testCampaignRunStorage},
	}.run(t, h)
}

func testCampaignRunStorage(t *testing.T, h Harness) {
	s := h.open(t, Options{})
	if err := s.PutCampaign(&store.Campaign{ID: "c1", OrgID: "o1", Name: "C"}); err != nil {
		t.Fatal(err)
	}
	if cs, err := s.ListCampaigns("o1"); err != nil || len(cs) != 1 || cs[0].CreatedAt.IsZero() {
		t.Fatalf("ListCampaigns %v %v", cs, err)
	}
	run := &store.CampaignRun{CampaignRunFields: store.CampaignRunFields{ID: store.NewID(), CampaignID: "c1", Status: store.RunQueued, Total: "3"}, OrgID: "o1"}
	for i := range 3 {
		// Ids are not in plan order: reads must order by Index.
		run.AttackRuns = append(run.AttackRuns, &store.AttackRun{AttackRunFields: store.AttackRunFields{ID: []string{"z", "a", "m"}[i]}, CampaignRunID: run.ID, Index: i})
	}
	if err := s.CreateCampaignRun(run); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateCampaignRun(run); !errors.Is(err, store.ErrInvalidRecord) {
		t.Fatalf("duplicate create: %v", err)
	}
	run.Status = store.RunRunning
	ar := *run.AttackRuns[1]
	ar.Results = []store.AttackResult{{AttackResultFields: store.AttackResultFields{Converter: "base64", Vulnerable: true}}}
	if err := s.SaveCampaignRun(run, &ar); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetCampaignRun(run.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.RunRunning || len(got.AttackRuns) != 3 || got.AttackRuns[0].ID != "z" || got.AttackRuns[1].ID != "a" ||
		len(got.AttackRuns[1].Results) != 1 {
		t.Fatalf("got %+v", got)
	}
	if lite, _ := s.GetCampaignRun(run.ID, false); len(lite.AttackRuns[1].Results) != 0 {
		t.Fatal("results loaded without withResults")
	}
	tests := []struct {
		name string
		r    store.CampaignRun
		ars  []*store.AttackRun
	}{
		{"bad status", store.CampaignRun{CampaignRunFields: store.CampaignRunFields{ID: run.ID, Status: "paused"}, OrgID: "o1"}, nil},
		{"other org", store.CampaignRun{CampaignRunFields: store.CampaignRunFields{ID: run.ID, Status: store.RunFailed}, OrgID: "o2"}, nil},
		{"foreign attack run", store.CampaignRun{CampaignRunFields: store.CampaignRunFields{ID: run.ID, Status: store.RunFailed}, OrgID: "o1"},
			[]*store.AttackRun{{AttackRunFields: store.AttackRunFields{ID: "x"}, CampaignRunID: "other"}}},
	}
	for _, tt := range tests {
		if err := s.SaveCampaignRun(&tt.r, tt.ars...); !errors.Is(err, store.ErrInvalidRecord) {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	if err := s.SaveCampaignRun(&store.CampaignRun{CampaignRunFields: store.CampaignRunFields{ID: "missing", Status: store.RunFailed}, OrgID: "o1"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("save missing: %v", err)
	}
	if rs, err := s.CampaignRunsWithStatus(store.RunRunning); err != nil || len(rs) != 1 || len(rs[0].AttackRuns) != 0 {
		t.Fatalf("CampaignRunsWithStatus %v %v", rs, err)
	}
	if rs, _ := s.CampaignRunsWithStatus(store.RunCompleted); len(rs) != 0 {
		t.Fatal("completed runs found")
	}
	if _, err := s.ListCampaignRuns(store.CampaignRunQuery{OrgID: "o1", Limit: 0}); !errors.Is(err, store.ErrInvalidLimit) {
		t.Fatalf("limit 0: %v", err)
	}
	// A prompts cursor never continues a runs list.
	page, err := s.ListCampaignRuns(store.CampaignRunQuery{OrgID: "o1", Limit: 1})
	if err != nil || len(page.Items) != 1 {
		t.Fatal(page, err)
	}
	put(t, s, &store.Prompt{PromptFields: store.PromptFields{OrgID: "o1"}})
	put(t, s, &store.Prompt{PromptFields: store.PromptFields{OrgID: "o1"}})
	syncStore(t, s)
	prompts, err := s.ListPrompts(store.Query{OrgID: "o1", Limit: 1})
	if err != nil || prompts.Next == "" {
		t.Fatalf("prompts page: %+v %v", prompts, err)
	}
	if _, err := s.ListCampaignRuns(store.CampaignRunQuery{OrgID: "o1", Limit: 1, Cursor: prompts.Next}); !errors.Is(err, store.ErrBadCursor) {
		t.Fatalf("prompts cursor accepted: %v", err)
	}
}
