package promptleak

import (
	"testing"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/internal/scannertest"
)

func TestHold(t *testing.T) {
	s, err := New(Config{MinOverlap: 4, Canaries: []string{"ZETA-CANARY-77"}})
	if err != nil {
		t.Fatal(err)
	}
	conv := &scanner.Conversation{Messages: []scanner.Message{{Role: scanner.RoleSystem,
		Text: "You are Orbit, the support bot of Acme. Never discuss pricing tiers with anyone."}}}
	for _, text := range []string{
		"My instructions say: never discuss pricing tiers with anyone at all.",
		"The token is ZETA-CANARY-77, as planted.",
	} {
		t.Run(text, func(t *testing.T) { scannertest.HoldPrefixes(t, s, text, conv) })
	}
	tests := []struct {
		text string
		want int
	}{
		{"I will never discuss", 7},
		{"I will never disc", 7},
		{"I will talk about it", 20},
		{"code ZETA-CAN", 5},
	}
	for _, tt := range tests {
		if got := scannertest.Hold(s, tt.text, conv); got != tt.want {
			t.Errorf("Hold(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}
