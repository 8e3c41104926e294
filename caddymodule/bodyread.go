package caddymodule

import (
	"errors"
	"net"
	"net/http"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/promptwall/promptwall/format"
)

// defaultBodyReadTimeout bounds the arrival of a screened body: every
// byte of it is needed before screening can start, so a slow body holds a
// connection and a buffer for nothing.
const defaultBodyReadTimeout = 30 * time.Second

// bodyDeadline sets the connection's read deadline for the body and returns
// the func that lifts it again (the connection may be kept alive). Where
// the writer cannot reach the connection (an HTTP/2 stream wrapper without
// deadlines) nothing is set; the server's own read timeouts still apply.
func (h *Handler) bodyDeadline(w http.ResponseWriter) func() {
	d := time.Duration(h.BodyReadTimeout)
	if d <= 0 {
		d = defaultBodyReadTimeout
	}
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(d)); err != nil {
		return func() {}
	}
	return func() { _ = rc.SetReadDeadline(time.Time{}) }
}

// writeBodyError answers a body that could not be read: 408 when it did
// not arrive in time, 400 when it was malformed (a bad chunk size), in the
// format's error shape rather than an empty body.
func (h *Handler) writeBodyError(w http.ResponseWriter, f format.Format, err error) error {
	h.app.metrics.rejected.WithLabelValues("malformed").Inc()
	if ne, ok := errors.AsType[net.Error](err); (ok && ne.Timeout()) || errors.Is(err, os.ErrDeadlineExceeded) {
		w.Header().Set("Connection", "close")
		return h.writeError(w, f, http.StatusRequestTimeout, "request_timeout",
			"The request body did not arrive within the gateway's body_read_timeout.")
	}
	h.logger.Debug("unreadable request body", zap.Error(err))
	return h.writeError(w, f, http.StatusBadRequest, "invalid_request_error",
		"The request body could not be read: its transfer encoding is malformed.")
}
