package streamscreen

import (
	"context"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/format"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/banned"
	"github.com/promptwall/promptwall/scanner/pii"
	"github.com/promptwall/promptwall/scanner/secrets"
)

// modifyPipeline redacts secrets and every kind of personal data in answers.
func modifyPipeline(t *testing.T) *scanner.Pipeline {
	return answerPipeline(t, scanner.Setting{Mode: scanner.ModeModify}, "pii", pii.Config{})
}

// answerPipeline screens answers for secrets, the personal data of
// piiConfig (a stage named piiID) and a banned phrase, every stage with
// base's mode and flag message.
func answerPipeline(t *testing.T, base scanner.Setting, piiID string, piiConfig pii.Config) *scanner.Pipeline {
	t.Helper()
	sec, err := secrets.New(secrets.Config{})
	if err != nil {
		t.Fatal(err)
	}
	per, err := pii.New(piiConfig)
	if err != nil {
		t.Fatal(err)
	}
	ban, err := banned.New(banned.Config{Substrings: []string{"Project Nightingale"}})
	if err != nil {
		t.Fatal(err)
	}
	setting := func(id string) scanner.Setting {
		s := base
		s.ID, s.Version, s.Enabled, s.Blocking, s.Directions = id, "1", true, true, []scanner.Direction{scanner.Output}
		return s
	}
	p, err := scanner.NewPipeline([]scanner.Stage{
		{Setting: setting("secrets"), Scanner: sec},
		{Setting: setting(piiID), Scanner: per},
		{Setting: setting("banned"), Scanner: ban},
	}, scanner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestIncrementalScreeningFindsWhatFullContextFinds streams answers word by
// word (and byte by byte) and compares what the client receives when each
// screening covers only the unreleased text and the detectors' lookbehind
// with what it receives when every screening goes HoldBack bytes back:
// matches whose cue or key name was released long before (a social
// security number after "SSN", a password after a long key name, a URI's
// scheme), matches longer than HoldBack, and prose must come out the same,
// blocked or redacted.
func TestIncrementalScreeningFindsWhatFullContextFinds(t *testing.T) {
	answers := []string{
		"Sure, here it is: " + fakeKey + " and more words after.",
		"The applicant's SSN is on file, it reads 078-05-1120 as printed on the card.",
		"Set MY_SERVICE_PRIMARY_DATABASE_PASSWORD=\"Tr0ub4dor&3x\" in the environment and restart.",
		"Connect with postgresql://admin:s3cr3t-Passw0rd@db.internal:5432/app then run the migration.",
		"Call me at +1 (415) 555-0132 or write to jane.doe@example.com before Friday.",
		"The card 4111 1111 1111 1111 expires next year, said Jane Doe from Paris.",
		"We discussed Project Nightingale yesterday and the plan for next quarter.",
		"A token: sk-proj-" + strings.Repeat("Ab3dEf6hIj9k", 6) + "T3BlbkFJ" + strings.Repeat("Zy8xWv5uTs2r", 6) + " ends here.",
		"Water the herbs in the morning, mix compost into the raised bed each spring, and rotate the beans.",
		"Use the header Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U please.",
		"export GITHUB_TOKEN=ghp_" + strings.Repeat("a1B2c3D4e5", 3) + "f6G7h8 then push.",
		"The deploy token for staging is: 9fK2mQ7xLp4vR8tZ1cW6yB3nH5jD0sGq and it expires soon.",
		"The deploy token that you will need for the staging cluster is 9fK2mQ7xLp4vR8tZ1cW6yB3nH5jD0sGq today.",
		"This is the public and shared signing key for the staging cluster: 9fK2mQ7xLp4vR8tZ1cW6yB3nH5jD0sGq ok.",
		"In config.yaml set aws_secret_access_key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8vN2kLp7Ht9 for the deploy user.",
	}
	sec, err := secrets.New(secrets.Config{})
	if err != nil {
		t.Fatal(err)
	}
	secretsOnly, err := scanner.NewPipeline([]scanner.Stage{{Setting: scanner.Setting{ID: "secrets", Version: "1", Enabled: true,
		Mode: scanner.ModeModify, Blocking: true, Directions: []scanner.Direction{scanner.Output}}, Scanner: sec}}, scanner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pipelines := map[string]*scanner.Pipeline{"block": guard(t), "modify": modifyPipeline(t), "secrets only": secretsOnly}
	f, err := format.ByName(format.NameOpenAIChat)
	if err != nil {
		t.Fatal(err)
	}
	splits := map[string]func(string) []string{
		"words": func(s string) []string { return strings.SplitAfter(s, " ") },
		"bytes": func(s string) []string { return strings.Split(s, "") },
	}
	for pname, p := range pipelines {
		if lb := p.Lookbehind(scanner.Output); lb <= 0 || lb >= DefaultHoldBack {
			t.Fatalf("%s pipeline lookbehind %d: the test would not screen incrementally", pname, lb)
		}
		for sname, split := range splits {
			for _, answer := range answers {
				for _, holdBack := range []int{32, DefaultHoldBack} {
					run := func(lookbehind int) (string, Outcome) {
						var writes []string
						opts := releaseOptions(p)
						opts.Lookbehind = lookbehind
						opts.HoldBack = holdBack
						opts.Stream = f.NewStream(&perEvent{events: eventsOf(t, f, builders[format.NameOpenAIChat](split(answer)))})
						opts.Emit = func(b []byte) error { writes = append(writes, string(b)); return nil }
						out, err := Run(context.Background(), opts)
						if err != nil {
							t.Fatal(err)
						}
						got, _ := clientText(t, f, writes)
						return got, out
					}
					full, fullOut := run(0)
					inc, incOut := run(p.Lookbehind(scanner.Output))
					if inc != full || incOut.Blocked != fullOut.Blocked || incOut.Redacted != fullOut.Redacted {
						t.Errorf("%s/%s/hold back %d: %.40q\nincremental: blocked %v, client %q\nfull:        blocked %v, client %q",
							pname, sname, holdBack, answer, incOut.Blocked, inc, fullOut.Blocked, full)
					}
				}
			}
		}
	}
}

func TestPipelineLookbehind(t *testing.T) {
	sec, err := secrets.New(secrets.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ban, err := banned.New(banned.Config{Substrings: []string{"Project Nightingale"}})
	if err != nil {
		t.Fatal(err)
	}
	setting := func(id string, enabled bool, dirs ...scanner.Direction) scanner.Setting {
		return scanner.Setting{ID: id, Version: "1", Enabled: enabled, Mode: scanner.ModeBlock, Blocking: true,
			FlagMessage: "blocked", Directions: dirs}
	}
	tests := []struct {
		name   string
		stages []scanner.Stage
		want   int
	}{
		{"secrets", []scanner.Stage{{Setting: setting("s", true, scanner.Output), Scanner: sec}}, 128},
		{"banned", []scanner.Stage{{Setting: setting("b", true, scanner.Output), Scanner: ban}}, 16},
		{"the most of them", []scanner.Stage{{Setting: setting("b", true, scanner.Output), Scanner: ban},
			{Setting: setting("s", true, scanner.Output), Scanner: sec}}, 128},
		{"a detector that does not say", []scanner.Stage{{Setting: setting("s", true, scanner.Output), Scanner: sec},
			{Setting: setting("x", true, scanner.Output), Scanner: silent{}}}, 0},
		{"disabled or input-only ones do not count", []scanner.Stage{{Setting: setting("b", true, scanner.Output), Scanner: ban},
			{Setting: setting("x", false, scanner.Output), Scanner: silent{}},
			{Setting: setting("y", true, scanner.Input), Scanner: silent{}}}, 16},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := scanner.NewPipeline(tc.stages, scanner.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Lookbehind(scanner.Output); got != tc.want {
				t.Errorf("Lookbehind = %d, want %d", got, tc.want)
			}
		})
	}
}

// silent is a detector that finds nothing and implements no release point.
type silent struct{}

func (silent) Type() string { return "silent" }
func (silent) Scan(context.Context, *scanner.Target) (scanner.Finding, error) {
	return scanner.Finding{}, nil
}

// TestRedactionAcrossEventsIsOnePlaceholder redacts values split across
// events, byte by byte included: the client reads one placeholder per
// value, numbered across the answer as in a held one, and each rewritten
// event is the format's valid JSON.
func TestRedactionAcrossEventsIsOnePlaceholder(t *testing.T) {
	p := modifyPipeline(t)
	f, err := format.ByName(format.NameOpenAIChat)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		answer, want string
	}{
		{"Write to jane.doe@example.com or to john.roe@example.org today.",
			"Write to [EMAIL_ADDRESS_1] or to [EMAIL_ADDRESS_2] today."},
		{"The key " + fakeKey + " and again " + fakeKey + ", done.",
			"The key [AWS_ACCESS_KEY_ID_1] and again [AWS_ACCESS_KEY_ID_1], done."},
		{"Call me at +1 (415) 555-0132 tomorrow.", "Call me at [PHONE_NUMBER_1] tomorrow."},
	}
	splits := map[string]func(string) []string{
		"whole":  func(s string) []string { return []string{s} },
		"words":  func(s string) []string { return strings.SplitAfter(s, " ") },
		"thirds": func(s string) []string { n := len(s); return []string{s[:n/3], s[n/3 : 2*n/3], s[2*n/3:]} },
		"bytes":  func(s string) []string { return strings.Split(s, "") },
	}
	for _, tc := range tests {
		for sname, split := range splits {
			t.Run(sname+"/"+tc.answer[:16], func(t *testing.T) {
				var writes []string
				opts := releaseOptions(p)
				opts.Stream = f.NewStream(&perEvent{events: eventsOf(t, f, builders[format.NameOpenAIChat](split(tc.answer)))})
				opts.Emit = func(b []byte) error { writes = append(writes, string(b)); return nil }
				out, err := Run(context.Background(), opts)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := clientText(t, f, writes)
				if got != tc.want || out.Redacted != tc.want {
					t.Errorf("client read %q (record %q), want %q", got, out.Redacted, tc.want)
				}
			})
		}
	}
}
