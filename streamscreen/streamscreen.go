// Package streamscreen screens a streamed model answer (SSE or NDJSON) while
// it flows, without ever releasing text the scanners have not cleared.
//
// Every event is forwarded as soon as it is cleared, one write per event.
// Flushing is the caller's: the gateway flushes once it has used up an
// upstream write, so the events that write completed leave together, as
// they do through a reverse proxy that does not screen. An event's text is
// cleared once it ends before the release point: the offset before which
// no detector that blocks or redacts could still find a match however the
// answer goes on (Options.Hold, computed by the detectors: a secret's
// token not yet ended, digits that may become a card number, words that
// begin a banned phrase). Ordinary prose therefore leaves a word or an
// event behind the upstream. HoldBack bounds the hold: text more than
// HoldBack bytes before the end of the answer is released whatever the
// detectors say, so a match up to HoldBack bytes long that is split
// across events is always caught before any of its bytes leave. Events
// without text (role headers, keep-alives) pass at once unless text is
// waiting before them, so the time to first byte is the upstream's. On a
// block the client gets the provider's own streamed error event and the
// stream ends without the success terminator; the HTTP status was already
// sent and cannot change.
package streamscreen

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/promptwall/promptwall/format"
	"github.com/promptwall/promptwall/scanner"
)

// DefaultHoldBack covers the longest common single-line credentials (JWTs,
// project-scoped API keys). It is the most text ever held back; the
// detectors' release point usually holds a word.
const DefaultHoldBack = 256

const holdContext = 32

// MaxAnswer bounds the assembled answer kept for the record and screening.
const MaxAnswer = 4 << 20

// Screen screens the text of an answer (one assistant message) and returns
// the engine's result; it must not retain the conversation.
type Screen func(ctx context.Context, conv *scanner.Conversation) *scanner.Result

// Options configure one streamed answer.
type Options struct {
	// Stream decodes the upstream events.
	Stream format.Stream
	// Screen screens answer text; nil passes everything (record only).
	Screen Screen
	// Emit writes one event to the client. Run flushes nothing: the caller
	// flushes when it sees fit (before reading on, at the latest).
	Emit func([]byte) error
	// Hold returns the release point of text, the unreleased end of the
	// answer with a few bytes of released text before it: the
	// offset in text before which no match can start or grow once more
	// text arrives (scanner.Pipeline.Hold). Nil holds HoldBack bytes.
	Hold func(text string) int
	// HoldBack is the most text withheld; 0 means DefaultHoldBack.
	HoldBack int
	// Lookbehind, when positive, is how much released text before the
	// release point the detectors read (scanner.Pipeline.Lookbehind):
	// each screening then covers the unreleased text and that much
	// before it, instead of HoldBack bytes of released text again for
	// every event. It applies only with Hold, and no longer once the
	// bound released text a detector was still holding.
	Lookbehind int
	// Vault, when not nil, holds the placeholders that replaced personal
	// data in the request: the client receives the values back where the
	// model's answer repeats them (a placeholder split across events
	// included). Text the screening redacted is not restored.
	Vault *scanner.Vault
}

// Outcome is what happened to a streamed answer.
type Outcome struct {
	// Result is the most severe screening result seen (nil if nothing was
	// screened).
	Result *scanner.Result
	// Blocked is true when the stream was cut by a block.
	Blocked bool
	// Answer is the assembled answer text as the scanners saw it (capped
	// at MaxAnswer).
	Answer string
	// Redacted is the assembled answer as the client received it.
	Redacted string
	// Events counts events forwarded.
	Events int
	// UpstreamErr is the provider's error event, if it sent one.
	UpstreamErr *format.Error
}

type pending struct {
	ev         format.Event
	start, end int // the event's delta in the assembled answer
}

// ErrEmit wraps a failure to write to the client.
var ErrEmit = errors.New("streamscreen: writing to client")

// Run reads the stream to its end (or a block), screening and emitting
// events. It returns an error for upstream read failures and client write
// failures; a block is not an error.
func Run(ctx context.Context, opts Options) (Outcome, error) {
	r := runner{opts: opts}
	if r.opts.HoldBack <= 0 {
		r.opts.HoldBack = DefaultHoldBack
	}
	if b, ok := queuePool.Get().(*[]pending); ok {
		r.queueBuf = *b
		r.queue = r.queueBuf[:0]
	}
	err := r.run(ctx)
	r.out.Answer = r.answer.String()
	r.out.Redacted = r.redacted.String()
	if cap(r.queueBuf) <= maxPooledQueue {
		b := r.queueBuf[:cap(r.queueBuf)]
		clear(b) // the events' bytes belong to this stream
		queuePool.Put(&b)
	}
	return r.out, err
}

// queuePool recycles the pending-event queues of finished streams: a
// stream of short deltas holds back a few dozen events, and growing that
// queue from nothing cost more allocation than the rest of the stream.
var queuePool sync.Pool

// maxPooledQueue keeps an unusual stream's large queue out of the pool.
const maxPooledQueue = 256

type runner struct {
	opts     Options
	out      Outcome
	answer   strings.Builder
	redacted strings.Builder
	queue    []pending
	// queueBuf is queue's backing array from its start: release drops
	// events from the front of queue, and push moves the rest back to the
	// start instead of growing a new array for every few events.
	queueBuf []pending
	// released is the end, in the assembled answer, of the text already
	// sent to the client.
	released int
	// redactions are spans of the answer already replaced, so a match
	// found again in a later window is not redacted twice.
	redactions []scanner.Match
	// vault numbers the placeholders of the answer's redactions.
	vault scanner.Vault
	// forced is set once the HoldBack bound released text before the
	// detectors' release point: a match may then start in released text
	// more than Lookbehind bytes back, so screening goes back HoldBack.
	forced bool
}

func (r *runner) run(ctx context.Context) error {
	for {
		ev, err := r.opts.Stream.Next()
		if err == io.EOF {
			return r.finish(ctx)
		}
		if err != nil {
			// Text we could not decode is not forwarded unscreened: what
			// was cleared went out; the rest is dropped.
			return err
		}
		if ev.Err != nil {
			r.out.UpstreamErr = ev.Err
		}
		start := r.answer.Len()
		if ev.Delta != "" && start+len(ev.Delta) <= MaxAnswer {
			r.answer.WriteString(ev.Delta)
		}
		r.push(pending{ev: ev, start: start, end: r.answer.Len()})
		if ev.Terminal || ev.Err != nil {
			// The answer is complete: screen all of it before the
			// terminator (or the provider's error) goes out.
			if blocked, err := r.screen(ctx, true); blocked || err != nil {
				return err
			}
			if err := r.release(r.answer.Len()); err != nil {
				return err
			}
			continue
		}
		if ev.Delta == "" {
			// A text-less event behind nothing pending goes out at once.
			if len(r.queue) == 1 {
				if err := r.release(r.answer.Len()); err != nil {
					return err
				}
			}
			continue
		}
		if p, ok := r.opts.Stream.(pendingStream); ok && p.Pending() {
			// More events of the same upstream write follow at once; the
			// caller flushes when the write is used up, so screening them
			// together releases them as early.
			continue
		}
		point := r.point()
		if r.queue[0].end > point {
			// Nothing can leave yet; screening now would only repeat
			// work the next event redoes.
			continue
		}
		if blocked, err := r.screen(ctx, false); blocked || err != nil {
			return err
		}
		if err := r.release(point); err != nil {
			return err
		}
	}
}

// pendingStream is a Stream that can tell whether its next event is
// already read ahead (format's decoders can).
type pendingStream interface{ Pending() bool }

// point returns the release point in the assembled answer: the detectors'
// hold, and the start of a placeholder the answer may still be completing
// when placeholders are restored, but never more than HoldBack bytes before
// the end.
func (r *runner) point() int {
	n := r.answer.Len()
	bound := n - r.opts.HoldBack
	if r.opts.Hold == nil || n >= MaxAnswer {
		r.forced = true
		return bound
	}
	text := r.answer.String()
	from := max(0, r.released-holdContext)
	point := from + r.opts.Hold(text[from:])
	if v := r.opts.Vault; v != nil {
		from = max(r.released, n-v.Longest())
		point = min(point, from+v.Open(text[from:]))
	}
	if point < bound {
		r.forced = true
		return bound
	}
	return point
}

// holdContext is how much released text the release point is computed
// with. A match cannot start before the release point (its start was
// held), so the detectors need only the bytes around the point: a word
// boundary, the token the point is in. Screening itself still sees
// HoldBack bytes of context, which scores and context rules use.

// finish screens and releases whatever is left when the upstream ends
// without a terminator (Gemini's JSON array, a cut connection).
func (r *runner) finish(ctx context.Context) error {
	if len(r.queue) == 0 {
		return nil
	}
	if blocked, err := r.screen(ctx, true); blocked || err != nil {
		return err
	}
	return r.release(r.answer.Len())
}

// screen screens the window from a HoldBack before the first unreleased
// byte to the end of the answer. A block emits the provider's error event.
// Modify rewrites the text of pending events.
func (r *runner) screen(ctx context.Context, final bool) (bool, error) {
	if r.opts.Screen == nil || len(r.queue) == 0 {
		return false, nil
	}
	text := r.answer.String()
	back := r.opts.HoldBack
	if r.opts.Lookbehind > 0 && r.opts.Hold != nil && !r.forced {
		back = min(back, r.opts.Lookbehind)
	}
	from := max(0, r.released-back)
	window := text[from:]
	if window == "" {
		return false, nil
	}
	conv := &scanner.Conversation{Messages: []scanner.Message{{Role: scanner.RoleAssistant, Text: window}}}
	res := r.opts.Screen(ctx, conv)
	if res == nil {
		return false, nil
	}
	r.merge(res, from)
	switch res.Outcome {
	case scanner.Blocked:
		r.out.Blocked = true
		msg := res.FlagMessage
		if msg == "" {
			msg = "The answer was blocked by the organization's AI security policy."
		}
		if err := r.emit(format.BlockAfter(r.opts.Stream, r.out.Events > 0, "content_blocked", msg)); err != nil {
			return true, err
		}
		r.queue = nil
		return true, nil
	case scanner.Modified:
		return false, r.redact(res, from)
	}
	return false, nil
}

// merge keeps the most severe result, with findings shifted to answer
// offsets so the record points into the assembled answer.
func (r *runner) merge(res *scanner.Result, from int) {
	for i := range res.Scanners {
		for j := range res.Scanners[i].Findings {
			f := &res.Scanners[i].Findings[j]
			if f.End > f.Start {
				f.Start += from
				f.End += from
			}
		}
	}
	if r.out.Result == nil || res.Outcome.Severity() > r.out.Result.Outcome.Severity() {
		r.out.Result = res
		return
	}
	// Keep findings of later windows of the same severity too.
	for i := range res.Scanners {
		if res.Scanners[i].Outcome == scanner.Passed || res.Scanners[i].Outcome == scanner.Skipped {
			continue
		}
		for k := range r.out.Result.Scanners {
			if r.out.Result.Scanners[k].ScannerID == res.Scanners[i].ScannerID {
				r.out.Result.Scanners[k].Findings = append(r.out.Result.Scanners[k].Findings, res.Scanners[i].Findings...)
			}
		}
	}
}

// redact rewrites pending events so no matched byte reaches the client: a
// match (overlapping matches merged into one) is replaced by one
// placeholder, written by the event holding its first pending byte; its
// other bytes are dropped from the events that hold them. Placeholders
// are numbered across the whole answer, as in a held answer.
func (r *runner) redact(res *scanner.Result, from int) error {
	var spans []scanner.Match
	for _, sr := range res.Scanners {
		if sr.Outcome != scanner.Modified {
			continue
		}
		for _, f := range sr.Findings {
			if f.End <= f.Start || f.End <= r.released || r.done(f.Match) {
				continue
			}
			m := f.Match
			m.Start = max(m.Start, r.released)
			spans = append(spans, m)
		}
	}
	if len(spans) == 0 {
		return nil
	}
	fresh := mergeSpans(spans)
	// An event rewritten by an earlier redaction is rebuilt from its
	// original text with every redaction that touches it, old and new:
	// one value keeps one placeholder however often the event is redone.
	r.redactions = mergeSpans(append(r.redactions, fresh...))
	text := r.answer.String()
	for i := range r.queue {
		p := &r.queue[i]
		if p.end <= p.start || !overlaps(fresh, p.start, p.end) {
			continue
		}
		var b strings.Builder
		last := p.start
		for _, m := range r.redactions {
			if m.End <= p.start || m.Start >= p.end {
				continue
			}
			b.WriteString(text[last:max(last, m.Start)])
			if m.Start >= p.start {
				b.WriteString(r.vault.Redact(text[m.Start:m.End], []scanner.Match{{Start: 0, End: m.End - m.Start, Kind: m.Kind, Score: m.Score}}))
			}
			last = min(m.End, p.end)
		}
		b.WriteString(text[last:p.end])
		current := b.String()
		raw, err := r.opts.Stream.Rewrite(&p.ev, current)
		if err != nil {
			return err
		}
		p.ev.Raw = raw
		p.ev.Delta = current
	}
	return nil
}

func overlaps(spans []scanner.Match, start, end int) bool {
	for _, m := range spans {
		if m.Start < end && m.End > start {
			return true
		}
	}
	return false
}

// mergeSpans sorts matches and merges overlapping ones, keeping the kind
// of the longest: one value gets one placeholder.
func mergeSpans(spans []scanner.Match) []scanner.Match {
	slices.SortFunc(spans, func(a, b scanner.Match) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return b.End - a.End
	})
	out := spans[:0]
	for _, m := range spans {
		if n := len(out); n > 0 && m.Start < out[n-1].End {
			cur := &out[n-1]
			if m.End-m.Start > cur.End-cur.Start {
				cur.Kind, cur.Score = m.Kind, m.Score
			}
			cur.End = max(cur.End, m.End)
			continue
		}
		out = append(out, m)
	}
	return out
}

func (r *runner) done(m scanner.Match) bool {
	for _, d := range r.redactions {
		if d.Start <= m.Start && d.End >= m.End {
			return true
		}
	}
	return false
}

// release emits, in order, every pending event whose text ends at or
// before upTo.
func (r *runner) release(upTo int) error {
	n := 0
	for n < len(r.queue) && r.queue[n].end <= upTo {
		p := &r.queue[n]
		if p.ev.Delta == "" && len(r.redactions) > 0 {
			// A repeat of earlier text (Responses' *.done events) was
			// decoded before the deltas it repeats were redacted.
			r.opts.Stream.Refresh(&p.ev)
		}
		r.redacted.WriteString(p.ev.Delta)
		if err := r.restore(p); err != nil {
			return err
		}
		if err := r.emit(p.ev.Raw); err != nil {
			return err
		}
		r.released = p.end
		n++
	}
	r.queue = r.queue[n:]
	return nil
}

// restore puts the request's values back in place of the placeholders an
// event's text holds: the value goes to the event holding a placeholder's
// first byte, and its other bytes are dropped from the events that hold
// them. An event the screening redacted keeps its text: a placeholder the
// redaction wrote must not be turned back into personal data.
func (r *runner) restore(p *pending) error {
	v := r.opts.Vault
	if v == nil || p.end <= p.start {
		return nil
	}
	text := r.answer.String()
	if p.ev.Delta != text[p.start:p.end] {
		return nil
	}
	// Placeholders that end in this event may start in an earlier one.
	from := max(0, p.start-v.Longest())
	var b strings.Builder
	last := p.start
	for _, ph := range v.Placeholders(text[from:min(len(text), p.end+v.Longest())]) {
		s, e := ph.Start+from, ph.End+from
		if e <= p.start || s >= p.end {
			continue
		}
		b.WriteString(text[last:max(last, s)])
		if s >= p.start {
			b.WriteString(ph.Value)
		}
		last = min(e, p.end)
	}
	if last == p.start && b.Len() == 0 {
		return nil
	}
	b.WriteString(text[last:p.end])
	restored := b.String()
	raw, err := r.opts.Stream.Rewrite(&p.ev, restored)
	if err != nil {
		return err
	}
	p.ev.Raw, p.ev.Delta = raw, restored
	return nil
}

// push queues an event.
func (r *runner) push(p pending) {
	if len(r.queue) == cap(r.queue) && len(r.queue) < cap(r.queueBuf)/2 {
		n := copy(r.queueBuf, r.queue)
		clear(r.queueBuf[n:]) // released events' bytes
		r.queue = r.queueBuf[:n]
	}
	full := len(r.queue) == cap(r.queue)
	r.queue = append(r.queue, p)
	if full { // append moved it to a new array
		r.queueBuf = r.queue[:cap(r.queue)]
	}
}

func (r *runner) emit(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if err := r.opts.Emit(b); err != nil {
		return errors.Join(ErrEmit, err)
	}
	r.out.Events++
	return nil
}
