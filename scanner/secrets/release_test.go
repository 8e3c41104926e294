package secrets

import (
	"context"
	"testing"

	"github.com/promptwall/promptwall/scanner"
)

func hold(t *testing.T, s *Scanner, text string) int {
	t.Helper()
	return s.Hold(&scanner.Target{Text: scanner.NewText(text), Direction: scanner.Output})
}

// TestHoldCoversEverySecretPrefix streams each text byte by byte: for every
// prefix in which Scan finds nothing, Hold must keep every byte of every
// secret the whole text holds, so no part of a secret is released before
// the secret is recognised.
func TestHoldCoversEverySecretPrefix(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{
		"aws id in prose":       "my key is " + awsID + ", can you check it?",
		"aws secret assignment": "aws_secret_access_key: \"" + awsSecret + "\" done",
		"github token json":     `{"token": "` + ghp + `"} ok`,
		"openai key":            "export OPENAI_API_KEY=" + openai + " and more",
		"anthropic key":         "client = Anthropic(api_key='" + anthropic + "') then",
		"slack bot":             "SLACK_TOKEN=" + slackBot + " fine",
		"jwt bearer":            "Authorization: Bearer " + jwt + " end",
		"private key":           "here is my key:\n" + pem + "\nthanks",
		"postgres uri":          "DATABASE_URL=postgres://app:Xk9qLm2vR@db.internal:5432/stock ok",
		"password assignment":   `config: db_password = "Tr0ub4dor&3" ok`,
		"password in prose":     "The password for user 'admin' is 'hunter22' so log in",
		"generic secret":        "client_secret: 9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c then",
		"basic auth header":     "authorization: basic dXNlcjpwYXNzd29yZDEyMw== next",
	}
	for name, text := range texts {
		t.Run(name, func(t *testing.T) {
			full, err := s.Scan(context.Background(), &scanner.Target{Text: scanner.NewText(text)})
			if err != nil {
				t.Fatal(err)
			}
			if !full.Detected {
				t.Fatalf("no secret found in the whole text %q", text)
			}
			for k := 1; k <= len(text); k++ {
				prefix := text[:k]
				f, err := s.Scan(context.Background(), &scanner.Target{Text: scanner.NewText(prefix)})
				if err != nil {
					t.Fatal(err)
				}
				if f.Detected {
					continue // screened and blocked before anything is released
				}
				h := hold(t, s, prefix)
				for _, m := range full.Matches {
					if m.Start < k && h > m.Start {
						t.Fatalf("prefix %q: hold %d releases %q of the secret at %d..%d", prefix, h, prefix[m.Start:min(h, m.End)], m.Start, m.End)
					}
				}
			}
		})
	}
}

func TestHoldReleasesProse(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, text string
		want       int
	}{
		{"words behind the last token", "The capital of France is Par", 25},
		{"text ending in a space", "The capital of France is ", 25},
		{"token-shaped word", "use the key AKIA", 12},
		{"password in prose that settles", "choose a strong password for every account you", 43},
		{"assignment waiting for its value", "set password = ", 4},
		{"uri authority open", "connect to postgres://app:Xk9", 11},
		{"uri authority ended", "connect to postgres://db.example.com/app now", 41},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hold(t, s, tt.text); got != tt.want {
				t.Errorf("Hold(%q) = %d (%q released), want %d", tt.text, got, tt.text[:got], tt.want)
			}
		})
	}
}
