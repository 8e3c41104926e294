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

	"github.com/promptwall/promptwall/format"
	"github.com/promptwall/promptwall/limits"
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
	// providerResultLimit bounds the raw upstream answer kept in a record.
	providerResultLimit = 64 << 10
)

// Provision resolves the endpoint and the wire format.
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	appIface, err := ctx.App("promptwall")
	if err != nil {
		return fmt.Errorf("loading promptwall app: %w", err)
	}
	h.app = appIface.(*App)
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
	who            principal
	// vault holds the placeholders of a redacted request when the endpoint
	// restores them in the answer.
	vault *scanner.Vault
	// ss screens a streamed answer; nil for an answer that is not one.
	ss *streamScreening
	// ic wraps the client's writer for the next handler. It lives in the
	// exchange so that one allocation holds a request's state.
	ic interceptor
}

// ServeHTTP screens, forwards and records one request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	// Requests without a body carry no prompt (model listings, health
	// checks): nothing to screen, nothing to record.
	if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions {
		if hasBody(r) {
			return h.refuseBodylessMethod(w, r)
		}
		return next.ServeHTTP(w, r)
	}
	// errFmt picks the error shape of a request refused before its format
	// is known; only refusals pay for it.
	errFmt := func() format.Format { return h.errorFormat(r.URL.Path) }
	var who principal
	if h.Authenticate {
		if tokenInQuery(r) {
			h.app.metrics.rejected.WithLabelValues("unauthenticated").Inc()
			return h.writeError(w, errFmt(), http.StatusUnauthorized, "invalid_api_key", errTokenInQuery)
		}
		var err error
		if who, err = h.authenticate(r); err != nil {
			h.app.metrics.rejected.WithLabelValues("unauthenticated").Inc()
			return h.writeError(w, errFmt(), http.StatusUnauthorized, "invalid_api_key", errBadToken.Error()+".")
		}
		// The token goes no further than this handler.
		useProviderKey(r, h.prov)
	}
	if isUpgrade(r) {
		if h.passes(passUpgrade) {
			return h.passUnscreened(w, r, next, who, "connection upgrade")
		}
		h.app.metrics.rejected.WithLabelValues("unsupported").Inc()
		return h.writeError(w, errFmt(), http.StatusBadRequest, "unsupported_request",
			"Connection upgrades (WebSocket, realtime) cannot be screened by this gateway.")
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		// Parsing the media type costs allocations; the usual exact
		// application/json needs none of it.
		if isMultipart(ct) {
			if h.passes(passMultipart) {
				return h.passUnscreened(w, r, next, who, "multipart upload")
			}
			h.app.metrics.rejected.WithLabelValues("unsupported").Inc()
			return h.writeError(w, errFmt(), http.StatusUnsupportedMediaType, "unsupported_request",
				"Multipart uploads cannot be screened by this gateway.")
		}
		if err := checkContentType(ct); err != nil {
			h.app.metrics.rejected.WithLabelValues("malformed").Inc()
			return h.writeError(w, errFmt(), http.StatusBadRequest, "invalid_request_error", err.Error())
		}
	}
	if r.ContentLength > h.MaxBodySize {
		h.app.metrics.rejected.WithLabelValues("too_large").Inc()
		return h.writeError(w, errFmt(), http.StatusRequestEntityTooLarge, "request_too_large", h.tooLargeMessage())
	}

	body := getBuf()
	defer putBuf(body)
	clearDeadline := h.bodyDeadline(w)
	_, err := body.ReadFrom(http.MaxBytesReader(w, r.Body, h.MaxBodySize))
	clearDeadline()
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			h.app.metrics.rejected.WithLabelValues("too_large").Inc()
			return h.writeError(w, errFmt(), http.StatusRequestEntityTooLarge, "request_too_large", h.tooLargeMessage())
		}
		return h.writeBodyError(w, errFmt(), err)
	}
	raw := body.Bytes()
	if !utf8.Valid(raw) {
		h.app.metrics.rejected.WithLabelValues("malformed").Inc()
		return h.writeError(w, errFmt(), http.StatusBadRequest, "invalid_request_error", "The request body is not valid UTF-8.")
	}

	x := &exchange{h: h, received: time.Now(), who: who}
	if h.format != nil {
		x.format = format.Bind(h.format, r.URL.Path)
	} else {
		f, err := format.Detect(r.URL.Path, raw)
		if err != nil {
			if h.passes(passUnknownFormat) {
				restoreBody(r, bytes.Clone(raw))
				return h.passUnscreened(w, r, next, who, "unknown wire format")
			}
			h.app.metrics.rejected.WithLabelValues("unsupported").Inc()
			return h.writeError(w, errFmt(), http.StatusBadRequest, "unsupported_request",
				"The request's API format is not one the gateway can screen.")
		}
		x.format = f
	}
	req, err := x.format.ParseRequest(raw)
	if err != nil {
		h.app.metrics.rejected.WithLabelValues("malformed").Inc()
		return h.writeFormatError(w, x.format, err)
	}
	x.req = req
	x.conv = &req.Conversation

	// Reserve the record's place before anything reaches the provider, so a
	// store that cannot keep up refuses the request instead of losing it.
	x.res, err = h.app.shared.store.Reserve(r.Context())
	if err != nil {
		h.app.metrics.rejected.WithLabelValues("store_full").Inc()
		h.logger.Error("refusing request: record queue full", zap.Error(err))
		w.Header().Set("Retry-After", "1")
		return h.writeError(w, x.format, http.StatusServiceUnavailable, "service_unavailable",
			"The gateway cannot record requests right now; retry shortly.")
	}
	committed := false
	defer func() {
		if !committed {
			x.res.Cancel()
		}
	}()
	var gate *commitGate
	if w, gate = h.gateWrites(w); gate != nil {
		defer gate.release(r.Context(), x.res, h.logger)
	}
	x.id = store.NewID()
	repl := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	repl.Set("promptwall.prompt_id", x.id)
	w.Header().Set("X-Promptwall-Prompt-Id", x.id)

	start := time.Now()
	if h.ep.RestorePlaceholders {
		x.vault = new(scanner.Vault)
	}
	x.input = h.ep.pipeline.ScreenWith(r.Context(), x.conv, scanner.Input, x.vault)
	h.metrics.observeResult(scanner.Input, x.input, time.Since(start))
	repl.Set("promptwall.outcome", outcomeValue(x.input.Outcome))

	if x.input.Outcome == scanner.Blocked {
		committed = true
		x.commit()
		return h.writeBlocked(w, x, x.input.FlagMessage)
	}
	if x.input.Outcome == scanner.Modified && len(x.input.Edits) > 0 {
		rewritten, err := x.format.RewriteRequest(raw, toFormatEdits(x.input.Edits))
		if err != nil {
			// A redaction that cannot be written back must not forward the
			// unredacted original.
			h.logger.Error("rewriting redacted request", zap.Error(err))
			committed = true
			x.upstreamErr = err
			x.commit()
			return h.writeError(w, x.format, http.StatusInternalServerError, "internal_error", "The request could not be redacted.")
		}
		raw = rewritten
	}

	// The provider's limits count upstream calls: take them only for a
	// request that is going upstream, and hold them until its answer is
	// fully written (streams included).
	release, err := h.acquire(r.Context())
	if err != nil {
		h.app.metrics.rejected.WithLabelValues("provider_limit").Inc()
		if h.recordRefusal() {
			committed = true
			x.upstreamErr = err
			x.commit()
		}
		return h.writeLimited(w, x, err)
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
	ic.wrap(w, held, int(h.MaxResponseSize), providerResultLimit, h.hold)
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

	committed = true
	if ss := x.ss; ss != nil {
		out := ss.wait()
		x.streamed(out)
		x.commit()
		if out.Blocked || ss.err != nil {
			// The status is sent; a cut stream ends the response. The
			// upstream copy's error is the pipe we closed, not a failure.
			return nil
		}
		return err
	}
	if ic.overflow {
		x.upstreamErr = errResponseTooLarge
		x.commit()
		return h.writeError(w, x.format, http.StatusBadGateway, "upstream_error",
			"The provider's answer is too large to be screened.")
	}
	if err != nil {
		x.upstreamErr = err
		x.commit()
		return err
	}
	if ic.holding {
		err = h.finishHeld(r.Context(), w, x, ic)
		x.commit()
		return err
	}
	x.providerResult = ic.buf.String()
	x.commit()
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

// finishHeld screens a held answer and writes what the client may see.
func (h *Handler) finishHeld(ctx context.Context, w http.ResponseWriter, x *exchange, ic *interceptor) error {
	answer := ic.buf.Bytes()
	x.providerResult = string(truncate(answer, providerResultLimit))
	if enc := ic.Header().Get("Content-Encoding"); enc != "" && enc != "identity" {
		decoded, err := decodeBody(enc, answer, int(h.MaxResponseSize))
		if err != nil {
			x.upstreamErr = err
			return h.writeError(w, x.format, http.StatusBadGateway, "upstream_error",
				"The provider's answer is compressed ("+enc+") in a way the gateway cannot screen.")
		}
		answer = decoded
		ic.Header().Del("Content-Encoding")
		x.providerResult = string(truncate(answer, providerResultLimit))
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
		return h.writeError(w, x.format, http.StatusBadGateway, "upstream_error",
			"The provider's answer could not be screened.")
	}
	x.outConv = conv
	start := time.Now()
	x.output = h.ep.pipeline.Screen(ctx, conv, scanner.Output)
	h.metrics.observeResult(scanner.Output, x.output, time.Since(start))
	switch x.output.Outcome {
	case scanner.Blocked:
		return h.writeBlocked(w, x, x.output.FlagMessage)
	case scanner.Modified:
		rewritten, err := x.format.RewriteResponse(answer, toFormatEdits(x.output.Edits))
		if err != nil {
			x.upstreamErr = err
			return h.writeError(w, x.format, http.StatusBadGateway, "upstream_error", "The provider's answer could not be redacted.")
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

// commit fills the reserved record and hands it to the store. Non-blocking
// scanners run here, after the client has its answer, then the record is
// committed.
func (x *exchange) commit() {
	h := x.h
	org := x.who.orgID
	if org == "" {
		org = defaultOrgID()
	}
	// p stays on this goroutine's stack unless deferred scanners need it
	// later: the store encodes it before Commit returns.
	p := store.Prompt{
		ID:         x.id,
		Type:       "prompt",
		OrgID:      org,
		UserID:     x.who.userID,
		ProjectID:  h.labels.project,
		Provider:   h.Provider,
		ProviderID: h.providerID(),
		EndpointID: h.ep.ID,
		ReceivedAt: store.Timestamp(x.received),
	}
	p.Memory = p.ID
	shown := record.NewestUserMessage(x.conv)
	p.Input = record.Text(x.conv, shown, x.input)
	results := make([]store.ScannerResult, 0, scannerCount(x.input)+scannerCount(x.output))
	p.Result.ScannerResults = record.AppendScannerResults(record.AppendScannerResults(results, x.input, shown), x.output, 0)
	// The answer, raw or parsed, may echo what the scanners found on
	// either side (a model repeating the user's address).
	sensitive := append(record.SensitiveValues(x.conv, x.input), record.SensitiveValues(x.outConv, x.output)...)
	p.Result.Response = record.MaskValues(record.Response(x.outConv, x.output), sensitive)
	p.Result.ProviderResult = record.MaskValues(truncate(x.providerResult, providerResultLimit), sensitive)
	p.Result.Outcome = string(worst(x.input, x.output))
	if x.upstreamErr != nil && x.input.Outcome != scanner.Blocked {
		p.Result.Outcome = string(scanner.Error)
		p.Result.ProviderResult = "upstream error: " + x.upstreamErr.Error()
		if _, limited := errors.AsType[*limits.LimitError](x.upstreamErr); limited {
			p.Result.ProviderResult = "not forwarded: " + x.upstreamErr.Error()
		}
	}
	p.Scanners = h.ep.settingsJSON()
	if h.ep.hasDeferred {
		if h.app.shared.store.Durability() == store.DurabilitySync {
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
	deferred := x.h.ep.pipeline.ScreenDeferred(context.Background(), x.conv, scanner.Input)
	p.Result.ScannerResults = record.AppendScannerResults(p.Result.ScannerResults, deferred, shown)
	if deferred.Outcome.Severity() > scanner.Outcome(p.Result.Outcome).Severity() {
		p.Result.Outcome = string(deferred.Outcome)
	}
	if err := x.res.Commit(&p); errors.Is(err, store.ErrReservationUsed) {
		// Committed already (durability sync): replace it.
		if err := x.h.app.shared.store.Put(context.Background(), &p); err != nil {
			x.h.logger.Error("recording deferred scanner results", zap.String("id", p.ID), zap.Error(err))
		}
	}
}

func scannerCount(res *scanner.Result) int {
	if res == nil {
		return 0
	}
	return len(res.Scanners)
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

func worst(results ...*scanner.Result) scanner.Outcome {
	out := scanner.Passed
	for _, r := range results {
		if r != nil && r.Outcome.Severity() > out.Severity() {
			out = r.Outcome
		}
	}
	return out
}

// writeBlocked answers a blocked exchange as the endpoint says: the
// provider's error shape, or a normal completion carrying the message.
func (h *Handler) writeBlocked(w http.ResponseWriter, x *exchange, message string) error {
	if message == "" {
		message = defaultFlagMessage
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

func (h *Handler) writeFormatError(w http.ResponseWriter, f format.Format, err error) error {
	if fe, ok := errors.AsType[*format.Error](err); ok {
		return h.writeError(w, f, fe.Status, fe.Code, fe.Message)
	}
	return h.writeError(w, f, http.StatusBadRequest, "invalid_request_error", err.Error())
}

func (h *Handler) tooLargeMessage() string {
	return fmt.Sprintf("The request body exceeds the gateway's limit of %d bytes.", h.MaxBodySize)
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
func (h *Handler) passUnscreened(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, who principal, why string) error {
	res, err := h.app.shared.store.Reserve(r.Context())
	if err != nil {
		h.app.metrics.rejected.WithLabelValues("store_full").Inc()
		w.Header().Set("Retry-After", "1")
		return h.writeError(w, h.errorFormat(r.URL.Path), http.StatusServiceUnavailable, "service_unavailable",
			"The gateway cannot record requests right now; retry shortly.")
	}
	now := time.Now()
	skipped := &scanner.Result{Outcome: scanner.Passed}
	for _, st := range h.ep.settings {
		skipped.Scanners = append(skipped.Scanners, scanner.ScannerResult{
			ScannerID: st.ID, Version: st.Version, Direction: scanner.Input, Outcome: scanner.Skipped,
			Started: now, Completed: now, Reason: "passed through unscreened (operator's pass_through): " + why,
		})
	}
	x := &exchange{h: h, id: store.NewID(), received: now, conv: &scanner.Conversation{}, input: skipped, res: res, who: who}
	w.Header().Set("X-Promptwall-Prompt-Id", x.id)
	h.metrics.observeResult(scanner.Input, skipped, 0)
	release, err := h.acquire(r.Context())
	if err != nil {
		x.upstreamErr = err
		x.commit()
		return h.writeLimited(w, x, err)
	}
	defer release()
	err = next.ServeHTTP(w, r)
	if err != nil {
		x.upstreamErr = err
	}
	x.commit()
	return err
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

func truncate[T string | []byte](s T, n int) T {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary so the stored text stays valid UTF-8.
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

const (
	onBlockError      = "error"
	onBlockCompletion = "completion"
)

// settingsJSON is the scanner configuration that ran, as served by
// GET /prompts/{id}?fetchScanners=true.
func (ep *compiledEndpoint) settingsJSON() string {
	ep.settingsOnce.Do(func() {
		out := make([]scanner.SettingStrings, 0, len(ep.settings))
		for _, s := range ep.settings {
			out = append(out, s.Strings())
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
