package store

import (
	"errors"
	"testing"
)

func TestCampaignRunStorage(t *testing.T) {
	s := openTest(t, Options{})
	if err := s.PutCampaign(&Campaign{ID: "c1", OrgID: "o1", Name: "C"}); err != nil {
		t.Fatal(err)
	}
	if cs, err := s.ListCampaigns("o1"); err != nil || len(cs) != 1 || cs[0].CreatedAt.IsZero() {
		t.Fatalf("ListCampaigns %v %v", cs, err)
	}
	run := &CampaignRun{ID: NewID(), OrgID: "o1", CampaignID: "c1", Status: RunQueued, Total: "3"}
	for i := range 3 {
		// Ids are not in plan order: reads must order by Index.
		run.AttackRuns = append(run.AttackRuns, &AttackRun{ID: []string{"z", "a", "m"}[i], CampaignRunID: run.ID, Index: i})
	}
	if err := s.CreateCampaignRun(run); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateCampaignRun(run); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("duplicate create: %v", err)
	}
	run.Status = RunRunning
	ar := *run.AttackRuns[1]
	ar.Results = []AttackResult{{Converter: "base64", Vulnerable: true}}
	if err := s.SaveCampaignRun(run, &ar); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetCampaignRun(run.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != RunRunning || len(got.AttackRuns) != 3 || got.AttackRuns[0].ID != "z" || got.AttackRuns[1].ID != "a" ||
		len(got.AttackRuns[1].Results) != 1 {
		t.Fatalf("got %+v", got)
	}
	if lite, _ := s.GetCampaignRun(run.ID, false); len(lite.AttackRuns[1].Results) != 0 {
		t.Fatal("results loaded without withResults")
	}
	tests := []struct {
		name string
		r    CampaignRun
		ars  []*AttackRun
	}{
		{"bad status", CampaignRun{ID: run.ID, OrgID: "o1", Status: "paused"}, nil},
		{"other org", CampaignRun{ID: run.ID, OrgID: "o2", Status: RunFailed}, nil},
		{"foreign attack run", CampaignRun{ID: run.ID, OrgID: "o1", Status: RunFailed}, []*AttackRun{{ID: "x", CampaignRunID: "other"}}},
	}
	for _, tt := range tests {
		if err := s.SaveCampaignRun(&tt.r, tt.ars...); !errors.Is(err, ErrInvalidRecord) {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	if err := s.SaveCampaignRun(&CampaignRun{ID: "missing", OrgID: "o1", Status: RunFailed}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("save missing: %v", err)
	}
	if rs, err := s.CampaignRunsWithStatus(RunRunning); err != nil || len(rs) != 1 || len(rs[0].AttackRuns) != 0 {
		t.Fatalf("CampaignRunsWithStatus %v %v", rs, err)
	}
	if rs, _ := s.CampaignRunsWithStatus(RunCompleted); len(rs) != 0 {
		t.Fatal("completed runs found")
	}
	if _, err := s.ListCampaignRuns(CampaignRunQuery{OrgID: "o1", Limit: 0}); !errors.Is(err, ErrInvalidLimit) {
		t.Fatalf("limit 0: %v", err)
	}
	// A prompts cursor never continues a runs list.
	page, err := s.ListCampaignRuns(CampaignRunQuery{OrgID: "o1", Limit: 1})
	if err != nil || len(page.Items) != 1 {
		t.Fatal(page, err)
	}
	if _, err := s.ListCampaignRuns(CampaignRunQuery{OrgID: "o1", Limit: 1, Cursor: s.makeCursor(dirNext, 1, (&Query{OrgID: "o1"}).filterHash())}); !errors.Is(err, ErrBadCursor) {
		t.Fatalf("prompts cursor accepted: %v", err)
	}
}
