// Package invisible is the invisible_text scanner: it detects characters a
// reader cannot see but a model reads, the carrier of "ASCII smuggling"
// (Unicode tag characters spelling out instructions), zero-width splitting
// of words past filters, Trojan-Source bidi reordering and variation
// selector byte encodings.
//
// It reports what the Canonical view removed (scanner.Text.Invisible), so
// the spans are exact and modify mode strips the characters. Joiners inside
// emoji and in scripts that need them, single variation selectors and the
// tags of subdivision flags are not reported; see scanner.ClassifyInvisible
// and the Canonical view.
package invisible

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/promptwall/promptwall/scanner"
)

// Type is the detector family reported in ScannerResult data.type.
const Type = "invisible_text"

// Config configures the scanner.
type Config struct {
	// AllowBidi leaves bidirectional controls (U+202A-U+202E,
	// U+2066-U+2069, U+200E, U+200F, U+061C) unreported, for deployments
	// with right-to-left text. Default false: they are reported.
	AllowBidi bool `json:"allow_bidi,omitempty"`
	// MinCount is how many invisible characters a text must hold to be
	// detected. Default 1.
	MinCount int `json:"min_count,omitempty"`
}

// ErrConfig is wrapped by every configuration error New returns.
var ErrConfig = errors.New("invisible_text: invalid config")

// Scanner detects invisible characters. It is safe for concurrent use.
type Scanner struct {
	allowBidi bool
	minCount  int
}

// New validates cfg, applies its defaults and builds the scanner.
func New(cfg Config) (*Scanner, error) {
	if cfg.MinCount < 0 {
		return nil, fmt.Errorf("%w: min_count must be >= 0, got %d", ErrConfig, cfg.MinCount)
	}
	if cfg.MinCount == 0 {
		cfg.MinCount = 1
	}
	return &Scanner{allowBidi: cfg.AllowBidi, minCount: cfg.MinCount}, nil
}

// Type implements scanner.Scanner.
func (s *Scanner) Type() string { return Type }

// Scan implements scanner.Scanner.
func (s *Scanner) Scan(ctx context.Context, t *scanner.Target) (scanner.Finding, error) {
	if err := ctx.Err(); err != nil {
		return scanner.Finding{}, err
	}
	found := t.Text.Invisible()
	if len(found) == 0 {
		return scanner.Finding{}, nil
	}
	orig := t.Text.Original
	var counts [scanner.FormatCharacter + 1]int
	hidden := 0 // tag characters that encode printable ASCII
	matches := make([]scanner.Match, 0, len(found))
	for _, m := range found {
		first, _ := utf8.DecodeRuneInString(orig[m.Start:m.End])
		class := scanner.ClassifyInvisible(first)
		if s.allowBidi && class == scanner.BidiControl {
			continue // adjacent invisibles of one class share a match
		}
		for _, r := range orig[m.Start:m.End] {
			c := scanner.ClassifyInvisible(r)
			counts[c]++
			if c == scanner.TagCharacter && r >= 0xE0020 && r <= 0xE007E {
				hidden++
			}
		}
		matches = append(matches, m)
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	if total == 0 || total < s.minCount {
		return scanner.Finding{}, nil
	}
	return scanner.Finding{
		Detected: true,
		Matches:  matches,
		Score:    1,
		Reason:   reason(counts[:], hidden),
	}, nil
}

// reason describes what was found by class and count, never quoting the
// text: "12 tag characters hiding ASCII text, 2 zero-width characters".
func reason(counts []int, hidden int) string {
	var parts []string
	for c := scanner.TagCharacter; c <= scanner.FormatCharacter; c++ {
		n := counts[c]
		if n == 0 {
			continue
		}
		p := fmt.Sprintf("%d %s", n, c)
		if n > 1 {
			p += "s"
		}
		if c == scanner.TagCharacter && hidden > 0 {
			p += " hiding ASCII text"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

var _ scanner.Scanner = (*Scanner)(nil)
