package format

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"iter"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/promptwall/promptwall/internal/jsonstr"
)

// This file is a small JSON toolkit over raw bytes. Parsing happens on every
// request, so instead of decoding into maps (one allocation per value) the
// body is validated once, recording where each value starts and ends, and
// then walked by byte offsets: a string value is copied out only when it is
// a text to screen, and a rewrite splices new string values into the
// original bytes, leaving everything else as the client sent it.

// maxDepth bounds nesting so that hostile bodies cannot exhaust the stack of
// the recursive walkers. Real LLM payloads nest fewer than 20 levels; tool
// arguments are the deepest part and stay far below this.
const maxDepth = 512

// span locates one JSON value in a document: b[s:e], node t of the
// document's tape. The zero span means the value is absent (a present
// value always ends after byte 0).
type span struct{ s, e, t int }

func (v span) ok() bool { return v.e > 0 }

// node is one value of a document's tape. Validation appends a node for
// every value and object key in document order, so the walkers find where
// a value ends, and where its next sibling starts, without scanning its
// bytes again: a text nested five levels deep would otherwise be scanned
// once per level, plus once by validation.
type node struct {
	s, e int
	// next is the index of the node after this value and everything
	// inside it: its next sibling, or the end of its container.
	next int
	// esc marks a string holding escapes, the only strings that need
	// decoding.
	esc bool
}

// doc is a document that validation accepted, with its tape.
type doc struct {
	b    []byte
	tape []node
}

// syntaxError is the detail of a validation failure; callers wrap it in an
// *Error with the status that fits their side (400 for requests).
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.msg, e.off) }

// strStop marks the bytes that end a run of plain string content: the quote,
// the backslash and the control characters JSON forbids unescaped.
var strStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// validate checks that b holds exactly one JSON value; see parse.
func validate(b []byte) error {
	_, err := parse(b, nil)
	return err
}

// parse checks that b holds exactly one JSON value (RFC 8259) with
// optional surrounding whitespace, nested at most maxDepth deep, in valid
// UTF-8, and returns it with its tape, built in tape's storage. RFC 8259
// requires UTF-8 between systems, the Python services behind the big APIs
// refuse anything else, and Go's encoding/json would silently turn bad
// bytes into U+FFFD: refusing them means the screen and every upstream
// read the same text.
func parse(b []byte, tape []node) (doc, error) {
	if !utf8.Valid(b) {
		i := 0
		for i < len(b) {
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		return doc{}, &syntaxError{i, "invalid UTF-8"}
	}
	if cap(tape) == 0 {
		// About one value per 16 bytes in LLM payloads: most of the
		// bytes are prose.
		tape = make([]node, 0, len(b)/16+1)
	}
	p := parser{b: b, tape: tape[:0]}
	i, err := p.value(skipWS(b, 0), 0)
	if err != nil {
		return doc{}, err
	}
	if i = skipWS(b, i); i != len(b) {
		return doc{}, &syntaxError{i, "unexpected data after the top-level value"}
	}
	return doc{b, p.tape}, nil
}

type parser struct {
	b    []byte
	tape []node
	// keys is a stack of the tape indices of the keys of the objects
	// being parsed; each object checks its own keys when it closes.
	keys []int
}

func (p *parser) value(i, depth int) (int, error) {
	b := p.b
	if i >= len(b) {
		return i, &syntaxError{i, "unexpected end of JSON"}
	}
	var e int
	var err error
	switch c := b[i]; {
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return i, &syntaxError{i, "nesting too deep"}
		}
		return p.container(i, depth+1)
	case c == '"':
		return p.str(i)
	case c == '-' || (c >= '0' && c <= '9'):
		e, err = validNumber(b, i)
	case c == 't':
		e, err = validLiteral(b, i, "true")
	case c == 'f':
		e, err = validLiteral(b, i, "false")
	case c == 'n':
		e, err = validLiteral(b, i, "null")
	default:
		return i, &syntaxError{i, fmt.Sprintf("invalid character %q looking for a value", c)}
	}
	if err != nil {
		return e, err
	}
	p.tape = append(p.tape, node{s: i, e: e, next: len(p.tape) + 1})
	return e, nil
}

func (p *parser) container(i, depth int) (int, error) {
	b := p.b
	t := len(p.tape)
	p.tape = append(p.tape, node{s: i})
	obj := b[i] == '{'
	closer := byte(']')
	if obj {
		closer = '}'
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == closer {
		p.tape[t].e, p.tape[t].next = i+1, t+1
		return i + 1, nil
	}
	mark := len(p.keys)
	for n := 0; ; n++ {
		var err error
		if obj {
			if i >= len(b) || b[i] != '"' {
				return i, &syntaxError{i, "expected a string object key"}
			}
			p.keys = append(p.keys, len(p.tape))
			if i, err = p.str(i); err != nil {
				return i, err
			}
			if i = skipWS(b, i); i >= len(b) || b[i] != ':' {
				return i, &syntaxError{i, "expected ':' after object key"}
			}
			i = skipWS(b, i+1)
		}
		// Most member values are strings: one call fewer for them.
		if i < len(b) && b[i] == '"' {
			i, err = p.str(i)
		} else {
			i, err = p.value(i, depth)
		}
		if err != nil {
			return i, p.inMember(err, obj, n)
		}
		if i = skipWS(b, i); i >= len(b) {
			return i, &syntaxError{i, "unexpected end of JSON"}
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case closer:
			return p.closeContainer(t, i, obj, mark)
		default:
			return i, &syntaxError{i, fmt.Sprintf("invalid character %q after a value", b[i])}
		}
	}
}

// inMember returns err, a failure inside member n of a container; a
// duplicate key, unwinding, gets each level's name added to its path.
func (p *parser) inMember(err error, obj bool, n int) error {
	if de, ok := err.(*DuplicateKeyError); ok {
		if obj {
			de.parents = append(de.parents, pathSeg{key: bytes.Clone(p.keyText(p.keys[len(p.keys)-1]))})
		} else {
			de.parents = append(de.parents, pathSeg{idx: n})
		}
	}
	return err
}

// closeContainer ends the container at tape node t on its closer at i; an
// object's keys, from mark on, are checked for duplicates and dropped.
func (p *parser) closeContainer(t, i int, obj bool, mark int) (int, error) {
	p.tape[t].e, p.tape[t].next = i+1, len(p.tape)
	if obj {
		err := p.checkKeys(p.keys[mark:])
		p.keys = p.keys[:mark]
		if err != nil {
			return i, err
		}
	}
	return i + 1, nil
}

// Masks for testing eight bytes at once (SWAR): lsb has the low bit of
// every byte set, msb the high bit.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// stopBits flags the high bit of every strStop byte among the eight bytes
// of x (little-endian: byte 0 is the lowest). Each subtraction sets the
// high bit of a byte below its bound (0x20, or 1 after the XOR that zeroes
// a quote or backslash) and of bytes from 0x80 up; those share their high
// bit with x, so one mask drops them for all three tests. A borrow can
// only flag bytes above a real match, so the lowest flag is exact.
func stopBits(x uint64) uint64 {
	q := x ^ (lsb * '"')
	bs := x ^ (lsb * '\\')
	return ((x - lsb*0x20) | (q - lsb) | (bs - lsb)) &^ x & msb
}

// stopIndex returns the offset of the first strStop byte of b at or after
// i, or len(b). Prompts are long runs of plain text: it skips them a word
// at a time (parse checked the UTF-8 beforehand, so bytes >= 0x80 are
// plain here). It is a function of its own so that the loop keeps its
// few variables in registers, and it walks a shrinking slice because
// that compiles to fewer bounds checks than indexing.
func stopIndex(b []byte, i int) int {
	rest := b[i:]
	for len(rest) >= 16 {
		m0 := stopBits(binary.LittleEndian.Uint64(rest))
		m1 := stopBits(binary.LittleEndian.Uint64(rest[8:]))
		if m0|m1 != 0 {
			if m0 != 0 {
				return len(b) - len(rest) + bits.TrailingZeros64(m0)>>3
			}
			return len(b) - len(rest) + 8 + bits.TrailingZeros64(m1)>>3
		}
		rest = rest[16:]
	}
	for len(rest) > 0 && !strStop[rest[0]] {
		rest = rest[1:]
	}
	return len(b) - len(rest)
}

// str validates the string starting at b[i] == '"' and records it.
func (p *parser) str(i int) (int, error) {
	b := p.b
	s := i
	esc := false
	i++
	for {
		if i = stopIndex(b, i); i >= len(b) {
			return i, &syntaxError{i, "unterminated string"}
		}
		switch b[i] {
		case '"':
			p.tape = append(p.tape, node{s: s, e: i + 1, next: len(p.tape) + 1, esc: esc})
			return i + 1, nil
		case '\\':
			esc = true
			if i+1 >= len(b) {
				return i, &syntaxError{i, "unterminated string"}
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return i, &syntaxError{i, "unterminated string"}
				}
				for _, h := range b[i+2 : i+6] {
					if hexVal(h) < 0 {
						return i, &syntaxError{i, "invalid \\u escape"}
					}
				}
				i += 6
			default:
				return i, &syntaxError{i, "invalid escape"}
			}
		default:
			return i, &syntaxError{i, "control character in string"}
		}
	}
}

func validNumber(b []byte, i int) (int, error) {
	start := i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return i, &syntaxError{start, "invalid number"}
	}
	if i < len(b) && b[i] == '.' {
		n := i + 1
		if i = digits(b, n); i == n {
			return i, &syntaxError{start, "invalid number"}
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		n := i
		if i = digits(b, n); i == n {
			return i, &syntaxError{start, "invalid number"}
		}
	}
	return i, nil
}

// digits returns the offset after the run of digits starting at b[i].
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func validLiteral(b []byte, i int, lit string) (int, error) {
	if !bytes.HasPrefix(b[i:], []byte(lit)) {
		return i, &syntaxError{i, "invalid literal"}
	}
	return i + len(lit), nil
}

// isNumber reports whether s is exactly one JSON number.
func isNumber(s []byte) bool {
	if len(s) == 0 || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return false
	}
	end, err := validNumber(s, 0)
	return err == nil && end == len(s)
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// The walkers below assume a document that parse accepted.

func skipWS(b []byte, i int) int {
	// Most bodies are compact: one comparison settles the usual case.
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipStr returns the offset after the string starting at b[i] == '"'. It
// jumps from quote to quote with IndexByte (vectorised) and counts the
// backslashes before each to tell an escaped quote from the closing one.
func skipStr(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		i += j
		k := i - 1
		for b[k] == '\\' {
			k--
		}
		if (i-k-1)%2 == 0 {
			return i + 1
		}
		i++
	}
}

// root returns the top-level value.
func (d *doc) root() span {
	n := d.tape[0]
	return span{n.s, n.e, 0}
}

// members yields the key (with its quotes) and the value of each member of
// the object v, in document order.
func (d *doc) members(v span) iter.Seq2[span, span] {
	return func(yield func(span, span) bool) {
		tape := d.tape
		for t, end := v.t+1, tape[v.t].next; t < end; {
			k, m := tape[t], tape[t+1]
			if !yield(span{k.s, k.e, t}, span{m.s, m.e, t + 1}) {
				return
			}
			t = m.next
		}
	}
}

// elems yields the index and value of each element of the array v.
func (d *doc) elems(v span) iter.Seq2[int, span] {
	return func(yield func(int, span) bool) {
		tape := d.tape
		for i, t, end := 0, v.t+1, tape[v.t].next; t < end; i++ {
			e := tape[t]
			if !yield(i, span{e.s, e.e, t}) {
				return
			}
			t = e.next
		}
	}
}

// kindName names the JSON type of the value at v for error messages.
func kindName(b []byte, v span) string {
	switch b[v.s] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func isNull(b []byte, v span) bool { return !v.ok() || b[v.s] == 'n' }

// unquote returns the decoded content of the string value v. It aliases the
// document when the string holds no escapes (the common case) and
// allocates otherwise; the result must not be modified.
func (d *doc) unquote(v span) []byte {
	raw := d.b[v.s+1 : v.e-1]
	if !d.tape[v.t].esc {
		return raw
	}
	return appendUnescape(nil, raw)
}

// appendUnescape appends the decoded form of raw, the content of a string
// in a document parse accepted (so valid UTF-8) without its quotes.
// Unpaired surrogates become U+FFFD, as in encoding/json.
func appendUnescape(dst, raw []byte) []byte {
	for {
		i := bytes.IndexByte(raw, '\\')
		if i < 0 {
			return append(dst, raw...)
		}
		dst = append(dst, raw[:i]...)
		raw = raw[i:]
		c := raw[1]
		raw = raw[2:]
		switch c {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4(raw)
			raw = raw[4:]
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if len(raw) >= 6 && raw[0] == '\\' && raw[1] == 'u' {
					r2 = hex4(raw[2:])
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					raw = raw[6:]
					r = d
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, c)
		}
	}
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		r = r<<4 | rune(hexVal(c))
	}
	return r
}

// appendQuote appends s as a JSON string, leaving HTML characters as they
// are: a rewritten body keeps the client's own spelling of them.
func appendQuote(dst []byte, s string) []byte { return jsonstr.Append(dst, s, false) }

// keyset is a precompiled list of the object keys a walker looks for. A name
// may list aliases separated by '|' that fill the same slot (Gemini accepts
// both lowerCamelCase and snake_case field names).
type keyset struct {
	names [][]byte
	slots []int
	n     int
}

func newKeys(names ...string) *keyset {
	ks := &keyset{n: len(names)}
	for slot, n := range names {
		for a := range bytes.SplitSeq([]byte(n), []byte("|")) {
			ks.names = append(ks.names, a)
			ks.slots = append(ks.slots, slot)
		}
	}
	return ks
}

// find returns the slot of key, or -1. With fold, keys match
// case-insensitively under Unicode simple folding, which is how Go's
// encoding/json matches struct fields: a Go upstream reads "Messages" as
// "messages", so the screen must too.
func (ks *keyset) find(key []byte, fold bool) int {
	for i, n := range ks.names {
		if string(key) == string(n) || (fold && bytes.EqualFold(key, n)) {
			return ks.slots[i]
		}
	}
	return -1
}

// appendIndex appends "[i]" to a path.
func appendIndex(p []byte, i int) []byte {
	p = append(p, '[')
	p = strconv.AppendInt(p, int64(i), 10)
	return append(p, ']')
}
