package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/promptwall/promptwall/auth"
	"github.com/promptwall/promptwall/guardrail"
	"github.com/promptwall/promptwall/internal/reqhead"
	"github.com/promptwall/promptwall/policy"
	"github.com/promptwall/promptwall/record"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/store"
)

func init() {
	caddy.RegisterModule(new(GuardrailHandler))
	httpcaddyfile.RegisterHandlerDirective("promptwall_guardrail", parseGuardrailDirective)
	httpcaddyfile.RegisterDirectiveOrder("promptwall_guardrail", httpcaddyfile.Before, "reverse_proxy")
}

// GuardrailHandler answers the guardrail APIs other gateways call
// (`promptwall_guardrail` directive): Prompt Security's /api/protect,
// LiteLLM's /beta/litellm_basic_guardrail_api, a Portkey webhook and Bedrock's
// /guardrail/{id}/version/{v}/apply. It screens the texts with an endpoint's
// scanners, records a scan (screened, never forwarded) attributed to the
// token's user with the caller's metadata, counts it in the metrics, and
// answers in the caller's shape. It is terminal: nothing is passed on.
type GuardrailHandler struct {
	// Endpoint names the endpoint configuration whose scanners screen the
	// texts. Default: "default".
	Endpoint string `json:"endpoint,omitempty"`
	// Shape fixes the API answered on this route: "prompt_security",
	// "litellm", "portkey" or "bedrock". Default: chosen by the request
	// path's end (/api/protect, /beta/litellm_basic_guardrail_api,
	// /portkey/webhook, /guardrail/{id}/version/{v}/apply).
	Shape string `json:"shape,omitempty"`
	// MaxBodySize caps the request body in bytes; a larger one gets 413.
	// Default: 4 MiB.
	MaxBodySize int64 `json:"max_body_size,omitempty"`
	// ProjectID attributes the route's records to a project. Default: the
	// endpoint's project.
	ProjectID string `json:"project_id,omitempty"`

	app     *App
	ep      *compiledEndpoint
	shape   guardrail.Shape
	project string
	// metrics holds one route's collectors per shape: the shape is the
	// provider label (as "guardrail/<shape>"), a bounded set.
	metrics map[string]*routeMetrics
	logger  *zap.Logger
}

// CaddyModule returns the Caddy module information.
func (*GuardrailHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.promptwall_guardrail", New: func() caddy.Module { return new(GuardrailHandler) }}
}

// Provision resolves the endpoint and the shape.
func (g *GuardrailHandler) Provision(ctx caddy.Context) error {
	g.logger = ctx.Logger()
	var err error
	if g.app, err = loadApp(ctx); err != nil {
		return err
	}
	if g.Endpoint == "" {
		g.Endpoint = DefaultEndpointName
	}
	if g.MaxBodySize == 0 {
		g.MaxBodySize = defaultMaxBodySize
	}
	if g.ep, err = g.app.endpoint(g.Endpoint); err != nil {
		return err
	}
	if g.Shape != "" {
		if g.shape, err = guardrail.ByName(g.Shape); err != nil {
			return err
		}
	}
	g.project = g.ProjectID
	if g.project == "" {
		g.project = g.ep.ProjectID
	}
	g.metrics = make(map[string]*routeMetrics, len(guardrail.Names))
	for _, name := range guardrail.Names {
		g.metrics[name] = newRouteMetrics(g.app.metrics, routeLabels{provider: "guardrail/" + name, project: g.project, endpoint: g.ep.Name})
	}
	return nil
}

// Validate checks the configuration.
func (g *GuardrailHandler) Validate() error {
	if g.MaxBodySize < 0 {
		return errors.New("max_body_size must be positive")
	}
	return nil
}

// guardrailCredentialHeaders are where the callers put the guardrail's key:
// APP-ID (Prompt Security), Authorization: Bearer (LiteLLM's headers,
// Portkey's webhook headers, Bedrock's api_key), api-key and x-api-key.
var guardrailCredentialHeaders = []string{"App-Id", "Api-Key", "X-Api-Key"}

// guardrailToken finds the Promptwall token where the caller sends its
// guardrail key. Query parameters are not read: URLs end up in logs.
func guardrailToken(r *http.Request) string {
	tok, _ := headerToken(r, guardrailCredentialHeaders)
	return tok
}

// ServeHTTP screens one caller's texts and answers in its shape.
func (g *GuardrailHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	received := time.Now()
	shape, who, err := g.admit(w, r)
	if err != nil {
		return g.refuse(w, err)
	}
	check, err := g.parse(w, r, shape)
	if err != nil {
		return g.refuse(w, err)
	}
	return g.refuse(w, g.answer(w, r, received, shape, who, check))
}

// admit picks the API shape served at the path and checks the method, the
// token and the content type.
func (g *GuardrailHandler) admit(w http.ResponseWriter, r *http.Request) (guardrail.Shape, auth.Principal, error) {
	shape := g.shape
	if shape == nil {
		if shape = guardrail.ForPath(r.URL.Path); shape == nil {
			return nil, auth.Principal{}, &refusal{reason: "unsupported", status: http.StatusNotFound, code: "not_found",
				message: "No guardrail API is served at this path: use /api/protect, /beta/litellm_basic_guardrail_api, /portkey/webhook or /guardrail/{id}/version/{version}/apply."}
		}
	}
	if msg := reqhead.Check(r); msg != "" {
		return nil, auth.Principal{}, &refusal{reason: "too_large", status: http.StatusRequestHeaderFieldsTooLarge, code: reqhead.Code, message: msg}
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return nil, auth.Principal{}, &refusal{reason: "unsupported", status: http.StatusMethodNotAllowed, code: "method_not_allowed", message: "Guardrail checks are sent with POST."}
	}
	who, err := g.app.auth.Authenticate(guardrailToken(r))
	if err != nil && !errors.Is(err, auth.ErrInvalidToken) {
		g.logger.Error("checking a guardrail token", zap.Error(err))
		if rf := g.app.storeRefusal(err, ""); rf.status == http.StatusServiceUnavailable {
			rf.message = "Promptwall cannot reach its store right now; retry shortly."
			return nil, auth.Principal{}, rf
		}
		return nil, auth.Principal{}, &refusal{status: http.StatusInternalServerError, code: "internal_error", message: "The token could not be checked."}
	}
	if err != nil {
		w.Header().Set("WWW-Authenticate", "Bearer")
		return nil, auth.Principal{}, &refusal{reason: "unauthenticated", status: http.StatusUnauthorized, code: "unauthorized",
			message: "A valid Promptwall token is required (Authorization: Bearer, APP-ID or api-key header)."}
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		if err := checkContentType(ct); err != nil {
			return nil, auth.Principal{}, &refusal{reason: "malformed", status: http.StatusUnsupportedMediaType, code: "unsupported_media_type", message: err.Error()}
		}
	}
	return shape, who, nil
}

// parse reads the body (capped) and parses it as a check of the shape.
func (g *GuardrailHandler) parse(w http.ResponseWriter, r *http.Request, shape guardrail.Shape) (*guardrail.Check, error) {
	body, rf := g.readBody(w, r)
	if rf != nil {
		return nil, rf
	}
	check, err := shape.Parse(r.URL.Path, body)
	if err != nil {
		if ge, ok := errors.AsType[*guardrail.Error](err); ok {
			return nil, &refusal{reason: "malformed", status: ge.Status, code: ge.Code, message: ge.Message, param: ge.Param}
		}
		return nil, &refusal{reason: "malformed", status: http.StatusBadRequest, code: "invalid_parameter", message: err.Error()}
	}
	return check, nil
}

// answer reserves the check's record, screens it, records it as a scan and
// writes the verdict in the shape's own form.
func (g *GuardrailHandler) answer(w http.ResponseWriter, r *http.Request, received time.Time, shape guardrail.Shape, who auth.Principal, check *guardrail.Check) error {
	res, err := g.app.shared.store.Reserve(r.Context())
	if err != nil {
		g.logger.Error("refusing guardrail check: its record cannot be queued", zap.Error(err))
		rf := g.app.reserveRefusal(err)
		rf.message = "Promptwall cannot record checks right now; retry shortly."
		return rf
	}
	id := store.NewID()
	start := time.Now()
	result := g.ep.pipeline.Screen(r.Context(), &check.Conversation, check.Direction)
	g.metrics[shape.Name()].observeResult(check.Direction, result, time.Since(start))
	answer, err := shape.Answer(check, guardrail.VerdictOf(result, policy.DefaultFlagMessage, id))
	if err != nil {
		res.Cancel()
		g.logger.Error("rendering guardrail answer", zap.String("shape", shape.Name()), zap.Error(err))
		return &refusal{status: http.StatusInternalServerError, code: "internal_error", message: "The check could not be answered."}
	}
	g.commitScan(res, id, received, who, check, result)
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("X-Promptwall-Prompt-Id", id)
	setContentLength(hdr, len(answer))
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(answer)
	return err
}

// readBody reads the capped, UTF-8 body.
func (g *GuardrailHandler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *refusal) {
	tooLarge := &refusal{reason: "too_large", status: http.StatusRequestEntityTooLarge, code: "request_too_large",
		message: fmt.Sprintf("The request body exceeds the limit of %d bytes.", g.MaxBodySize)}
	if r.ContentLength > g.MaxBodySize {
		return nil, tooLarge
	}
	buf := getBuf()
	defer putBuf(buf)
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, g.MaxBodySize)); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, tooLarge
		}
		return nil, &refusal{reason: "malformed", status: http.StatusBadRequest, code: "invalid_request", message: "The request body could not be read."}
	}
	if !utf8.Valid(buf.Bytes()) {
		return nil, &refusal{reason: "malformed", status: http.StatusBadRequest, code: "invalid_json", message: "The request body is not valid UTF-8."}
	}
	return append([]byte(nil), buf.Bytes()...), nil
}

// refuse writes err if it is a refusal, in the guardrail APIs' error
// shape, counted like the gateway's refusals; any other error (nil
// included) is returned unchanged.
func (g *GuardrailHandler) refuse(w http.ResponseWriter, err error) error {
	rf, ok := err.(*refusal)
	if !ok {
		return err
	}
	if rf.reason != "" {
		g.app.metrics.rejected.WithLabelValues(rf.reason).Inc()
	}
	hdr := w.Header()
	if rf.retryAfter != "" {
		hdr.Set("Retry-After", rf.retryAfter)
	}
	b := (&guardrail.Error{Status: rf.status, Code: rf.code, Message: rf.message, Param: rf.param}).JSON()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(rf.status)
	_, err = w.Write(b)
	return err
}

// commitScan records a check as a scan: screened, never forwarded. The
// input is the newest user text of a prompt, the response the screened
// answer texts, both masked where a scanner found something sensitive.
// Non-blocking scanners run after the answer went out, then the record is
// committed.
func (g *GuardrailHandler) commitScan(res *store.Reservation, id string, received time.Time, who auth.Principal, c *guardrail.Check, result *scanner.Result) {
	org := who.OrgID
	if org == "" {
		org = defaultOrgID()
	}
	p := store.Prompt{
		PromptFields: store.PromptFields{
			ID:               id,
			Type:             store.TypeScan,
			OrgID:            org,
			UserID:           who.UserID,
			ProjectID:        g.project,
			ReceivedAt:       store.Timestamp(received),
			ExternalMetadata: c.Metadata.JSON(),
		},
		EndpointID: g.ep.ID,
		Scanners:   g.ep.settingsJSON(),
	}
	p.Memory = p.ID
	conv := &c.Conversation
	shown := record.NewestUserMessage(conv)
	if c.Direction == scanner.Input {
		p.Input = record.Text(conv, shown, result)
	} else {
		var answer []string
		shown = -1
		for i, m := range conv.Messages {
			if m.Role == scanner.RoleAssistant {
				if shown < 0 {
					shown = i
				}
				answer = append(answer, record.Text(conv, i, result))
			}
		}
		p.Result.Response = strings.Join(answer, "\n")
	}
	p.Result.ScannerResults = record.ScannerResults(result, shown)
	p.Result.Outcome = string(c.Enforced(result.Outcome))
	if !g.ep.hasDeferred {
		res.Commit(&p)
		return
	}
	go func() {
		record.AddDeferred(&p, g.ep.pipeline.ScreenDeferred(context.Background(), conv, c.Direction), shown)
		res.Commit(&p)
	}()
}

func parseGuardrailDirective(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	m := new(GuardrailHandler)
	if err := m.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	return m, nil
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens:
//
//	promptwall_guardrail [<shape>] {
//	    shape         prompt_security|litellm|portkey|bedrock
//	    endpoint      <name>
//	    max_body_size <size>
//	    project       <id>
//	}
func (g *GuardrailHandler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	err := parseDirective(d, "shape", &g.Shape, func(key string) error {
		var err error
		switch key {
		case "endpoint":
			err = parseStringArg(d, &g.Endpoint)
		case "max_body_size":
			g.MaxBodySize, err = parseSizeArg(d)
		case "project":
			err = parseStringArg(d, &g.ProjectID)
		default:
			return d.Errf("unknown promptwall_guardrail sub-directive %q", key)
		}
		return err
	})
	if err != nil {
		return err
	}
	if g.Shape != "" {
		if _, err := guardrail.ByName(g.Shape); err != nil {
			return d.Err(err.Error())
		}
	}
	return nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*GuardrailHandler)(nil)
	_ caddy.Validator             = (*GuardrailHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*GuardrailHandler)(nil)
	_ caddyfile.Unmarshaler       = (*GuardrailHandler)(nil)
)
