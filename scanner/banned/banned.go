// Package banned flags texts containing operator-listed substrings, matched
// case-, confusable- and leetspeak-insensitively on the folded view.
package banned

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/internal/ahocorasick"
)

// DefaultKind is the Kind of matches when Config.Kind is empty.
const DefaultKind = "BANNED_SUBSTRING"

// Config configures the banned-substrings scanner.
type Config struct {
	// Substrings are the banned strings. They are folded like the text
	// (lower case, confusables, leetspeak, letter spacing), so "Pa55word"
	// and "password" are the same entry. At least one is required.
	Substrings []string `json:"substrings,omitempty"`
	// MatchWholeWords reports a substring only where it is not part of a
	// longer word: no letter or digit right before or after it. Default
	// false (any occurrence).
	MatchWholeWords bool `json:"match_whole_words,omitempty"`
	// Kind is what matches are reported as, in upper snake case. Default
	// BANNED_SUBSTRING.
	Kind string `json:"kind,omitempty"`
}

// ErrConfig is returned (wrapped) for an invalid Config.
var ErrConfig = errors.New("banned: invalid config")

// Scanner is the banned-substrings detector. It is immutable after New and
// safe for concurrent use.
type Scanner struct {
	ac    *ahocorasick.Automaton
	whole bool
	kind  string
}

// New validates cfg and builds the automaton over the folded substrings.
func New(cfg Config) (*Scanner, error) {
	if len(cfg.Substrings) == 0 {
		return nil, fmt.Errorf("%w: no substrings", ErrConfig)
	}
	kind := cfg.Kind
	if kind == "" {
		kind = DefaultKind
	}
	for _, r := range kind {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return nil, fmt.Errorf("%w: kind %q is not UPPER_SNAKE_CASE", ErrConfig, cfg.Kind)
		}
	}
	folded := make([]string, 0, len(cfg.Substrings))
	for i, s := range cfg.Substrings {
		// Fold exactly as the text will be, so both sides meet in the
		// same form whatever the normalisation does.
		f := scanner.NewText(s).Folded().S
		if strings.TrimSpace(f) == "" {
			return nil, fmt.Errorf("%w: substrings[%d] %q is empty once folded", ErrConfig, i, s)
		}
		folded = append(folded, f)
	}
	ac, err := ahocorasick.New(folded, ahocorasick.Options{})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return &Scanner{ac: ac, whole: cfg.MatchWholeWords, kind: kind}, nil
}

// Type implements scanner.Scanner.
func (s *Scanner) Type() string { return "banned_substrings" }

// Scan implements scanner.Scanner. Overlapping occurrences are resolved
// leftmost-longest so the spans can be redacted. Nothing is allocated
// unless a substring is found.
func (s *Scanner) Scan(ctx context.Context, t *scanner.Target) (scanner.Finding, error) {
	if err := ctx.Err(); err != nil {
		return scanner.Finding{}, err
	}
	view := t.Text.Folded()
	text := view.S
	var spans [][2]int
	s.ac.Each(text, func(h ahocorasick.Hit) bool {
		start, end := h.Start, h.End
		if s.whole && !wordBoundaries(text, start, end) {
			return true
		}
		// Hits come in order of end; a hit that starts before the last
		// kept one and overlaps it replaces it only when it starts earlier
		// (leftmost) or equally and is longer (longest).
		for len(spans) > 0 {
			last := spans[len(spans)-1]
			if start >= last[1] {
				break
			}
			if start < last[0] || start == last[0] && end > last[1] {
				spans = spans[:len(spans)-1]
				continue
			}
			return true
		}
		spans = append(spans, [2]int{start, end})
		return true
	})
	if len(spans) == 0 {
		return scanner.Finding{}, nil
	}
	f := scanner.Finding{Detected: true, Score: 1, Matches: make([]scanner.Match, len(spans))}
	for i, sp := range spans {
		start, end := view.Span(sp[0], sp[1])
		f.Matches[i] = scanner.Match{Start: start, End: end, Kind: s.kind, Score: 1}
	}
	f.Reason = fmt.Sprintf("%d banned substring(s) found", len(spans))
	return f, nil
}

// wordBoundaries reports whether text[start:end] has no letter or digit
// directly around it.
func wordBoundaries(text string, start, end int) bool {
	if start > 0 {
		r, _ := utf8.DecodeLastRuneInString(text[:start])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return false
		}
	}
	if end < len(text) {
		r, _ := utf8.DecodeRuneInString(text[end:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

var _ scanner.Scanner = (*Scanner)(nil)
