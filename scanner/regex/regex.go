// Package regex is the custom-pattern detector: operators name RE2
// patterns (Go regexp syntax, linear time, no backreferences) and every
// match is reported with the pattern's kind.
package regex

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/promptwall/promptwall/scanner"
)

// Where a pattern is matched.
const (
	// MatchCanonical matches on the canonical view (NFKC, confusables
	// folded, invisible characters removed), so homoglyph and zero-width
	// tricks do not slip past a pattern. Offsets are mapped back.
	MatchCanonical = "canonical"
	// MatchOriginal matches on the text exactly as received.
	MatchOriginal = "original"
)

// Pattern is one named RE2 pattern.
type Pattern struct {
	// Name identifies the pattern in errors and reasons. Required, unique.
	Name string `json:"name,omitempty"`
	// Pattern is the RE2 expression (Go regexp syntax). Required.
	Pattern string `json:"pattern,omitempty"`
	// Kind is what matches are reported as, in upper snake case. Default:
	// Name upper-cased with non-alphanumerics turned into underscores.
	Kind string `json:"kind,omitempty"`
}

// Config configures the regex scanner.
type Config struct {
	// Patterns are the patterns to match; at least one is required.
	Patterns []Pattern `json:"patterns,omitempty"`
	// CaseInsensitive compiles every pattern with (?i). Default false.
	CaseInsensitive bool `json:"case_insensitive,omitempty"`
	// MatchOn selects the text matched: "canonical" (default) or
	// "original".
	MatchOn string `json:"match_on,omitempty"`
}

// ErrConfig is returned (wrapped) for an invalid Config.
var ErrConfig = errors.New("regex: invalid config")

type compiled struct {
	name string
	kind string
	re   *regexp.Regexp
}

// Scanner matches the configured patterns. It is immutable after New and
// safe for concurrent use.
type Scanner struct {
	patterns []compiled
	original bool
}

// New validates cfg and compiles its patterns once.
func New(cfg Config) (*Scanner, error) {
	s := &Scanner{}
	switch cfg.MatchOn {
	case "", MatchCanonical:
	case MatchOriginal:
		s.original = true
	default:
		return nil, fmt.Errorf("%w: match_on %q must be %q or %q", ErrConfig, cfg.MatchOn, MatchCanonical, MatchOriginal)
	}
	if len(cfg.Patterns) == 0 {
		return nil, fmt.Errorf("%w: no patterns", ErrConfig)
	}
	seen := map[string]bool{}
	for i, p := range cfg.Patterns {
		if p.Name == "" {
			return nil, fmt.Errorf("%w: patterns[%d]: name is required", ErrConfig, i)
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("%w: pattern %q: duplicate name", ErrConfig, p.Name)
		}
		seen[p.Name] = true
		if p.Pattern == "" {
			return nil, fmt.Errorf("%w: pattern %q: pattern is required", ErrConfig, p.Name)
		}
		expr := p.Pattern
		if cfg.CaseInsensitive {
			expr = "(?i)" + expr
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("%w: pattern %q: %v", ErrConfig, p.Name, err)
		}
		if re.MatchString("") {
			// A pattern that matches the empty string matches every text
			// and would block everything.
			return nil, fmt.Errorf("%w: pattern %q matches the empty string", ErrConfig, p.Name)
		}
		kind := p.Kind
		if kind == "" {
			kind = kindOf(p.Name)
		} else if kind != kindOf(kind) {
			return nil, fmt.Errorf("%w: pattern %q: kind %q is not UPPER_SNAKE_CASE", ErrConfig, p.Name, kind)
		}
		s.patterns = append(s.patterns, compiled{name: p.Name, kind: kind, re: re})
	}
	return s, nil
}

// kindOf upper-cases a name into UPPER_SNAKE_CASE.
func kindOf(name string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToUpper(name) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			under = false
		} else if !under && b.Len() > 0 {
			b.WriteByte('_')
			under = true
		}
	}
	return strings.TrimSuffix(b.String(), "_")
}

// Type implements scanner.Scanner.
func (s *Scanner) Type() string { return "regex" }

// Scan implements scanner.Scanner. It allocates only for matches.
func (s *Scanner) Scan(ctx context.Context, t *scanner.Target) (scanner.Finding, error) {
	if err := ctx.Err(); err != nil {
		return scanner.Finding{}, err
	}
	text := t.Text.Original
	var view *scanner.View
	if !s.original {
		view = t.Text.Canonical()
		text = view.S
	}
	var f scanner.Finding
	var names []string
	for _, p := range s.patterns {
		locs := p.re.FindAllStringIndex(text, -1)
		for _, l := range locs {
			if l[0] == l[1] {
				continue
			}
			start, end := l[0], l[1]
			if view != nil {
				start, end = view.Span(start, end)
			}
			f.Matches = append(f.Matches, scanner.Match{Start: start, End: end, Kind: p.kind, Score: 1})
		}
		if len(locs) > 0 {
			names = append(names, p.name)
		}
	}
	if len(f.Matches) > 0 {
		f.Detected, f.Score = true, 1
		f.Reason = "matched pattern(s): " + strings.Join(names, ", ")
	}
	return f, nil
}

var _ scanner.Scanner = (*Scanner)(nil)
