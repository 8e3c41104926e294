package caddymodule

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/promptwall/promptwall/format"
	"github.com/promptwall/promptwall/limits"
	"github.com/promptwall/promptwall/policy"
)

// refusal is an answer the gateway writes itself instead of the provider's:
// a request it will not forward, or an answer it will not pass. Stages
// return it as their error; Handler.refuse counts and writes it.
type refusal struct {
	// reason labels the rejected-requests metric; "" for refusals that
	// metric does not count (blocks, failures after admission).
	reason  string
	status  int
	code    string
	message string
	// retryAfter is the Retry-After header in seconds, "" for none.
	retryAfter string
	// param names the offending field, in the error shapes that carry it
	// (the guardrail APIs').
	param string
	// blocked answers as the endpoint answers a blocked exchange (its
	// on_block), with message as the flag message.
	blocked bool
	// closeConnection ends the connection after the answer (a client
	// whose body stalled).
	closeConnection bool
}

func (rf *refusal) Error() string { return rf.message }

// refuse writes err if it is a refusal and returns any other error (nil
// included) unchanged. A refusal of a request whose format is not yet known
// is written in the error shape its path implies.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, x *exchange, err error) error {
	rf, ok := err.(*refusal)
	if !ok {
		return err
	}
	if rf.reason != "" {
		h.app.metrics.rejected.WithLabelValues(rf.reason).Inc()
	}
	if rf.retryAfter != "" {
		w.Header().Set("Retry-After", rf.retryAfter)
	}
	if rf.closeConnection {
		w.Header().Set("Connection", "close")
	}
	if rf.blocked {
		return h.writeBlocked(w, x, rf.message)
	}
	f := x.format
	if f == nil {
		f = h.errorFormat(r.URL.Path)
	}
	return h.writeError(w, f, rf.status, rf.code, rf.message)
}

// codeInvalidRequest is the code of a request the gateway cannot read or
// parse, the one its wire formats give (format.Error).
const codeInvalidRequest = "invalid_request"

// formatRefusal refuses a body its wire format rejects, with the format's
// own status and code when it gives them.
func formatRefusal(err error) *refusal {
	if fe, ok := errors.AsType[*format.Error](err); ok {
		return &refusal{reason: "malformed", status: fe.Status, code: fe.Code, message: fe.Message}
	}
	return &refusal{reason: "malformed", status: http.StatusBadRequest, code: codeInvalidRequest, message: err.Error()}
}

// limitRefusal answers a request over its provider's limits: 429 with
// Retry-After, in the provider's own error shape.
func limitRefusal(err error) *refusal {
	retry := time.Second
	if le, ok := errors.AsType[*limits.LimitError](err); ok {
		retry = le.RetryAfter
	}
	if errors.Is(err, limits.ErrUnavailable) {
		// The shared limiter failed closed: the gateway, not the client,
		// is at fault.
		return &refusal{reason: "limiter_unavailable", status: http.StatusServiceUnavailable, code: "limiter_unavailable",
			message:    "The gateway cannot check this provider's limits right now; retry later.",
			retryAfter: strconv.Itoa(limits.RetryAfterSeconds(retry))}
	}
	msg := "The provider's request limit is reached; retry later."
	if errors.Is(err, limits.ErrConcurrencyLimited) {
		msg = "Too many requests to this provider are in flight; retry later."
	}
	return &refusal{reason: "provider_limit", status: http.StatusTooManyRequests, code: "rate_limit_exceeded", message: msg,
		retryAfter: strconv.Itoa(limits.RetryAfterSeconds(retry))}
}

// tooLarge refuses a body over max_body_size.
func (h *Handler) tooLarge() *refusal {
	return &refusal{reason: "too_large", status: http.StatusRequestEntityTooLarge, code: "request_too_large",
		message: "The request body exceeds the gateway's limit of " + strconv.FormatInt(h.MaxBodySize, 10) + " bytes."}
}

// writeBlocked answers a blocked exchange as the endpoint says: the
// provider's error shape, or a normal completion carrying the message.
func (h *Handler) writeBlocked(w http.ResponseWriter, x *exchange, message string) error {
	if message == "" {
		message = policy.DefaultFlagMessage
	}
	hdr := w.Header()
	hdr.Del("Content-Length")
	hdr.Del("Content-Encoding")
	hdr.Set("Content-Type", "application/json")
	hdr.Set("X-Promptwall-Outcome", "blocked")
	if h.ep.OnBlock == onBlockCompletion {
		w.WriteHeader(http.StatusOK)
		_, err := w.Write(x.format.Completion(x.req, message))
		return err
	}
	w.WriteHeader(h.ep.BlockStatus)
	_, err := w.Write(x.format.Blocked(h.ep.BlockStatus, "content_blocked", message))
	return err
}

func (h *Handler) writeError(w http.ResponseWriter, f format.Format, status int, code, message string) error {
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Del("Content-Length")
	w.WriteHeader(status)
	_, err := w.Write(f.Blocked(status, code, message))
	return err
}
