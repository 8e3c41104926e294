package format

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// MaxEventSize bounds one stream event (an SSE event, an NDJSON line or a
// JSON array element) read by the stream decoders. Real events are a few
// hundred bytes; a tool call's arguments or a Responses "completed" event
// may reach tens of kilobytes. Past the bound the reader fails with
// ErrEventTooLarge instead of buffering an unbounded upstream.
const MaxEventSize = 1 << 20

// Event is one upstream stream event as a Stream decodes it.
type Event struct {
	// Raw holds the exact bytes of the event, separators included, to be
	// forwarded as they are (or replaced by Stream.Rewrite's result). The
	// Event owns them.
	Raw []byte
	// Delta is the assistant text or tool-arguments fragment this event
	// adds to the answer, "" if none. Several fragments of one event (one
	// per choice, for n > 1) are concatenated.
	Delta string
	// Terminal is true for the provider's success terminator: "data:
	// [DONE]" (OpenAI), message_stop (Anthropic), response.completed
	// (Responses), "done": true (Ollama), a candidate with a finishReason
	// (Gemini, whose stream has no terminator of its own).
	Terminal bool
	// Err is set when the event is the provider's error event; its Code
	// and Message are the provider's.
	Err *Error

	// frame and refs let Rewrite find the delta fragments again.
	data   []byte
	ds, de int // data is Raw[ds:de] when ds >= 0
	refs   []string
	// echoKey names the streamed item a delta belongs to (Responses).
	echoKey string
}

// Stream decodes a streamed answer incrementally. It is not safe for
// concurrent use.
type Stream interface {
	// Next returns the next event. It returns io.EOF after the last event,
	// ErrEventTooLarge (wrapped) when an event exceeds MaxEventSize, and
	// an *Error when an event is not the provider's JSON.
	Next() (Event, error)
	// Rewrite returns ev's bytes with its delta replaced by text, for
	// redaction in streams: the first fragment receives text, any other
	// fragment becomes empty, so the rewritten event's Delta is text.
	// Events must be rewritten in the order Next returned them. The
	// result replaces ev.Raw; an event may be rewritten again after that.
	Rewrite(ev *Event, text string) ([]byte, error)
	// Block renders a final error event in the provider's streamed error
	// shape, sent instead of the rest of the answer when screening
	// blocks it mid-stream.
	Block(code, message string) []byte
	// Refresh re-applies the redactions made so far (by Rewrite) to an
	// event without a delta that repeats earlier text, such as the
	// Responses API's *.done events. Call it just before forwarding such
	// an event when deltas were rewritten after it was decoded.
	Refresh(ev *Event)
}

// frame is one event as the transport reader sees it.
type frame struct {
	raw    []byte
	data   []byte
	ds, de int
	name   string // SSE event name
	isData bool   // the frame carries data (SSE data lines, a JSON value)
}

type frameReader interface {
	next() (frame, error)
	// pending tells whether the next frame is buffered whole.
	pending() bool
}

// SSEReader reads Server-Sent Events incrementally with bounded memory. It
// keeps every byte of each event so the event can be forwarded unchanged:
// comments (": keep-alive"), event names, ids, retry fields, CRLF or LF
// line ends. Lines ended by a lone CR, which the SSE standard allows but no
// LLM provider sends, are not split.
type SSEReader struct {
	r   *bufio.Reader
	max int
	eof bool
}

// streamReadBuffer is the read buffer of a stream decoder. Events are a
// few hundred bytes and a longer line is read in pieces, so a small buffer
// costs nothing but is allocated for every streamed answer.
const streamReadBuffer = 4 << 10

// NewSSEReader returns a reader of events from r of at most max bytes each
// (MaxEventSize if max <= 0).
func NewSSEReader(r io.Reader, max int) *SSEReader {
	if max <= 0 {
		max = MaxEventSize
	}
	return &SSEReader{r: bufio.NewReaderSize(r, streamReadBuffer), max: max}
}

// SSEEvent is one event: its raw bytes, its event name ("" for the default
// "message") and its data lines joined by "\n".
type SSEEvent struct {
	Raw     []byte
	Name    string
	Data    []byte
	HasData bool
}

// Next returns the next event, up to and including the blank line that
// ends it. A final event cut off by the end of input is returned as it is.
// It returns io.EOF when no bytes remain.
func (s *SSEReader) Next() (SSEEvent, error) {
	f, err := s.next()
	return SSEEvent{Raw: f.raw, Name: f.name, Data: f.data, HasData: f.isData}, err
}

func (s *SSEReader) next() (frame, error) {
	if s.eof {
		return frame{}, io.EOF
	}
	var raw []byte
	lineStart := 0
	for {
		chunk, err := s.r.ReadSlice('\n')
		if len(raw)+len(chunk) > s.max {
			return frame{}, fmt.Errorf("%w: SSE event over %d bytes", ErrEventTooLarge, s.max)
		}
		if raw == nil && err == nil {
			// The event usually ends within what is buffered: size raw for
			// all of it at once rather than growing it line by line.
			raw = make([]byte, 0, len(chunk)+bufferedEventRest(s.r))
		}
		raw = append(raw, chunk...)
		switch {
		case err == nil:
			line := raw[lineStart:]
			lineStart = len(raw)
			if len(bytes.TrimRight(line, "\r\n")) == 0 {
				return parseSSE(raw), nil
			}
		case errors.Is(err, bufio.ErrBufferFull):
			// A long line: keep reading it.
		case errors.Is(err, io.EOF):
			s.eof = true
			if len(raw) == 0 {
				return frame{}, io.EOF
			}
			return parseSSE(raw), nil
		default:
			return frame{}, err
		}
	}
}

// bufferedEventRest returns how many of the bytes buffered in r complete an
// event whose last read line ended with '\n' (up to and including the
// blank line), or 0 when its end is not buffered yet.
func bufferedEventRest(r *bufio.Reader) int {
	b, _ := r.Peek(r.Buffered())
	switch {
	case bytes.HasPrefix(b, []byte("\n")):
		return 1
	case bytes.HasPrefix(b, []byte("\r\n")):
		return 2
	}
	end := 0
	if i := bytes.Index(b, []byte("\n\n")); i >= 0 {
		end = i + 2
	}
	if i := bytes.Index(b, []byte("\n\r\n")); i >= 0 && (end == 0 || i+3 < end) {
		end = i + 3
	}
	return end
}

// parseSSE interprets the fields of one raw event.
func parseSSE(raw []byte) frame {
	f := frame{raw: raw, ds: -1}
	ndata := 0
	for off := 0; off < len(raw); {
		end := bytes.IndexByte(raw[off:], '\n')
		if end < 0 {
			end = len(raw)
		} else {
			end += off
		}
		line := bytes.TrimSuffix(raw[off:end], []byte("\r"))
		lineOff := off
		off = end + 1
		if len(line) == 0 || line[0] == ':' {
			continue
		}
		name, value := line, []byte(nil)
		valOff := lineOff + len(line)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			name, value = line[:i], line[i+1:]
			valOff = lineOff + i + 1
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
				valOff++
			}
		}
		switch string(name) {
		case "event":
			f.name = string(value)
		case "data":
			ndata++
			if ndata == 1 {
				f.data = value
				f.ds, f.de = valOff, valOff+len(value)
			} else {
				// Several data lines join with "\n"; the data is no
				// longer one slice of raw.
				f.data = append(append(append([]byte(nil), f.data...), '\n'), value...)
				f.ds = -1
			}
			f.isData = true
		}
	}
	return f
}

// NDJSONReader reads newline-delimited JSON (Ollama's streams) one line at
// a time with bounded memory.
type NDJSONReader struct {
	r   *bufio.Reader
	max int
	eof bool
}

// NewNDJSONReader returns a reader of lines from r of at most max bytes
// each (MaxEventSize if max <= 0).
func NewNDJSONReader(r io.Reader, max int) *NDJSONReader {
	if max <= 0 {
		max = MaxEventSize
	}
	return &NDJSONReader{r: bufio.NewReaderSize(r, streamReadBuffer), max: max}
}

// Next returns the next line with its line end, and the line's content
// without surrounding whitespace (empty for a blank line). It returns
// io.EOF when no bytes remain.
func (n *NDJSONReader) Next() (raw, line []byte, err error) {
	f, err := n.next()
	return f.raw, f.data, err
}

func (n *NDJSONReader) next() (frame, error) {
	if n.eof {
		return frame{}, io.EOF
	}
	var raw []byte
	for {
		chunk, err := n.r.ReadSlice('\n')
		if len(raw)+len(chunk) > n.max {
			return frame{}, fmt.Errorf("%w: NDJSON line over %d bytes", ErrEventTooLarge, n.max)
		}
		raw = append(raw, chunk...)
		switch {
		case err == nil:
			return lineFrame(raw), nil
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			n.eof = true
			if len(raw) == 0 {
				return frame{}, io.EOF
			}
			return lineFrame(raw), nil
		default:
			return frame{}, err
		}
	}
}

func lineFrame(raw []byte) frame {
	s := skipWS(raw, 0)
	e := len(raw)
	for e > s && (raw[e-1] == ' ' || raw[e-1] == '\t' || raw[e-1] == '\r' || raw[e-1] == '\n') {
		e--
	}
	return frame{raw: raw, data: raw[s:e], ds: s, de: e, isData: e > s}
}

// jsonArrayReader reads the elements of a JSON array as they arrive: the
// form Gemini streams in when the client did not ask for SSE (alt=sse).
// Each frame's raw bytes hold the separators before the element ("[",
// ",", whitespace) and the element, an object; the closing "]" and what
// follows come as a last frame without data.
type jsonArrayReader struct {
	r     *bufio.Reader
	max   int
	state int // 0 before '[', 1 in the array, 2 after ']'
}

var errNotArray = &Error{Status: 502, Code: "invalid_stream", Message: "stream is not a JSON array of objects"}

func (j *jsonArrayReader) next() (frame, error) {
	var raw []byte
	for {
		c, err := j.read(&raw)
		if err != nil {
			if errors.Is(err, io.EOF) && len(raw) > 0 {
				return frame{raw: raw, ds: -1}, nil
			}
			return frame{}, err
		}
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			continue
		case j.state == 0 && c == '[':
			j.state = 1
			continue
		case j.state == 1 && c == ',':
			continue
		case j.state == 1 && c == ']':
			j.state = 2
			continue
		case j.state != 1 || c != '{':
			return frame{}, errNotArray
		}
		start := len(raw) - 1
		if raw, err = j.element(raw); err != nil {
			return frame{}, err
		}
		return frame{raw: raw, data: raw[start:], ds: start, de: len(raw), isData: true}, nil
	}
}

// read appends the stream's next byte to *raw: a frame holds at most max
// bytes.
func (j *jsonArrayReader) read(raw *[]byte) (byte, error) {
	c, err := j.r.ReadByte()
	if err != nil {
		return 0, err
	}
	if len(*raw) >= j.max {
		return 0, fmt.Errorf("%w: JSON stream element over %d bytes", ErrEventTooLarge, j.max)
	}
	*raw = append(*raw, c)
	return c, nil
}

// element reads the rest of the object whose '{' ends raw, through its
// closing brace; braces and brackets inside strings do not count.
func (j *jsonArrayReader) element(raw []byte) ([]byte, error) {
	depth, inStr, esc := 1, false, false
	for depth > 0 {
		c, err := j.read(&raw)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("format: JSON stream cut inside an element: %w", io.ErrUnexpectedEOF)
			}
			return nil, err
		}
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		}
	}
	return raw, nil
}

// sniffReader picks SSE or a JSON array for Gemini by the first
// non-space byte of the stream.
type sniffReader struct {
	r  *bufio.Reader
	fr frameReader
}

func (s *sniffReader) next() (frame, error) {
	if s.fr == nil {
		s.fr = &SSEReader{r: s.r, max: MaxEventSize}
		for n := 1; n <= 4096; n++ {
			b, err := s.r.Peek(n)
			if len(b) < n {
				if len(b) == 0 && err != nil {
					return frame{}, err
				}
				break
			}
			if c := b[n-1]; c != ' ' && c != '\t' && c != '\r' && c != '\n' {
				if c == '[' {
					s.fr = &jsonArrayReader{r: s.r, max: MaxEventSize}
				}
				break
			}
		}
	}
	return s.fr.next()
}

// fragment is one delta text inside an event's JSON data.
type fragment struct {
	ref string
	v   span
}

// decoder turns frames into Events for one format.
type decoder struct {
	fr frameReader
	// sequenced streams number their events (Responses'
	// sequence_number); seq is the highest number seen, so a block the
	// gateway adds continues the numbering.
	sequenced bool
	seq       int
	// geminiArray, when set, tells whether the stream is a JSON array
	// (see BlockAfter).
	geminiArray func() bool
	// interpret fills ev from the frame's JSON data (validated, non-empty)
	// and appends the delta fragments it finds.
	interpret func(d *doc, top span, ev *Event, frags []fragment) []fragment
	block     func(code, message string) []byte
	frags     []fragment
	// doc is the event being interpreted; its tape's storage is reused
	// from one event to the next.
	doc doc
	ev  Event
	// echo rewrites events that repeat already-streamed text (Responses
	// *.done and response.completed) so a redaction made in the deltas is
	// not undone by the repeat.
	echo *echoState
}

func (d *decoder) Next() (Event, error) {
	f, err := d.fr.next()
	if err != nil {
		return Event{}, err
	}
	ev := Event{Raw: f.raw, ds: f.ds, de: f.de, data: f.data}
	if !f.isData {
		return ev, nil
	}
	data := bytes.TrimSpace(f.data)
	if string(data) == "[DONE]" {
		ev.Terminal = true
		return ev, nil
	}
	jd, err := parse(data, d.doc.tape)
	if err != nil {
		if _, ok := errors.AsType[*DuplicateKeyError](err); ok {
			return Event{}, &Error{Status: 502, Code: "invalid_stream", Message: fmt.Sprintf("stream event: %v", err)}
		}
		return Event{}, &Error{Status: 502, Code: "invalid_stream", Message: fmt.Sprintf("stream event is not valid JSON: %v", err)}
	}
	// interpret fills the decoder's own event and reads the decoder's own
	// document: pointers to locals, passed through a func value, would
	// move them to the heap on every event.
	d.doc, d.ev = jd, ev
	d.frags = d.interpret(&d.doc, jd.root(), &d.ev, d.frags[:0])
	ev, d.ev = d.ev, Event{}
	if d.sequenced {
		if v, ok := field(&d.doc, jd.root(), "sequence_number"); ok {
			if n, err := strconv.Atoi(string(d.doc.b[v.s:v.e])); err == nil && n > d.seq {
				d.seq = n
			}
		}
	}
	if len(d.frags) > 0 {
		var sb strings.Builder
		ev.refs = make([]string, len(d.frags))
		for i, fr := range d.frags {
			ev.refs[i] = fr.ref
			sb.Write(jd.unquote(fr.v))
		}
		ev.Delta = sb.String()
	}
	if d.echo != nil {
		d.echo.observe(&ev)
	}
	return ev, nil
}

func (d *decoder) Rewrite(ev *Event, text string) ([]byte, error) {
	if len(ev.refs) == 0 {
		return nil, fmt.Errorf("format: stream rewrite: event has no delta")
	}
	edits := make([]Edit, len(ev.refs))
	for i, r := range ev.refs {
		edits[i] = Edit{Ref: r}
	}
	edits[0].Text = text
	nd, err := rewrite(bytes.TrimSpace(ev.data), edits)
	if err != nil {
		return nil, err
	}
	if d.echo != nil {
		d.echo.rewritten(ev, text)
	}
	raw := replaceData(ev, nd)
	// The caller forwards raw in place of ev.Raw: ev must find its data
	// there, since an event still held may be rewritten again (a second
	// redaction, a placeholder restored).
	if ev.ds >= 0 {
		ev.de = ev.ds + len(nd)
	}
	ev.data = nd
	return raw, nil
}

func (d *decoder) Block(code, message string) []byte { return d.block(code, message) }

// Refresh re-applies the redactions made so far to an event without a
// delta that repeats streamed text (Responses' *.done events). A screener
// that holds deltas back rewrites them after Next has returned the repeat;
// it calls Refresh on the repeat before forwarding it.
func (d *decoder) Refresh(ev *Event) {
	if d.echo != nil && len(ev.refs) == 0 {
		d.echo.observe(ev)
	}
}

// replaceData returns ev's raw bytes with its data replaced by nd.
func replaceData(ev *Event, nd []byte) []byte {
	if ev.ds >= 0 {
		out := make([]byte, 0, len(ev.Raw)-(ev.de-ev.ds)+len(nd))
		out = append(out, ev.Raw[:ev.ds]...)
		out = append(out, nd...)
		return append(out, ev.Raw[ev.de:]...)
	}
	// Multi-line SSE data: keep the other fields, put the new data on one
	// line where the first data line was.
	var out []byte
	wrote := false
	for line := range bytes.Lines(ev.Raw) {
		body := bytes.TrimRight(line, "\r\n")
		if bytes.Equal(body, []byte("data")) || bytes.HasPrefix(body, []byte("data:")) {
			if !wrote {
				// The new data may span lines (the JSON's own
				// whitespace); each line needs its "data:" field.
				eol := line[len(body):]
				for l := range bytes.SplitSeq(nd, []byte("\n")) {
					out = append(out, "data: "...)
					out = append(out, bytes.TrimSuffix(l, []byte("\r"))...)
					out = append(out, eol...)
				}
				wrote = true
			}
			continue
		}
		out = append(out, line...)
	}
	return out
}

// strField returns the decoded string at key of obj, "" if absent.
func strField(d *doc, obj span, key string) string {
	b := d.b
	if b[obj.s] != '{' {
		return ""
	}
	v, ok := lookup(d, obj, []segment{{key: key, idx: segKey}})
	if !ok || b[v.s] != '"' {
		return ""
	}
	return string(d.unquote(v))
}

// field returns the value at key of obj.
func field(d *doc, obj span, key string) (span, bool) {
	b := d.b
	if b[obj.s] != '{' {
		return span{}, false
	}
	return lookup(d, obj, []segment{{key: key, idx: segKey}})
}

// lookupKeys fills vals with the first member of obj named by each of ks's keys
// (as field finds them), in one walk over obj: looking the keys up one by
// one walks the members again for each.
func lookupKeys(d *doc, obj span, ks *keyset, vals []span) {
	b := d.b
	if b[obj.s] != '{' {
		return
	}
	for k, v := range d.members(obj) {
		if slot := ks.find(d.unquote(k), false); slot >= 0 && !vals[slot].ok() {
			vals[slot] = v
		}
	}
}

// addString appends the string at key of obj as a fragment at path+key.
func addString(d *doc, obj span, key string, path []byte, frags []fragment) []fragment {
	v, _ := field(d, obj, key)
	return addValue(d, v, key, path, frags)
}

// addValue appends v, a member of an object at path under key, as a
// fragment when it is a non-empty string.
func addValue(d *doc, v span, key string, path []byte, frags []fragment) []fragment {
	b := d.b
	if !v.ok() || b[v.s] != '"' || v.e-v.s == 2 {
		return frags
	}
	var ref [128]byte
	return append(frags, fragment{string(appendKey(append(ref[:0], path...), []byte(key))), v})
}

// addLeaves appends every non-empty string under v as a fragment: tool
// arguments that arrive as an object (Gemini, Ollama) are screened through
// their string values.
func addLeaves(d *doc, v span, path []byte, frags []fragment) []fragment {
	walkStrings(d, v, append([]byte(nil), path...), func(p []byte, s span) {
		if s.e-s.s > 2 {
			frags = append(frags, fragment{string(p), s})
		}
	})
	return frags
}

// sseFrame renders one SSE event with an optional name.
func sseFrame(name string, data []byte) []byte {
	var out []byte
	if name != "" {
		out = append(out, "event: "...)
		out = append(out, name...)
		out = append(out, '\n')
	}
	out = append(out, "data: "...)
	out = append(out, data...)
	return append(out, "\n\n"...)
}
