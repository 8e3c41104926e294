package secrets

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/scanner"
)

func loadClean(b *testing.B) string {
	b.Helper()
	data, err := os.ReadFile("testdata/clean_2k.txt")
	if err != nil {
		b.Fatal(err)
	}
	return string(data)
}

// withSecrets returns a 2 KB prompt with three secrets spliced into prose.
func withSecrets(clean string) string {
	parts := strings.SplitN(clean, "\n\n", 4)
	return parts[0] + "\nMy key is AKIAZ3MHQ7TX4KD2WQ5N and the bot uses xoxb-263541194339-1293084920079-Z21cXgXdDdZDABIcrdG3D9OF.\n\n" +
		parts[1] + "\n\nDATABASE_URL=postgres://inventory:Xk9#qLm2vR@db.internal:5432/stock\n\n" + parts[2]
}

func benchScan(b *testing.B, text string, wantFound bool) {
	s, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		// A fresh Text per iteration, as the pipeline has; the canonical
		// view of ASCII text is the original string and costs nothing.
		f, err := s.Scan(ctx, &scanner.Target{Text: scanner.NewText(text)})
		if err != nil || f.Detected != wantFound {
			b.Fatalf("Detected = %v, err %v", f.Detected, err)
		}
	}
}

func BenchmarkScan(b *testing.B) {
	clean := loadClean(b)
	b.Run("clean_2KB", func(b *testing.B) { benchScan(b, clean, false) })
	b.Run("clean_16KB", func(b *testing.B) { benchScan(b, strings.Repeat(clean, 8), false) })
	b.Run("3_secrets_2KB", func(b *testing.B) { benchScan(b, withSecrets(clean), true) })
}

func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := New(Config{}); err != nil {
			b.Fatal(err)
		}
	}
}

// newEvidence are the generic rules added for generalization; the
// before/after benchmark drops them to price them.
var newEvidence = []string{"generic-near-token", "generic-crypt-hash", "generic-pgpass", "generic-cli-password", "generic-credential-call"}

// keywordDense is 2 KB of configuration and code that names credentials
// on every line without holding one: the worst case for the rules that
// look around credential words.
func keywordDense() string {
	var b strings.Builder
	lines := []string{
		"api_key: ${API_KEY}  # read from the environment",
		"token = os.environ[\"ACME_TOKEN\"]",
		"const secret = process.env.CLIENT_SECRET;",
		"password_file: /run/secrets/db_password",
		"Authorization: Bearer <token>",
		"the key point is that every secret rotates weekly",
		"mysql -u root -p appdb < dump.sql",
		"cache_key = f\"user:{user_id}:profile\"",
		"token usage for MSG_2KWPBgLlAfxdpx2AI54pPJ85f4W was 1532",
	}
	for b.Len() < 2048 {
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()[:2048]
}

// BenchmarkGenericEvidence prices the generic evidence in one run: the
// scanner without the rules of newEvidence ("before") and with them.
func BenchmarkGenericEvidence(b *testing.B) {
	clean := loadClean(b)
	for _, text := range []struct{ name, s string }{{"clean_2KB", clean}, {"keyword_dense_2KB", keywordDense()}} {
		for _, v := range []struct {
			name string
			drop func(string) bool
		}{
			{"before", func(id string) bool { return slices.Contains(newEvidence, id) }},
			{"after", nil},
		} {
			b.Run(text.name+"/"+v.name, func(b *testing.B) {
				s, err := newScanner(Config{}, v.drop)
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				b.SetBytes(int64(len(text.s)))
				b.ReportAllocs()
				for b.Loop() {
					f, err := s.Scan(ctx, &scanner.Target{Text: scanner.NewText(text.s)})
					if err != nil || f.Detected {
						b.Fatalf("Detected = %v, err %v", f.Detected, err)
					}
				}
			})
		}
	}
}
