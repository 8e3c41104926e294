package scanner

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Vault holds the placeholders of reversible redaction for one conversation:
// modify mode replaces each detected value with a typed, numbered placeholder
// ("[EMAIL_ADDRESS_1]"), the same value always with the same placeholder, and
// Restore puts the values back into the model's answer. Pass the vault of a
// request's screening to the screening of its response so both number
// alike. The zero Vault is ready to use; it is safe for concurrent use. It
// holds clear values: keep it in memory for the exchange, never store it.
type Vault struct {
	mu      sync.Mutex
	byValue map[string]string // original value -> placeholder
	byPH    map[string]string // placeholder -> original value
	counts  map[string]int    // kind -> last number used
	longest int               // longest placeholder, bounds Restore's scan
}

// Len reports how many distinct values the vault holds.
func (v *Vault) Len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.byPH)
}

// placeholder returns the value's placeholder, numbering a new one per kind.
// v.mu must be held.
func (v *Vault) placeholder(kind, value string) string {
	if ph, ok := v.byValue[value]; ok {
		return ph
	}
	if v.byValue == nil {
		v.byValue = make(map[string]string)
		v.byPH = make(map[string]string)
		v.counts = make(map[string]int)
	}
	kind = placeholderKind(kind)
	v.counts[kind]++
	ph := "[" + kind + "_" + strconv.Itoa(v.counts[kind]) + "]"
	v.byValue[value] = ph
	v.byPH[ph] = value
	v.longest = max(v.longest, len(ph))
	return ph
}

// Redact replaces the matched spans of text with placeholders, merging
// overlapping spans first (see mergeSpans), and returns the new text.
func (v *Vault) Redact(text string, matches []Match) string {
	spans := mergeSpans(text, matches)
	if len(spans) == 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	v.mu.Lock()
	defer v.mu.Unlock()
	last := 0
	for _, m := range spans {
		b.WriteString(text[last:m.Start])
		b.WriteString(v.placeholder(m.Kind, text[m.Start:m.End]))
		last = m.End
	}
	b.WriteString(text[last:])
	return b.String()
}

// Restore replaces the vault's placeholders found in text (as the model
// echoes them) with the original values. Text without any is returned as is,
// without allocating. Placeholders the model altered (case, brackets) are
// left alone: guessing would risk putting a value where it was not meant.
func (v *Vault) Restore(text string) string {
	if strings.IndexByte(text, '[') < 0 {
		return text
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.byPH) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for {
		p, ok := v.nextLocked(text, last)
		if !ok {
			break
		}
		if b.Len() == 0 {
			b.Grow(len(text))
		}
		b.WriteString(text[last:p.Start])
		b.WriteString(p.Value)
		last = p.End
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// placeholderKind turns a Match.Kind into the upper snake case a placeholder
// uses, so that no kind can smuggle brackets into the text.
func placeholderKind(k string) string {
	if k == "" {
		return "REDACTED"
	}
	ok := true
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			ok = false
			break
		}
	}
	if ok {
		return k
	}
	b := []byte(k)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
		default:
			b[i] = '_'
		}
	}
	return string(b)
}

// mergeSpans returns the matches clamped to text, empty ones dropped, sorted
// and with overlapping spans merged into one covering their union. Merging
// rather than dropping the loser matters: keeping only one of two
// overlapping spans would leave the other's tail in clear. The merged span
// takes the Kind of its longest member, the earliest on a tie. Adjacent
// spans stay separate: they are two values.
func mergeSpans(text string, matches []Match) []Match {
	spans := make([]Match, 0, len(matches))
	for _, m := range matches {
		m.Start = max(m.Start, 0)
		m.End = min(m.End, len(text))
		if m.Start < m.End {
			spans = append(spans, m)
		}
	}
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b Match) int {
		if c := cmp.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		return cmp.Compare(b.End, a.End) // longest first
	})
	out := spans[:1]
	longest := spans[0].End - spans[0].Start
	for _, m := range spans[1:] {
		cur := &out[len(out)-1]
		if m.Start >= cur.End {
			out = append(out, m)
			longest = m.End - m.Start
			continue
		}
		if n := m.End - m.Start; n > longest {
			cur.Kind, cur.Score, longest = m.Kind, m.Score, n
		}
		cur.End = max(cur.End, m.End)
	}
	return out
}

// Mask keeps at most this many leading characters of a masked span, and
// only of spans at least maskKeepMin characters long: "AKIA" identifies an
// AWS key type to an operator without helping anyone use the key, while
// half of a short password would.
const (
	maskKeep    = 4
	maskKeepMin = 16
)

// Mask hides the matched spans of text for storage, so that secrets are
// never stored in clear: each span (overlaps merged)
// becomes '*' bytes, keeping only the first 4 characters of spans of 16 or
// more characters, e.g. "AKIA****************". Byte length is preserved so
// the stored match offsets still point at the masked spans.
func Mask(text string, matches []Match) string {
	spans := mergeSpans(text, matches)
	if len(spans) == 0 {
		return text
	}
	b := []byte(text)
	for _, m := range spans {
		start := m.Start
		if utf8.RuneCountInString(text[m.Start:m.End]) >= maskKeepMin {
			for k := 0; k < maskKeep; k++ {
				_, size := utf8.DecodeRuneInString(text[start:m.End])
				start += size
			}
		}
		for i := start; i < m.End; i++ {
			b[i] = '*'
		}
	}
	return string(b)
}
