// Package promptleak flags model answers that reveal the system prompt: runs
// of words shared with a system message of the conversation, and canary
// tokens planted in the system prompt, whether verbatim or encoded (base64,
// base64url, hex, reversed).
//
// Texts are compared on their Folded views (case, leetspeak, confusables and
// invisible characters folded away), so a leak cannot hide behind
// reformatting; matches are mapped back to the original answer.
package promptleak

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/promptwall/promptwall/scanner"
)

// Type is the detector family reported in ScannerResult data.type.
const Type = "prompt_leak"

// Kinds of match.
const (
	KindLeak   = "SYSTEM_PROMPT_LEAK"
	KindCanary = "CANARY_TOKEN"
)

// Config configures leak detection.
type Config struct {
	// MinOverlap is the least number of consecutive words an answer must
	// share with a system message to count as a leak. Lower values catch
	// paraphrased fragments but flag stock phrases ("you are a helpful
	// assistant"). Default 8.
	MinOverlap int `json:"min_overlap,omitempty"`
	// Canaries are exact tokens planted in the system prompt that must
	// never appear in an answer. Each is also looked for in base64,
	// base64url, hex (lower and upper case) and reversed. At least 6
	// characters each, so encodings are distinctive. Default: none.
	Canaries []string `json:"canaries,omitempty"`
}

// Scanner detects leaks. It is safe for concurrent use.
type Scanner struct {
	k       int
	needles []string // canaries and their encodings
	seed    maphash.Seed
	cache   sync.Map // maphash of a system text -> []uint64 sorted shingles
	cached  int64
	mu      sync.Mutex
}

// ErrConfig is wrapped by every configuration error New returns.
var ErrConfig = errors.New("prompt_leak: invalid config")

// New validates cfg and builds the scanner.
func New(cfg Config) (*Scanner, error) {
	s := &Scanner{k: cfg.MinOverlap, seed: maphash.MakeSeed()}
	if s.k == 0 {
		s.k = 8
	}
	if s.k < 2 {
		return nil, fmt.Errorf("%w: min_overlap must be >= 2, got %d", ErrConfig, cfg.MinOverlap)
	}
	for _, c := range cfg.Canaries {
		if utf8.RuneCountInString(c) < 6 {
			return nil, fmt.Errorf("%w: canary %q is shorter than 6 characters", ErrConfig, c)
		}
		s.needles = append(s.needles, encodings(c)...)
	}
	slices.Sort(s.needles)
	s.needles = slices.Compact(s.needles)
	return s, nil
}

// encodings returns c and the forms it takes when encoded. A base64 stream
// encodes c differently depending on its offset modulo 3 inside the encoded
// data, so each of the three alignments contributes the characters that
// depend on c's bytes alone.
func encodings(c string) []string {
	out := []string{c, hex.EncodeToString([]byte(c)), strings.ToUpper(hex.EncodeToString([]byte(c))), reverse(c)}
	for o := range 3 {
		padded := strings.Repeat("\x00", o) + c
		enc := base64.StdEncoding.EncodeToString([]byte(padded))
		from, to := (8*o+5)/6, 8*len(padded)/6
		if to-from >= 6 {
			std := enc[from:to]
			out = append(out, std, strings.NewReplacer("+", "-", "/", "_").Replace(std))
		}
	}
	return out
}

func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

// Type implements scanner.Scanner.
func (s *Scanner) Type() string { return Type }

// Scan implements scanner.Scanner. Only answers (the output direction) are
// judged: on the input side the system prompt is itself one of the texts.
func (s *Scanner) Scan(ctx context.Context, t *scanner.Target) (scanner.Finding, error) {
	if t.Direction != scanner.Output {
		return scanner.Finding{}, nil
	}
	var f scanner.Finding
	answer := t.Text.Original
	for _, n := range s.needles {
		for from := 0; ; {
			i := strings.Index(answer[from:], n)
			if i < 0 {
				break
			}
			f.Matches = append(f.Matches, scanner.Match{Start: from + i, End: from + i + len(n), Kind: KindCanary, Score: 1})
			from += i + len(n)
		}
	}
	canaries := len(f.Matches)
	if t.Conversation != nil {
		for _, m := range t.Conversation.Messages {
			if m.Role != scanner.RoleSystem || m.Text == "" {
				continue
			}
			if err := ctx.Err(); err != nil {
				return scanner.Finding{}, err
			}
			f.Matches = s.overlap(t.Text, m.Text, f.Matches)
		}
	}
	if len(f.Matches) == 0 {
		return f, nil
	}
	slices.SortFunc(f.Matches, func(a, b scanner.Match) int { return a.Start - b.Start })
	f.Detected, f.Score = true, 1
	switch {
	case canaries > 0 && canaries < len(f.Matches):
		f.Reason = "answer contains a canary token and text of the system prompt"
	case canaries > 0:
		f.Reason = "answer contains a canary token of the system prompt"
	default:
		f.Score = f.Matches[0].Score
		f.Reason = fmt.Sprintf("answer repeats %d or more consecutive words of the system prompt", s.k)
	}
	return f, nil
}

// word is a word of a folded view: its hash and its byte range in the view.
type word struct {
	h          uint64
	start, end int
}

// words splits a folded view into words of letters and digits. The caller
// bounds the allocation by passing the buffer back.
func words(s string, buf []word, seed maphash.Seed) []word {
	buf = buf[:0]
	start := -1
	for i := 0; i < len(s); {
		var in bool
		c, size := s[i], 1
		if c < utf8.RuneSelf {
			in = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			in = unicode.IsLetter(r) || unicode.IsDigit(r)
		}
		switch {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			buf = append(buf, word{maphash.String(seed, s[start:i]), start, i})
			start = -1
		}
		i += size
	}
	if start >= 0 {
		buf = append(buf, word{maphash.String(seed, s[start:]), start, len(s)})
	}
	return buf
}

// wordPool recycles answer word buffers so that a clean answer is screened
// without allocating.
var wordPool = sync.Pool{New: func() any { return new([]word) }}

// shingle hashes k consecutive word hashes into one.
func shingle(ws []word) uint64 {
	var h uint64
	for _, w := range ws {
		h = h*0x100000001B3 ^ w.h
	}
	return h
}

// maxCached bounds the shingle cache; past it the cache is emptied. System
// prompts repeat across requests, so a small cache saves most of the work.
const maxCached = 256

// shingles returns the sorted shingle hashes of a system text, cached by the
// text's hash (the text itself is not kept).
func (s *Scanner) shingles(sys string) []uint64 {
	key := maphash.String(s.seed, sys)
	if v, ok := s.cache.Load(key); ok {
		return v.([]uint64)
	}
	ws := words(scanner.NewText(sys).Folded().S, nil, s.seed)
	var out []uint64
	for i := 0; i+s.k <= len(ws); i++ {
		out = append(out, shingle(ws[i:i+s.k]))
	}
	slices.Sort(out)
	out = slices.Compact(out)
	s.mu.Lock()
	if s.cached >= maxCached {
		s.cache.Clear()
		s.cached = 0
	}
	s.cached++
	s.mu.Unlock()
	s.cache.Store(key, out)
	return out
}

// overlap appends a match for every run of answer words covered by shingles
// shared with sys.
func (s *Scanner) overlap(answer *scanner.Text, sys string, out []scanner.Match) []scanner.Match {
	set := s.shingles(sys)
	if len(set) == 0 {
		return out
	}
	view := answer.Folded()
	bp := wordPool.Get().(*[]word)
	defer wordPool.Put(bp)
	ws := words(view.S, *bp, s.seed)
	*bp = ws
	runStart, runEnd := -1, -1 // word indexes of the current covered run
	flush := func() {
		if runStart < 0 {
			return
		}
		a, b := view.Span(ws[runStart].start, ws[runEnd].end)
		out = append(out, scanner.Match{Start: a, End: b, Kind: KindLeak, Score: leakScore(runEnd - runStart + 1)})
		runStart, runEnd = -1, -1
	}
	for i := 0; i+s.k <= len(ws); i++ {
		if _, found := slices.BinarySearch(set, shingle(ws[i:i+s.k])); !found {
			continue
		}
		if runStart >= 0 && i > runEnd {
			flush()
		}
		if runStart < 0 {
			runStart = i
		}
		runEnd = i + s.k - 1
	}
	flush()
	return out
}

// leakScore grows with the length of the leaked run: a minimal overlap is
// 0.8, a leak of 40 words or more is certain.
func leakScore(words int) float64 {
	return min(1, 0.8+float64(words)/200)
}

var _ scanner.Scanner = (*Scanner)(nil)
