package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/promptwall/promptwall/format"
	"github.com/promptwall/promptwall/limits"
	"github.com/promptwall/promptwall/provider"
	"github.com/promptwall/promptwall/record"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/store"
)

// maxJSONBody caps the JSON bodies of the API's POST and PATCH routes.
const maxJSONBody = 1 << 20

// promptDeps are the parts of Config that POST /prompts, the providers
// list and the chat routes use.
type promptDeps struct {
	providers ProviderSource
	screener  Screener
	sender    Sender
	limits    limits.Set
	limitWait time.Duration
}

func (h *Handler) registerPrompts(cfg Config) {
	h.prompts = promptDeps{providers: cfg.Providers, screener: cfg.Screener, sender: cfg.Sender,
		limits: cfg.Limits, limitWait: cfg.LimitWait}
	if h.prompts.sender == nil {
		h.prompts.sender = &provider.Client{}
	}
	if h.prompts.limitWait == 0 {
		h.prompts.limitWait = defaultLimitWait
	} else if h.prompts.limitWait < 0 {
		h.prompts.limitWait = 0
	}
	h.mux.Handle("GET /backend/v1/providers", h.route(h.listProviders))
	h.mux.Handle("POST /backend/v1/prompts", h.route(h.sendPrompt))
	h.mux.Handle("POST /backend/v1/chats", h.route(h.createChat))
	h.mux.Handle("GET /backend/v1/chats/{chatId}", h.route(h.getChat))
	h.mux.Handle("PATCH /backend/v1/chats/{chatId}", h.route(h.updateChat))
	h.mux.Handle("POST /backend/v1/prompts/templates", h.route(h.createTemplate))
	h.mux.Handle("GET /backend/v1/prompts/templates/{promptTemplateId}", h.route(h.getTemplate))
}

// decodeBody reads a JSON request body strictly: application/json only
// (415), at most 1 MiB (413), no unknown fields, no wrong types (400 with
// the field as param), nothing after the object.
func decodeBody(w http.ResponseWriter, r *http.Request, dst any) *apiError {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return &apiError{status: http.StatusUnsupportedMediaType, code: "unsupported_media_type",
			message: "the request body must be application/json"}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return &apiError{status: http.StatusRequestEntityTooLarge, code: "request_too_large",
				message: fmt.Sprintf("the request body exceeds %d bytes", maxJSONBody)}
		}
		return badParam("", "the request body could not be read")
	}
	if !utf8.Valid(body) {
		return badParam("", "the request body is not valid UTF-8")
	}
	// encoding/json keeps the last of two keys equal but for case; the
	// gateway refuses such bodies as ambiguous, and so does the API.
	if err := format.CheckKeys(body); err != nil {
		de := err.(*format.DuplicateKeyError)
		return badParam(de.Path(), "%s", de.Error())
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			if te.Field == "" {
				return badParam("", "the request body must be a JSON object")
			}
			return badParam(te.Field, "%s must be a %s", te.Field, jsonKind(te.Type.Kind().String()))
		}
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			f = strings.Trim(f, `"`)
			return badParam(f, "unknown field %s", f)
		}
		return badParam("", "the request body is not a valid JSON object")
	}
	if dec.More() {
		return badParam("", "the request body has data after the JSON object")
	}
	return nil
}

func jsonKind(k string) string {
	switch k {
	case "bool":
		return "boolean"
	case "struct", "map":
		return "JSON object"
	case "slice":
		return "JSON array"
	}
	return k
}

// uuidParam checks that v is a canonical UUID: 36 characters, hyphenated,
// as every id the API hands out.
func uuidParam(name, v string) *apiError {
	if _, err := uuid.Parse(v); err != nil || len(v) != 36 {
		return badParam(name, "%s must be a UUID", name)
	}
	return nil
}

// SendPromptRequest is the body of POST /backend/v1/prompts. ChatName is Promptwall's extension: it starts a new chat
// named so and adds the prompt to it.
type SendPromptRequest struct {
	Input            *string `json:"input"`
	Provider         string  `json:"provider"`
	ProjectID        string  `json:"projectId"`
	EndpointID       string  `json:"endpointId"`
	ParentID         string  `json:"parentId"`
	ChatID           string  `json:"chatId"`
	ChatName         string  `json:"chatName"`
	PromptTemplateID string  `json:"promptTemplateId"`
	ExternalMetadata string  `json:"externalMetadata"`
	Preserve         bool    `json:"preserve"`
	FromTemplate     bool    `json:"fromTemplate"`
}

// SendPromptResponse is the answer of POST /backend/v1/prompts.
type SendPromptResponse struct {
	ID     string             `json:"id"`
	Result store.PromptResult `json:"result"`
	// Scanners is the JSON of the scanner settings that ran.
	Scanners string `json:"scanners"`
}

// sendPrompt serves POST /backend/v1/prompts: it builds
// the conversation (every earlier turn of the parentId chain, then the new
// input), reserves the record, screens the input, waits for the provider's
// limits, sends, screens the answer and records the exchange.
//
// A block is a screening result, not an HTTP error: the answer is 200 with
// result.outcome "blocked", result.response "" and the flag message in
// result.analysis. Failures after the record was reserved keep the record
// (outcome "error", the reason in providerResult) and answer in the API
// error shape with error.promptId: 429 (limits, with Retry-After), 502
// (provider or template failed) or 504 (provider timed out).
func (h *Handler) sendPrompt(w http.ResponseWriter, r *http.Request, p Principal) *apiError {
	if aerr := noQuery(r); aerr != nil {
		return aerr
	}
	var req SendPromptRequest
	if aerr := decodeBody(w, r, &req); aerr != nil {
		return aerr
	}
	if aerr := req.check(); aerr != nil {
		return aerr
	}
	plan, aerr := h.planPrompt(p, &req)
	if aerr != nil {
		return aerr
	}
	res, err := h.store.Reserve(r.Context())
	if err != nil {
		w.Header().Set("Retry-After", "1")
		return &apiError{status: http.StatusServiceUnavailable, code: CodeUnavailable,
			message: "prompts cannot be recorded right now; retry shortly", cause: err}
	}
	defer res.Cancel()
	x := plan.exchange(p)
	failure := h.runPrompt(w, r, plan, x)
	return h.finishPrompt(w, r, p, res, plan, x, failure)
}

// check rejects a request that no stored state could make valid.
func (req *SendPromptRequest) check() *apiError {
	if req.Input == nil || *req.Input == "" {
		return badParam("input", "input is required")
	}
	if req.Provider == "" {
		return badParam("provider", "provider is required (its id or name)")
	}
	if req.ChatID != "" && req.ChatName != "" {
		return badParam("chatName", "give chatId to continue a chat or chatName to start one, not both")
	}
	for _, f := range []struct{ name, v string }{{"parentId", req.ParentID}, {"chatId", req.ChatID}, {"promptTemplateId", req.PromptTemplateID}} {
		if f.v != "" {
			if aerr := uuidParam(f.name, f.v); aerr != nil {
				return aerr
			}
		}
	}
	return nil
}

// promptPlan is what a POST /prompts resolved to before its record is
// reserved: where it goes, what it continues, and the conversation sent.
type promptPlan struct {
	req     *SendPromptRequest
	cfg     *provider.Config
	ep      ScreenEndpoint
	project string
	chat    *store.Chat
	tmpl    *store.PromptTemplate
	chain   []*store.Prompt
	// msgs is the conversation sent to the provider: each earlier turn's
	// input and the answer it got, then the new input.
	msgs []provider.Message
}

// planPrompt resolves the provider, the endpoint, and the chat, template
// and earlier prompts the request names, each as the caller may see it.
func (h *Handler) planPrompt(p Principal, req *SendPromptRequest) (*promptPlan, *apiError) {
	deps := &h.prompts
	if deps.providers == nil || deps.screener == nil {
		return nil, &apiError{status: http.StatusServiceUnavailable, code: CodeUnavailable, message: "no providers are configured"}
	}
	plan := &promptPlan{req: req}
	var ok bool
	if plan.cfg, ok = deps.providers.Provider(p.OrgID, req.Provider); !ok {
		return nil, badParam("provider", "no provider has that id or name")
	}
	if plan.cfg.Disabled {
		return nil, badParam("provider", "the provider is disabled")
	}
	if plan.ep, ok = deps.screener.ScreenEndpoint(req.EndpointID); !ok {
		return nil, badParam("endpointId", "no endpoint has that id or name")
	}
	plan.project = req.ProjectID
	if plan.project == "" {
		plan.project = plan.ep.ProjectID
	}
	if plan.project != "" && !plan.cfg.AvailableTo(plan.project) {
		return nil, badParam("provider", "the provider is not available to project %s", plan.project)
	}
	var aerr *apiError
	if req.ChatID != "" {
		if plan.chat, aerr = h.readableChat(req.ChatID, p); aerr != nil {
			return nil, aerr
		}
	}
	if req.PromptTemplateID != "" {
		if plan.tmpl, aerr = h.readableTemplate(req.PromptTemplateID, p); aerr != nil {
			return nil, aerr
		}
	}
	if req.ParentID != "" {
		if plan.chain, aerr = h.readableChain(req.ParentID, p, plan.chat); aerr != nil {
			return nil, aerr
		}
	}
	plan.msgs = conversation(plan.chain, *req.Input)
	return plan, nil
}

// readableChain returns the prompts from the root of parentID's
// conversation down to it, with the same visibility as GET /prompts/{id},
// widened to the prompts of a chat the caller may read and is continuing.
func (h *Handler) readableChain(parentID string, p Principal, chat *store.Chat) ([]*store.Prompt, *apiError) {
	notFound := &apiError{status: http.StatusNotFound, code: CodeNotFound, param: "parentId", message: "no prompt with that parentId"}
	chain, err := h.store.Chain(parentID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound
	}
	if err != nil {
		return nil, internal(err)
	}
	leaf := chain[len(chain)-1]
	inChat := chat != nil && leaf.ChatID == chat.ID
	if !mayRead(p, leaf) && !(inChat && leaf.OrgID == p.OrgID) {
		return nil, notFound
	}
	return chain, nil
}

// conversation is each earlier turn's input and the answer it got (none
// for a blocked turn, whose answer never reached the user), then the new
// input.
func conversation(chain []*store.Prompt, input string) []provider.Message {
	msgs := make([]provider.Message, 0, 2*len(chain)+1)
	for _, c := range chain {
		msgs = append(msgs, provider.Message{Role: "user", Content: c.Input})
		if c.Result.Response != "" && c.Result.Outcome != string(scanner.Blocked) {
			msgs = append(msgs, provider.Message{Role: "assistant", Content: c.Result.Response})
		}
	}
	return append(msgs, provider.Message{Role: "user", Content: input})
}

// exchange starts the record of the planned prompt.
func (plan *promptPlan) exchange(p Principal) *promptExchange {
	req := plan.req
	conv := &scanner.Conversation{Messages: make([]scanner.Message, len(plan.msgs))}
	for i, m := range plan.msgs {
		conv.Messages[i] = scanner.Message{Role: scanner.Role(m.Role), Text: m.Content}
	}
	x := &promptExchange{
		rec: &store.Prompt{
			PromptFields: store.PromptFields{
				ID: store.NewID(), Type: store.TypePrompt, OrgID: p.OrgID, UserID: p.UserID, ProjectID: plan.project,
				Provider: plan.cfg.Name, ParentID: req.ParentID, ExternalMetadata: req.ExternalMetadata,
				Preserve: req.Preserve, FromTemplate: req.FromTemplate, ReceivedAt: store.Timestamp(time.Now().UTC()),
			},
			ProviderID: plan.cfg.ID, EndpointID: plan.ep.ID, PromptTemplateID: req.PromptTemplateID, Scanners: plan.ep.Scanners,
		},
		conv: conv,
	}
	x.rec.Memory = x.rec.ID
	if len(plan.chain) > 0 {
		x.rec.Memory = plan.chain[0].ID
	}
	if plan.chat != nil {
		x.rec.ChatID = plan.chat.ID
	}
	return x
}

// screen runs the endpoint's blocking scanners; an endpoint without them
// passes everything.
func (plan *promptPlan) screen(ctx context.Context, conv *scanner.Conversation, dir scanner.Direction) *scanner.Result {
	if plan.ep.Screen == nil {
		return &scanner.Result{Outcome: scanner.Passed}
	}
	return plan.ep.Screen(ctx, conv, dir)
}

// runPrompt screens the input, sends what may be sent within the
// provider's limits and screens the answer, filling x. A block is a
// result, not a failure; a failure is returned as the error to answer
// with once the record is kept.
func (h *Handler) runPrompt(w http.ResponseWriter, r *http.Request, plan *promptPlan, x *promptExchange) *apiError {
	x.input = plan.screen(r.Context(), x.conv, scanner.Input)
	if x.input.Outcome == scanner.Blocked {
		return nil
	}
	msgs := plan.msgs
	if x.input.Outcome == scanner.Modified {
		for _, e := range x.input.Edits {
			if e.Message >= 0 && e.Message < len(msgs) {
				msgs[e.Message].Content = e.Text
			}
		}
	}
	release, aerr := h.acquireLimits(w, r, plan.cfg, x)
	if aerr != nil {
		return aerr
	}
	answer, err := func() (provider.Result, error) {
		defer release()
		return h.prompts.sender.Send(r.Context(), plan.cfg, msgs)
	}()
	x.raw = string(answer.Raw)
	if err != nil {
		x.fail = err
		code := "provider_error"
		if errors.Is(err, provider.ErrTimeout) {
			code = "provider_timeout"
		}
		return &apiError{status: provider.HTTPStatus(err), code: code, message: err.Error()}
	}
	x.outConv = answer.Conversation
	if x.outConv == nil {
		x.outConv = &scanner.Conversation{Messages: []scanner.Message{{Role: scanner.RoleAssistant, Text: answer.Text}}}
	}
	x.output = plan.screen(r.Context(), x.outConv, scanner.Output)
	return nil
}

// acquireLimits waits for the provider's rate and concurrency limits. A
// refusal is recorded in x and answered 429, or 503 when the limits
// cannot be checked, both with Retry-After.
func (h *Handler) acquireLimits(w http.ResponseWriter, r *http.Request, cfg *provider.Config, x *promptExchange) (release func(), failure *apiError) {
	lim, err := h.limiterFor(cfg)
	if err != nil {
		x.fail = fmt.Errorf("provider limits: %w", err)
		return nil, &apiError{status: http.StatusBadGateway, code: "provider_error", message: "the provider's limits are misconfigured"}
	}
	if lim == nil {
		return func() {}, nil
	}
	release, err = lim.Acquire(r.Context(), h.prompts.limitWait)
	if err == nil {
		return release, nil
	}
	retry := time.Second
	if le, _ := errors.AsType[*limits.LimitError](err); le != nil && le.RetryAfter > 0 {
		retry = le.RetryAfter
	}
	x.fail = fmt.Errorf("not sent: %w", err)
	w.Header().Set("Retry-After", strconv.Itoa(limits.RetryAfterSeconds(retry)))
	if errors.Is(err, limits.ErrUnavailable) {
		return nil, &apiError{status: http.StatusServiceUnavailable, code: "limiter_unavailable",
			message: fmt.Sprintf("the limits of provider %s cannot be checked right now; retry later", cfg.Name)}
	}
	return nil, &apiError{status: http.StatusTooManyRequests, code: "rate_limited",
		message: fmt.Sprintf("provider %s is at its limit; retry later", cfg.Name)}
}

// promptExchange is one POST /prompts on its way to the record.
type promptExchange struct {
	rec     *store.Prompt
	conv    *scanner.Conversation
	input   *scanner.Result
	outConv *scanner.Conversation
	output  *scanner.Result
	raw     string
	fail    error
}

// finishPrompt records the exchange, attaches it to its chat and template,
// and answers: the result, or failure as an error carrying the record id.
func (h *Handler) finishPrompt(w http.ResponseWriter, r *http.Request, p Principal, res *store.Reservation,
	plan *promptPlan, x *promptExchange, failure *apiError) *apiError {
	rec := x.rec
	record.Build(rec, record.Exchange{Conv: x.conv, Input: x.input, OutConv: x.outConv, Output: x.output, Raw: x.raw, Failure: x.fail})
	result := x.visibleResult()
	chat, tmpl := plan.chat, plan.tmpl
	if chat == nil && plan.req.ChatName != "" {
		c := &store.Chat{ChatFields: store.ChatFields{Name: plan.req.ChatName, ProjectID: rec.ProjectID, UserID: p.UserID,
			PromptTemplateID: rec.PromptTemplateID}, OrgID: p.OrgID}
		if err := h.store.CreateChat(c); err != nil {
			return internal(err)
		}
		chat = c
		rec.ChatID = c.ID
	}
	if err := res.Commit(rec); err != nil {
		return internal(fmt.Errorf("committing prompt record: %w", err))
	}
	// The id is returned, and may be attached to a chat or template, only
	// once its record is on disk: a client reads it (or sends a follow-up
	// with it as parentId) at once, and nothing may reference a record a
	// crash can still lose.
	if err := res.WaitCommitted(r.Context()); err != nil {
		w.Header().Set("Retry-After", "1")
		return &apiError{status: http.StatusServiceUnavailable, code: CodeUnavailable,
			message: "the prompt could not be recorded; retry shortly", cause: err}
	}
	if chat != nil {
		if err := h.store.AddChatPrompt(chat.ID, rec.ID); err != nil {
			h.logError(r, fmt.Errorf("adding prompt to chat: %w", err))
		}
	}
	if tmpl != nil {
		if err := h.store.AddTemplatePrompt(tmpl.ID, rec.ID); err != nil {
			h.logError(r, fmt.Errorf("adding prompt to template: %w", err))
		}
	}
	if failure != nil {
		failure.promptID = rec.ID
		writeError(w, failure)
		return nil
	}
	writeJSON(w, http.StatusOK, SendPromptResponse{ID: rec.ID, Result: result, Scanners: rec.Scanners})
	return nil
}

// visibleResult is what the client sees: the stored record's result,
// except that a redacted answer is shown with its redactions applied.
func (x *promptExchange) visibleResult() store.PromptResult {
	result := x.rec.Result
	result.Normalize()
	if x.output != nil && x.output.Outcome == scanner.Modified && x.fail == nil {
		edited := *x.outConv
		edited.Messages = append([]scanner.Message(nil), x.outConv.Messages...)
		for _, e := range x.output.Edits {
			if e.Message >= 0 && e.Message < len(edited.Messages) {
				edited.Messages[e.Message].Text = e.Text
			}
		}
		result.Response = record.Response(&edited)
	}
	return result
}

func (h *Handler) logError(r *http.Request, err error) {
	h.log.Error("API error", zap.String("path", r.URL.Path), zap.Error(err))
}

func noQuery(r *http.Request) *apiError {
	_, aerr := parseParams(r.URL.RawQuery, nil, nil)
	return aerr
}
