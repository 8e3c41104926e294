package format

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Paths and refs.
//
// A path names a value in a JSON document with a small dotted syntax:
// object keys joined by '.', array indexes in brackets, and keys that are
// not plain identifiers as quoted JSON strings in brackets:
//
//	messages[2].content[0].text
//	contents[0].parts[1].functionCall.args["user name"]
//
// Generic formats also accept [*], every element of an array.
//
// A Message.Ref is a path into the body, optionally followed by '#' and a
// path into the JSON document held by the string value the first part names
// (tool-call arguments are JSON inside a JSON string):
//
//	messages[1].tool_calls[0].function.arguments#location.city
//
// Keys in a ref are spelt exactly as the body spells them (after JSON
// unescaping), so a rewrite finds them again without knowing the format's
// key-matching rules.

// segment is one step of a path: a key, an index, or a wildcard (idx == -2).
type segment struct {
	key string
	idx int
}

const (
	segKey  = -1
	segWild = -2
)

// isIdent reports whether key can be written bare in a path.
func isIdent(key []byte) bool {
	if len(key) == 0 {
		return false
	}
	for i, c := range key {
		switch {
		case c == '_' || c == '$' || c == '@' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
		case i > 0 && (c == '-' || (c >= '0' && c <= '9')):
		default:
			return false
		}
	}
	return true
}

// appendKey appends one key step to a path.
func appendKey(p, key []byte) []byte {
	if !isIdent(key) {
		p = append(p, '[')
		p = appendQuote(p, string(key))
		return append(p, ']')
	}
	if len(p) > 0 && p[len(p)-1] != '#' {
		p = append(p, '.')
	}
	return append(p, key...)
}

// errPath reports a malformed path or ref.
var errPath = errors.New("malformed path")

// parsePath parses a path; wild says whether [*] is allowed.
func parsePath(p string, wild bool) ([]segment, error) {
	var segs []segment
	for i := 0; i < len(p); {
		switch c := p[i]; {
		case c == '[':
			j := i + 1
			if j < len(p) && p[j] == '"' {
				end := skipStr([]byte(p), j)
				if end > len(p) || end <= j+1 || end >= len(p) || p[end] != ']' {
					return nil, fmt.Errorf("%w %q: bad quoted key at %d", errPath, p, i)
				}
				key, err := parse([]byte(p[j:end]), nil)
				if err != nil {
					return nil, fmt.Errorf("%w %q: bad quoted key at %d", errPath, p, i)
				}
				segs = append(segs, segment{key: string(key.unquote(key.root())), idx: segKey})
				i = end + 1
				continue
			}
			k := strings.IndexByte(p[j:], ']')
			if k < 0 {
				return nil, fmt.Errorf("%w %q: unclosed '['", errPath, p)
			}
			s := p[j : j+k]
			if s == "*" && wild {
				segs = append(segs, segment{idx: segWild})
			} else if n, err := strconv.Atoi(s); err == nil && n >= 0 && s[0] != '+' {
				segs = append(segs, segment{idx: n})
			} else {
				return nil, fmt.Errorf("%w %q: bad index %q", errPath, p, s)
			}
			i = j + k + 1
		case c == '.' && i > 0 || i == 0:
			if c == '.' {
				i++
			}
			j := i
			for j < len(p) && p[j] != '.' && p[j] != '[' {
				j++
			}
			if !isIdent([]byte(p[i:j])) {
				return nil, fmt.Errorf("%w %q: bad key at %d", errPath, p, i)
			}
			segs = append(segs, segment{key: p[i:j], idx: segKey})
			i = j
		default:
			return nil, fmt.Errorf("%w %q: unexpected %q at %d", errPath, p, c, i)
		}
	}
	return segs, nil
}

// lookup finds the value a wildcard-free path names in the document b.
func lookup(d *doc, v span, segs []segment) (span, bool) {
	b := d.b
	for _, sg := range segs {
		found := false
		switch {
		case sg.idx == segKey && b[v.s] == '{':
			for k, m := range d.members(v) {
				if string(d.unquote(k)) == sg.key {
					v, found = m, true
					break
				}
			}
		case sg.idx >= 0 && b[v.s] == '[':
			for i, e := range d.elems(v) {
				if i == sg.idx {
					v, found = e, true
					break
				}
			}
		}
		if !found {
			return span{}, false
		}
	}
	return v, true
}

// splitRef cuts a ref at the '#' that starts its inner path. A '#' inside a
// quoted key (["a#b"]) belongs to the key.
func splitRef(ref string) (outer, inner string, ok bool) {
	for i := 0; i < len(ref); i++ {
		switch ref[i] {
		case '"':
			i = skipStr([]byte(ref), i) - 1
		case '#':
			return ref[:i], ref[i+1:], true
		}
	}
	return ref, "", false
}

// patch replaces b[s:e] by text.
type patch struct {
	s, e int
	text []byte
}

// rewrite applies edits to the JSON document b and returns the new
// document; bytes outside the edited values are copied unchanged.
func rewrite(b []byte, edits []Edit) ([]byte, error) {
	if len(edits) == 0 {
		return b, nil
	}
	d, err := parse(b, nil)
	if err != nil {
		return nil, fmt.Errorf("format: rewrite: body is not valid JSON: %w", err)
	}
	top := d.root()
	var patches []patch
	// Edits inside an embedded JSON document are grouped by the string
	// value that holds it, which is rewritten once.
	type inner struct {
		v     span
		edits []Edit
	}
	var inners []inner
	for _, ed := range edits {
		outer, in, hasInner := splitRef(ed.Ref)
		segs, err := parsePath(outer, false)
		if err != nil {
			return nil, fmt.Errorf("format: rewrite: %w", err)
		}
		v, ok := lookup(&d, top, segs)
		if !ok {
			return nil, fmt.Errorf("format: rewrite: %w: %q", ErrUnknownRef, ed.Ref)
		}
		if !hasInner {
			t, err := leafText(b, v, ed)
			if err != nil {
				return nil, err
			}
			patches = append(patches, patch{v.s, v.e, t})
			continue
		}
		if b[v.s] != '"' {
			return nil, fmt.Errorf("format: rewrite: %w: %q names %s, not a string", ErrUnknownRef, ed.Ref, kindName(b, v))
		}
		j := slices.IndexFunc(inners, func(x inner) bool { return x.v == v })
		if j < 0 {
			j = len(inners)
			inners = append(inners, inner{v: v})
		}
		inners[j].edits = append(inners[j].edits, Edit{Ref: in, Text: ed.Text})
	}
	for _, in := range inners {
		doc := d.unquote(in.v)
		if validate(doc) != nil {
			return nil, fmt.Errorf("format: rewrite: %w: %q does not hold JSON", ErrUnknownRef, in.edits[0].Ref)
		}
		nd, err := rewrite(doc, in.edits)
		if err != nil {
			return nil, err
		}
		patches = append(patches, patch{in.v.s, in.v.e, appendQuote(nil, string(nd))})
	}
	return applyPatches(b, patches)
}

// applyPatches returns b with each patch's range replaced by its text; two
// patches of overlapping ranges are an error, since one would undo the
// other.
func applyPatches(b []byte, patches []patch) ([]byte, error) {
	slices.SortFunc(patches, func(x, y patch) int { return x.s - y.s })
	n := len(b)
	for i, p := range patches {
		if i > 0 && p.s < patches[i-1].e {
			return nil, fmt.Errorf("format: rewrite: two edits name the same value")
		}
		n += len(p.text) - (p.e - p.s)
	}
	out := make([]byte, 0, n)
	last := 0
	for _, p := range patches {
		out = append(out, b[last:p.s]...)
		out = append(out, p.text...)
		last = p.e
	}
	return append(out, b[last:]...), nil
}

// leafText encodes an edit's text for the value it replaces. Strings stay
// strings. A number stays a number if the new text still is one (an
// unchanged short number); otherwise it becomes a string holding the text,
// so "[CREDIT_CARD_1]" replacing 4111111111111111 leaves valid JSON.
func leafText(b []byte, v span, ed Edit) ([]byte, error) {
	switch c := b[v.s]; {
	case c == '"':
		return appendQuote(nil, ed.Text), nil
	case c == '-' || (c >= '0' && c <= '9'):
		if isNumber([]byte(ed.Text)) {
			return []byte(ed.Text), nil
		}
		return appendQuote(nil, ed.Text), nil
	}
	return nil, fmt.Errorf("format: rewrite: %w: %q names %s, not a text", ErrUnknownRef, ed.Ref, kindName(b, v))
}

// match calls fn for every value a path with wildcards names, in document
// order, with the concrete path of that value (valid only during the call).
// A key that occurs twice in one object is an error: JSON parsers disagree
// on which duplicate wins, and a ref could only name the first.
func match(d *doc, v span, segs []segment, path []byte, fn func(path []byte, v span) error) error {
	b := d.b
	if len(segs) == 0 {
		return fn(path, v)
	}
	sg := segs[0]
	switch {
	case sg.idx == segKey && b[v.s] == '{':
		var hit span
		var key []byte
		for k, m := range d.members(v) {
			if kb := d.unquote(k); string(kb) == sg.key {
				if hit.ok() {
					return &Error{Status: 400, Code: "invalid_request", Param: string(appendKey(path, kb)),
						Message: fmt.Sprintf("%s: duplicate key %q", appendKey(path, kb), sg.key)}
				}
				hit, key = m, kb
			}
		}
		if hit.ok() {
			return match(d, hit, segs[1:], appendKey(path, key), fn)
		}
	case sg.idx != segKey && b[v.s] == '[':
		for i, e := range d.elems(v) {
			if sg.idx == segWild || sg.idx == i {
				if err := match(d, e, segs[1:], appendIndex(path, i), fn); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
