package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/promptwall/promptwall/api"
	"github.com/promptwall/promptwall/provider"
)

func init() {
	caddy.RegisterModule(new(APIHandler))
}

// APIHandler serves the /backend/v1 API (`promptwall_api` directive). It is
// terminal: requests it receives are answered by the API, never passed on.
type APIHandler struct {
	backend http.Handler
}

// CaddyModule returns the Caddy module information.
func (*APIHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.promptwall_api", New: func() caddy.Module { return new(APIHandler) }}
}

// Provision builds the API over the app's store.
func (h *APIHandler) Provision(ctx caddy.Context) error {
	app, err := loadApp(ctx)
	if err != nil {
		return err
	}
	h.backend, err = app.newAPI(ctx.Logger())
	return err
}

// newAPI builds the /backend/v1 API over the app, for a site route or the
// admin listener alike.
func (a *App) newAPI(logger *zap.Logger) (http.Handler, error) {
	return api.New(api.Config{
		Store:              a.Store(),
		Logger:             logger,
		BootstrapTokenHash: a.bootstrapHash,
		BootstrapOrgID:     defaultOrgID(),
		Endpoints:          endpointResolver{a},
		Providers:          appProviders{a},
		Screener:           appScreener{a},
		Sender:             providerClient,
		Limits:             a.limitSet(),
		Campaigns:          a.shared.runner,
		RedTeam:            orgFeatures{a.shared.store},
		ProviderLookup:     a.providerLookup,
		StoreUnavailable:   a.shared.health.isUnavailable,
	})
}

// ServeHTTP answers the request from the API.
func (h *APIHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	h.backend.ServeHTTP(w, r)
	return nil
}

// UnmarshalCaddyfile sets up the handler: `promptwall_api` takes no options.
func (h *APIHandler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next()
	if d.NextArg() {
		return d.ArgErr()
	}
	if d.NextBlock(0) {
		return d.Errf("unknown promptwall_api sub-directive %q", d.Val())
	}
	return nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*APIHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*APIHandler)(nil)
	_ caddyfile.Unmarshaler       = (*APIHandler)(nil)
)

// appProviders gives the API the config's providers. Providers are declared
// by the operator and belong to the default organization; the orgs each
// names may use them too.
type appProviders struct{ app *App }

func (p appProviders) Provider(orgID, idOrName string) (*provider.Config, bool) {
	cp, ok := p.app.provider(idOrName)
	if !ok || !p.app.providerServes(cp, orgID) {
		return nil, false
	}
	cfg := cp.cfg
	return &cfg, true
}

// appScreener gives POST /prompts the config's endpoints.
type appScreener struct{ app *App }

func (s appScreener) ScreenEndpoint(idOrName string) (api.ScreenEndpoint, bool) {
	if idOrName == "" {
		idOrName = DefaultEndpointName
	}
	ep, ok := s.app.endpoints[idOrName]
	if !ok {
		for _, e := range s.app.endpoints {
			if e.ID == idOrName {
				ep, ok = e, true
			}
		}
	}
	if !ok {
		return api.ScreenEndpoint{}, false
	}
	return api.ScreenEndpoint{
		ID: ep.ID, Name: ep.Name, ProjectID: ep.ProjectID, Providers: ep.Providers,
		Screen:   ep.pipeline.Screen,
		Scanners: ep.settingsJSON(),
	}, true
}

// providerLookup describes a provider for the campaign-runs includes.
func (a *App) providerLookup(orgID, providerID string) (any, bool) {
	if orgID != defaultOrgID() {
		return nil, false
	}
	p, ok := a.provider(providerID)
	if !ok {
		return nil, false
	}
	return p.cfg.Public(), true
}
