package tokenlimit

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/tiktoken-go/tokenizer"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/internal/scannertest"
)

const prose = "The quick brown fox jumps over the lazy dog. It's 2024 and the code\n" +
	"func main() { fmt.Println(\"héllo, 世界\") }\n\nWe're testing   spaces,\ttabs and numbers 1234567.\n"

// reference returns the exact token count and the offset of token n+1,
// tokenizing the whole text at once.
func reference(t testing.TB, enc, text string, n int) (count, cut int) {
	t.Helper()
	c, err := tokenizer.Get(tokenizer.Encoding(enc))
	if err != nil {
		t.Fatal(err)
	}
	_, toks, err := c.Encode(text)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range toks[:min(n, len(toks))] {
		cut += len(tok)
	}
	return len(toks), cut
}

func TestScan(t *testing.T) {
	long := strings.Repeat(prose, 80) // ~12 KB, several chunks
	tests := []struct {
		name   string
		enc    string
		max    int
		text   string
		detect bool
	}{
		{"empty", "", 1, "", false},
		{"short by bytes", "", 10, "0123456789", false},
		{"one word under", "", 6, "supercalifragilistic", false},
		{"one word over", "", 1, "supercalifragilistic", true},
		{"prose fits", "", 1000, prose, false},
		{"prose over", "", 20, prose, true},
		{"long fits", "o200k_base", 10000, long, false},
		{"long over early", "o200k_base", 100, long, true},
		{"long over late", "o200k_base", 2700, long, true},
		{"long over cl100k", "cl100k_base", 1500, long, true},
		{"cjk over", "", 5, strings.Repeat("我们今天讨论的话题是人工智能安全。", 10), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Config{Encoding: tc.enc, MaxTokens: tc.max})
			if err != nil {
				t.Fatal(err)
			}
			f, err := s.Scan(context.Background(), &scanner.Target{Text: scanner.NewText(tc.text)})
			if err != nil {
				t.Fatal(err)
			}
			if f.Detected != tc.detect {
				t.Fatalf("Detected = %v, want %v", f.Detected, tc.detect)
			}
			enc := tc.enc
			if enc == "" {
				enc = "o200k_base"
			}
			count, cut := reference(t, enc, tc.text, tc.max)
			if (count > tc.max) != tc.detect {
				t.Fatalf("test table wrong: %d tokens against max %d", count, tc.max)
			}
			if !tc.detect {
				return
			}
			if len(f.Matches) != 1 {
				t.Fatalf("matches = %v", f.Matches)
			}
			m := f.Matches[0]
			if m.Start != cut || m.End != len(tc.text) || m.Kind != Kind {
				t.Fatalf("match = %+v, want [%d,%d) %s", m, cut, len(tc.text), Kind)
			}
			// The kept part is within budget, the kept part plus the next
			// token is not.
			if n, _ := reference(t, enc, tc.text[:m.Start], 0); n > tc.max {
				t.Fatalf("kept part has %d tokens > %d", n, tc.max)
			}
		})
	}
}

// TestChunkingIsExact checks the claim chunkEnd rests on: tokenizing chunk by
// chunk gives the count of tokenizing the whole text, for both encodings, on
// texts mixing the characters that pre-tokenizers treat specially.
func TestChunkingIsExact(t *testing.T) {
	alphabet := []string{"a", "b", "Z", "é", "世", " ", " ", "  ", "\n", "\r\n", "'s", "'", "1", "23", ".", "{", "}", "/", "\t", "ß", "Ω", "😀", "-", "\n\n"}
	r := rand.New(rand.NewPCG(1, 2))
	for _, enc := range []string{"o200k_base", "cl100k_base"} {
		s, err := New(Config{Encoding: enc, MaxTokens: 1})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 300 {
			var b strings.Builder
			for b.Len() < 600 {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			text := b.String()
			want, _ := reference(t, enc, text, 0)
			got := 0
			for start := 0; start < len(text); {
				end := chunkEnd(text, start, 1+r.IntN(40))
				n, err := s.codec.Count(text[start:end])
				if err != nil {
					t.Fatal(err)
				}
				got += n
				start = end
			}
			if got != want {
				t.Fatalf("%s text %d: chunked count %d, whole %d: %q", enc, i, got, want, text)
			}
		}
	}
}

func TestConversationScope(t *testing.T) {
	hist := strings.Repeat(" word", 50) // 50 tokens
	conv := &scanner.Conversation{Messages: []scanner.Message{
		{Role: scanner.RoleSystem, Text: hist},
		{Role: scanner.RoleUser, Text: hist},
		{Role: scanner.RoleUser, Text: "a final question with a few words"},
	}}
	tests := []struct {
		name   string
		scope  string
		role   scanner.Role
		text   string
		detect bool
	}{
		{"message scope ignores history", ScopeMessage, scanner.RoleUser, conv.Messages[2].Text, false},
		{"conversation scope counts history", ScopeConversation, scanner.RoleUser, conv.Messages[2].Text, true},
		{"first message has no history", ScopeConversation, scanner.RoleSystem, hist, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Config{MaxTokens: 105, Scope: tc.scope})
			if err != nil {
				t.Fatal(err)
			}
			f, err := s.Scan(context.Background(), &scanner.Target{Text: scanner.NewText(tc.text), Role: tc.role, Conversation: conv})
			if err != nil {
				t.Fatal(err)
			}
			if f.Detected != tc.detect {
				t.Fatalf("Detected = %v, want %v (%+v)", f.Detected, tc.detect, f)
			}
			if f.Detected {
				// 100 tokens of history leave 5: "a final question with a".
				if got := tc.text[f.Matches[0].Start:]; got != " few words" {
					t.Fatalf("truncated part = %q", got)
				}
			}
		})
	}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"defaults", Config{MaxTokens: 1}, true},
		{"cl100k", Config{MaxTokens: 1, Encoding: "cl100k_base"}, true},
		{"zero max", Config{}, false},
		{"negative max", Config{MaxTokens: -1}, false},
		{"unknown encoding", Config{MaxTokens: 1, Encoding: "gpt2"}, false},
		{"unknown scope", Config{MaxTokens: 1, Scope: "request"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrConfig) {
				t.Fatalf("err %v does not wrap ErrConfig", err)
			}
		})
	}
}

func TestCancelled(t *testing.T) {
	s, _ := New(Config{MaxTokens: 10})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Scan(ctx, &scanner.Target{Text: scanner.NewText(prose)}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestConcurrent(t *testing.T) {
	s, _ := New(Config{MaxTokens: 50})
	text := strings.Repeat(prose, 5)
	_, want := reference(t, "o200k_base", text, 50)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5 {
				f, err := s.Scan(context.Background(), &scanner.Target{Text: scanner.NewText(text)})
				if err != nil || !f.Detected || f.Matches[0].Start != want {
					t.Errorf("got %+v, %v; want cut %d", f, err, want)
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkScan(b *testing.B) {
	for _, bc := range []struct {
		name string
		max  int
		text string
	}{
		{"2KB_clean", 4096, scannertest.Prompt2K()},          // the common case: decided by length
		{"2KB_fits_tokenized", 1000, scannertest.Prompt2K()}, // longer than max bytes, fits in tokens
		{"2KB_over", 200, scannertest.Prompt2K()},
		{"100KB_over_4k", 4096, strings.Repeat(scannertest.Prompt2K(), 50)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s, err := New(Config{MaxTokens: bc.max})
			if err != nil {
				b.Fatal(err)
			}
			tgt := &scanner.Target{Text: scanner.NewText(bc.text)}
			b.SetBytes(int64(len(bc.text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Scan(context.Background(), tgt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
