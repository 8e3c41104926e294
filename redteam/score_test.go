package redteam

import (
	"testing"

	"github.com/promptwall/promptwall/store"
)

func TestScores(t *testing.T) {
	tests := []struct {
		name           string
		s              store.RunStats
		casi, asr, blk string
	}{
		{"nothing judged", store.RunStats{Attempts: 3, Errors: 3}, "", "", ""},
		{"all resisted", store.RunStats{Resisted: 2, SeverityJudged: 7, SeverityResisted: 7}, "100.00", "0.00", "0.00"},
		{"all vulnerable", store.RunStats{Vulnerable: 2, SeverityJudged: 7}, "0.00", "100.00", "0.00"},
		{"weighted", store.RunStats{Vulnerable: 1, Resisted: 2, Blocked: 1, SeverityJudged: 3 + 5 + 1, SeverityResisted: 6}, "66.67", "33.33", "33.33"},
		{"round half up", store.RunStats{Vulnerable: 7, Resisted: 1, SeverityJudged: 8, SeverityResisted: 1}, "12.50", "87.50", "0.00"},
	}
	for _, tt := range tests {
		if got := CASIScore(tt.s); got != tt.casi {
			t.Errorf("%s: CASI %q, want %q", tt.name, got, tt.casi)
		}
		if got := AttackSuccessRate(tt.s); got != tt.asr {
			t.Errorf("%s: ASR %q, want %q", tt.name, got, tt.asr)
		}
		if got := BlockRate(tt.s); got != tt.blk {
			t.Errorf("%s: block rate %q, want %q", tt.name, got, tt.blk)
		}
	}
	r := store.AttackResult{AttackResultFields: store.AttackResultFields{Outcome: OutcomeBlocked}}
	if s := statsOf(4, &r); s.Blocked != 1 || s.Resisted != 1 || s.SeverityJudged != 4 || s.SeverityResisted != 4 {
		t.Fatalf("blocked attempt stats %+v", s)
	}
	r.Outcome = OutcomeError
	if s := statsOf(4, &r); s.Errors != 1 || s.SeverityJudged != 0 {
		t.Fatalf("error attempt stats %+v", s)
	}
}
