package secrets

import (
	"context"
	"os"
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
