package scannertest

import (
	"context"
	"testing"

	"github.com/promptwall/promptwall/scanner"
)

// Detector is a scanner that computes release points.
type Detector interface {
	scanner.Scanner
	scanner.Holder
}

// HoldPrefixes streams text byte by byte through d: for every prefix in which
// Scan finds nothing, Hold must keep every byte of every match Scan finds
// in the whole text, so no part of a match is released before it is
// recognised. conv is the rest of the exchange (nil for none). It fails
// the test when the whole text holds no match.
func HoldPrefixes(t *testing.T, d Detector, text string, conv *scanner.Conversation) {
	t.Helper()
	target := func(s string) *scanner.Target {
		return &scanner.Target{Text: scanner.NewText(s), Direction: scanner.Output, Role: scanner.RoleAssistant, Conversation: conv}
	}
	full, err := d.Scan(context.Background(), target(text))
	if err != nil {
		t.Fatal(err)
	}
	if !full.Detected {
		t.Fatalf("no match in the whole text %q", text)
	}
	for k := 1; k <= len(text); k++ {
		prefix := text[:k]
		f, err := d.Scan(context.Background(), target(prefix))
		if err != nil {
			t.Fatal(err)
		}
		if f.Detected {
			continue // screened and stopped before anything is released
		}
		h := d.Hold(target(prefix))
		for _, m := range full.Matches {
			if m.Start < k && h > m.Start {
				t.Fatalf("prefix %q: hold %d releases %q of the match at %d..%d", prefix, h, prefix[m.Start:min(h, m.End)], m.Start, m.End)
			}
		}
	}
}

// Hold returns d's release point for text.
func Hold(d scanner.Holder, text string, conv *scanner.Conversation) int {
	return d.Hold(&scanner.Target{Text: scanner.NewText(text), Direction: scanner.Output, Role: scanner.RoleAssistant, Conversation: conv})
}
