package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/promptwall/promptwall/limits"
	"github.com/promptwall/promptwall/provider"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/store"
)

// ProviderSource supplies the configured providers to POST /prompts. The
// Caddy app implements it over its provider config (secrets resolved) and
// syncs the same providers into store versions (store.SyncProviders with
// ProviderRecord) for GET /providers. It must be safe for concurrent use.
type ProviderSource interface {
	// Provider returns the org's provider with that id or name.
	Provider(orgID, idOrName string) (*provider.Config, bool)
}

// Screener resolves the endpoints whose scanners screen POST /prompts and
// whose providers the providers list's endpoint filter names. It must be
// safe for concurrent use.
type Screener interface {
	// ScreenEndpoint returns the endpoint with that id or name; "" asks
	// for the default endpoint.
	ScreenEndpoint(idOrName string) (ScreenEndpoint, bool)
}

// ScreenEndpoint is an endpoint as POST /prompts uses it.
type ScreenEndpoint struct {
	ID        string
	Name      string
	ProjectID string
	// Providers are the names of the endpoint's active providers.
	Providers []string
	// Screen runs the endpoint's blocking scanners; nil screens nothing.
	Screen func(ctx context.Context, conv *scanner.Conversation, dir scanner.Direction) *scanner.Result
	// Scanners is the JSON of the scanner settings, stored with records
	// and served as promptScanners.
	Scanners string
}

// Sender calls a provider; *provider.Client implements it.
type Sender interface {
	Send(ctx context.Context, cfg *provider.Config, msgs []provider.Message) (provider.Result, error)
}

// ProviderRecord converts a provider's config into the store version that
// GET /providers serves. Its Public JSON has secrets masked: the record is
// safe to write to disk.
func ProviderRecord(orgID string, c *provider.Config) (*store.ProviderRecord, error) {
	pub := c.Public()
	raw, err := json.Marshal(pub)
	if err != nil {
		return nil, err
	}
	return &store.ProviderRecord{
		ID: pub.ID, OrgID: orgID, Name: c.Name, ProjectID: c.ProjectID,
		Availability: store.ProviderAvailability{Global: c.Availability.Global, ProjectIDs: pub.Availability.ProjectIDs},
		RedTeam:      c.RedTeam, Disabled: c.Disabled, Public: raw,
	}, nil
}

var providersSingle = []string{"limit", "addedToProjectId", "accessibleToProjectId", "enabledForProjectId",
	"availableGlobally", "configAt", "cursor", "endpoint", "groupId", "redTeam"}

// ProviderList is the response of GET /backend/v1/providers.
type ProviderList struct {
	Next      string            `json:"next"`
	Prev      string            `json:"prev"`
	Providers []json.RawMessage `json:"providers"`
}

// listProviders serves GET /backend/v1/providers from
// the stored provider versions of the caller's org.
//
// Filters: addedToProjectId is the provider's own project (groupId is its
// deprecated name; giving both with different values is a 400);
// accessibleToProjectId adds global providers and those shared with the
// project; enabledForProjectId is accessible and not disabled;
// availableGlobally keeps providers whose availability.global equals it;
// configAt lists the versions in force then; endpoint (id or name) keeps
// the endpoint's providers; redTeam=true keeps only red-team providers,
// while false (the default) filters nothing, since red-team providers are
// ordinary providers too.
func (h *Handler) listProviders(w http.ResponseWriter, r *http.Request, p Principal) *apiError {
	q, aerr := h.providerQuery(r, p)
	if aerr != nil {
		return aerr
	}
	page, err := h.store.ListProviders(q)
	if err != nil {
		return listError(err)
	}
	out := ProviderList{Next: page.Next, Prev: page.Prev, Providers: make([]json.RawMessage, 0, len(page.Items))}
	for _, it := range page.Items {
		out.Providers = append(out.Providers, it.Public)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// providerQuery reads the providers list's parameters. A filter given
// empty is an error rather than no filter, and endpoint narrows the list
// to the named endpoint's providers.
func (h *Handler) providerQuery(r *http.Request, p Principal) (store.ProviderQuery, *apiError) {
	q := store.ProviderQuery{OrgID: p.OrgID}
	ps, aerr := parseParams(r.URL.RawQuery, providersSingle, nil)
	if aerr != nil {
		return q, aerr
	}
	if q.Limit, aerr = ps.intRange("limit", 10, 1, store.MaxLimit); aerr != nil {
		return q, aerr
	}
	nonEmpty := func(name string) (string, *apiError) {
		v, ok := ps.str(name)
		if ok && v == "" {
			return "", badParam(name, "%s must not be empty", name)
		}
		return v, nil
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"addedToProjectId", &q.AddedToProjectID}, {"accessibleToProjectId", &q.AccessibleToProjectID}, {"enabledForProjectId", &q.EnabledForProjectID}} {
		if *f.dst, aerr = nonEmpty(f.name); aerr != nil {
			return q, aerr
		}
	}
	group, aerr := nonEmpty("groupId")
	if aerr != nil {
		return q, aerr
	}
	if group != "" {
		if q.AddedToProjectID != "" && q.AddedToProjectID != group {
			return q, badParam("groupId", "groupId is the deprecated name of addedToProjectId; they disagree")
		}
		q.AddedToProjectID = group
	}
	if _, ok := ps.str("availableGlobally"); ok {
		g, aerr := ps.boolean("availableGlobally", false)
		if aerr != nil {
			return q, aerr
		}
		q.AvailableGlobally = &g
	}
	if q.ConfigAt, aerr = ps.timestamp("configAt"); aerr != nil {
		return q, aerr
	}
	if q.RedTeamOnly, aerr = ps.boolean("redTeam", false); aerr != nil {
		return q, aerr
	}
	q.Cursor, _ = ps.str("cursor")
	ep, aerr := nonEmpty("endpoint")
	if aerr != nil || ep == "" {
		return q, aerr
	}
	return q, h.onlyEndpointProviders(&q, ep)
}

// onlyEndpointProviders narrows q to the providers of the named endpoint.
func (h *Handler) onlyEndpointProviders(q *store.ProviderQuery, endpoint string) *apiError {
	if h.prompts.screener == nil {
		return badParam("endpoint", "no endpoints are configured")
	}
	e, ok := h.prompts.screener.ScreenEndpoint(endpoint)
	if !ok {
		return badParam("endpoint", "no endpoint has that id or name")
	}
	q.FilterNames, q.Names = true, e.Providers
	return nil
}

// defaultLimitWait is how long POST /prompts waits for a provider's limits
// when Config.LimitWait is zero.
const defaultLimitWait = 2 * time.Second

// limiterFor returns the provider's limiter, nil when none applies. Its
// limits are the running config's, applied when that config started.
func (h *Handler) limiterFor(c *provider.Config) (limits.Gate, error) {
	if h.prompts.limits == nil {
		return nil, nil
	}
	lc, err := c.Limits()
	if err != nil {
		return nil, err
	}
	return h.prompts.limits.Attach(c.Name, lc), nil
}
