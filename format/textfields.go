package format

import (
	"strings"

	"github.com/promptwall/promptwall/scanner"
)

// Every text field of an answer is screened, the ones a format documents
// and the ones it does not: servers that speak a known format add their
// own (DeepSeek, vLLM and SGLang send "reasoning_content", OpenRouter
// "reasoning" and "reasoning_details"), and text that reaches the client
// unscreened is a leak whatever its name.
//
// The generic rule: in an answer's message object (an OpenAI-compatible
// message or stream delta, an Ollama message), a member the format does
// not name is screened through every string under it, except members
// whose names say they hold identifiers or opaque data (opaqueField).

// opaqueField tells whether a member of an answer message holds an
// identifier, a label or opaque (encrypted, signed, binary) data rather
// than text for the user.
func opaqueField(key []byte) bool {
	k := string(key)
	switch k {
	case "id", "type", "role", "name", "object", "model", "index", "status", "format",
		"signature", "encrypted_content", "data", "url", "uri", "mime_type", "mimeType",
		"finish_reason", "stop_reason", "created", "created_at", "logprobs", "usage":
		return true
	}
	return strings.HasSuffix(k, "_id") || strings.HasSuffix(k, "Id") || strings.HasSuffix(k, "Signature")
}

// unknownTexts records, as texts of role, the strings under the members of
// the answer object obj that known does not name (the generic rule). It
// does nothing for requests.
func (c *collector) unknownTexts(role scanner.Role, obj span, known *keyset) {
	if c.status == 400 || c.b[obj.s] != '{' {
		return
	}
	for k, v := range c.members(obj) {
		name := c.unquote(k)
		if known.find(name, c.fold) >= 0 || opaqueField(name) {
			continue
		}
		mark := c.pushKey(k)
		c.genericStrings(role, v)
		c.pop(mark)
	}
}

// genericStrings records every string under v, skipping opaque members of
// nested objects.
func (c *collector) genericStrings(role scanner.Role, v span) {
	switch c.b[v.s] {
	case '"':
		c.text(role, v)
	case '{':
		for k, m := range c.members(v) {
			if opaqueField(c.unquote(k)) {
				continue
			}
			mark := c.pushKey(k)
			c.genericStrings(role, m)
			c.pop(mark)
		}
	case '[':
		for i, e := range c.elems(v) {
			mark := c.pushIndex(i)
			c.genericStrings(role, e)
			c.pop(mark)
		}
	}
}

// addUnknown appends, as delta fragments, the strings under the members of
// a streamed message object obj (at path) that known does not name: the
// generic rule for stream events.
func addUnknown(d *doc, obj span, known *keyset, path []byte, frags []fragment) []fragment {
	if d.b[obj.s] != '{' {
		return frags
	}
	for k, v := range d.members(obj) {
		name := d.unquote(k)
		if known.find(name, false) >= 0 || opaqueField(name) {
			continue
		}
		frags = addGeneric(d, v, appendKey(append([]byte(nil), path...), name), frags)
	}
	return frags
}

func addGeneric(d *doc, v span, path []byte, frags []fragment) []fragment {
	switch d.b[v.s] {
	case '"':
		if v.e-v.s > 2 {
			frags = append(frags, fragment{string(path), v})
		}
	case '{':
		for k, m := range d.members(v) {
			name := d.unquote(k)
			if !opaqueField(name) {
				frags = addGeneric(d, m, appendKey(append([]byte(nil), path...), name), frags)
			}
		}
	case '[':
		for i, e := range d.elems(v) {
			frags = addGeneric(d, e, appendIndex(append([]byte(nil), path...), i), frags)
		}
	}
	return frags
}
