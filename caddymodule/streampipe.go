package caddymodule

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/promptwall/promptwall/format"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/streamscreen"
)

// streamPipe carries a streamed answer from the upstream copy (Write) to the
// stream screener (Read), like io.Pipe, one upstream write at a time. It
// also knows when the screener has used up a write and is about to wait for
// the next one: by then every event that write completed has been screened
// and written to the client, so idle flushes them all at once. That is one
// flush per upstream write, as reverse_proxy does for a stream it does not
// screen, rather than one per event; the first event still leaves as soon
// as the write that carried it is used up.
type streamPipe struct {
	// writes hands one upstream write to the reader; consumed tells the
	// writer the reader has copied all of it.
	writes   chan []byte
	consumed chan struct{}
	// closed ends the writer side (EOF for the reader); ended ends the
	// reader side (Write fails with endErr).
	closed, ended        chan struct{}
	closeOnce, endedOnce sync.Once
	endErr               error
	// idle runs on the reader's goroutine before it waits for a write.
	idle func() error

	// cur is the unread rest of the current write; only Read touches it.
	cur []byte
}

func newStreamPipe(idle func() error) *streamPipe {
	return &streamPipe{
		writes:   make(chan []byte),
		consumed: make(chan struct{}, 1),
		closed:   make(chan struct{}),
		ended:    make(chan struct{}),
		idle:     idle,
	}
}

// Write hands p to the reader and returns once it is read, or fails once
// the reader has ended the pipe.
func (sp *streamPipe) Write(p []byte) (int, error) {
	if len(p) == 0 {
		select {
		case <-sp.ended:
			return 0, sp.endErr
		default:
			return 0, nil
		}
	}
	select {
	case sp.writes <- p:
	case <-sp.ended:
		return 0, sp.endErr
	case <-sp.closed:
		return 0, io.ErrClosedPipe
	}
	select {
	case <-sp.consumed:
		return len(p), nil
	case <-sp.ended:
		return 0, sp.endErr
	}
}

// Close ends the writer side: the reader gets io.EOF after the last write.
func (sp *streamPipe) Close() error {
	sp.closeOnce.Do(func() { close(sp.closed) })
	return nil
}

func (sp *streamPipe) Read(b []byte) (int, error) {
	select {
	case <-sp.ended:
		return 0, io.ErrClosedPipe
	default:
	}
	if len(sp.cur) == 0 {
		if err := sp.idle(); err != nil {
			return 0, err
		}
		select {
		case sp.cur = <-sp.writes:
		case <-sp.closed:
			return 0, io.EOF
		case <-sp.ended:
			return 0, io.ErrClosedPipe
		}
	}
	n := copy(b, sp.cur)
	sp.cur = sp.cur[n:]
	if len(sp.cur) == 0 {
		// The writer may reuse its buffer now.
		sp.consumed <- struct{}{}
	}
	return n, nil
}

// CloseWithError ends the reader side: pending and later writes fail with
// err.
func (sp *streamPipe) CloseWithError(err error) {
	sp.endedOnce.Do(func() {
		sp.endErr = err
		close(sp.ended)
	})
}

// streamOptions configures the screening of x's streamed answer. The
// screener sees the answer's unreleased end as the assistant message, with
// the request's system messages after it: a prompt-leak check compares the
// answer with them, and the output direction screens assistant text only,
// so findings still point into the answer (message 0).
func (h *Handler) streamOptions(x *exchange, stream format.Stream, emit func([]byte) error) streamscreen.Options {
	var system []scanner.Message
	if x.conv != nil {
		for _, m := range x.conv.Messages {
			if m.Role == scanner.RoleSystem {
				system = append(system, m)
			}
		}
	}
	others := &scanner.Conversation{Messages: system}
	opts := streamscreen.Options{
		Stream:   stream,
		Emit:     emit,
		HoldBack: h.StreamHoldBack,
		Screen: func(ctx context.Context, conv *scanner.Conversation) *scanner.Result {
			if len(system) > 0 {
				conv.Messages = append(conv.Messages, system...)
			}
			start := time.Now()
			res := h.ep.pipeline.Screen(ctx, conv, scanner.Output)
			h.metrics.screenDuration(scanner.Output).Observe(time.Since(start).Seconds())
			return res
		},
		Hold: func(text string) int {
			return h.ep.pipeline.Hold(text, scanner.Output, others)
		},
		Lookbehind: h.ep.pipeline.Lookbehind(scanner.Output),
	}
	if x.vault != nil && x.vault.Len() > 0 {
		opts.Vault = x.vault
	}
	return opts
}
