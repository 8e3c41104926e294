package format

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"iter"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is a small JSON toolkit over raw bytes. Parsing happens on every
// request, so instead of decoding into maps (one allocation per value) the
// body is validated once and then walked by byte offsets: a string value is
// copied out only when it is a text to screen, and a rewrite splices new
// string values into the original bytes, leaving everything else as the
// client sent it.

// maxDepth bounds nesting so that hostile bodies cannot exhaust the stack of
// the recursive walkers. Real LLM payloads nest fewer than 20 levels; tool
// arguments are the deepest part and stay far below this.
const maxDepth = 512

// span locates one JSON value in a document: b[s:e]. The zero span means the
// value is absent (a present value always ends after byte 0).
type span struct{ s, e int }

func (v span) ok() bool { return v.e > 0 }

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

// validate checks that b holds exactly one JSON value (RFC 8259) with
// optional surrounding whitespace, nested at most maxDepth deep, in valid
// UTF-8. RFC 8259 requires UTF-8 between systems, the Python services
// behind the big APIs refuse anything else, and Go's encoding/json would
// silently turn bad bytes into U+FFFD: refusing them means the screen and
// every upstream read the same text.
func validate(b []byte) error {
	if !utf8.Valid(b) {
		i := 0
		for i < len(b) {
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		return &syntaxError{i, "invalid UTF-8"}
	}
	i, err := validValue(b, skipWS(b, 0), 0)
	if err != nil {
		return err
	}
	if i = skipWS(b, i); i != len(b) {
		return &syntaxError{i, "unexpected data after the top-level value"}
	}
	return nil
}

func validValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return i, &syntaxError{i, "unexpected end of JSON"}
	}
	switch c := b[i]; {
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return i, &syntaxError{i, "nesting too deep"}
		}
		return validContainer(b, i, depth+1)
	case c == '"':
		return validString(b, i)
	case c == '-' || (c >= '0' && c <= '9'):
		return validNumber(b, i)
	case c == 't':
		return validLiteral(b, i, "true")
	case c == 'f':
		return validLiteral(b, i, "false")
	case c == 'n':
		return validLiteral(b, i, "null")
	default:
		return i, &syntaxError{i, fmt.Sprintf("invalid character %q looking for a value", c)}
	}
}

func validContainer(b []byte, i, depth int) (int, error) {
	obj := b[i] == '{'
	closer := byte(']')
	if obj {
		closer = '}'
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == closer {
		return i + 1, nil
	}
	for {
		var err error
		if obj {
			if i >= len(b) || b[i] != '"' {
				return i, &syntaxError{i, "expected a string object key"}
			}
			if i, err = validString(b, i); err != nil {
				return i, err
			}
			if i = skipWS(b, i); i >= len(b) || b[i] != ':' {
				return i, &syntaxError{i, "expected ':' after object key"}
			}
			i = skipWS(b, i+1)
		}
		if i, err = validValue(b, i, depth); err != nil {
			return i, err
		}
		if i = skipWS(b, i); i >= len(b) {
			return i, &syntaxError{i, "unexpected end of JSON"}
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case closer:
			return i + 1, nil
		default:
			return i, &syntaxError{i, fmt.Sprintf("invalid character %q after a value", b[i])}
		}
	}
}

// Masks for testing eight bytes at once (SWAR): lsb has the low bit of
// every byte set, msb the high bit.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plainWord reports whether none of the eight bytes of x is a strStop byte:
// a byte below 0x20, a quote or a backslash. Each test flags the high bit
// of a matching byte; a borrow can only add flags above a real match, so
// "none flagged" is exact.
func plainWord(x uint64) bool {
	ctl := (x - lsb*0x20) &^ x
	q := x ^ (lsb * '"')
	bs := x ^ (lsb * '\\')
	return (ctl|((q-lsb)&^q)|((bs-lsb)&^bs))&msb == 0
}

func validString(b []byte, i int) (int, error) {
	i++
	for {
		// Prompts are long runs of plain text: skip them a word at a time
		// (validate checked the UTF-8 beforehand, so bytes >= 0x80 are
		// plain here).
		for i+8 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		for i < len(b) && !strStop[b[i]] {
			i++
		}
		if i >= len(b) {
			return i, &syntaxError{i, "unterminated string"}
		}
		switch b[i] {
		case '"':
			return i + 1, nil
		case '\\':
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
	digits := func() bool {
		n := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > n
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return i, &syntaxError{start, "invalid number"}
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return i, &syntaxError{start, "invalid number"}
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return i, &syntaxError{start, "invalid number"}
		}
	}
	return i, nil
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

// The walkers below assume a document that validate accepted.

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
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

// skip returns the offset after the value starting at b[i].
func skip(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipStr(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipStr(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default:
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// root returns the span of the top-level value. validate accepted nothing
// but whitespace around it, so it ends where the trailing whitespace
// begins: no need to walk the whole document to find its end.
func root(b []byte) span {
	e := len(b)
	for e > 0 {
		switch b[e-1] {
		case ' ', '\t', '\n', '\r':
			e--
			continue
		}
		break
	}
	return span{skipWS(b, 0), e}
}

// members yields the key (with its quotes) and the value of each member of
// the object v, in document order.
func members(b []byte, v span) iter.Seq2[span, span] {
	return func(yield func(span, span) bool) {
		i := skipWS(b, v.s+1)
		if b[i] == '}' {
			return
		}
		for {
			ke := skipStr(b, i)
			k := span{i, ke}
			i = skipWS(b, skipWS(b, ke)+1)
			ve := skip(b, i)
			if !yield(k, span{i, ve}) {
				return
			}
			i = skipWS(b, ve)
			if b[i] == '}' {
				return
			}
			i = skipWS(b, i+1)
		}
	}
}

// elems yields the index and value of each element of the array v.
func elems(b []byte, v span) iter.Seq2[int, span] {
	return func(yield func(int, span) bool) {
		i := skipWS(b, v.s+1)
		if b[i] == ']' {
			return
		}
		for n := 0; ; n++ {
			e := skip(b, i)
			if !yield(n, span{i, e}) {
				return
			}
			i = skipWS(b, e)
			if b[i] == ']' {
				return
			}
			i = skipWS(b, i+1)
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

// strBytes returns the decoded content of the string value v. It aliases b
// when the string holds no escapes (the common case) and allocates
// otherwise; the result must not be modified.
func strBytes(b []byte, v span) []byte {
	raw := b[v.s+1 : v.e-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw
	}
	return appendUnescape(nil, raw)
}

// appendUnescape appends the decoded form of raw, the content of a valid
// JSON string without its quotes. Unpaired surrogates (and invalid UTF-8,
// which validate refuses anyway) become U+FFFD, as in encoding/json.
func appendUnescape(dst, raw []byte) []byte {
	for len(raw) > 0 {
		i := 0
		for i < len(raw) && raw[i] != '\\' && raw[i] < utf8.RuneSelf {
			i++
		}
		dst = append(dst, raw[:i]...)
		raw = raw[i:]
		if len(raw) == 0 {
			break
		}
		if raw[0] >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(raw)
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, raw[:size]...)
			}
			raw = raw[size:]
			continue
		}
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
	return dst
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		r = r<<4 | rune(hexVal(c))
	}
	return r
}

// appendQuote appends s as a JSON string. Invalid UTF-8 becomes U+FFFD so
// the output is always valid JSON; U+2028 and U+2029 are escaped because
// some JavaScript consumers treat them as line ends.
func appendQuote(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			switch r {
			case utf8.RuneError:
				dst = append(dst, `\ufffd`...)
			default:
				dst = append(dst, `\u202`...)
				dst = append(dst, hex[r&0xf])
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

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
