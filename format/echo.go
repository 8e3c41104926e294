package format

import (
	"strings"
)

// echoState carries stream redactions into events that repeat text already
// streamed. The Responses API sends each text twice: as *.delta events and
// again whole in *.done, content_part.done, output_item.done and
// response.completed. Without this, a secret redacted in the deltas would
// reach the client in the repeat. The state records, per streamed item,
// the original fragments and the forwarded ones; an event that is not a
// delta gets every string equal to an item's original text replaced by the
// item's forwarded text.
//
// A delta must be rewritten before Next returns the event that repeats it,
// which holds for a handler that screens and rewrites the deltas it holds
// back before reading on past the end of their item.
type echoState struct {
	items map[string]*echoItem
	// last locates the newest delta of each event, by the Event's refs
	// slice identity (unique per event).
	loc map[*string]echoLoc
}

type echoItem struct {
	orig, sent []string
	dirty      bool
}

type echoLoc struct {
	item *echoItem
	i    int
}

func newEchoState() *echoState {
	return &echoState{items: map[string]*echoItem{}, loc: map[*string]echoLoc{}}
}

// observe records a delta, or rewrites an echo event in place.
func (s *echoState) observe(ev *Event) {
	if ev.echoKey != "" && len(ev.refs) > 0 {
		it := s.items[ev.echoKey]
		if it == nil {
			it = &echoItem{}
			s.items[ev.echoKey] = it
		}
		s.loc[&ev.refs[0]] = echoLoc{it, len(it.orig)}
		it.orig = append(it.orig, ev.Delta)
		it.sent = append(it.sent, ev.Delta)
		return
	}
	if len(ev.refs) > 0 || len(ev.data) == 0 {
		return
	}
	repl := map[string]string{}
	for _, it := range s.items {
		if it.dirty {
			repl[strings.Join(it.orig, "")] = strings.Join(it.sent, "")
		}
	}
	if len(repl) == 0 {
		return
	}
	data := trimSpace(ev.data)
	d, err := parse(data, nil)
	if err != nil {
		return
	}
	var edits []Edit
	walkStrings(&d, d.root(), nil, func(path []byte, v span) {
		if to, ok := repl[string(d.unquote(v))]; ok {
			edits = append(edits, Edit{Ref: string(path), Text: to})
		}
	})
	if len(edits) == 0 {
		return
	}
	nd, err := rewrite(data, edits)
	if err != nil {
		return
	}
	ev.Raw = replaceData(ev, nd)
	ev.data = nd
	ev.ds, ev.de = -1, -1
}

// rewritten records that ev's delta was forwarded as text.
func (s *echoState) rewritten(ev *Event, text string) {
	if l, ok := s.loc[&ev.refs[0]]; ok {
		l.item.sent[l.i] = text
		l.item.dirty = true
	}
}

// walkStrings calls fn with the path of every string value under v.
func walkStrings(d *doc, v span, path []byte, fn func(path []byte, v span)) {
	switch d.b[v.s] {
	case '"':
		fn(path, v)
	case '{':
		for k, m := range d.members(v) {
			walkStrings(d, m, appendKey(path, d.unquote(k)), fn)
		}
	case '[':
		for i, e := range d.elems(v) {
			walkStrings(d, e, appendIndex(path, i), fn)
		}
	}
}

func trimSpace(b []byte) []byte {
	s := skipWS(b, 0)
	e := len(b)
	for e > s && (b[e-1] == ' ' || b[e-1] == '\t' || b[e-1] == '\r' || b[e-1] == '\n') {
		e--
	}
	return b[s:e]
}
