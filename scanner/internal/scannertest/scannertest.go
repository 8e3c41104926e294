// Package scannertest holds what the detectors' tests share: running a
// detector on a text, checking its release points (scanner.Holder) against
// its own Scan, and prompts of a given size for benchmarks.
package scannertest

import (
	"context"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/scanner"
)

// Scan runs d on text as a target of no particular direction or role, the
// way a detector that reads only the text is called, and fails the test on
// a scan error.
func Scan(t testing.TB, d scanner.Scanner, text string) scanner.Finding {
	t.Helper()
	return ScanTarget(t, d, &scanner.Target{Text: scanner.NewText(text)})
}

// ScanTarget runs d on target and fails the test on a scan error.
func ScanTarget(t testing.TB, d scanner.Scanner, target *scanner.Target) scanner.Finding {
	t.Helper()
	f, err := d.Scan(context.Background(), target)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	return f
}

// UserInput is text as a user's message on its way to the model.
func UserInput(text string) *scanner.Target {
	return &scanner.Target{Text: scanner.NewText(text), Direction: scanner.Input, Role: scanner.RoleUser}
}

// ReportSentence is an everyday request no default detector flags.
const ReportSentence = "Please summarise the attached quarterly report for the board and list three risks. "

// Fill repeats sentence to n bytes (cutting the last repetition, and
// dropping a character the cut would split), a prompt of a chosen size for
// benchmarks.
func Fill(sentence string, n int) string {
	return strings.ToValidUTF8(strings.Repeat(sentence, n/len(sentence)+1)[:n], "")
}

// Prompt2K is a 2 KiB everyday prompt, the size the detectors' speed is
// reported at.
func Prompt2K() string { return Fill(ReportSentence, 2048) }
