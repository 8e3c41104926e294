package caddymodule

import (
	"net/http"

	"golang.org/x/time/rate"
)

// Requests refused before they are forwarded (no valid token, a malformed
// or unscreenable body, the provider's limits) cost nothing upstream and
// must not cost unbounded disk either: a flood of them would otherwise
// fill the database. They are counted in promptwall_requests_rejected_total;
// of the refusals that come after screening (the provider's limits), only
// a sample is recorded, at most refusalSampleRate a second with bursts of
// refusalSampleBurst, so an operator still sees what was refused.
const (
	refusalSampleRate  = 1
	refusalSampleBurst = 10
)

func newRefusalSampler() *rate.Limiter {
	return rate.NewLimiter(refusalSampleRate, refusalSampleBurst)
}

// recordRefusal reports whether a refused request is recorded (sampled).
func (h *Handler) recordRefusal() bool {
	return h.app.shared.refusals.Allow()
}

// hasBody reports whether a request carries a body, whatever its method.
func hasBody(r *http.Request) bool {
	return r.ContentLength > 0 || (r.ContentLength < 0 && r.Body != nil && r.Body != http.NoBody) || len(r.TransferEncoding) > 0
}

// bodylessMethodRefusal refuses a GET, HEAD or OPTIONS request that
// carries a body: upstreams may read it, so it is screened like any prompt
// or, as here, refused; it is never forwarded unscreened.
func bodylessMethodRefusal(r *http.Request) *refusal {
	return &refusal{reason: "unsupported", status: http.StatusBadRequest, code: "unsupported_request",
		message: "A " + r.Method + " request with a body cannot be screened by this gateway; send the body with POST."}
}

// errTokenInQuery refuses a Promptwall token sent as ?key=: Caddy's access
// log records the request URI, so a token there is written to the log in
// clear before any handler runs. Tokens are accepted only in headers; a
// client that sent one in the query should have it revoked.
const errTokenInQuery = "The Promptwall token must be sent in a header (Authorization: Bearer, x-api-key, api-key or x-goog-api-key), never in the URL: URLs are logged. Revoke a token that was sent as ?key=."

// tokenInQuery reports whether the request carries a credential in ?key=.
func tokenInQuery(r *http.Request) bool {
	return r.URL.Query().Has("key")
}
