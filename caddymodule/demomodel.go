package caddymodule

import (
	"errors"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/promptwall/promptwall/demo"
)

func init() {
	caddy.RegisterModule(new(DemoModel))
	httpcaddyfile.RegisterHandlerDirective("promptwall_demo", parseDemoDirective)
	httpcaddyfile.RegisterDirectiveOrder("promptwall_demo", httpcaddyfile.Before, "respond")
}

// DefaultDemoChunkDelay is the pause between two streamed chunks of the
// demo model.
const DefaultDemoChunkDelay = 40 * time.Millisecond

// DemoModel is the `promptwall_demo` handler: a deliberately naive,
// deterministic chat model that speaks OpenAI Chat Completions (streamed
// too) and needs no key, so that the quick start has an upstream the red
// team can break and the gateway can protect. It answers every request
// itself and never calls the next handler. Never expose it: it prints its
// (fake) deploy key to anyone who asks.
type DemoModel struct {
	// ChunkDelay is the pause between two streamed chunks, so that a
	// terminal shows the answer arriving. Default 40ms; 0 sends them back
	// to back.
	ChunkDelay *caddy.Duration `json:"chunk_delay,omitempty"`

	server demo.Server
}

// CaddyModule returns the Caddy module information.
func (*DemoModel) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.promptwall_demo", New: func() caddy.Module { return new(DemoModel) }}
}

// Provision applies the defaults.
func (m *DemoModel) Provision(caddy.Context) error {
	m.server.ChunkDelay = DefaultDemoChunkDelay
	if m.ChunkDelay != nil {
		m.server.ChunkDelay = time.Duration(*m.ChunkDelay)
	}
	return nil
}

// Validate checks the configuration.
func (m *DemoModel) Validate() error {
	if m.ChunkDelay != nil && (*m.ChunkDelay < 0 || time.Duration(*m.ChunkDelay) > 10*time.Second) {
		return errDemoChunkDelay
	}
	return nil
}

var errDemoChunkDelay = errors.New("promptwall_demo: chunk_delay must be between 0s and 10s")

// ServeHTTP answers the request with the demo model.
func (m *DemoModel) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	m.server.ServeHTTP(w, r)
	return nil
}

// UnmarshalCaddyfile sets up the handler:
//
//	promptwall_demo {
//	    chunk_delay <duration>
//	}
func (m *DemoModel) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive's name
	if d.NextArg() {
		return d.ArgErr()
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "chunk_delay":
			if m.ChunkDelay != nil {
				return d.Errf("chunk_delay given twice")
			}
			var s string
			if !d.AllArgs(&s) {
				return d.ArgErr()
			}
			v, err := caddy.ParseDuration(s)
			if err != nil {
				return d.Errf("chunk_delay: %v", err)
			}
			dur := caddy.Duration(v)
			m.ChunkDelay = &dur
		default:
			return d.Errf("unknown promptwall_demo option %q", d.Val())
		}
	}
	return nil
}

func parseDemoDirective(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	m := new(DemoModel)
	if err := m.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	return m, nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*DemoModel)(nil)
	_ caddy.Validator             = (*DemoModel)(nil)
	_ caddyhttp.MiddlewareHandler = (*DemoModel)(nil)
	_ caddyfile.Unmarshaler       = (*DemoModel)(nil)
)
