package format

import (
	"bytes"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Object keys that are equal, or equal but for case, are refused at every
// level of every document: Go's encoding/json (used by upstreams written in
// Go: Ollama, LocalAI, many proxies) matches keys case-insensitively and
// keeps the last, other parsers keep the first or reject, so
// {"messages":[benign],"Messages":[secret]} would screen one conversation
// and forward another. Case is compared under Unicode simple folding, as
// encoding/json and bytes.EqualFold do (the Kelvin sign K matches "k").

// DuplicateKeyError reports an object with two keys that are equal under
// case folding.
type DuplicateKeyError struct {
	// Offset is the byte offset of the second key in the document.
	Offset int
	// Key is the second key, decoded, cut to 64 bytes.
	Key string
	// parents are the keys and indices of the enclosing values, innermost
	// first, added as the parser unwinds.
	parents []pathSeg
}

type pathSeg struct {
	key []byte
	idx int
}

// Path is the location of the second key in ref syntax
// ("messages[0].Content").
func (e *DuplicateKeyError) Path() string {
	var p []byte
	for i := len(e.parents) - 1; i >= 0; i-- {
		if s := e.parents[i]; s.key != nil {
			p = appendKey(p, s.key)
		} else {
			p = appendIndex(p, s.idx)
		}
	}
	return string(appendKey(p, []byte(e.Key)))
}

func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("%s: duplicate key (keys that differ only in case count as duplicates: parsers disagree on which one wins)", e.Path())
}

// smallObject is the most keys checked pairwise; larger objects use a map
// of folded keys, so a hostile object with many keys costs linear time.
const smallObject = 16

// maxKeyInError bounds the key quoted in a DuplicateKeyError.
const maxKeyInError = 64

// checkKeys fails when two of an object's keys (tape indices) are equal
// under case folding.
func (p *parser) checkKeys(keys []int) error {
	if len(keys) < 2 {
		return nil
	}
	if len(keys) <= smallObject {
		for i := 1; i < len(keys); i++ {
			for j := 0; j < i; j++ {
				if p.keysFold(keys[j], keys[i]) {
					return p.dupErr(keys[i])
				}
			}
		}
		return nil
	}
	seen := make(map[string]struct{}, len(keys))
	var buf []byte
	for _, k := range keys {
		buf = appendFolded(buf[:0], p.keyText(k))
		if _, dup := seen[string(buf)]; dup {
			return p.dupErr(k)
		}
		seen[string(buf)] = struct{}{}
	}
	return nil
}

// keyText is the decoded key at tape index t.
func (p *parser) keyText(t int) []byte {
	n := p.tape[t]
	raw := p.b[n.s+1 : n.e-1]
	if !n.esc {
		return raw
	}
	return appendUnescape(nil, raw)
}

func (p *parser) keysFold(x, y int) bool {
	nx, ny := p.tape[x], p.tape[y]
	if !nx.esc && !ny.esc {
		return bytes.EqualFold(p.b[nx.s+1:nx.e-1], p.b[ny.s+1:ny.e-1])
	}
	return bytes.EqualFold(p.keyText(x), p.keyText(y))
}

func (p *parser) dupErr(t int) error {
	k := p.keyText(t)
	if len(k) > maxKeyInError {
		k = truncateUTF8(k, maxKeyInError)
	}
	return &DuplicateKeyError{Offset: p.tape[t].s, Key: string(k)}
}

// appendFolded appends s with every rune replaced by the smallest rune of
// its simple case-folding orbit: two strings fold to the same bytes exactly
// when bytes.EqualFold holds for them.
func appendFolded(dst, s []byte) []byte {
	for len(s) > 0 {
		c := s[0]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			// 'K' and 'S' share their orbits with non-ASCII runes
			// (U+212A, U+017F), whose smallest member is still ASCII.
			dst = append(dst, c)
			s = s[1:]
			continue
		}
		r, n := utf8.DecodeRune(s)
		s = s[n:]
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		dst = utf8.AppendRune(dst, m)
	}
	return dst
}

func truncateUTF8(b []byte, n int) []byte {
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return b[:n]
}

// CheckKeys reports whether the JSON document b has an object with keys that
// are equal under case folding, at any depth, as a *DuplicateKeyError. It
// does not otherwise judge b: invalid JSON is left to the caller's decoder
// (nil is returned). The API uses it on bodies it decodes with
// encoding/json, so that the API and the gateway refuse the same keys.
func CheckKeys(b []byte) error {
	_, err := parse(b, nil)
	var de *DuplicateKeyError
	if errors.As(err, &de) {
		return de
	}
	return nil
}
