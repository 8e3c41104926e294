package caddymodule

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2"
)

func init() {
	caddy.RegisterModule(new(AdminAPI))
}

// AdminAPI serves the /backend/v1 API on Caddy's admin listener
// (`admin.api.promptwall`), beside Caddy's own /config and /load. Every
// route still requires a Promptwall bearer token: the admin listener's
// origin checks guard Caddy's own routes, not Promptwall's data.
//
// Use it when the API must not be reachable on the sites that carry
// traffic: the admin listener is loopback-only by default (localhost:2019)
// or a Unix socket. Serve the API with the promptwall_api directive instead
// when clients reach it over the network, with TLS and the site's own
// limits.
type AdminAPI struct {
	api http.Handler
}

// CaddyModule returns the Caddy module information.
func (*AdminAPI) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "admin.api.promptwall", New: func() caddy.Module { return new(AdminAPI) }}
}

// errNoPromptwallApp answers every admin route of a config without the
// promptwall app: there is no store to serve.
var errNoPromptwallApp = errors.New("the promptwall app is not configured")

// Provision builds the API over the running config's promptwall app. Caddy
// provisions admin modules for every config, with or without Promptwall in
// it: without the app, the routes answer 404 rather than failing the load.
func (a *AdminAPI) Provision(ctx caddy.Context) error {
	appIface, err := ctx.AppIfConfigured("promptwall")
	if errors.Is(err, caddy.ErrNotConfigured) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("loading promptwall app: %w", err)
	}
	a.api, err = appIface.(*App).newAPI(ctx.Logger())
	return err
}

// Routes serves the API under /backend/v1/.
func (a *AdminAPI) Routes() []caddy.AdminRoute {
	return []caddy.AdminRoute{{Pattern: "/backend/v1/", Handler: caddy.AdminHandlerFunc(a.serve)}}
}

func (a *AdminAPI) serve(w http.ResponseWriter, r *http.Request) error {
	if a.api == nil {
		return caddy.APIError{HTTPStatus: http.StatusNotFound, Err: errNoPromptwallApp}
	}
	a.api.ServeHTTP(w, r)
	return nil
}

// Interface guards
var (
	_ caddy.Provisioner = (*AdminAPI)(nil)
	_ caddy.AdminRouter = (*AdminAPI)(nil)
)
