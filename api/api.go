// Package api serves the /backend/v1 API as a plain http.Handler over a
// store.Backend. It knows nothing of Caddy: the promptwall_api handler mounts
// it.
//
// Every response is JSON with Content-Type "application/json;
// charset=utf-8", errors included, in one shape:
//
//	{"error": {"code": "invalid_parameter", "message": "...", "param": "limit"}}
package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/promptwall/promptwall/auth"
	"github.com/promptwall/promptwall/internal/reqhead"
	"github.com/promptwall/promptwall/limits"
	"github.com/promptwall/promptwall/store"
)

const jsonContentType = "application/json; charset=utf-8"

// Error codes: the error.code of every error answer.
const (
	CodeInvalidParameter = "invalid_parameter"
	CodeUnauthorized     = "unauthorized"
	CodeForbidden        = "forbidden"
	CodeNotFound         = "not_found"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeInternal         = "internal_error"
	CodeUnavailable      = "unavailable"
)

// Config configures New.
type Config struct {
	// Store holds the records, users and tokens; required.
	Store store.Backend
	// Logger receives internal errors and recovered panics; optional.
	Logger *zap.Logger
	// BootstrapTokenHash, when set, is the SHA-256 of a token that
	// authenticates as an owner of BootstrapOrgID without any stored
	// user, so an operator can reach the API before users exist.
	BootstrapTokenHash *[32]byte
	// BootstrapOrgID is the org the bootstrap token acts in; required
	// with BootstrapTokenHash.
	BootstrapOrgID string
	// Endpoints resolves GET /backend/v1/endpoint; optional. Without it
	// that route is not served (404).
	Endpoints EndpointResolver
	// Campaigns starts and cancels red-team runs; optional. Without it
	// the campaign-runs list is still served and starting or cancelling
	// answers 503.
	Campaigns CampaignRunner
	// RedTeam reports each org's redTeam.enabled feature; the campaign
	// routes answer 403 when it is off. nil enables every org.
	RedTeam RedTeamGate
	// ProviderLookup fills the providers map of includeProviders=true;
	// optional (providers are then served as {"id": ...}).
	ProviderLookup ProviderLookup
	// Providers supplies the configured providers (secrets resolved) to
	// POST /prompts; without it, or without Screener, that route answers
	// 503. GET /providers reads the versions synced into the store.
	Providers ProviderSource
	// Screener resolves endpoints: their scanners screen POST /prompts,
	// and their providers serve the providers list's endpoint filter.
	Screener Screener
	// Sender calls providers. Default: a *provider.Client.
	Sender Sender
	// Limits holds the providers' traffic limits across reloads; nil
	// applies none.
	Limits limits.Set
	// LimitWait is how long POST /prompts waits for a provider's limits
	// before answering 429. Default: 2s; negative: no wait.
	LimitWait time.Duration
	// StoreUnavailable tells whether a store error means the store's
	// server is unreachable; such failures are answered 503 unavailable
	// (retry later) instead of 500. nil: none is.
	StoreUnavailable func(error) bool
}

// Handler serves /backend/v1. It is safe for concurrent use.
type Handler struct {
	store     store.Backend
	down      func(error) bool
	log       *zap.Logger
	mux       *http.ServeMux
	auth      *auth.Authenticator
	endpoints EndpointResolver
	redteam   campaignDeps
	prompts   promptDeps
}

// New returns a Handler for cfg.
func New(cfg Config) (*Handler, error) {
	if cfg.Store == nil {
		return nil, errors.New("api: Config.Store is required")
	}
	if cfg.BootstrapTokenHash != nil && cfg.BootstrapOrgID == "" {
		return nil, errors.New("api: Config.BootstrapOrgID is required with BootstrapTokenHash")
	}
	h := &Handler{
		store:     cfg.Store,
		down:      cfg.StoreUnavailable,
		log:       cfg.Logger,
		mux:       http.NewServeMux(),
		endpoints: cfg.Endpoints,
	}
	if h.log == nil {
		h.log = zap.NewNop()
	}
	h.auth = &auth.Authenticator{Store: cfg.Store, BootstrapOrgID: cfg.BootstrapOrgID, Logger: h.log}
	if cfg.BootstrapTokenHash != nil {
		hash := *cfg.BootstrapTokenHash
		h.auth.BootstrapHash = &hash
	}
	h.mux.Handle("GET /backend/v1/scans", h.route(h.listScans))
	h.mux.Handle("GET /backend/v1/prompts/{promptId}", h.route(h.getPrompt))
	h.mux.Handle("GET /backend/v1/users", h.route(h.listUsers))
	h.mux.Handle("GET /backend/v1/orgs", h.route(h.listOrgs))
	h.mux.Handle("GET /backend/v1/openapi.json", h.route(h.serveOpenAPI))
	if h.endpoints != nil {
		h.mux.Handle("GET /backend/v1/endpoint", h.route(h.getEndpoint))
	}
	h.registerCampaigns(cfg)
	h.registerPrompts(cfg)
	return h, nil
}

// ServeHTTP authenticates the request, then routes it. Authentication comes
// first so that an anonymous caller learns nothing, not even which paths
// exist.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rw := &trackingWriter{ResponseWriter: w}
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v == http.ErrAbortHandler {
			panic(v)
		}
		h.log.Error("panic in API", zap.Any("panic", v), zap.String("method", r.Method),
			zap.String("path", r.URL.Path), zap.Stack("stack"))
		if !rw.wroteHeader {
			writeError(rw, &apiError{status: http.StatusInternalServerError, code: CodeInternal, message: "internal error"})
		}
	}()
	rw.Header().Set("Content-Type", jsonContentType)
	rw.Header().Set("Cache-Control", "no-store")
	if msg := reqhead.Check(r); msg != "" {
		writeError(rw, &apiError{status: http.StatusRequestHeaderFieldsTooLarge, code: reqhead.Code, message: msg})
		return
	}

	p, aerr := h.authenticate(r)
	if aerr != nil {
		writeError(rw, h.unavailable(aerr))
		return
	}
	r = r.WithContext(withPrincipal(r.Context(), p))

	mw := &muxWriter{ResponseWriter: rw}
	h.mux.ServeHTTP(mw, r)
	if mw.routed {
		return
	}
	// The mux answered by itself (no route, wrong method, or a redirect
	// to a cleaned path); its text body was swallowed and is replaced by
	// our JSON. Redirects become 404: API clients use canonical paths.
	rw.Header().Del("Location")
	rw.Header().Del("X-Content-Type-Options")
	rw.Header().Set("Content-Type", jsonContentType)
	if mw.status == http.StatusMethodNotAllowed {
		writeError(rw, &apiError{status: http.StatusMethodNotAllowed, code: CodeMethodNotAllowed,
			message: fmt.Sprintf("method %s is not allowed here; allowed: %s", r.Method, rw.Header().Get("Allow"))})
		return
	}
	writeError(rw, &apiError{status: http.StatusNotFound, code: CodeNotFound, message: "no such endpoint: " + r.URL.Path})
}

// route marks the request as handled by one of our routes, so ServeHTTP
// does not rewrite the response, and hands the handler the principal.
func (h *Handler) route(fn func(w http.ResponseWriter, r *http.Request, p Principal) *apiError) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mw, ok := w.(*muxWriter); ok {
			mw.routed = true
			w = mw.ResponseWriter
		}
		p, _ := PrincipalFromContext(r.Context())
		// The checks every documented operation shares (roles, path and
		// query parameters, media type) come from the OpenAPI document.
		err := h.checkDocumented(w, r, p)
		if err == nil {
			err = fn(w, r, p)
		}
		if err != nil {
			err = h.unavailable(err)
			if err.status >= 500 {
				h.log.Error("API error", zap.String("path", r.URL.Path), zap.Int("status", err.status), zap.Error(err.cause))
			}
			writeError(w, err)
		}
	})
}

// apiError is an error response. cause is logged, never sent.
type apiError struct {
	status  int
	code    string
	message string
	param   string
	cause   error
	// challenge is the WWW-Authenticate value of a 401.
	challenge string
	// retryAfter is the Retry-After value of a 503, in seconds.
	retryAfter string
	// promptID is the record kept for a failed POST /prompts, so the
	// caller can look it up.
	promptID string
}

func badParam(param, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: CodeInvalidParameter, param: param, message: fmt.Sprintf(format, args...)}
}

// unavailable turns an internal error caused by an unreachable store into
// 503 with Retry-After: the client should retry, nothing is wrong with its
// request or with the gateway's code.
func (h *Handler) unavailable(e *apiError) *apiError {
	if e.status != http.StatusInternalServerError || h.down == nil || e.cause == nil || !h.down(e.cause) {
		return e
	}
	return &apiError{status: http.StatusServiceUnavailable, code: CodeUnavailable, retryAfter: "1",
		message: "the store is unreachable; retry later", cause: e.cause}
}

func internal(err error) *apiError {
	return &apiError{status: http.StatusInternalServerError, code: CodeInternal, message: "internal error", cause: err}
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code     string `json:"code"`
	Message  string `json:"message"`
	Param    string `json:"param,omitempty"`
	PromptID string `json:"promptId,omitempty"`
}

func writeError(w http.ResponseWriter, e *apiError) {
	if e.challenge != "" {
		w.Header().Set("WWW-Authenticate", e.challenge)
	}
	if e.retryAfter != "" {
		w.Header().Set("Retry-After", e.retryAfter)
	}
	writeJSON(w, e.status, errorBody{Error: errorDetail{Code: e.code, Message: e.message, Param: e.param, PromptID: e.promptID}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"error":{"code":"internal_error","message":"internal error"}}`)
	}
	body = append(body, '\n')
	w.Header().Set("Content-Type", jsonContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// trackingWriter records whether the header went out, so a recovered panic
// only writes a 500 when the response has not started.
type trackingWriter struct {
	http.ResponseWriter
	wroteHeader bool
}

func (w *trackingWriter) WriteHeader(code int) {
	w.wroteHeader = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *trackingWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(b)
}

func (w *trackingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// muxWriter swallows what ServeMux writes by itself (its 404, 405 and
// redirect bodies are text/plain) until a route claims the request.
type muxWriter struct {
	http.ResponseWriter
	routed bool
	status int
}

func (w *muxWriter) WriteHeader(code int) {
	if w.routed {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.status = code
}

func (w *muxWriter) Write(b []byte) (int, error) {
	if w.routed {
		return w.ResponseWriter.Write(b)
	}
	return len(b), nil
}
