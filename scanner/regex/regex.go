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
	"sync"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/internal/ahocorasick"
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
	// filtered: the regexp runs only when the prefilter found one of the
	// pattern's literals (see prefilter.go).
	filtered bool
}

// Scanner matches the configured patterns. It is immutable after New and
// safe for concurrent use.
type Scanner struct {
	patterns []compiled
	original bool
	// prefilter finds the literals of all filtered patterns in one pass
	// (nil when no pattern is filtered); owner maps a literal's id to its
	// pattern's index.
	prefilter *ahocorasick.Automaton
	owner     []int
	nfiltered int
	// partials are the patterns' partial matchers for Hold, compiled on
	// first use (only endpoints that stream answers need them).
	partialsOnce sync.Once
	partials     []*scanner.Partial
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
	var literals []string
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
		c := compiled{name: p.Name, kind: kind, re: re}
		var lits []string
		if lits, c.filtered = literalsOf(expr); c.filtered {
			literals = append(literals, lits...)
			for range lits {
				s.owner = append(s.owner, len(s.patterns))
			}
			s.nfiltered++
		}
		s.patterns = append(s.patterns, c)
	}
	if len(literals) > 0 {
		// The literals are non-empty and lower case; only a table too big
		// for the automaton fails, and then every pattern simply runs.
		ac, err := ahocorasick.New(literals, ahocorasick.Options{FoldASCIICase: true})
		if err == nil {
			s.prefilter = ac
		} else {
			for i := range s.patterns {
				s.patterns[i].filtered = false
			}
		}
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

// Scan implements scanner.Scanner. A pattern whose literals do not occur
// in the text is skipped: its regexp could not match. Scan allocates only
// for matches (and for more than 64 patterns).
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
	var stack [64]bool
	found := stack[:0]
	if s.prefilter != nil {
		if len(s.patterns) <= len(stack) {
			found = stack[:len(s.patterns)]
		} else {
			found = make([]bool, len(s.patterns))
		}
		s.findLiterals(text, found)
	}
	var f scanner.Finding
	var names []string
	for i, p := range s.patterns {
		if p.filtered && !found[i] {
			// None of its literals occurs: it cannot match.
			continue
		}
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

// findLiterals sets found[i] for every filtered pattern i one of whose
// literals occurs in text.
func (s *Scanner) findLiterals(text string, found []bool) {
	// Find walks long texts as two interleaved halves, about twice as fast
	// as Each; a text with more hits than buf holds falls back to Each.
	var buf [64]ahocorasick.Hit
	if hits, ok := s.prefilter.Find(text, buf[:]); ok {
		for _, h := range hits {
			found[s.owner[h.ID]] = true
		}
		return
	}
	// Many hits mean short, common literals (a digit, a dash): stop once
	// every filtered pattern is known to run.
	left := s.nfiltered
	s.prefilter.Each(text, func(h ahocorasick.Hit) bool {
		if i := s.owner[h.ID]; !found[i] {
			found[i] = true
			left--
		}
		return left > 0
	})
}

var _ scanner.Scanner = (*Scanner)(nil)
