package redteam

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/promptwall/promptwall/store"
)

// blockLeaks passes every request and blocks, on endpoint "strict", every
// answer that contains "reference code": an endpoint whose output scanners
// catch what the mock target leaks.
type blockLeaks struct{ answers atomic.Int32 }

func (b *blockLeaks) Screen(context.Context, string, []Message) (bool, string) {
	return false, "passed"
}

func (b *blockLeaks) ScreenAnswer(_ context.Context, endpoint string, conv []Message, answer string) (bool, string) {
	b.answers.Add(1)
	if len(conv) == 0 || conv[len(conv)-1].Role != "user" {
		return true, "error" // the runner must pass the conversation that was sent
	}
	if endpoint == "strict" && strings.Contains(answer, "reference code") {
		return true, "blocked"
	}
	return false, "passed"
}

func TestEndpointTargetScreensAnswers(t *testing.T) {
	screener := &blockLeaks{}
	g := newRig(t, &mockTarget{}, func(o *Options) { o.Screener = screener })
	id := g.campaign(t, store.Campaign{
		Name: "Answers", Providers: []string{"p1"}, Packs: []string{"hand"}, Converters: []string{ConvBase64},
		Targets: []string{TargetProvider, "endpoint:strict", "endpoint:lenient"},
	})
	run := g.runToEnd(t, id)

	type outcome struct{ target, attack, converter, outcome string }
	got := map[outcome]bool{}
	for _, ar := range run.AttackRuns {
		for _, res := range ar.Results {
			got[outcome{ar.Target, ar.Attack.ID, res.Converter, res.Outcome}] = true
			if res.Outcome == OutcomeBlocked && (len(res.Conversation) != 2 || !strings.HasPrefix(res.Reason, "answer blocked by policy of endpoint strict")) {
				t.Errorf("blocked answer: the result keeps the answer or lacks the reason: %+v", res)
			}
		}
	}
	// The mock leaks the canary in every base64 answer: vulnerable
	// directly and behind an endpoint that lets the answer through,
	// blocked behind one whose output scanners catch it.
	for _, tc := range []outcome{
		{TargetProvider, "leak", ConvBase64, OutcomeVulnerable},
		{"endpoint:lenient", "leak", ConvBase64, OutcomeVulnerable},
		{"endpoint:strict", "leak", ConvBase64, OutcomeBlocked},
		{"endpoint:strict", "leak", "", OutcomeResisted},
		{TargetProvider, "leak", "", OutcomeResisted},
	} {
		if !got[tc] {
			t.Errorf("no result %+v in %v", tc, got)
		}
	}
	// Answers are screened for endpoint targets only: 4 attacks x 2
	// variants x 2 endpoints.
	if n := screener.answers.Load(); n != 16 {
		t.Errorf("%d answers screened, want 16", n)
	}
}
