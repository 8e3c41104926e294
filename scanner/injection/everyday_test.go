package injection

import (
	"bufio"
	"context"
	"os"
	"testing"

	"github.com/promptwall/promptwall/scanner"
)

// TestEverydayInstructions measures false positives on ordinary user
// instructions written for Promptwall and never trained on
// (testdata/everyday_heldout.txt). The labelled dev set has no such texts
// on its benign side, and its attacks are ordinary instructions planted in
// documents, so the shipped model flags some of them: this is why the
// default endpoint flags injections rather than blocking them. The bound is
// a ratchet: today's count, which a change may lower but not raise.
func TestEverydayInstructions(t *testing.T) {
	const ratchet = 5
	f, err := os.Open("testdata/everyday_heldout.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	var n, detected int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		res, err := s.Scan(context.Background(), &scanner.Target{Text: scanner.NewText(sc.Text()), Direction: scanner.Input, Role: scanner.RoleUser})
		if err != nil {
			t.Fatal(err)
		}
		if res.Detected {
			detected++
			t.Logf("false positive (score %.2f): %s", res.Score, sc.Text())
		}
	}
	t.Logf("%d of %d everyday instructions detected as injections", detected, n)
	if n < 30 || detected > ratchet {
		t.Errorf("%d of %d everyday instructions detected, more than the ratchet of %d", detected, n, ratchet)
	}
}
