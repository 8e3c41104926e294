package redteam

import "context"

// AnswerScreener is implemented by a Screener that also screens the
// provider's answer with an endpoint's output scanners, as the gateway does
// before a client sees it. For an endpoint target the runner then judges
// what a client behind that endpoint would receive: an answer the endpoint
// blocks (a leaked secret, a banned phrase) counts as blocked, like a
// blocked attack, however vulnerable the provider was. A Screener without
// it judges endpoint targets on their requests only.
type AnswerScreener interface {
	// ScreenAnswer screens answer, the reply to conv, with endpoint's
	// output scanners; blocked and outcome are as for Screener.Screen.
	ScreenAnswer(ctx context.Context, endpoint string, conv []Message, answer string) (blocked bool, outcome string)
}
