package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/promptwall/promptwall/format"
	"github.com/promptwall/promptwall/redteam"
	"github.com/promptwall/promptwall/store"
)

// CampaignRunner starts and cancels red-team runs; *redteam.Runner
// implements it.
type CampaignRunner interface {
	// Start queues a run of the org's campaign and returns it at once.
	Start(ctx context.Context, orgID, campaignID, userID string) (*store.CampaignRun, error)
	// Cancel stops the org's run and returns it as stored.
	Cancel(orgID, runID string) (*store.CampaignRun, error)
}

// RedTeamGate reports an org's redTeam.enabled feature flag;
// redteam.FeatureGate has the same method, so one value serves both.
type RedTeamGate interface {
	RedTeamEnabled(orgID string) (bool, error)
}

// ProviderLookup describes a provider for includeProviders: the object
// served in the providers map, and false when the org has no such
// provider (it is then served as {"id": ...}).
type ProviderLookup func(orgID, providerID string) (any, bool)

// campaignDeps are the red-team parts of Config.
type campaignDeps struct {
	runner    CampaignRunner
	gate      RedTeamGate
	providers ProviderLookup
}

func (h *Handler) registerCampaigns(cfg Config) {
	h.redteam = campaignDeps{runner: cfg.Campaigns, gate: cfg.RedTeam, providers: cfg.ProviderLookup}
	h.mux.Handle("GET /backend/v1/campaign-runs", h.route(h.listCampaignRuns))
	h.mux.Handle("POST /backend/v1/campaigns/{campaignId}/runs", h.route(h.startCampaignRun))
	h.mux.Handle("POST /backend/v1/campaign-runs/{campaignRunId}/cancel", h.route(h.cancelCampaignRun))
}

// CampaignRun is the spec's CampaignRun, exactly its fields.
type CampaignRun struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	CampaignID string          `json:"campaignId"`
	ScheduleID string          `json:"scheduleId"`
	CreatedAt  store.Timestamp `json:"createdAt"`
	CreatedBy  string          `json:"createdBy"`
	StartAt    store.Timestamp `json:"startAt"`
	Status     string          `json:"status"`
	Progress   float64         `json:"progress"`
	Total      string          `json:"total"`
	CASIScore  string          `json:"CASIScore"`
	AttackRuns []AttackRun     `json:"attackRuns"`
}

// AttackRun is the spec's AttackRun.
type AttackRun struct {
	ID         string         `json:"id"`
	ProviderID string         `json:"providerId"`
	Progress   float64        `json:"progress"`
	Total      string         `json:"total"`
	ErrorCount int            `json:"errorCount"`
	Attack     Attack         `json:"attack"`
	Events     []AttackEvent  `json:"events"`
	Results    []AttackResult `json:"results"`
	// Target (extension) is "provider" or "endpoint:<name>": whether the
	// attacks went straight to the provider or through that endpoint.
	Target string `json:"target"`
}

// Attack is the spec's Attack.
type Attack struct {
	Pack       string   `json:"pack"`
	Severity   int      `json:"severity"`
	Technique  string   `json:"technique"`
	Vector     string   `json:"vector"`
	Converters []string `json:"converters"`
}

// AttackEvent is an item of AttackRun.events.
type AttackEvent struct {
	CreatedAt store.Timestamp `json:"createdAt"`
	Event     string          `json:"event"`
}

// AttackResult is the spec's AttackResult.
type AttackResult struct {
	Conversation      []store.ChatMessage `json:"conversation"`
	ConversationSteps int                 `json:"conversationSteps"`
	Converter         string              `json:"converter"`
	Error             string              `json:"error"`
	ErrorSummary      string              `json:"errorSummary"`
	Fingerprint       string              `json:"fingerprint"`
	Intent            string              `json:"intent"`
	IntentCategory    string              `json:"intentCategory"`
	Vulnerable        bool                `json:"vulnerable"`
	// Outcome (extension) is vulnerable, resisted, blocked (by the
	// endpoint, request or answer) or error.
	Outcome string `json:"outcome"`
}

// CampaignRunList is the response of GET /backend/v1/campaign-runs.
type CampaignRunList struct {
	CampaignRuns []CampaignRun  `json:"campaignRuns"`
	Campaigns    map[string]any `json:"campaigns"`
	Providers    map[string]any `json:"providers"`
	Schedules    map[string]any `json:"schedules"`
	Next         string         `json:"next"`
	Prev         string         `json:"prev"`
}

// CampaignRunResponse is the response of the start and cancel routes.
type CampaignRunResponse struct {
	CampaignRun CampaignRun `json:"campaignRun"`
}

// campaignView is a campaign in the campaigns map. The system prompt is
// left out: it is the campaign's test fixture, not something every
// member of the org needs to read.
type campaignView struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Providers  []string        `json:"providers"`
	Packs      []string        `json:"packs"`
	Converters []string        `json:"converters"`
	Schedule   string          `json:"schedule"`
	Targets    []string        `json:"targets"`
	CreatedAt  store.Timestamp `json:"createdAt"`
	UpdatedAt  store.Timestamp `json:"updatedAt"`
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func campaignRunOf(r *store.CampaignRun) CampaignRun {
	out := CampaignRun{
		ID: r.ID, Name: r.Name, CampaignID: r.CampaignID, ScheduleID: r.ScheduleID, CreatedAt: r.CreatedAt,
		CreatedBy: r.CreatedBy, StartAt: r.StartAt, Status: r.Status, Progress: r.Progress, Total: r.Total,
		CASIScore: r.CASIScore, AttackRuns: make([]AttackRun, 0, len(r.AttackRuns)),
	}
	if out.Total == "" {
		out.Total = "0"
	}
	for _, ar := range r.AttackRuns {
		a := AttackRun{
			ID: ar.ID, ProviderID: ar.ProviderID, Progress: ar.Progress, Total: ar.Total, ErrorCount: ar.ErrorCount,
			Attack: Attack{Pack: ar.Attack.Pack, Severity: ar.Attack.Severity, Technique: ar.Attack.Technique,
				Vector: ar.Attack.Vector, Converters: nonNil(ar.Attack.Converters)},
			Events:  make([]AttackEvent, 0, len(ar.Events)),
			Results: make([]AttackResult, 0, len(ar.Results)),
			Target:  ar.Target,
		}
		if a.Total == "" {
			a.Total = "0"
		}
		for _, e := range ar.Events {
			a.Events = append(a.Events, AttackEvent{CreatedAt: e.CreatedAt, Event: e.Event})
		}
		for _, res := range ar.Results {
			conv := res.Conversation
			if conv == nil {
				conv = []store.ChatMessage{}
			}
			a.Results = append(a.Results, AttackResult{
				Conversation: conv, ConversationSteps: res.ConversationSteps, Converter: res.Converter,
				Error: res.Error, ErrorSummary: res.ErrorSummary, Fingerprint: res.Fingerprint,
				Intent: res.Intent, IntentCategory: res.IntentCategory, Vulnerable: res.Vulnerable, Outcome: res.Outcome,
			})
		}
		out.AttackRuns = append(out.AttackRuns, a)
	}
	return out
}

// redTeamAllowed answers 403 when the org's redTeam feature is off. No
// gate means every org may (a single-tenant install).
func (h *Handler) redTeamAllowed(p Principal) *apiError {
	if h.redteam.gate == nil {
		return nil
	}
	ok, err := h.redteam.gate.RedTeamEnabled(p.OrgID)
	if err != nil {
		return internal(err)
	}
	if !ok {
		return &apiError{status: http.StatusForbidden, code: CodeForbidden,
			message: "red teaming is not enabled for this organization (features.redTeam.enabled)"}
	}
	return nil
}

var (
	campaignRunsSingle = []string{"cursor", "search", "limit", "ascending", "campaignScheduleId",
		"includeProviders", "includeCampaigns", "includeSchedules", "sortBy"}
	campaignRunsMulti = []string{"status"}
)

// listCampaignRuns serves GET /backend/v1/campaign-runs for the caller's
// org; every role may read it.
func (h *Handler) listCampaignRuns(w http.ResponseWriter, r *http.Request, p Principal) *apiError {
	if aerr := h.redTeamAllowed(p); aerr != nil {
		return aerr
	}
	q, inc, aerr := campaignRunQuery(r, p)
	if aerr != nil {
		return aerr
	}
	page, err := h.store.ListCampaignRuns(q)
	if err != nil {
		return listError(err)
	}
	out := CampaignRunList{
		CampaignRuns: make([]CampaignRun, 0, len(page.Items)), Next: page.Next, Prev: page.Prev,
		Campaigns: map[string]any{}, Providers: map[string]any{}, Schedules: map[string]any{},
	}
	for _, run := range page.Items {
		out.CampaignRuns = append(out.CampaignRuns, campaignRunOf(run))
		if aerr := h.addRunRefs(&out, run, inc, p); aerr != nil {
			return aerr
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// runIncludes says which maps of referenced objects a campaign-runs list
// fills.
type runIncludes struct{ campaigns, providers, schedules bool }

// campaignRunQuery reads the campaign-runs list's parameters.
func campaignRunQuery(r *http.Request, p Principal) (store.CampaignRunQuery, runIncludes, *apiError) {
	var inc runIncludes
	q := store.CampaignRunQuery{OrgID: p.OrgID, WithResults: true}
	ps, aerr := parseParams(r.URL.RawQuery, campaignRunsSingle, campaignRunsMulti)
	if aerr != nil {
		return q, inc, aerr
	}
	if q.Limit, aerr = ps.intRange("limit", 10, 1, store.MaxLimit); aerr != nil {
		return q, inc, aerr
	}
	if q.Ascending, aerr = ps.boolean("ascending", false); aerr != nil {
		return q, inc, aerr
	}
	if inc.providers, aerr = ps.boolean("includeProviders", false); aerr != nil {
		return q, inc, aerr
	}
	if inc.campaigns, aerr = ps.boolean("includeCampaigns", true); aerr != nil {
		return q, inc, aerr
	}
	if inc.schedules, aerr = ps.boolean("includeSchedules", false); aerr != nil {
		return q, inc, aerr
	}
	if q.Statuses, aerr = ps.ids("status"); aerr != nil {
		return q, inc, aerr
	}
	for _, s := range q.Statuses {
		if !slices.Contains(store.RunStatuses, s) {
			return q, inc, badParam("status", "status must be queued, running, completed, failed or cancelled")
		}
	}
	if v, ok := ps.str("sortBy"); ok {
		switch v {
		case store.SortByName, store.SortByCreatedAt, store.SortByStartAt:
			q.SortBy = v
		default:
			return q, inc, badParam("sortBy", "sortBy must be name, created_at or start_at")
		}
	}
	if v, ok := ps.str("campaignScheduleId"); ok {
		if v == "" {
			return q, inc, badParam("campaignScheduleId", "campaignScheduleId must not be empty")
		}
		q.CampaignScheduleID = v
	}
	q.Search, _ = ps.str("search")
	q.Cursor, _ = ps.str("cursor")
	return q, inc, nil
}

// addRunRefs adds what run refers to (its campaign, schedule and
// providers) to the list's maps, once each. An object of another org, or
// one deleted since, is left out; a provider unknown here is served as
// {"id": ...}.
func (h *Handler) addRunRefs(out *CampaignRunList, run *store.CampaignRun, inc runIncludes, p Principal) *apiError {
	if _, done := out.Campaigns[run.CampaignID]; inc.campaigns && run.CampaignID != "" && !done {
		c, err := h.store.GetCampaign(run.CampaignID)
		switch {
		case err == nil && c.OrgID == p.OrgID:
			out.Campaigns[c.ID] = campaignView{ID: c.ID, Name: c.Name, Providers: nonNil(c.Providers),
				Packs: nonNil(c.Packs), Converters: nonNil(c.Converters), Schedule: c.Schedule,
				Targets: nonNil(c.Targets), CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return internal(err)
		}
	}
	if _, done := out.Schedules[run.ScheduleID]; inc.schedules && run.ScheduleID != "" && !done {
		sc, err := h.store.GetCampaignSchedule(run.ScheduleID)
		switch {
		case err == nil && sc.OrgID == p.OrgID:
			out.Schedules[sc.ID] = sc
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return internal(err)
		}
	}
	if !inc.providers {
		return nil
	}
	ids := slices.Clone(run.Providers)
	for _, ar := range run.AttackRuns {
		ids = append(ids, ar.ProviderID)
	}
	for _, id := range ids {
		if _, done := out.Providers[id]; done || id == "" {
			continue
		}
		var v any = map[string]string{"id": id}
		if h.redteam.providers != nil {
			if pv, ok := h.redteam.providers(p.OrgID, id); ok {
				v = pv
			}
		}
		out.Providers[id] = v
	}
	return nil
}

// campaignRunnerErr maps the runner's errors to API errors.
func campaignRunnerErr(err error, param string) *apiError {
	switch {
	case errors.Is(err, redteam.ErrRedTeamDisabled):
		return &apiError{status: http.StatusForbidden, code: CodeForbidden, message: "red teaming is not enabled for this organization (features.redTeam.enabled)"}
	case errors.Is(err, redteam.ErrCampaignNotFound):
		return &apiError{status: http.StatusNotFound, code: CodeNotFound, param: param, message: "no such campaign"}
	case errors.Is(err, redteam.ErrRunNotFound):
		return &apiError{status: http.StatusNotFound, code: CodeNotFound, param: param, message: "no such campaign run"}
	case errors.Is(err, redteam.ErrInvalidCampaign):
		return badParam(param, "%s", err.Error())
	case errors.Is(err, redteam.ErrClosed):
		return &apiError{status: http.StatusServiceUnavailable, code: CodeUnavailable, message: "the red-team runner is shutting down", cause: err}
	}
	return internal(err)
}

// campaignWriter answers 403 unless the caller may start and cancel runs:
// runs send hundreds of paid requests, so they take admin or owner.
func (h *Handler) campaignWriter(p Principal) *apiError {
	if aerr := h.redTeamAllowed(p); aerr != nil {
		return aerr
	}
	if !p.CanSeeOrg() {
		return &apiError{status: http.StatusForbidden, code: CodeForbidden, message: "starting or cancelling campaign runs needs the admin or owner role"}
	}
	return nil
}

// noRunner answers a start or cancel when no runner is configured: 404
// for what does not exist, as with a runner, else 503.
var noRunner = &apiError{status: http.StatusServiceUnavailable, code: CodeUnavailable, message: "no red-team runner is configured"}

// maxRunBody bounds the start request's body.
const maxRunBody = 64 << 10

// startCampaignRun serves POST /backend/v1/campaigns/{campaignId}/runs
// (extension): 202 with the queued run. The body may be empty or {}; the
// documented name, startAt and providerIds overrides are refused with 400
// until the runner supports them, rather than silently ignored.
func (h *Handler) startCampaignRun(w http.ResponseWriter, r *http.Request, p Principal) *apiError {
	if aerr := h.campaignWriter(p); aerr != nil {
		return aerr
	}
	if _, aerr := parseParams(r.URL.RawQuery, nil, nil); aerr != nil {
		return aerr
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRunBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &apiError{status: http.StatusRequestEntityTooLarge, code: "request_too_large",
				message: fmt.Sprintf("the request body exceeds %d bytes", maxRunBody)}
		}
		return badParam("", "could not read the request body")
	}
	if len(body) > 0 {
		if err := format.CheckKeys(body); err != nil {
			de := err.(*format.DuplicateKeyError)
			return badParam(de.Path(), "%s", de.Error())
		}
		var req map[string]json.RawMessage
		if err := json.Unmarshal(body, &req); err != nil {
			return badParam("", "the request body must be a JSON object")
		}
		for _, k := range []string{"name", "startAt", "providerIds"} {
			if _, ok := req[k]; ok {
				return badParam(k, "%s is not supported yet: runs start at once with the campaign's name and providers", k)
			}
		}
		for k := range req {
			return badParam(k, "unknown field %s", k)
		}
	}
	if h.redteam.runner == nil {
		c, err := h.store.GetCampaign(r.PathValue("campaignId"))
		if errors.Is(err, store.ErrNotFound) || (err == nil && c.OrgID != p.OrgID) {
			return campaignRunnerErr(redteam.ErrCampaignNotFound, "campaignId")
		}
		if err != nil {
			return internal(err)
		}
		return noRunner
	}
	run, err := h.redteam.runner.Start(r.Context(), p.OrgID, r.PathValue("campaignId"), p.UserID)
	if err != nil {
		return campaignRunnerErr(err, "campaignId")
	}
	writeJSON(w, http.StatusAccepted, CampaignRunResponse{CampaignRun: campaignRunOf(run)})
	return nil
}

// cancelCampaignRun serves POST /backend/v1/campaign-runs/{id}/cancel
// (extension): 200 with the run once it has stopped; a finished run is
// returned unchanged.
func (h *Handler) cancelCampaignRun(w http.ResponseWriter, r *http.Request, p Principal) *apiError {
	if aerr := h.campaignWriter(p); aerr != nil {
		return aerr
	}
	if _, aerr := parseParams(r.URL.RawQuery, nil, nil); aerr != nil {
		return aerr
	}
	if h.redteam.runner == nil {
		run, err := h.store.GetCampaignRun(r.PathValue("campaignRunId"), false)
		if errors.Is(err, store.ErrNotFound) || (err == nil && run.OrgID != p.OrgID) {
			return campaignRunnerErr(redteam.ErrRunNotFound, "campaignRunId")
		}
		if err != nil {
			return internal(err)
		}
		if run.Status != store.RunQueued && run.Status != store.RunRunning {
			writeJSON(w, http.StatusOK, CampaignRunResponse{CampaignRun: campaignRunOf(run)})
			return nil
		}
		return noRunner
	}
	run, err := h.redteam.runner.Cancel(p.OrgID, r.PathValue("campaignRunId"))
	if err != nil {
		return campaignRunnerErr(err, "campaignRunId")
	}
	writeJSON(w, http.StatusOK, CampaignRunResponse{CampaignRun: campaignRunOf(run)})
	return nil
}
