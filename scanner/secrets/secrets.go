// Package secrets detects credentials in text: provider API keys and
// tokens, private keys, JWTs and their signing secrets, credentials in
// connection strings and URLs, password hashes, and generic password and
// secret assignments.
//
// # How it stays fast
//
// Every rule names keywords (a token prefix such as "ghp_", or a provider
// name for context rules). One case-insensitive Aho-Corasick pass over the
// text finds all keyword hits; a rule's regexp (RE2) then runs only on a
// window at its hit, anchored at the keyword where the format allows. A
// prompt without keywords costs the automaton walk, an eight-bytes-at-a-
// time check for control characters, and the prefixed-token walk, which
// looks at a few bytes per 23 (see scanPrefixed); a prompt with common words
// ("password", "token") costs a hand-written parse of the bytes after
// them. Nothing is allocated unless a secret or a control character is
// found.
//
// # Generalizing beyond the rules
//
// A provider without a rule here is still caught by generic evidence
// (evidence.go, generic.go, token.go): a literal assigned to or labelled
// by a credential-named key in any syntax (api_key = "...", "clientSecret":
// "...", --password ..., X-Api-Key: ..., Authorization: <scheme> ...,
// user:pass@ in a URI, Password= in a connection string, .netrc and
// .pgpass lines); a literal compared with or assigned to a name ending
// in "secret" (creds.Secret != "...", however chosen); the password of a
// (connection URI, user, password) call; a generated-looking token a few
// bytes after a credential word ("vault operator unseal <key>"); or a
// shape providers and hashing schemes share ("<prefix>_<random>", a
// prefix glued to a hex body, "$<scheme>$...$<digest>", base64 JSON
// holding a random value). A token with no such evidence is not
// reported, so hashes, UUIDs, commit ids, lock-file digests and encoded
// images stay clean; so do references to a secret (environment lookups,
// templates, URLs, paths, ARNs) and placeholders. TestDevSetLeaveRulesOut
// measures this: each upstream family of the dev set is scored with every
// rule written from it removed.
//
// # Why not gitleaks
//
// gitleaks's maintained rule set was measured first, on the same machine
// (2 vCPU, go1.26, gitleaks v8.30.1, detect.NewDetectorDefaultConfig +
// DetectString): 756 µs on a clean 2 KB prompt (24 allocations) against
// about 7 µs here, and it caught 0.444 of the dev set's positives. The
// patterns were ported instead, from Nosey Parker (Apache-2.0) and
// gitleaks (MIT), behind the keyword prefilter.
package secrets

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/internal/ahocorasick"
)

// DefaultEntropyThreshold is the Shannon entropy (bits per byte) a generic
// secret value must reach. 3.5 keeps 32-hex and base64 keys (3.6 to 5) and
// drops words and identifiers (below 3.3 for most English names). The
// leave-rules-out test picks it again per fold without the fold's rows.
const DefaultEntropyThreshold = 3.5

// Config configures the secrets scanner. It is plain JSON so that a Caddy
// module can embed it.
type Config struct {
	// Rules lists the rule groups to run. Empty means all of them:
	// cloud, vcs, ai, saas, private_key, jwt, connection, http_auth,
	// password_hash, infrastructure, credential. The generic group is
	// controlled by Generic.
	Rules []string `json:"rules,omitempty"`
	// EntropyThreshold is the minimum Shannon entropy, in bits per byte, of
	// the value of a generic secret assignment (api_key = "..."). Default
	// 3.5. Passwords are exempt: people choose low-entropy ones.
	EntropyThreshold float64 `json:"entropy_threshold,omitempty"`
	// Allow lists RE2 regexps; a secret whose value matches one is never
	// reported (documentation keys such as AKIAIOSFODNN7EXAMPLE). Matched
	// against the secret's value only. Default none.
	Allow []string `json:"allow,omitempty"`
	// Generic enables the generic rules: password, secret and key
	// assignments and comparisons, "the password is '...'" in prose,
	// provider-shaped prefixed tokens, base64 JSON holding a random value,
	// webhook URL tokens, generated-looking tokens right after a
	// credential word, "-u user -p password" command lines, credential
	// constructors and (connection URI, user, password) calls, .pgpass
	// lines and modular-crypt password hashes. Default true.
	Generic *bool `json:"generic,omitempty"`
}

// Scanner is the secrets detector. It is immutable after New and safe for
// concurrent use.
type Scanner struct {
	rules     []*rule
	scans     []*rule                // rules that walk the whole text (rule.scan)
	kw        *ahocorasick.Automaton // keywords, matched in any ASCII case
	kwRules   [][]uint16             // keyword id -> indexes into rules
	threshold float64
	allow     []*regexp.Regexp
}

// maxRules bounds the per-scan bookkeeping kept on the stack.
const maxRules = 256

// streamHits is how many keyword hits each half of a text's two-stream
// walk buffers (see ahocorasick.Automaton.Find) before the scan falls back
// to handling hits as the walk finds them.
const streamHits = 64

// ErrConfig is returned (wrapped) for an invalid Config.
var ErrConfig = errors.New("secrets: invalid config")

// Groups returns the names Config.Rules accepts, generic included.
func Groups() []string {
	var gs []string
	for _, r := range rules {
		if !slices.Contains(gs, r.group) {
			gs = append(gs, r.group)
		}
	}
	return gs
}

// New validates cfg and builds a Scanner.
func New(cfg Config) (*Scanner, error) { return newScanner(cfg, nil) }

// newScanner builds a Scanner without the rules drop reports true for, so
// the quality tests can measure a rule's examples with the rules derived
// from them absent.
func newScanner(cfg Config, drop func(id string) bool) (*Scanner, error) {
	s := &Scanner{threshold: cfg.EntropyThreshold}
	if s.threshold == 0 {
		s.threshold = DefaultEntropyThreshold
	}
	if s.threshold < 0 || s.threshold > 8 {
		return nil, fmt.Errorf("%w: entropy_threshold %v outside 0..8 bits per byte", ErrConfig, cfg.EntropyThreshold)
	}
	groups := Groups()
	want := map[string]bool{}
	for _, g := range cfg.Rules {
		if !slices.Contains(groups, g) {
			return nil, fmt.Errorf("%w: unknown rule group %q (known: %s)", ErrConfig, g, strings.Join(groups, ", "))
		}
		want[g] = true
	}
	generic := cfg.Generic == nil || *cfg.Generic
	for i, a := range cfg.Allow {
		re, err := regexp.Compile(a)
		if err != nil {
			return nil, fmt.Errorf("%w: allow[%d] %q: %v", ErrConfig, i, a, err)
		}
		s.allow = append(s.allow, re)
	}
	var words []string
	index := map[string]int{}
	for i := range rules {
		r := &rules[i]
		switch {
		case drop != nil && drop(r.id):
			continue
		case r.group == groupGeneric:
			if !generic {
				continue
			}
		case len(want) > 0 && !want[r.group]:
			continue
		}
		if r.scan != nil {
			s.scans = append(s.scans, r)
			continue
		}
		ri := uint16(len(s.rules))
		s.rules = append(s.rules, r)
		for _, w := range r.keywords {
			id, ok := index[w]
			if !ok {
				id = len(words)
				index[w] = id
				words = append(words, w)
				s.kwRules = append(s.kwRules, nil)
			}
			s.kwRules[id] = append(s.kwRules[id], ri)
		}
	}
	if len(s.rules) > maxRules {
		return nil, fmt.Errorf("secrets: %d rules exceed the limit of %d", len(s.rules), maxRules)
	}
	kw, err := ahocorasick.New(words, ahocorasick.Options{FoldASCIICase: true})
	if err != nil {
		return nil, fmt.Errorf("secrets: keyword automaton: %w", err)
	}
	s.kw = kw
	return s, nil
}

// Type implements scanner.Scanner.
func (s *Scanner) Type() string { return "secret" }

// hit is one secret found, in view offsets.
type hit struct {
	start, end int
	rule       *rule
}

// Scan implements scanner.Scanner. It matches on the canonical view (so
// confusable and zero-width tricks do not hide a key) and reports offsets
// into the original text.
func (s *Scanner) Scan(ctx context.Context, t *scanner.Target) (scanner.Finding, error) {
	if err := ctx.Err(); err != nil {
		return scanner.Finding{}, err
	}
	view := t.Text.Canonical()
	hits, text := s.find(view.S)
	if len(hits) == 0 {
		return scanner.Finding{}, nil
	}
	f := scanner.Finding{Detected: true, Matches: make([]scanner.Match, len(hits))}
	var kinds []string
	for i, h := range hits {
		start, end := view.Span(text.span(h.start, h.end))
		f.Matches[i] = scanner.Match{Start: start, End: end, Kind: h.rule.kind, Score: h.rule.score}
		f.Score = max(f.Score, h.rule.score)
		if !slices.Contains(kinds, h.rule.kind) {
			kinds = append(kinds, h.rule.kind)
		}
	}
	f.Reason = fmt.Sprintf("%d secret(s) found: %s", len(hits), strings.Join(kinds, ", "))
	return f, nil
}

// find returns the secrets in s, resolved, with offsets into the returned
// view of s (s without the control characters that split a token).
func (s *Scanner) find(orig string) ([]hit, controlView) {
	cv := dropControls(orig)
	text := cv.s
	var hits []hit
	// scanned[r] is how far rule r's unanchored windows have been searched,
	// so dense keywords do not rescan the same bytes.
	var scanned [maxRules]int32
	var buf [2 * streamHits]ahocorasick.Hit
	if khs, ok := s.kw.Find(text, buf[:0]); ok {
		for _, kh := range khs {
			for _, ri := range s.kwRules[kh.ID] {
				hits = s.apply(hits, text, kh.Start, kh.End, int(ri), &scanned[ri])
			}
		}
	} else {
		// Keyword-dense text: handle hits as the walk finds them.
		s.kw.Each(text, func(kh ahocorasick.Hit) bool {
			for _, ri := range s.kwRules[kh.ID] {
				hits = s.apply(hits, text, kh.Start, kh.End, int(ri), &scanned[ri])
			}
			return true
		})
	}
	for _, r := range s.scans {
		hits = r.scan(text, s.threshold, r, hits)
	}
	if len(hits) == 0 {
		return nil, cv
	}
	return s.resolve(text, hits), cv
}

// apply runs rule ri at a keyword hit [ks, ke) and appends what it finds.
func (s *Scanner) apply(hits []hit, text string, ks, ke, ri int, scanned *int32) []hit {
	r := s.rules[ri]
	if r.match != nil {
		if vs, ve, ok := r.match(text, ks, ke, s.threshold); ok {
			hits = append(hits, hit{vs, ve, r})
		}
		return hits
	}
	if r.anchored {
		if r.boundary && ks > 0 && isWordByte(text[ks-1]) {
			return hits
		}
		end := min(len(text), ke+r.after)
		// FindStringSubmatchIndex allocates only when it matches.
		loc := r.re.FindStringSubmatchIndex(text[ks:end])
		if loc == nil {
			return hits
		}
		a, b := firstGroup(loc, r.re.NumSubexp())
		if a < 0 {
			return hits
		}
		if r.check != nil && !r.check(text[ks+a:ks+b]) {
			return hits
		}
		return append(hits, hit{ks + a, ks + b, r})
	}
	ws := max(0, ks-r.before)
	we := min(len(text), ke+r.after)
	if int(*scanned) >= we {
		return hits
	}
	// Rescan `before` bytes of the previous window so a token that starts
	// there and ends in this one is seen whole; duplicates are resolved.
	if prev := int(*scanned) - r.before; prev > ws {
		ws = prev
	}
	*scanned = int32(we)
	for _, loc := range r.re.FindAllStringSubmatchIndex(text[ws:we], -1) {
		a, b := firstGroup(loc, r.re.NumSubexp())
		if a < 0 {
			continue
		}
		if r.check != nil && !r.check(text[ws+a:ws+b]) {
			continue
		}
		hits = append(hits, hit{ws + a, ws + b, r})
	}
	return hits
}

// firstGroup returns the first participating capture group, or the whole
// match when the regexp has none. Rules with alternatives put the secret
// in a different group per branch.
func firstGroup(loc []int, ngroups int) (int, int) {
	if ngroups == 0 {
		return loc[0], loc[1]
	}
	for g := 1; g <= ngroups && 2*g+1 < len(loc); g++ {
		if loc[2*g] >= 0 {
			return loc[2*g], loc[2*g+1]
		}
	}
	return -1, -1
}

// resolve drops allowed values and duplicates and settles overlaps: the
// rule with the lower priority value wins, then the longer span. The
// result is sorted by offset and has no overlapping spans, which is what
// modify mode needs to redact.
func (s *Scanner) resolve(text string, hits []hit) []hit {
	slices.SortFunc(hits, func(a, b hit) int {
		if a.rule.priority != b.rule.priority {
			return a.rule.priority - b.rule.priority
		}
		return (b.end - b.start) - (a.end - a.start)
	})
	kept := hits[:0]
next:
	for _, h := range hits {
		if h.end <= h.start || s.allowed(text[h.start:h.end]) {
			continue
		}
		for _, k := range kept {
			if h.start < k.end && k.start < h.end {
				continue next
			}
		}
		kept = append(kept, h)
	}
	slices.SortFunc(kept, func(a, b hit) int { return a.start - b.start })
	return kept
}

func (s *Scanner) allowed(v string) bool {
	for _, re := range s.allow {
		if re.MatchString(v) {
			return true
		}
	}
	return false
}

var _ scanner.Scanner = (*Scanner)(nil)
