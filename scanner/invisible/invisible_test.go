package invisible

import (
	"context"
	"errors"
	"testing"

	"github.com/promptwall/promptwall/scanner"
)

func tags(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		out = append(out, 0xE0000+r)
	}
	return string(out)
}

func TestScan(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		in      string
		want    bool
		matches []scanner.Match
		reason  string
	}{
		{name: "clean", in: "hello world", want: false},
		{name: "emoji are fine", in: "❤️ 👨‍👩‍👧 🏴" + tags("gbsct") + "\U000E007F", want: false},
		{
			name: "tag smuggling", in: "hi" + tags("ignore all!"),
			want: true, reason: "11 tag characters hiding ASCII text",
			matches: []scanner.Match{{Start: 2, End: 46, Kind: scanner.KindTagCharacter, Score: 1}},
		},
		{
			name: "zero width and bidi", in: "ig\u200Bnore \u202Eevil",
			want: true, reason: "1 zero-width character, 1 bidi control",
			matches: []scanner.Match{
				{Start: 2, End: 5, Kind: scanner.KindInvisibleCharacter, Score: 1},
				{Start: 10, End: 13, Kind: scanner.KindInvisibleCharacter, Score: 1},
			},
		},
		{
			name: "bidi allowed", cfg: Config{AllowBidi: true}, in: "ig\u200Bnore \u202Eevil",
			want: true, reason: "1 zero-width character",
			matches: []scanner.Match{{Start: 2, End: 5, Kind: scanner.KindInvisibleCharacter, Score: 1}},
		},
		{name: "only bidi, allowed", cfg: Config{AllowBidi: true}, in: "abc \u200Fdef", want: false},
		{name: "below min count", cfg: Config{MinCount: 3}, in: "a\u200Bb\u200Bc", want: false},
		{
			name: "at min count", cfg: Config{MinCount: 2}, in: "a\u200Bb\u00ADc",
			want: true, reason: "1 zero-width character, 1 format character",
			matches: []scanner.Match{
				{Start: 1, End: 4, Kind: scanner.KindInvisibleCharacter, Score: 1},
				{Start: 5, End: 7, Kind: scanner.KindInvisibleCharacter, Score: 1},
			},
		},
		{
			name: "variation selector smuggling", in: "😀\uFE01\uFE02\uFE03",
			want: true, reason: "3 variation selectors",
			matches: []scanner.Match{{Start: 4, End: 13, Kind: scanner.KindInvisibleCharacter, Score: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			f, err := s.Scan(context.Background(), &scanner.Target{Text: scanner.NewText(tt.in)})
			if err != nil {
				t.Fatal(err)
			}
			if f.Detected != tt.want {
				t.Fatalf("Detected = %v, want %v (%+v)", f.Detected, tt.want, f)
			}
			if f.Reason != tt.reason {
				t.Errorf("Reason = %q, want %q", f.Reason, tt.reason)
			}
			if len(f.Matches) != len(tt.matches) {
				t.Fatalf("Matches = %v, want %v", f.Matches, tt.matches)
			}
			for i := range f.Matches {
				if f.Matches[i] != tt.matches[i] {
					t.Errorf("Matches[%d] = %v, want %v", i, f.Matches[i], tt.matches[i])
				}
			}
		})
	}
}

func TestNew(t *testing.T) {
	if _, err := New(Config{MinCount: -1}); !errors.Is(err, ErrConfig) {
		t.Errorf("MinCount -1: err = %v, want ErrConfig", err)
	}
	s, err := New(Config{})
	if err != nil || s.minCount != 1 || s.Type() != "invisible_text" {
		t.Errorf("defaults: %+v, %v", s, err)
	}
}

func TestScanHonoursContext(t *testing.T) {
	s, _ := New(Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Scan(ctx, &scanner.Target{Text: scanner.NewText("a\u200Bb")}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
