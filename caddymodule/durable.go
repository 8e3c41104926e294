package caddymodule

import (
	"context"
	"io"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/promptwall/promptwall/store"
)

// commitGate keeps back the last byte written to the client until the
// exchange's record is durable (durability sync). Without its last byte an
// answer is incomplete whatever its framing: a Content-Length body is
// short, a JSON document unterminated, an event stream's final event (its
// terminator included) unfinished. Everything before it flows and flushes
// as usual, so streaming is not delayed.
type commitGate struct {
	*caddyhttp.ResponseWriterWrapper
	last [1]byte
	held bool
}

// open reserves the record's place (reserve) and returns the writer the
// answer goes through: in sync mode a commitGate, which holds the answer's
// last byte until the record is durable. The caller defers ungate and
// then x.finish, so the record is committed before the gate lets go; finish
// must be deferred by the caller itself, as it recovers the stage's panic.
func (h *Handler) open(w http.ResponseWriter, r *http.Request, x *exchange) (_ http.ResponseWriter, ungate func(), _ error) {
	if err := h.reserve(w, r, x); err != nil {
		return w, nil, err
	}
	gw, gate := h.gateWrites(w)
	if gate == nil {
		return w, func() {}, nil
	}
	res := x.res
	return gw, func() { gate.release(r.Context(), res, h.logger) }, nil
}

// gateWrites wraps w in a commitGate when the store is in sync mode.
func (h *Handler) gateWrites(w http.ResponseWriter) (http.ResponseWriter, *commitGate) {
	if h.app.durability != store.DurabilitySync {
		return w, nil
	}
	g := &commitGate{ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: w}}
	return g, g
}

func (g *commitGate) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if g.held {
		if _, err := g.ResponseWriterWrapper.Write(g.last[:]); err != nil {
			return 0, err
		}
		g.held = false
	}
	if n, err := g.ResponseWriterWrapper.Write(b[:len(b)-1]); err != nil {
		return n, err
	}
	g.last[0], g.held = b[len(b)-1], true
	return len(b), nil
}

// release waits until the record committed through res is durable, then
// writes the last byte. If it cannot be made durable the answer is
// aborted, so the client sees a failed request rather than a complete
// answer with no record.
func (g *commitGate) release(ctx context.Context, res *store.Reservation, log *zap.Logger) {
	if err := res.Wait(ctx); err != nil {
		log.Error("aborting the answer: its record was not committed", zap.Error(err))
		panic(http.ErrAbortHandler)
	}
	if !g.held {
		return
	}
	// Flushed at once: a streaming client is waiting for exactly this byte.
	if _, err := g.ResponseWriterWrapper.Write(g.last[:]); err == nil {
		_ = http.NewResponseController(g.ResponseWriterWrapper).Flush()
	}
}

// ReadFrom copies through Write: the embedded wrapper's ReadFrom would
// hand the copy to the client's writer, past the gate.
func (g *commitGate) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(writerOnly{g}, r)
}
