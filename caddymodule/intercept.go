package caddymodule

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// errResponseTooLarge aborts the upstream copy when an answer that must be
// screened outgrows the buffer: passing the rest unscreened is not an option.
var errResponseTooLarge = errors.New("promptwall: upstream answer exceeds max_response_size")

// interceptor sits between the next handler (reverse_proxy) and the client.
// It decides at WriteHeader time whether to hold the answer for screening
// (bounded) or pass it through, and in both cases keeps a bounded copy for
// the record.
type interceptor struct {
	*caddyhttp.ResponseWriterWrapper

	// hold reports whether an answer with this status and header must be
	// held back for screening.
	hold func(status int, header http.Header) bool
	// stream, when it returns a writer for this status and header, takes
	// the body of a streamed answer: it is screened event by event and
	// written to the client by the stream screener, not by us.
	stream   func(status int, header http.Header) io.Writer
	streamTo io.Writer

	status      int
	wroteHeader bool
	holding     bool
	overflow    bool
	limit       int
	// buf holds a held answer, or else the first captureSize bytes of a
	// passed-through answer, kept for the record.
	buf         *bytes.Buffer
	captureSize int
	// unflushed is set when emit wrote what flushStream has not flushed.
	unflushed bool

	// wrapper is what ResponseWriterWrapper points to: kept inside the
	// interceptor so that wrapping costs no allocation of its own.
	wrapper caddyhttp.ResponseWriterWrapper
}

// wrap sets up i, usually a field of the request's exchange, to wrap w.
// i must not be copied afterwards.
func (i *interceptor) wrap(w http.ResponseWriter, buf *bytes.Buffer, limit, captureSize int, hold func(int, http.Header) bool) {
	i.wrapper.ResponseWriter = w
	i.ResponseWriterWrapper = &i.wrapper
	i.hold = hold
	i.buf = buf
	i.limit = limit
	i.captureSize = captureSize
}

func (i *interceptor) WriteHeader(status int) {
	if i.wroteHeader {
		return
	}
	// 1xx informational answers pass through and do not settle the status.
	if status >= 100 && status < 200 && status != http.StatusSwitchingProtocols {
		i.ResponseWriterWrapper.WriteHeader(status)
		return
	}
	i.wroteHeader = true
	i.status = status
	if i.stream != nil {
		if w := i.stream(status, i.Header()); w != nil {
			// Events are rewritten in flight: the upstream's length no
			// longer holds.
			i.Header().Del("Content-Length")
			i.streamTo = w
			i.ResponseWriterWrapper.WriteHeader(status)
			return
		}
	}
	i.holding = i.hold(status, i.Header())
	if !i.holding {
		i.ResponseWriterWrapper.WriteHeader(status)
	}
}

func (i *interceptor) Write(p []byte) (int, error) {
	if !i.wroteHeader {
		i.WriteHeader(http.StatusOK)
	}
	if i.streamTo != nil {
		return i.streamTo.Write(p)
	}
	if i.holding {
		if i.buf.Len()+len(p) > i.limit {
			i.overflow = true
			return 0, errResponseTooLarge
		}
		return i.buf.Write(p)
	}
	if room := i.captureSize - i.buf.Len(); room > 0 {
		i.buf.Write(p[:min(room, len(p))])
	}
	return i.ResponseWriterWrapper.Write(p)
}

// ReadFrom must go through Write: the embedded wrapper's ReadFrom would hand
// the upstream body straight to the client, past screening.
func (i *interceptor) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(writerOnly{i}, r)
}

// emit writes one released event of a screened stream to the client. Only
// the stream screener's goroutine calls it (and flushStream).
func (i *interceptor) emit(b []byte) error {
	i.unflushed = true
	_, err := i.ResponseWriterWrapper.Write(b)
	return err
}

// flushStream flushes what emit wrote since the last flush.
func (i *interceptor) flushStream() error {
	if !i.unflushed {
		return nil
	}
	i.unflushed = false
	return http.NewResponseController(i.ResponseWriterWrapper).Flush()
}

// Flush is a no-op while holding (nothing has been written yet); otherwise
// it flushes the client connection so streamed events are not coalesced.
func (i *interceptor) FlushError() error {
	if i.holding || i.streamTo != nil {
		// The stream screener flushes what it releases itself.
		return nil
	}
	return http.NewResponseController(i.ResponseWriterWrapper).Flush()
}

// Unwrap is deliberately not overridden for the holding case: the embedded
// wrapper's Unwrap lets http.ResponseController reach deadlines and flushes.

type writerOnly struct{ io.Writer }
