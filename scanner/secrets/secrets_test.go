package secrets

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/promptwall/promptwall/internal/raceflag"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/internal/scannertest"
)

// matched returns the text of each match of f.
func matched(text string, f scanner.Finding) []string {
	var got []string
	for _, m := range f.Matches {
		got = append(got, text[m.Start:m.End])
	}
	return got
}

// Realistic-looking but invalid credentials; several are the providers'
// own documentation examples.
const (
	awsID     = "AKIAZ3MHQ7TX4KD2WQ5N"
	awsSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKY"
	ghp       = "ghp_XIxB7KMNdAr3zqWtQqhE94qglHqOzn1D1stg"
	openai    = "sk-proj-Zq3vB8nT1xK9mR2wL5yP7cJ4hF6gD0sA3eU8iO1pQ2rT5vW7xY9zA1bC3dE5fG7hI9jK0lM2nO4pQ6rS8tU0vW"
	anthropic = "sk-ant-api03-jSq6OMjv1syXaEUE0bvOckLe_GtCKy8lvZdko3eOJgV8TH-f2iyzRekyZNSby5d9ScikGYuqQhsrxML3X3N3rQ-XwQaQAAA"
	slackBot  = "xoxb-263541194339-1293084920079-Z21cXgXdDdZDABIcrdG3D9OF"
	stripe    = "sk_live_51HqLyjWDarjtT1zdp7dcXGuWoGxPTLcWzQ8Zm1wJ"
	googleKey = "AIzaSyB4sU8lU15bR_87qNb7eUVQN72_vv8mpbU"
	jwt       = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	pem       = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDbVnQ7AaTRrpKFMXYXJ8E3t2xw6m5DqkA0L9W3Y8fH3wAAAJgXb3nDF295\n-----END OPENSSH PRIVATE KEY-----"
)

func TestScan(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string // secret substrings, in order; nil for clean
		kind string   // kind of the first match
	}{
		// Provider tokens in prose, code, JSON and .env files.
		{"aws id prose", "my key is " + awsID + ", can you check it?", []string{awsID}, "AWS_ACCESS_KEY_ID"},
		{"aws secret env", "AWS_ACCESS_KEY_ID=" + awsID + "\nAWS_SECRET_ACCESS_KEY=" + awsSecret + "\n", []string{awsID, awsSecret}, "AWS_ACCESS_KEY_ID"},
		{"aws secret yaml", "aws_secret_access_key: \"" + awsSecret + "\"", []string{awsSecret}, "AWS_SECRET_ACCESS_KEY"},
		{"github json", `{"token": "` + ghp + `"}`, []string{ghp}, "GITHUB_TOKEN"},
		{"github in url", "git clone https://x:" + ghp + "@github.com/o/r.git", []string{ghp}, "GITHUB_TOKEN"},
		{"openai project", "export OPENAI_API_KEY=" + openai, []string{openai}, "OPENAI_API_KEY"},
		{"anthropic", "client = Anthropic(api_key='" + anthropic + "')", []string{anthropic}, "ANTHROPIC_API_KEY"},
		{"slack bot", "SLACK_TOKEN=" + slackBot, []string{slackBot}, "SLACK_TOKEN"},
		{"slack webhook", "post to https://hooks.slack.com/services/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 now", []string{"hooks.slack.com/services/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"}, "SLACK_WEBHOOK"},
		{"stripe", `stripe.api_key = "` + stripe + `"`, []string{stripe}, "STRIPE_KEY"},
		{"google api key", "?key=" + googleKey + "&q=1", []string{googleKey}, "GOOGLE_API_KEY"},
		{"private key block", "here is my key:\n" + pem + "\nthanks", []string{pem}, "PRIVATE_KEY"},
		{"private key json escaped", `{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n"}`,
			[]string{`-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----`}, "PRIVATE_KEY"},
		{"jwt", "Authorization: Bearer " + jwt, []string{jwt}, "JWT"},
		{"postgres uri", "DATABASE_URL=postgres://app:Xk9qLm2vR@db.internal:5432/stock", []string{"Xk9qLm2vR"}, "CONNECTION_STRING"},
		{"mongodb srv", "uri: 'mongodb+srv://u:p4ss@w0rd@cluster0.example.mongodb.net/db'", []string{"p4ss@w0rd"}, "CONNECTION_STRING"},
		{"basic auth url", "fetch https://admin:hunter22@intranet.example.com/report", []string{"hunter22"}, "BASIC_AUTH"},
		{"generic password", "db:\n  password: \"c0rrect-h0rse\"\n", []string{"c0rrect-h0rse"}, "PASSWORD"},
		{"generic password env", "DB_PASS=Tr0ub4dor&3", []string{"Tr0ub4dor"}, "PASSWORD"},
		{"generic api key", `api_key = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"`, []string{"9f8e7d6c5b4a39281706f5e4d3c2b1a0"}, "GENERIC_SECRET"},
		{"prose password", "the password is 'Secret123'", []string{"Secret123"}, "PASSWORD"},
		{"password hash", "root:$2y$12$atWJ1Nx6ep65tNx0YIJ4I.jzgI86znQbNRI3lF0qIt/XCYnEPxSc2:0", []string{"$2y$12$atWJ1Nx6ep65tNx0YIJ4I.jzgI86znQbNRI3lF0qIt/XCYnEPxSc2"}, "PASSWORD_HASH"},
		// A key split across lines is two fragments, neither a key:
		// reported only if a rule sees it whole.
		{"split key not joined", "AKIAZ3MHQ7\nTX4KD2WQ5N", nil, ""},

		// Near misses.
		{"aws id too short", "AKIAZ3MHQ7TX4KD2WQ5", nil, ""},
		{"aws id lowercase", "akiaz3mhq7tx4kd2wq5n", nil, ""},
		// Not a GitHub token, but still a provider-shaped random token.
		{"github prefix in word", "xghp_XIxB7KMNdAr3zqWtQqhE94qglHqOzn1D1stg", []string{"xghp_XIxB7KMNdAr3zqWtQqhE94qglHqOzn1D1stg"}, "GENERIC_TOKEN"},
		{"github too short", "ghp_XIxB7KMNdAr3zq", nil, ""},
		{"password prose", "Please rotate the password every month; the token expires.", nil, ""},
		{"password variable", "password = os.environ['DB_PASSWORD']", nil, ""},
		{"password template", `password: "${DB_PASSWORD}"`, nil, ""},
		{"password placeholder", `"password": "<your password>"`, nil, ""},
		{"password call", "pwd = getPassword()", nil, ""},
		{"secret low entropy", "secret = aaaaaaaaaaaaaaaa1", nil, ""},
		{"secret identifier", "token_type = bearer_token_v2", nil, ""},
		{"jwt without alg", "eyJmb28iOiJiYXIifQ.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV", nil, ""},
		{"uri placeholder password", "postgres://user:${PASSWORD}@localhost/db", nil, ""},
		{"uri without password", "https://user@example.com/x and https://example.com:8080/x", nil, ""},
		{"certificate is not a key", "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----", nil, ""},
		{"stripe publishable", "pk_live_51HqLyjWDarjtT1zdp7dcXGuWoGxPTLcWzQ8Zm1wJ", nil, ""},
	}
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := scannertest.Scan(t, s, tt.text)
			got := matched(tt.text, f)
			if f.Detected != (len(tt.want) > 0) || strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("got %q (%s), want %q", got, kindsOf(f), tt.want)
			}
			if len(tt.want) > 0 && f.Matches[0].Kind != tt.kind {
				t.Errorf("kind = %s, want %s", f.Matches[0].Kind, tt.kind)
			}
			if f.Detected && (f.Reason == "" || strings.Contains(f.Reason, tt.want[0])) {
				t.Errorf("reason %q must be set and must not quote the secret", f.Reason)
			}
		})
	}
}

// TestOffsetsOriginal checks that offsets point into the original text
// when the canonical view differs from it (multi-byte text before the
// secret, an invisible character inside it).
func TestOffsetsOriginal(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text, want string
	}{
		{"Schlüssel für Prod — 日本語: " + ghp + " ok", ghp},
		{"clé: gh\u200bp_XIxB7KMNdAr3zqWtQqhE94qglHqOzn1D1stg", "gh\u200bp_XIxB7KMNdAr3zqWtQqhE94qglHqOzn1D1stg"},
	}
	for _, tt := range tests {
		f := scannertest.Scan(t, s, tt.text)
		if len(f.Matches) != 1 {
			t.Fatalf("%q: got %+v", tt.text, f)
		}
		if got := tt.text[f.Matches[0].Start:f.Matches[0].End]; got != tt.want {
			t.Errorf("span = %q, want %q", got, tt.want)
		}
	}
}

func TestConfig(t *testing.T) {
	f := false
	tests := []struct {
		name  string
		cfg   Config
		text  string
		found bool
	}{
		{"allow list", Config{Allow: []string{`^AKIA[A-Z0-9]*EXAMPLE$`}}, "AKIAIOSFODNN7EXAMPLE", false},
		{"allow list other key", Config{Allow: []string{`^AKIA[A-Z0-9]*EXAMPLE$`}}, awsID, true},
		{"generic off", Config{Generic: &f}, `password = "c0rrect-h0rse"`, false},
		{"group selected", Config{Rules: []string{"vcs"}}, ghp, true},
		{"group not selected", Config{Rules: []string{"vcs"}}, awsID, false},
		{"entropy threshold raised", Config{EntropyThreshold: 4.5}, `api_key = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := scannertest.Scan(t, s, tt.text).Detected; got != tt.found {
				t.Errorf("Detected = %v, want %v", got, tt.found)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"unknown group", Config{Rules: []string{"aws-ish"}}, `"aws-ish"`},
		{"bad allow", Config{Allow: []string{"ok", "("}}, "allow[1]"},
		{"negative entropy", Config{EntropyThreshold: -1}, "entropy_threshold"},
		{"entropy above 8", Config{EntropyThreshold: 9}, "entropy_threshold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrConfig containing %q", err, tt.want)
			}
		})
	}
}

// TestKeywordsLongText exercises the two-stream keyword walk: hits on both
// halves, across the middle, and more hits than the stream buffers hold.
func TestKeywordsLongText(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 20)
	for _, n := range []int{1, 3, 80} {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(filler)
			b.WriteString(ghp)
			b.WriteString(" ")
		}
		text := b.String()
		if got := len(scannertest.Scan(t, s, text).Matches); got != n {
			t.Errorf("%d keys in %d bytes: found %d", n, len(text), got)
		}
	}
	// A key straddling the middle of the text.
	text := strings.Repeat("x ", 300) + ghp + strings.Repeat(" y", 300)
	mid := len(text) / 2
	if i := strings.Index(text, ghp); !(i < mid && mid < i+len(ghp)) {
		t.Fatal("test text does not straddle the middle")
	}
	if len(scannertest.Scan(t, s, text).Matches) != 1 {
		t.Error("key across the middle not found")
	}
}

func TestConcurrentScan(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"a " + ghp, "b " + awsID, `c password = "c0rrect-h0rse"`, "clean text"}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			for j := 0; j < 100; j++ {
				text := texts[(i+j)%len(texts)]
				f := scannertest.Scan(t, s, text)
				if f.Detected != (text != "clean text") {
					t.Errorf("%q: %+v", text, f)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestCleanPromptDoesNotAllocate(t *testing.T) {
	if raceflag.Enabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"prose": strings.Repeat("Please rotate the password and the token; the secret store at https://vault.example.com holds the api_key list. ", 18),
		// Credential words before identifiers and references, where the
		// generic rules look hardest.
		"code": keywordDense(),
	} {
		tgt := &scanner.Target{Text: scanner.NewText(text)}
		ctx := context.Background()
		allocs := testing.AllocsPerRun(50, func() {
			if f, _ := s.Scan(ctx, tgt); f.Detected {
				t.Fatalf("%s: clean text flagged: %+v", name, f)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: Scan of a clean prompt allocates %v times", name, allocs)
		}
	}
}
