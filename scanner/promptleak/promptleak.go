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
	// assistant"). 2..64, default 8.
	MinOverlap int `json:"min_overlap,omitempty"`
	// Canaries are exact tokens planted in the system prompt that must
	// never appear in an answer. Each is also looked for in base64,
	// base64url, hex (lower and upper case) and reversed. At least 6
	// characters each, so encodings are distinctive. Default: none.
	Canaries []string `json:"canaries,omitempty"`
}

// maxOverlap bounds MinOverlap so the rolling window lives on the stack.
const maxOverlap = 64

// Scanner detects leaks. It is safe for concurrent use.
type Scanner struct {
	k       int
	needles []string // canaries and their encodings
	seed    maphash.Seed
	cache   sync.Map // maphash of a system text -> *shingleSet
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
	if s.k < 2 || s.k > maxOverlap {
		return nil, fmt.Errorf("%w: min_overlap must be in 2..%d, got %d", ErrConfig, maxOverlap, cfg.MinOverlap)
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

// shingles calls fn for every run of k consecutive words of s (a folded
// view) with the run's hash, the byte range it spans and the index of its
// last word. Words are runs of letters and digits; a word's hash is FNV-1a
// of its bytes, and a run's hash is a polynomial rolling hash of its words'
// hashes, updated in O(1) per word: the pass allocates nothing.
func shingles(s string, k int, fn func(h uint64, start, end, last int)) {
	const fnvOffset, fnvPrime, base = 14695981039346656037, 1099511628211, 0x100000001B3
	var bk uint64 = 1 // base^k
	for range k {
		bk *= base
	}
	var buf [2 * maxOverlap]uint64 // word hashes, then word starts
	ring := buf[:2*k]
	var rolled uint64
	n := 0
	inWord, start := false, 0
	var wh uint64
	endWord := func(i int) {
		inWord = false
		slot := n % k
		rolled = rolled*base + wh - ring[slot]*bk
		ring[slot], ring[k+slot] = wh, uint64(start)
		n++
		if n >= k {
			fn(rolled, int(ring[k+n%k]), i, n-1)
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			// ASCII fast path: one table load per byte.
			if alnum[c] {
				if !inWord {
					inWord, start, wh = true, i, fnvOffset
				}
				wh = (wh ^ uint64(c)) * fnvPrime
			} else if inWord {
				endWord(i)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if !inWord {
				inWord, start, wh = true, i, fnvOffset
			}
			for j := i; j < i+size; j++ {
				wh = (wh ^ uint64(s[j])) * fnvPrime
			}
		} else if inWord {
			endWord(i)
		}
		i += size
	}
	if inWord {
		endWord(len(s))
	}
}

// alnum marks ASCII letters and digits.
var alnum = func() (t [utf8.RuneSelf]bool) {
	for c := range utf8.RuneSelf {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	return t
}()

// shingleSet is the set of run hashes of a system text: a 4096-bit filter
// that rejects most misses with one load, over a sorted list.
type shingleSet struct {
	bits   [64]uint64
	sorted []uint64
}

func (set *shingleSet) has(h uint64) bool {
	if set.bits[h>>58]&(1<<(h&63)) == 0 {
		return false
	}
	_, ok := slices.BinarySearch(set.sorted, h)
	return ok
}

// maxCached bounds the shingle cache; past it the cache is emptied. System
// prompts repeat across requests, so a small cache saves most of the work.
const maxCached = 256

// systemSet returns the run hashes of a system text, cached by the text's
// hash (the text itself is not kept).
func (s *Scanner) systemSet(sys string) *shingleSet {
	key := maphash.String(s.seed, sys)
	if v, ok := s.cache.Load(key); ok {
		return v.(*shingleSet)
	}
	set := &shingleSet{}
	shingles(scanner.NewText(sys).Folded().S, s.k, func(h uint64, _, _, _ int) {
		set.sorted = append(set.sorted, h)
		set.bits[h>>58] |= 1 << (h & 63)
	})
	slices.Sort(set.sorted)
	set.sorted = slices.Compact(set.sorted)
	s.mu.Lock()
	if s.cached >= maxCached {
		s.cache.Clear()
		s.cached = 0
	}
	s.cached++
	s.mu.Unlock()
	s.cache.Store(key, set)
	return set
}

// overlap appends a match for every stretch of the answer covered by word
// runs shared with sys; overlapping runs merge into one match.
func (s *Scanner) overlap(answer *scanner.Text, sys string, out []scanner.Match) []scanner.Match {
	set := s.systemSet(sys)
	if len(set.sorted) == 0 {
		return out
	}
	view := answer.Folded()
	runStart, runEnd, runLast, words := -1, 0, 0, 0
	flush := func() {
		if runStart < 0 {
			return
		}
		a, b := view.Span(runStart, runEnd)
		out = append(out, scanner.Match{Start: a, End: b, Kind: KindLeak, Score: leakScore(words)})
		runStart = -1
	}
	shingles(view.S, s.k, func(h uint64, start, end, last int) {
		if !set.has(h) {
			return
		}
		if runStart >= 0 && last-s.k+1 > runLast {
			flush() // this run starts after the previous one ended
		}
		if runStart < 0 {
			runStart, words = start, s.k
		} else {
			words += last - runLast
		}
		runEnd, runLast = end, last
	})
	flush()
	return out
}

// leakScore grows with the length of the leaked run: a minimal overlap is
// 0.8, a leak of 40 words or more is certain.
func leakScore(words int) float64 {
	return min(1, 0.8+float64(words)/200)
}

var _ scanner.Scanner = (*Scanner)(nil)

// UsesConversation tells the pipeline the verdict depends on the system
// prompt, not only on the answer's text, so it must not be cached by text.
func (s *Scanner) UsesConversation() bool { return true }
