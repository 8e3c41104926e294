package record

import (
	"strings"
	"testing"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/store"
)

const key = "AKIAZ7VRSQ4LMXWB2PEH"

func result(typ string, findings ...scanner.MessageFinding) *scanner.Result {
	return &scanner.Result{Outcome: scanner.Blocked, Scanners: []scanner.ScannerResult{{
		ScannerID: typ, Type: typ, Outcome: scanner.Blocked, Direction: scanner.Input, Findings: findings,
	}}}
}

func redacted(typ string, findings ...scanner.MessageFinding) *scanner.Result {
	r := result(typ, findings...)
	r.Outcome, r.Scanners[0].Outcome = scanner.Modified, scanner.Modified
	return r
}

func flagged(typ string, findings ...scanner.MessageFinding) *scanner.Result {
	r := result(typ, findings...)
	r.Outcome, r.Scanners[0].Outcome = scanner.Flagged, scanner.Flagged
	return r
}

func finding(msg, start, end int, kind string) scanner.MessageFinding {
	return scanner.MessageFinding{Message: msg, Role: scanner.RoleUser, Match: scanner.Match{Start: start, End: end, Kind: kind, Score: 1}}
}

func TestMasking(t *testing.T) {
	conv := &scanner.Conversation{Messages: []scanner.Message{
		{Role: scanner.RoleSystem, Text: "You are terse."},
		{Role: scanner.RoleUser, Text: "my key is " + key + " ok"},
		{Role: scanner.RoleAssistant, Text: "noted"},
		{Role: scanner.RoleUser, Text: "use " + key + " again"},
	}}
	tests := []struct {
		name    string
		res     *scanner.Result
		msg     int
		leaks   bool
		changed bool
	}{
		{"secret masked in its message", result("secret", finding(3, 4, 24, "AWS_ACCESS_KEY_ID")), 3, false, true},
		{"pii masked", result("pii", finding(3, 4, 24, "X")), 3, false, true},
		{"injection spans are evidence, not masked", result("injection", finding(3, 4, 24, "OVERRIDE")), 3, true, false},
		{"findings of another message do not apply", result("secret", finding(1, 10, 30, "AWS_ACCESS_KEY_ID")), 3, true, false},
		{"whatever a scanner redacted is masked too", redacted("regex", finding(3, 4, 24, "PROJECT_CODE")), 3, false, true},
		{"a flagged custom pattern is evidence, kept", flagged("regex", finding(3, 4, 24, "PROJECT_CODE")), 3, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Text(conv, tc.msg, tc.res)
			if strings.Contains(got, key) != tc.leaks {
				t.Errorf("Text = %q, leaks=%v want %v", got, !tc.leaks, tc.leaks)
			}
			if (got != conv.Messages[tc.msg].Text) != tc.changed {
				t.Errorf("Text = %q changed=%v", got, tc.changed)
			}
			if len(got) != len(conv.Messages[tc.msg].Text) {
				t.Errorf("masking must keep the length so stored offsets stay valid: %q", got)
			}
		})
	}
}

func TestNewestUserMessage(t *testing.T) {
	tests := []struct {
		roles []scanner.Role
		want  int
	}{
		{[]scanner.Role{scanner.RoleSystem, scanner.RoleUser, scanner.RoleAssistant, scanner.RoleUser}, 3},
		{[]scanner.Role{scanner.RoleUser, scanner.RoleAssistant, scanner.RoleTool}, 0},
		{[]scanner.Role{scanner.RoleSystem}, -1},
		{nil, -1},
	}
	for _, tc := range tests {
		conv := &scanner.Conversation{}
		for _, r := range tc.roles {
			conv.Messages = append(conv.Messages, scanner.Message{Role: r, Text: "x"})
		}
		if got := NewestUserMessage(conv); got != tc.want {
			t.Errorf("%v: got %d want %d", tc.roles, got, tc.want)
		}
	}
	if Text(&scanner.Conversation{}, -1) != "" {
		t.Error("no user message must give an empty input")
	}
}

// A raw provider answer can echo what a scanner found, on either side.
func TestMaskValuesInRawAnswer(t *testing.T) {
	conv := &scanner.Conversation{Messages: []scanner.Message{{Role: scanner.RoleUser, Text: "key " + key}}}
	values := SensitiveValues(conv, result("secret", finding(0, 4, 24, "AWS_ACCESS_KEY_ID")))
	if len(values) != 1 || values[0] != key {
		t.Fatalf("values %q", values)
	}
	raw := `{"choices":[{"message":{"content":"You sent ` + key + `; never share ` + key + `"}}]}`
	got := MaskValues(raw, values)
	if strings.Contains(got, key) {
		t.Errorf("raw answer still holds the secret: %s", got)
	}
	if strings.Count(got, "AKIA****") != 2 {
		t.Errorf("every occurrence must be masked: %s", got)
	}
	// Out-of-range findings are ignored rather than panicking.
	if v := SensitiveValues(conv, result("secret", finding(0, 10, 99, "X"), finding(5, 0, 1, "X"))); len(v) != 0 {
		t.Errorf("out-of-range findings gave %q", v)
	}
}

func TestScannerResults(t *testing.T) {
	res := result("secret",
		finding(3, 4, 24, "AWS_ACCESS_KEY_ID"),
		finding(1, 10, 30, "AWS_ACCESS_KEY_ID"),
		scanner.MessageFinding{Message: 3}, // a classifier verdict without a span
	)
	out := ScannerResults(res, 3)
	if len(out) != 1 {
		t.Fatalf("results %d", len(out))
	}
	d := out[0].Data
	if len(d.Matches) != 1 || d.Matches[0] != [2]int{4, 24} {
		t.Errorf("matches must be the shown message's spans only, without empty ones: %v", d.Matches)
	}
	if len(d.Findings) != 3 {
		t.Errorf("findings keep every message: %d", len(d.Findings))
	}
	if out[0].ScanDirection != "input" || out[0].Outcome != "blocked" || d.Type != "secret" {
		t.Errorf("result %+v", out[0])
	}
	if ScannerResults(nil, 0) != nil {
		t.Error("a nil result has no scanner results")
	}
}

func TestAddDeferred(t *testing.T) {
	flagged := func(typ string) *scanner.Result {
		r := result(typ)
		r.Outcome, r.Scanners[0].Outcome = scanner.Flagged, scanner.Flagged
		return r
	}
	tests := []struct {
		name     string
		recorded scanner.Outcome
		deferred *scanner.Result
		want     scanner.Outcome
		results  int
	}{
		{"a flag raises a pass", scanner.Passed, flagged("webhook"), scanner.Flagged, 2},
		{"a flag leaves a block", scanner.Blocked, flagged("webhook"), scanner.Blocked, 2},
		{"nothing ran", scanner.Modified, &scanner.Result{Outcome: scanner.Passed}, scanner.Modified, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &store.Prompt{
				PromptFields: store.PromptFields{Result: store.PromptResult{Outcome: string(tc.recorded), ScannerResults: ScannerResults(result("secrets"), 0)}},
			}
			AddDeferred(p, tc.deferred, 0)
			if p.Result.Outcome != string(tc.want) || len(p.Result.ScannerResults) != tc.results {
				t.Errorf("outcome %s with %d results, want %s with %d", p.Result.Outcome, len(p.Result.ScannerResults), tc.want, tc.results)
			}
			if p.Result.ScannerResults[0].ScannerID != "secrets" {
				t.Errorf("the blocking scanner's result is not first: %+v", p.Result.ScannerResults)
			}
		})
	}
}
