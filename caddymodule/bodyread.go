package caddymodule

import (
	"errors"
	"net"
	"net/http"
	"os"
	"time"

	"go.uber.org/zap"
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

// bodyRefusal answers a body that could not be read: 408 when it did not
// arrive in time, 400 when it was malformed (a bad chunk size), in the
// format's error shape rather than an empty body.
func (h *Handler) bodyRefusal(err error) *refusal {
	if ne, ok := errors.AsType[net.Error](err); (ok && ne.Timeout()) || errors.Is(err, os.ErrDeadlineExceeded) {
		return &refusal{reason: "malformed", status: http.StatusRequestTimeout, code: "request_timeout",
			message: "The request body did not arrive within the gateway's body_read_timeout.", closeConnection: true}
	}
	h.logger.Debug("unreadable request body", zap.Error(err))
	return &refusal{reason: "malformed", status: http.StatusBadRequest, code: codeInvalidRequest,
		message: "The request body could not be read: its transfer encoding is malformed."}
}
