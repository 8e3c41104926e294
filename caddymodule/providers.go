package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/promptwall/promptwall/auth"
	"github.com/promptwall/promptwall/limits"
	"github.com/promptwall/promptwall/provider"
)

// configuredProvider is a provider of the running config: its settings with
// secrets resolved, and its limiter (shared across reloads).
type configuredProvider struct {
	cfg     provider.Config
	limiter limits.Gate
	// limits are applied to limiter when this config starts (see
	// App.Start), never while it is provisioned.
	limits limits.Config
}

// provisionProviders resolves secrets, validates, and attaches each
// provider's limiter from the shared registry. The limits themselves are
// applied in place when the config starts, so buckets are not refilled,
// slots held by requests in flight stay counted, and a reload that fails
// changes nothing.
func (a *App) provisionProviders() error {
	repl := caddy.NewReplacer()
	a.providers = make(map[string]*configuredProvider, len(a.Providers))
	for i := range a.Providers {
		cfg := a.Providers[i]
		cfg.Provision()
		if _, dup := a.providers[cfg.Name]; dup {
			return fmt.Errorf("provider %q declared twice", cfg.Name)
		}
		resolved := make(map[string]string, len(cfg.Secrets))
		for k, v := range cfg.Secrets {
			resolved[k] = repl.ReplaceKnown(v, "")
		}
		cfg.Secrets = resolved
		if err := cfg.Validate(); err != nil {
			return err
		}
		lc, err := cfg.Limits()
		if err != nil {
			return fmt.Errorf("provider %q: %w", cfg.Name, err)
		}
		a.providers[cfg.Name] = &configuredProvider{cfg: cfg, limiter: a.limitSet().Attach(cfg.Name, lc), limits: lc}
	}
	return nil
}

// syncProviderVersions stores each provider's configuration as a version
// when it changed, so the API's configAt can answer for a past time.
func (a *App) syncProviderVersions() error {
	return a.syncOrgProviders(time.Now())
}

// provider returns a configured provider by name or id.
func (a *App) provider(nameOrID string) (*configuredProvider, bool) {
	if p, ok := a.providers[nameOrID]; ok {
		return p, true
	}
	for _, p := range a.providers {
		if p.cfg.ID == nameOrID {
			return p, true
		}
	}
	return nil, false
}

// credentialHeaders are where clients put provider keys (OpenAI, Anthropic,
// Azure, Gemini). With authenticate they carry the Promptwall token instead,
// and every one of them is removed before forwarding.
var credentialHeaders = []string{"Authorization", "X-Api-Key", "Api-Key", "X-Goog-Api-Key"}

// errBadToken is the 401 of a missing or unknown gateway token; it never
// says which.
var errBadToken = errors.New("a valid Promptwall token is required")

// authenticate verifies the Promptwall token a client presents in place of
// the provider key.
func (h *Handler) authenticate(r *http.Request) (auth.Principal, error) {
	return h.app.auth.Authenticate(presentedToken(r))
}

// presentedToken finds the token in whichever header the client's SDK puts
// its key; never in the URL (see errTokenInQuery).
func presentedToken(r *http.Request) string {
	tok, _ := headerToken(r, credentialHeaders[1:])
	return tok
}

// headerToken reads a token from Authorization (Bearer scheme only) or else
// from the first of headers that is set; found tells whether any was.
func headerToken(r *http.Request, headers []string) (token string, found bool) {
	if v := r.Header.Get("Authorization"); v != "" {
		scheme, tok, ok := strings.Cut(v, " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(tok), true
		}
		return "", true
	}
	for _, h := range headers {
		if v := r.Header.Get(h); v != "" {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// useProviderKey replaces whatever credential the client sent with the
// provider's secret, in the header the provider expects.
func useProviderKey(r *http.Request, p *configuredProvider) {
	for _, h := range credentialHeaders {
		r.Header.Del(h)
	}
	if q := r.URL.Query(); q.Has("key") {
		q.Del("key")
		r.URL.RawQuery = q.Encode()
	}
	name, prefix := provider.SecretHeader(p.cfg.Type)
	if key := p.cfg.Secrets["api_key"]; name != "" && key != "" {
		r.Header.Set(name, prefix+key)
	}
	if p.cfg.Type == provider.TypeAnthropic && r.Header.Get("Anthropic-Version") == "" {
		r.Header.Set("Anthropic-Version", provider.AnthropicVersion)
	}
}

// acquire takes the provider's rate token and concurrency slot, waiting up
// to the handler's max_queue_wait. The release must run once the answer is
// fully written.
func (h *Handler) acquire(ctx context.Context) (func(), error) {
	if h.prov == nil {
		return func() {}, nil
	}
	return h.prov.limiter.Acquire(ctx, time.Duration(h.MaxQueueWait))
}

// parseProviderBlock parses a provider:
//
//	provider <name> {
//	    type                      openai|anthropic|gemini|ollama|azure_openai|bedrock|custom
//	    id                        <uuid>
//	    base_url                  <url>
//	    model                     <model or deployment>
//	    max_requests_per_second   <decimal>
//	    request_concurrency_limit <integer>
//	    secret                    <name> <value or {env.VAR}>
//	    input                     <name> <value>
//	    available_globally
//	    available_to              <project id...>
//	    project_id | tag | system_provider_id <value>
//	    red_team | siem | has_logo | disabled
//	    template {
//	        url | method | body | json | aws_auth <value>
//	        header <name> <value>
//	        query_param <name> <value>
//	        output <name> <json path>
//	        timeout <milliseconds>
//	    }
//	}
func parseProviderBlock(d *caddyfile.Dispenser) (provider.Config, error) {
	var p provider.Config
	if !d.AllArgs(&p.Name) {
		return p, d.ArgErr()
	}
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch key := d.Val(); key {
		case "available_globally":
			if d.NextArg() {
				return p, d.ArgErr()
			}
			p.Availability.Global = true
		case "available_to":
			ids := d.RemainingArgs()
			if len(ids) == 0 {
				return p, d.ArgErr()
			}
			p.Availability.ProjectIDs = append(p.Availability.ProjectIDs, ids...)
		case "input":
			args := d.RemainingArgs()
			if len(args) != 2 {
				return p, d.Err("input takes a name and a value")
			}
			if p.Inputs == nil {
				p.Inputs = map[string]any{}
			}
			// Numbers stay numbers (max_tokens), everything else a string.
			if n, err := strconv.ParseFloat(args[1], 64); err == nil {
				p.Inputs[args[0]] = n
			} else {
				p.Inputs[args[0]] = args[1]
			}
		case "template":
			if d.NextArg() {
				return p, d.ArgErr()
			}
			tseen := map[string]bool{}
			for tn := d.Nesting(); d.NextBlock(tn); {
				if err := setOption(d, &p.Template, tseen); err != nil {
					return p, err
				}
			}
		default:
			if err := setOption(d, &p, seen); err != nil {
				return p, err
			}
		}
	}
	return p, nil
}
