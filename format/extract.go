package format

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/promptwall/promptwall/scanner"
)

// collector walks one validated document and gathers its texts. All texts
// and refs are written into one strings.Builder and sliced out of its
// single string at the end, so a request costs a handful of allocations
// however many messages it holds.
type collector struct {
	doc
	// fold matches keys case-insensitively (Go encoding/json upstreams).
	fold bool
	// path is the location of the value being walked, in ref syntax.
	path    []byte
	sb      strings.Builder
	offs    []textOffs
	scratch []byte
	// status is the HTTP status of shape errors: 400 for requests, 502
	// for answers (a malformed answer is the upstream's fault).
	status int
}

// textOffs locates a text and its ref in the builder.
type textOffs struct {
	ts, te, rs, re int
	role           scanner.Role
}

// minNumberLen is the shortest number literal screened as a text inside
// tool arguments: shorter numbers (counts, limits, flags) cannot hold a
// card, account or phone number, and skipping them keeps the conversation
// small.
const minNumberLen = 6

// collectors recycles collectors with their buffers (the tape takes
// several times the size of its document) across parses.
var collectors = sync.Pool{New: func() any { return new(collector) }}

// Collectors whose buffers grew past these bounds are left to the garbage
// collector, so that one huge body does not pin its memory.
const (
	maxPooledTape    = 1 << 16
	maxPooledScratch = 1 << 20
)

// begin validates body and prepares a collector on it. It returns the top
// level value, which must be an object.
func begin(body []byte, status int) (*collector, span, error) {
	c := collectors.Get().(*collector)
	c.status = status
	d, err := parse(body, c.tape)
	if err != nil {
		c.release()
		what := "request body"
		if status != 400 {
			what = "answer"
		}
		return nil, span{}, jsonError(status, what, err)
	}
	c.doc = d
	top := d.root()
	if body[top.s] != '{' {
		return nil, span{}, c.errf("body must be a JSON object, got %s", kindName(body, top))
	}
	// Texts and refs together are at most about the body's size; growing
	// once up front avoids repeated copying.
	c.sb.Grow(len(body) + 256)
	return c, top, nil
}

// jsonError is the *Error of a document parse refused (what names it):
// ambiguous keys are a shape error at their path, anything else invalid
// JSON.
func jsonError(status int, what string, err error) *Error {
	if de, ok := errors.AsType[*DuplicateKeyError](err); ok {
		code := "invalid_request"
		if status != 400 {
			code = "invalid_answer"
		}
		return &Error{Status: status, Code: code, Message: de.Error(), Param: de.Path()}
	}
	return &Error{Status: status, Code: "invalid_json", Message: fmt.Sprintf("%s is not valid JSON: %v", what, err)}
}

// release returns the collector to the pool with its buffers; the caller
// must not use it afterwards. The builder's string belongs to the results,
// so the builder starts afresh.
func (c *collector) release() {
	if cap(c.tape) > maxPooledTape || cap(c.scratch) > maxPooledScratch {
		return
	}
	*c = collector{doc: doc{tape: c.tape[:0]}, path: c.path[:0], offs: c.offs[:0], scratch: c.scratch[:0]}
	collectors.Put(c)
}

// conversation finishes the walk: it slices every text and ref out of the
// builder's one string, and releases the collector.
func (c *collector) conversation() scanner.Conversation {
	s := c.sb.String()
	msgs := make([]scanner.Message, len(c.offs))
	for i, o := range c.offs {
		msgs[i] = scanner.Message{Role: o.role, Text: s[o.ts:o.te], Ref: s[o.rs:o.re]}
	}
	c.release()
	return scanner.Conversation{Messages: msgs}
}

// str copies the string value v into the builder and returns its offsets
// there, resolved to a string by finish.
func (c *collector) str(v span) (int, int) {
	ts := c.sb.Len()
	c.write(v)
	return ts, c.sb.Len()
}

// write copies the decoded content of the string value v into the builder.
func (c *collector) write(v span) {
	raw := c.b[v.s+1 : v.e-1]
	// Most texts hold no escapes and are copied as they are (parse
	// already checked the UTF-8).
	if !c.tape[v.t].esc {
		c.sb.Write(raw)
		return
	}
	c.scratch = appendUnescape(c.scratch[:0], raw)
	c.sb.Write(c.scratch)
}

// text records the string (or number) value v as a text of role at the
// current path. Empty texts are skipped: there is nothing to screen.
func (c *collector) text(role scanner.Role, v span) {
	ts := c.sb.Len()
	if c.b[v.s] == '"' {
		c.write(v)
	} else {
		c.sb.Write(c.b[v.s:v.e])
	}
	te := c.sb.Len()
	if te == ts {
		return
	}
	c.sb.Write(c.path)
	c.offs = append(c.offs, textOffs{ts, te, te, c.sb.Len(), role})
}

// optText records v if it is a string; absent and null are fine; any other
// type is a shape error naming the field.
func (c *collector) optText(role scanner.Role, v, k span) error {
	if isNull(c.b, v) {
		return nil
	}
	mark := c.pushKey(k)
	defer c.pop(mark)
	if c.b[v.s] != '"' {
		return c.typeErr(v, "a string")
	}
	c.text(role, v)
	return nil
}

// leaves records every string leaf of v (and every number long enough to
// carry an identifier) as a text of role. Object keys are not screened.
// Duplicate keys are refused: parsers disagree on which one wins.
func (c *collector) leaves(role scanner.Role, v span) error {
	switch ch := c.b[v.s]; {
	case ch == '"':
		c.text(role, v)
	case ch == '-' || (ch >= '0' && ch <= '9'):
		if v.e-v.s >= minNumberLen {
			c.text(role, v)
		}
	case ch == '{':
		var seen []span
		for k, m := range c.members(v) {
			for _, s := range seen {
				if keyEqual(&c.doc, s, k) {
					mark := c.pushKey(k)
					err := c.errf("duplicate key")
					c.pop(mark)
					return err
				}
			}
			seen = append(seen, k)
			mark := c.pushKey(k)
			err := c.leaves(role, m)
			c.pop(mark)
			if err != nil {
				return err
			}
		}
	case ch == '[':
		for i, e := range c.elems(v) {
			mark := c.pushIndex(i)
			err := c.leaves(role, e)
			c.pop(mark)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func keyEqual(d *doc, x, y span) bool {
	if string(d.b[x.s:x.e]) == string(d.b[y.s:y.e]) {
		return true
	}
	return string(d.unquote(x)) == string(d.unquote(y))
}

// jsonString records a string that holds JSON (tool-call arguments). When
// it parses, each leaf of the embedded document is a text whose ref is
// "<path>#<inner path>", so a redaction rewrites one inner string and the
// arguments stay valid JSON. When it does not parse (a model can emit
// broken arguments) the whole string is one text.
func (c *collector) jsonString(role scanner.Role, v, k span) error {
	if isNull(c.b, v) {
		return nil
	}
	mark := c.pushKey(k)
	defer c.pop(mark)
	if c.b[v.s] != '"' {
		return c.typeErr(v, "a string")
	}
	// The inner document's tape goes after the outer one's, in the same
	// storage: the outer nodes stay as they are.
	n := len(c.tape)
	inner, err := parse(c.unquote(v), c.tape[n:n])
	if de, ok := errors.AsType[*DuplicateKeyError](err); ok {
		// The tool reads these arguments with its own parser: ambiguous
		// keys are refused here as in the body itself.
		c.path = append(c.path, '#')
		c.path = append(c.path, de.Path()...)
		return c.errf("duplicate key (keys that differ only in case count as duplicates: parsers disagree on which one wins)")
	}
	if err != nil {
		c.text(role, v)
		return nil
	}
	outer := c.doc
	c.doc = inner
	c.path = append(c.path, '#')
	err = c.leaves(role, inner.root())
	c.doc = outer
	return err
}

// fields fills vals (and keys) with the members of obj that ks names.
// A key of interest that occurs twice is refused: the upstream parser would
// read one and the screen might have read the other.
func (c *collector) fields(obj span, ks *keyset, vals, keys []span) error {
	for k, v := range c.members(obj) {
		slot := ks.find(c.unquote(k), c.fold)
		if slot < 0 {
			continue
		}
		if vals[slot].ok() {
			mark := c.pushKey(k)
			err := c.errf("duplicate key")
			c.pop(mark)
			return err
		}
		vals[slot], keys[slot] = v, k
	}
	return nil
}

// object checks that v is an object and reads its fields; the error names
// the field at the current path.
func (c *collector) object(v span, ks *keyset, vals, keys []span) error {
	if c.b[v.s] != '{' {
		return c.typeErr(v, "an object")
	}
	return c.fields(v, ks, vals, keys)
}

func (c *collector) pushKey(k span) int {
	mark := len(c.path)
	c.path = appendKey(c.path, c.unquote(k))
	return mark
}

func (c *collector) pushIndex(i int) int {
	mark := len(c.path)
	c.path = appendIndex(c.path, i)
	return mark
}

func (c *collector) pop(mark int) { c.path = c.path[:mark] }

// errf returns a shape error about the value at the current path.
func (c *collector) errf(format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	p := string(c.path)
	if p != "" {
		msg = p + ": " + msg
	}
	code := "invalid_request"
	if c.status != 400 {
		code = "invalid_answer"
	}
	return &Error{Status: c.status, Code: code, Message: msg, Param: p}
}

func (c *collector) typeErr(v span, want string) *Error {
	return c.errf("expected %s, got %s", want, kindName(c.b, v))
}

// missing reports an absent required field of the object at the current path.
func (c *collector) missing(name string) *Error {
	mark := len(c.path)
	c.path = appendKey(c.path, []byte(name))
	err := c.errf("required field is missing")
	c.pop(mark)
	return err
}

// boolField reads an optional boolean; def applies when absent or null.
// parseAnswerArray parses an answer whose screenable texts all sit in one
// required top-level array (OpenAI's choices, Responses' output, Anthropic's
// content), calling element for each item with the item's path pushed, so
// errors and refs point at it. keys names that one array field; want says
// what the array holds, for the type error.
func parseAnswerArray(body []byte, keys *keyset, name, want string, element func(c *collector, el span) error) (*scanner.Conversation, error) {
	c, top, err := begin(body, 502)
	if err != nil {
		return nil, err
	}
	var f, k [1]span
	if err := c.fields(top, keys, f[:], k[:]); err != nil {
		return nil, err
	}
	if !f[0].ok() {
		return nil, c.missing(name)
	}
	mark := c.pushKey(k[0])
	if c.b[f[0].s] != '[' {
		return nil, c.typeErr(f[0], want)
	}
	for i, el := range c.elems(f[0]) {
		mk := c.pushIndex(i)
		if err := element(c, el); err != nil {
			return nil, err
		}
		c.pop(mk)
	}
	c.pop(mark)
	conv := c.conversation()
	return &conv, nil
}

// maxTopKeys bounds the top-level keys a format's request keyset may list.
const maxTopKeys = 8

// requestHead is what every request parser reads first: the top-level
// fields of the format's keyset, which lists "model" first, the format's
// main texts field second and "stream" third, then fields of its own.
type requestHead struct {
	c      *collector
	f, k   [maxTopKeys]span
	model  textOffs
	stream bool
}

// beginRequest checks a request body and reads its head. fold matches keys
// case-insensitively (Ollama's Go decoder does); streamDefault is the
// format's answer mode when "stream" is absent.
func beginRequest(body []byte, keys *keyset, fold, streamDefault bool) (requestHead, error) {
	var h requestHead
	if keys.n > maxTopKeys {
		return h, fmt.Errorf("format: request keyset of %d keys exceeds %d", keys.n, maxTopKeys)
	}
	c, top, err := begin(body, 400)
	if err != nil {
		return h, err
	}
	c.fold = fold
	h.c = c
	if err := c.fields(top, keys, h.f[:], h.k[:]); err != nil {
		return h, err
	}
	if h.model, err = c.model(h.f[0], h.k[0]); err != nil {
		return h, err
	}
	h.stream, err = c.boolField(h.f[2], h.k[2], streamDefault)
	return h, err
}

func (c *collector) boolField(v, k span, def bool) (bool, error) {
	if isNull(c.b, v) {
		return def, nil
	}
	switch c.b[v.s] {
	case 't':
		return true, nil
	case 'f':
		return false, nil
	}
	mark := c.pushKey(k)
	defer c.pop(mark)
	return false, c.typeErr(v, "a boolean")
}

// model reads an optional string field for Request.Model; the returned
// offsets are resolved by finish.
func (c *collector) model(v, k span) (textOffs, error) {
	if isNull(c.b, v) {
		return textOffs{}, nil
	}
	if c.b[v.s] != '"' {
		mark := c.pushKey(k)
		defer c.pop(mark)
		return textOffs{}, c.typeErr(v, "a string")
	}
	ts, te := c.str(v)
	return textOffs{ts: ts, te: te}, nil
}

// finish builds the Request and releases the collector.
func (c *collector) finish(model textOffs, stream bool) *Request {
	req := &Request{Stream: stream}
	if model.te > model.ts {
		req.Model = c.sb.String()[model.ts:model.te]
	}
	req.Conversation = c.conversation()
	return req
}

// role reads a role string; it returns the raw value for mapping.
func (c *collector) role(v, k span, required bool) ([]byte, error) {
	if isNull(c.b, v) {
		if required {
			return nil, c.missing("role")
		}
		return nil, nil
	}
	if c.b[v.s] != '"' {
		mark := c.pushKey(k)
		defer c.pop(mark)
		return nil, c.typeErr(v, "a string")
	}
	return c.unquote(v), nil
}

// mapRole maps a provider role onto the engine's roles. An unknown role is
// screened as user text: the strictest reading, and an upstream that
// accepts odd roles must not open a way around input screening.
func mapRole(r []byte) scanner.Role {
	switch string(r) {
	case "system", "developer":
		return scanner.RoleSystem
	case "assistant", "model":
		return scanner.RoleAssistant
	case "tool", "function", "ipython":
		return scanner.RoleTool
	}
	return scanner.RoleUser
}
