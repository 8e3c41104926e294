package caddymodule

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/promptwall/promptwall/auth"
	"github.com/promptwall/promptwall/format"
	"github.com/promptwall/promptwall/internal/reqhead"
	"github.com/promptwall/promptwall/internal/utf8text"
	"github.com/promptwall/promptwall/policy"
	"github.com/promptwall/promptwall/record"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/store"
	"github.com/promptwall/promptwall/streamscreen"
)

func init() {
	caddy.RegisterModule(new(Handler))
}

// Handler is the inline gateway (`promptwall` directive). Placed before
// reverse_proxy on a route that carries LLM traffic, it screens the request
// with its endpoint's scanners, blocks, redacts or forwards it, screens the
// answer, and records the exchange.
type Handler struct {
	// Endpoint names the endpoint configuration (declared in the promptwall
	// app) whose scanners screen this route. Default: "default".
	Endpoint string `json:"endpoint,omitempty"`
	// Format fixes the wire format instead of detecting it from the path
	// and body, e.g. "openai_chat" or "anthropic_messages". Default: detect.
	Format string `json:"format,omitempty"`
	// MaxBodySize caps the request body in bytes; a larger one gets 413.
	// Default: 4 MiB.
	MaxBodySize int64 `json:"max_body_size,omitempty"`
	// MaxResponseSize caps an answer held for screening; the upstream copy
	// is aborted (502) past it rather than passing unscreened bytes.
	// Default: 16 MiB.
	MaxResponseSize int64 `json:"max_response_size,omitempty"`
	// Provider names the upstream provider, for records and metrics.
	// Default: "" (recorded as unknown).
	Provider string `json:"provider,omitempty"`
	// ProjectID attributes the route's records to a project. Default: the
	// endpoint's project.
	ProjectID string `json:"project_id,omitempty"`
	// Authenticate makes clients present a Promptwall token where they
	// would put the provider's key (Authorization: Bearer, x-api-key,
	// api-key, x-goog-api-key). The token is verified and removed, the
	// record is attributed to its user, and the configured provider's
	// secret is sent upstream instead. Requires Provider to name a
	// configured provider. Default: off (client credentials pass through
	// untouched and are never stored or logged).
	Authenticate bool `json:"authenticate,omitempty"`
	// MaxQueueWait is how long a request over its provider's rate or
	// concurrency limit waits for room before it gets 429. Default: 0.
	MaxQueueWait caddy.Duration `json:"max_queue_wait,omitempty"`
	// PassThrough lists the kinds of unscreenable requests forwarded
	// unscreened instead of refused: "upgrade" (WebSocket, realtime),
	// "multipart" (file uploads) and "unknown_format" (a body no wire format
	// recognises). Each is recorded as passed with every scanner skipped,
	// never as screened. Default: none; all are refused with 4xx.
	PassThrough []string `json:"pass_through,omitempty"`
	// StreamHoldBack is the most text of a streamed answer withheld, in
	// bytes. Text is released as soon as no output detector that blocks or
	// redacts could still find a match in it (ordinary prose a word
	// behind); text further than this before the end of the answer is
	// released regardless, so a secret or banned phrase up to this long
	// that is split across events is always caught before any of it
	// leaves. Default: 256.
	StreamHoldBack int `json:"stream_hold_back,omitempty"`
	// BodyReadTimeout bounds how long the request body may take to arrive:
	// a client that trickles or stalls a body is answered 408 rather than
	// held. Default: 30s.
	BodyReadTimeout caddy.Duration `json:"body_read_timeout,omitempty"`

	app     *App
	ep      *compiledEndpoint
	prov    *configuredProvider
	format  format.Format
	labels  routeLabels
	metrics *routeMetrics
	logger  *zap.Logger
	// hold is holdFor as a func value, made once rather than per request.
	hold func(status int, header http.Header) bool
}

// CaddyModule returns the Caddy module information.
func (*Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.promptwall", New: func() caddy.Module { return new(Handler) }}
}

// DefaultEndpointName is the endpoint used when a handler names none.
const DefaultEndpointName = "default"

const (
	defaultMaxBodySize     = 4 << 20
	defaultMaxResponseSize = 16 << 20
)

// Provision resolves the endpoint and the wire format.
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	var err error
	if h.app, err = loadApp(ctx); err != nil {
		return err
	}
	if h.Endpoint == "" {
		h.Endpoint = DefaultEndpointName
	}
	if h.MaxBodySize == 0 {
		h.MaxBodySize = defaultMaxBodySize
	}
	if h.MaxResponseSize == 0 {
		h.MaxResponseSize = defaultMaxResponseSize
	}
	if h.ep, err = h.app.endpoint(h.Endpoint); err != nil {
		return err
	}
	if h.Format != "" {
		if h.format, err = format.ByName(h.Format); err != nil {
			return err
		}
	}
	if h.Provider != "" {
		h.prov, _ = h.app.provider(h.Provider)
	}
	if h.Authenticate && h.prov == nil {
		return fmt.Errorf("authenticate needs provider to name a provider declared in the promptwall app (got %q)", h.Provider)
	}
	project := h.ProjectID
	if project == "" {
		project = h.ep.ProjectID
	}
	h.labels = routeLabels{provider: h.Provider, project: project, endpoint: h.ep.Name}
	h.metrics = newRouteMetrics(h.app.metrics, h.labels)
	h.hold = h.holdFor
	return nil
}

// Validate checks the configuration.
func (h *Handler) Validate() error {
	if h.MaxBodySize < 0 || h.MaxResponseSize < 0 || h.StreamHoldBack < 0 {
		return errors.New("max_body_size, max_response_size and stream_hold_back must be positive")
	}
	for _, k := range h.PassThrough {
		if k != passUpgrade && k != passMultipart && k != passUnknownFormat {
			return fmt.Errorf("pass_through: unknown kind %q (upgrade, multipart, unknown_format)", k)
		}
	}
	return nil
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuf() *bytes.Buffer { return bufPool.Get().(*bytes.Buffer) }

// putBuf returns a buffer to the pool unless it grew large: keeping a
// 16 MiB buffer alive for every pooled slot would pin memory.
func putBuf(b *bytes.Buffer) {
	if b.Cap() > 1<<20 {
		return
	}
	b.Reset()
	bufPool.Put(b)
}

// exchange is the state of one request through the gateway.
type exchange struct {
	h        *Handler
	id       string
	received time.Time
	format   format.Format
	req      *format.Request
	conv     *scanner.Conversation
	input    *scanner.Result
	output   *scanner.Result
	// outConv holds the assistant messages of the answer that were screened.
	outConv        *scanner.Conversation
	providerResult string
	upstreamErr    error
	res            *store.Reservation
	who            auth.Principal
	// vault holds the placeholders of a redacted request when the endpoint
	// restores them in the answer.
	vault *scanner.Vault
	// ss screens a streamed answer; nil for an answer that is not one.
	ss *streamScreening
	// discard cancels the reservation instead of committing it: a refusal
	// that is not sampled for recording.
	discard bool
	// ic wraps the client's writer for the next handler. It lives in the
	// exchange so that one allocation holds a request's state.
	ic interceptor
}

// ServeHTTP screens, forwards and records one request as a sequence of
// stages: admit, parse, reserve, screen, forward (which finishes the
// answer). A stage that refuses the request returns a *refusal, written in
// one place; once the record is reserved it is committed exactly once, by
// the deferred finish, however the exchange ends.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if msg := reqhead.Check(r); msg != "" {
		return h.refuse(w, r, &exchange{h: h}, &refusal{reason: "too_large", status: http.StatusRequestHeaderFieldsTooLarge,
			code: reqhead.Code, message: msg})
	}
	// Requests without a body carry no prompt (model listings, health
	// checks): nothing to screen, nothing to record.
	if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions {
		if hasBody(r) {
			return h.refuse(w, r, &exchange{h: h}, bodylessMethodRefusal(r))
		}
		return next.ServeHTTP(w, r)
	}
	x := &exchange{h: h}
	pass, err := h.admit(r, x)
	if err != nil {
		return h.refuse(w, r, x, err)
	}
	body := getBuf()
	defer putBuf(body)
	if pass == "" {
		pass, err = h.parse(w, r, x, body)
		if err != nil {
			return h.refuse(w, r, x, err)
		}
	}
	if pass != "" {
		return h.passUnscreened(w, r, next, x, pass)
	}
	w, ungate, err := h.open(w, r, x)
	if err != nil {
		return h.refuse(w, r, x, err)
	}
	defer ungate()
	defer x.finish()
	raw, err := h.screenInput(r, x, body.Bytes())
	if err == nil {
		err = h.forward(w, r, next, x, raw)
	}
	return h.refuse(w, r, x, err)
}

// admit checks what can be judged before the body is read: the token, a
// connection upgrade, the content type and the declared size. A non-empty
// pass names an unscreenable kind the operator lets through.
func (h *Handler) admit(r *http.Request, x *exchange) (pass string, err error) {
	if h.Authenticate {
		if tokenInQuery(r) {
			return "", &refusal{reason: "unauthenticated", status: http.StatusUnauthorized, code: "invalid_api_key", message: errTokenInQuery}
		}
		if x.who, err = h.authenticate(r); errors.Is(err, auth.ErrInvalidToken) {
			return "", &refusal{reason: "unauthenticated", status: http.StatusUnauthorized, code: "invalid_api_key", message: errBadToken.Error() + "."}
		} else if err != nil {
			h.logger.Error("checking a gateway token", zap.Error(err))
			return "", h.app.storeRefusal(err, "The gateway could not check the token.")
		}
		// The token goes no further than this handler.
		useProviderKey(r, h.prov)
	}
	if isUpgrade(r) {
		if h.passes(passUpgrade) {
			return "connection upgrade", nil
		}
		return "", &refusal{reason: "unsupported", status: http.StatusBadRequest, code: "unsupported_request",
			message: "Connection upgrades (WebSocket, realtime) cannot be screened by this gateway."}
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		// Parsing the media type costs allocations; the usual exact
		// application/json needs none of it.
		if isMultipart(ct) {
			if h.passes(passMultipart) {
				return "multipart upload", nil
			}
			return "", &refusal{reason: "unsupported", status: http.StatusUnsupportedMediaType, code: "unsupported_request",
				message: "Multipart uploads cannot be screened by this gateway."}
		}
		if err := checkContentType(ct); err != nil {
			return "", &refusal{reason: "malformed", status: http.StatusBadRequest, code: codeInvalidRequest, message: err.Error()}
		}
	}
	if r.ContentLength > h.MaxBodySize {
		return "", h.tooLarge()
	}
	return "", nil
}

// parse reads the body into body and parses it in its wire format. A
// non-empty pass is an unknown format the operator lets through, with the
// body restored for the next handler.
func (h *Handler) parse(w http.ResponseWriter, r *http.Request, x *exchange, body *bytes.Buffer) (pass string, err error) {
	clearDeadline := h.bodyDeadline(w)
	_, err = body.ReadFrom(http.MaxBytesReader(w, r.Body, h.MaxBodySize))
	clearDeadline()
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return "", h.tooLarge()
		}
		return "", h.bodyRefusal(err)
	}
	raw := body.Bytes()
	if !utf8.Valid(raw) {
		return "", &refusal{reason: "malformed", status: http.StatusBadRequest, code: codeInvalidRequest,
			message: "The request body is not valid UTF-8."}
	}
	x.received = time.Now()
	if h.format != nil {
		x.format = format.Bind(h.format, r.URL.Path)
	} else {
		f, err := format.Detect(r.URL.Path, raw)
		if err != nil {
			if h.passes(passUnknownFormat) {
				restoreBody(r, bytes.Clone(raw))
				return "unknown wire format", nil
			}
			return "", &refusal{reason: "unsupported", status: http.StatusBadRequest, code: "unsupported_request",
				message: "The request's API format is not one the gateway can screen."}
		}
		x.format = f
	}
	if x.req, err = x.format.ParseRequest(raw); err != nil {
		return "", formatRefusal(err)
	}
	x.conv = &x.req.Conversation
	return "", nil
}

// reserve takes the record's place before anything reaches the provider, so
// a store that cannot keep up refuses the request instead of losing it.
func (h *Handler) reserve(w http.ResponseWriter, r *http.Request, x *exchange) error {
	res, err := h.app.shared.store.Reserve(r.Context())
	if err != nil {
		h.logger.Error("refusing request: its record cannot be queued", zap.Error(err))
		return h.app.reserveRefusal(err)
	}
	x.res = res
	x.id = store.NewID()
	r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer).Set("promptwall.prompt_id", x.id)
	w.Header().Set("X-Promptwall-Prompt-Id", x.id)
	return nil
}

// screenInput screens the request and returns the body to forward: raw, or
// raw with the scanners' redactions written back.
func (h *Handler) screenInput(r *http.Request, x *exchange, raw []byte) ([]byte, error) {
	start := time.Now()
	if h.ep.RestorePlaceholders {
		x.vault = new(scanner.Vault)
	}
	x.input = h.ep.pipeline.ScreenWith(r.Context(), x.conv, scanner.Input, x.vault)
	h.metrics.observeResult(scanner.Input, x.input, time.Since(start))
	r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer).Set("promptwall.outcome", outcomeValue(x.input.Outcome))
	switch {
	case x.input.Outcome == scanner.Blocked:
		return nil, &refusal{blocked: true, message: x.input.FlagMessage}
	case x.input.Outcome == scanner.Modified && len(x.input.Edits) > 0:
		rewritten, err := x.format.RewriteRequest(raw, toFormatEdits(x.input.Edits))
		if err != nil {
			// A redaction that cannot be written back must not forward the
			// unredacted original.
			h.logger.Error("rewriting redacted request", zap.Error(err))
			x.upstreamErr = err
			return nil, &refusal{status: http.StatusInternalServerError, code: "internal_error", message: "The request could not be redacted."}
		}
		return rewritten, nil
	}
	return raw, nil
}

// forward sends the request upstream under the provider's limits and
// finishes the answer. The limits count upstream calls: they are taken only
// for a request going upstream and held until its answer is fully written,
// streams included.
func (h *Handler) forward(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, x *exchange, raw []byte) error {
	release, err := h.acquire(r.Context())
	if err != nil {
		x.upstreamErr = err
		// Refusals are recorded only as sampled, so a flood of them
		// cannot fill the store.
		x.discard = !h.recordRefusal()
		return limitRefusal(err)
	}
	defer release()
	restoreBody(r, raw)
	if h.ep.hasOutput {
		// Screening needs the plain answer; ask for it uncompressed.
		r.Header.Del("Accept-Encoding")
	}
	held := getBuf()
	defer putBuf(held)
	ic := &x.ic
	ic.wrap(w, held, int(h.MaxResponseSize), record.ProviderResultLimit, h.hold)
	if h.ep.hasOutput {
		ic.stream = func(status int, header http.Header) io.Writer {
			// A format without a stream decoder (generic, embeddings) has
			// its answer held and parsed whole instead: fail closed.
			if status < 200 || status >= 300 || !isStreamed(x.req, header) || x.format.NewStream(strings.NewReader("")) == nil {
				return nil
			}
			x.ss = h.startStreamScreening(r.Context(), x, ic)
			return x.ss.pipe
		}
	}
	upstreamStart := time.Now()
	err = callNext(next, ic, r, func() bool { return x.ss != nil })
	h.metrics.upstreamSeconds().Observe(time.Since(upstreamStart).Seconds())
	return h.finishAnswer(r.Context(), w, x, err)
}

// finishAnswer ends the exchange after the upstream call returned upErr: a
// screened stream is waited for, a held answer screened and written, an
// answer passed straight through kept for the record.
func (h *Handler) finishAnswer(ctx context.Context, w http.ResponseWriter, x *exchange, upErr error) error {
	ic := &x.ic
	switch {
	case x.ss != nil:
		out := x.ss.wait()
		x.streamed(out)
		if out.Blocked || x.ss.err != nil {
			// The status is sent; a cut stream ends the response. The
			// upstream copy's error is the pipe we closed, not a failure.
			return nil
		}
		return upErr
	case ic.overflow:
		x.upstreamErr = errResponseTooLarge
		return &refusal{status: http.StatusBadGateway, code: "upstream_error", message: "The provider's answer is too large to be screened."}
	case upErr != nil:
		x.upstreamErr = upErr
		return upErr
	case ic.holding:
		return h.finishHeld(ctx, w, x, ic)
	}
	x.providerResult = ic.buf.String()
	return nil
}

// isStreamed tells whether a successful answer is an event stream: the
// client asked for one, or the upstream declares one.
func isStreamed(req *format.Request, header http.Header) bool {
	if req != nil && req.Stream {
		return true
	}
	ct := header.Get("Content-Type")
	if ct == "application/json" {
		// The usual answer needs no media type parsing (and its map).
		return false
	}
	mt, _, _ := mime.ParseMediaType(ct)
	return mt == "text/event-stream" || mt == "application/x-ndjson"
}

// streamScreening runs the stream screener on its own goroutine, fed by the
// upstream copy through a pipe.
type streamScreening struct {
	pipe *streamPipe
	done chan struct{}
	out  streamscreen.Outcome
	err  error
}

// errStreamEnded stops the upstream copy once the screener has ended the
// stream (a block, or a client gone).
var errStreamEnded = errors.New("promptwall: stream ended by screening")

func (h *Handler) startStreamScreening(ctx context.Context, x *exchange, ic *interceptor) *streamScreening {
	// What the screener wrote is flushed when it has used up an upstream
	// write, on its own goroutine like every other write to the client.
	flush := func() error {
		if err := ic.flushStream(); err != nil {
			return errors.Join(streamscreen.ErrEmit, err)
		}
		return nil
	}
	ss := &streamScreening{pipe: newStreamPipe(flush), done: make(chan struct{})}
	enc := ic.Header().Get("Content-Encoding")
	ic.Header().Del("Content-Encoding")
	start := time.Now()
	first := true
	emit := func(b []byte) error {
		if first {
			first = false
			h.metrics.streamTTFB().Observe(time.Since(start).Seconds())
		}
		return ic.emit(b)
	}
	go func() {
		defer close(ss.done)
		defer ss.pipe.CloseWithError(errStreamEnded)
		body, err := decodingReader(enc, ss.pipe)
		if err != nil {
			// Nothing of an answer we cannot decode reaches the client.
			ss.err = err
			ss.out.Blocked = true
			_ = ic.emit(x.format.NewStream(strings.NewReader("")).Block("upstream_error", "The provider's answer cannot be screened."))
			_ = ic.flushStream()
			return
		}
		ss.out, ss.err = streamscreen.Run(ctx, h.streamOptions(x, x.format.NewStream(body), emit))
		// The last events (the terminator, a block) are released after the
		// upstream's last write was used up: flush them before the handler
		// returns.
		if err := flush(); err != nil && ss.err == nil {
			ss.err = err
		}
		// Whatever ended the screening (deferred above), the upstream copy
		// must not block on a pipe nobody reads.
	}()
	return ss
}

// wait closes the upstream side and returns the screener's outcome.
func (ss *streamScreening) wait() streamscreen.Outcome {
	ss.pipe.Close()
	<-ss.done
	return ss.out
}

// streamed records what the stream screener saw.
func (x *exchange) streamed(out streamscreen.Outcome) {
	x.outConv = &scanner.Conversation{Messages: []scanner.Message{{Role: scanner.RoleAssistant, Text: out.Answer}}}
	x.output = out.Result
	if x.output == nil {
		x.output = &scanner.Result{Outcome: scanner.Passed}
	}
	x.providerResult = out.Redacted
	if out.UpstreamErr != nil {
		x.providerResult = "provider error event: " + out.UpstreamErr.Message
	}
	x.h.metrics.observeResult(scanner.Output, x.output, 0)
}

// holdFor decides whether an answer must be held back for screening: every
// successful answer of an endpoint with output scanners, whatever its
// declared type, so a missing or odd Content-Type cannot carry text past the
// scanners. Error answers carry no model output and pass.
func (h *Handler) holdFor(status int, _ http.Header) bool {
	return h.ep.hasOutput && status >= 200 && status < 300 && status != http.StatusNoContent
}

// finishHeld screens a held answer and writes what the client may see, or
// returns the refusal that replaces it.
func (h *Handler) finishHeld(ctx context.Context, w http.ResponseWriter, x *exchange, ic *interceptor) error {
	answer := ic.buf.Bytes()
	x.providerResult = string(utf8text.Truncate(answer, record.ProviderResultLimit))
	if enc := ic.Header().Get("Content-Encoding"); enc != "" && enc != "identity" {
		decoded, err := decodeBody(enc, answer, int(h.MaxResponseSize))
		if err != nil {
			x.upstreamErr = err
			return &refusal{status: http.StatusBadGateway, code: "upstream_error",
				message: "The provider's answer is compressed (" + enc + ") in a way the gateway cannot screen."}
		}
		answer = decoded
		ic.Header().Del("Content-Encoding")
		x.providerResult = string(utf8text.Truncate(answer, record.ProviderResultLimit))
	}
	if len(bytes.TrimSpace(answer)) == 0 {
		// Nothing to screen: pass the empty answer as it came.
		w.WriteHeader(ic.status)
		return nil
	}
	conv, err := x.format.ParseResponse(answer)
	if err != nil {
		// An answer we cannot read is not passed unscreened.
		x.upstreamErr = fmt.Errorf("parsing provider answer: %w", err)
		return &refusal{status: http.StatusBadGateway, code: "upstream_error", message: "The provider's answer could not be screened."}
	}
	x.outConv = conv
	start := time.Now()
	x.output = h.ep.pipeline.Screen(ctx, conv, scanner.Output)
	h.metrics.observeResult(scanner.Output, x.output, time.Since(start))
	switch x.output.Outcome {
	case scanner.Blocked:
		return &refusal{blocked: true, message: x.output.FlagMessage}
	case scanner.Modified:
		rewritten, err := x.format.RewriteResponse(answer, toFormatEdits(x.output.Edits))
		if err != nil {
			x.upstreamErr = err
			return &refusal{status: http.StatusBadGateway, code: "upstream_error", message: "The provider's answer could not be redacted."}
		}
		answer = rewritten
	}
	if x.vault != nil && x.vault.Len() > 0 && x.output.Outcome != scanner.Modified {
		// The model answered about [EMAIL_ADDRESS_1]; the user reads the
		// address they wrote. The answer was screened with placeholders.
		if restored, err := x.restorePlaceholders(answer, conv); err == nil {
			answer = restored
		} else {
			h.logger.Warn("restoring placeholders in the answer", zap.Error(err))
		}
	}
	setContentLength(w.Header(), len(answer))
	w.WriteHeader(ic.status)
	_, err = w.Write(answer)
	return err
}

// finish is deferred once the record is reserved: it commits the record
// however the exchange ended, and cancels the reservation when a panic
// (which goes on) ends it instead.
func (x *exchange) finish() {
	if v := recover(); v != nil {
		x.res.Cancel()
		panic(v)
	}
	if x.discard {
		x.res.Cancel()
		return
	}
	x.commit()
}

// commit fills the reserved record and hands it to the store. Non-blocking
// scanners run here, after the client has its answer, then the record is
// committed.
func (x *exchange) commit() {
	h := x.h
	org := x.who.OrgID
	if org == "" {
		org = defaultOrgID()
	}
	// p stays on this goroutine's stack unless deferred scanners need it
	// later: the store encodes it before Commit returns.
	p := store.Prompt{
		PromptFields: store.PromptFields{
			ID:         x.id,
			Type:       "prompt",
			OrgID:      org,
			UserID:     x.who.UserID,
			ProjectID:  h.labels.project,
			Provider:   h.Provider,
			ReceivedAt: store.Timestamp(x.received),
		},
		ProviderID: h.providerID(),
		EndpointID: h.ep.ID,
	}
	p.Memory = p.ID
	rx := record.Exchange{Conv: x.conv, Input: x.input, OutConv: x.outConv, Output: x.output, Failure: x.upstreamErr}
	if x.upstreamErr == nil {
		// A failed answer's raw bytes may be undecodable; the failure is
		// recorded instead.
		rx.Raw = x.providerResult
	}
	shown := record.Build(&p, rx)
	p.Scanners = h.ep.settingsJSON()
	if h.ep.hasDeferred {
		if h.app.durability == store.DurabilitySync {
			// The answer waits for its record, not for the deferred
			// scanners: the record is committed now and replaced with
			// their results later.
			x.res.Commit(&p)
		}
		go x.commitDeferred(p, shown)
		return
	}
	x.res.Commit(&p)
}

// commitDeferred runs the non-blocking scanners and commits p with their
// results.
func (x *exchange) commitDeferred(p store.Prompt, shown int) {
	record.AddDeferred(&p, x.h.ep.pipeline.ScreenDeferred(context.Background(), x.conv, scanner.Input), shown)
	if err := x.res.Commit(&p); errors.Is(err, store.ErrReservationUsed) {
		// Committed already (durability sync): replace it.
		if err := x.h.app.shared.store.Put(context.Background(), &p); err != nil {
			x.h.logger.Error("recording deferred scanner results", zap.String("id", p.ID), zap.Error(err))
		}
	}
}

// outcomeValue is o as a placeholder value. The known outcomes are
// constants, which become an interface value without an allocation.
func outcomeValue(o scanner.Outcome) any {
	switch o {
	case scanner.Passed:
		return string(scanner.Passed)
	case scanner.Flagged:
		return string(scanner.Flagged)
	case scanner.Modified:
		return string(scanner.Modified)
	case scanner.Blocked:
		return string(scanner.Blocked)
	case scanner.Error:
		return string(scanner.Error)
	}
	return string(o)
}

// errorFormat picks the format whose error shape answers a request that
// could not be parsed: the configured one, else the one its path implies.
func (h *Handler) errorFormat(path string) format.Format {
	if h.format != nil {
		return h.format
	}
	if f, err := format.Detect(path, nil); err == nil {
		return f
	}
	return openAIFormat
}

// openAIFormat renders errors of requests whose format is unknown: OpenAI's
// error shape is the one most clients understand.
var openAIFormat, _ = format.ByName(format.NameOpenAIChat)

// Kinds of unscreenable requests an operator may pass through.
const (
	passUpgrade       = "upgrade"
	passMultipart     = "multipart"
	passUnknownFormat = "unknown_format"
)

func (h *Handler) passes(kind string) bool {
	for _, k := range h.PassThrough {
		if k == kind {
			return true
		}
	}
	return false
}

// passUnscreened forwards a request the operator chose to pass unscreened
// and records it as such: outcome passed, every scanner skipped with the
// reason, the body not stored (nothing of it was read as a prompt).
func (h *Handler) passUnscreened(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, x *exchange, why string) error {
	w, ungate, err := h.open(w, r, x)
	if err != nil {
		return h.refuse(w, r, x, err)
	}
	defer ungate()
	defer x.finish()
	now := time.Now()
	skipped := &scanner.Result{Outcome: scanner.Passed}
	for _, st := range h.ep.settings {
		skipped.Scanners = append(skipped.Scanners, scanner.ScannerResult{
			ScannerID: st.ID, Version: st.Version, Direction: scanner.Input, Outcome: scanner.Skipped,
			Started: now, Completed: now, Reason: "passed through unscreened (operator's pass_through): " + why,
		})
	}
	x.received, x.conv, x.input = now, &scanner.Conversation{}, skipped
	h.metrics.observeResult(scanner.Input, skipped, 0)
	release, err := h.acquire(r.Context())
	if err != nil {
		x.upstreamErr = err
		return h.refuse(w, r, x, limitRefusal(err))
	}
	defer release()
	if err := next.ServeHTTP(w, r); err != nil {
		x.upstreamErr = err
		return err
	}
	return nil
}

func isMultipart(ct string) bool {
	mt, _, _ := mime.ParseMediaType(ct)
	return strings.HasPrefix(mt, "multipart/")
}

func checkContentType(ct string) error {
	if ct == "" {
		return errors.New("content type missing: send Content-Type: application/json")
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return fmt.Errorf("content type %q: send Content-Type: application/json", ct)
	}
	return nil
}

func isUpgrade(r *http.Request) bool {
	return r.Header.Get("Upgrade") != "" || r.Method == http.MethodConnect
}

// restoreBody gives the next handler the (possibly rewritten) body, with
// GetBody so reverse_proxy can retry it.
func restoreBody(r *http.Request, body []byte) {
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	setContentLength(r.Header, len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
}

// setContentLength sets the Content-Length header to n. A body passed on
// unchanged already carries it: formatting and setting it again would cost
// two allocations for nothing.
func setContentLength(h http.Header, n int) {
	var b [20]byte
	if cl := h["Content-Length"]; len(cl) != 1 || cl[0] != string(strconv.AppendInt(b[:0], int64(n), 10)) {
		h.Set("Content-Length", strconv.Itoa(n))
	}
}

func toFormatEdits(edits []scanner.Edit) []format.Edit {
	out := make([]format.Edit, len(edits))
	for i, e := range edits {
		out[i] = format.Edit{Ref: e.Ref, Text: e.Text}
	}
	return out
}

const (
	onBlockError      = "error"
	onBlockCompletion = "completion"
)

// settingsJSON is the scanner configuration that ran, as served by
// GET /prompts/{id}?fetchScanners=true.
func (ep *compiledEndpoint) settingsJSON() string {
	ep.settingsOnce.Do(func() {
		out := make([]policy.SettingStrings, 0, len(ep.settings))
		for _, s := range ep.settings {
			out = append(out, policy.Strings(s))
		}
		b, _ := json.Marshal(out)
		ep.settingsStr = string(b)
	})
	return ep.settingsStr
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
)

// providerID is the configured provider's id, "" for a label-only name.
func (h *Handler) providerID() string {
	if h.prov == nil {
		return ""
	}
	return h.prov.cfg.ID
}

// restorePlaceholders puts the values a redacted request hid back into the
// answer's texts.
func (x *exchange) restorePlaceholders(answer []byte, conv *scanner.Conversation) ([]byte, error) {
	var edits []format.Edit
	for _, m := range conv.Messages {
		if restored := x.vault.Restore(m.Text); restored != m.Text {
			edits = append(edits, format.Edit{Ref: m.Ref, Text: restored})
		}
	}
	if len(edits) == 0 {
		return answer, nil
	}
	return x.format.RewriteResponse(answer, edits)
}

// callNext runs the next handler. reverse_proxy aborts a response whose body
// it can no longer copy with panic(http.ErrAbortHandler); when the stream
// screener ended the stream itself (a block), that abort is expected: it is
// recovered so the screener is waited for and the exchange recorded before
// the connection is torn down. Any other panic goes on unchanged.
func callNext(next caddyhttp.Handler, w http.ResponseWriter, r *http.Request, streaming func() bool) (err error) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler && streaming() {
				err = errStreamEnded
				return
			}
			panic(v)
		}
	}()
	return next.ServeHTTP(w, r)
}
