package caddymodule

import (
	"fmt"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/promptwall/promptwall/api"
	"github.com/promptwall/promptwall/identity"
	"github.com/promptwall/promptwall/policy"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/store"
)

// parseOrgBlock parses a declared organization (config as code):
//
//	org <name> {
//	    application_url <url>
//	    require_mfa
//	    entitlements    <text>
//	    disabled
//	    feature <blue_team|legacy_scanners|custom_scanners|red_team> true|false
//	    feature <max_concurrent_custom|max_concurrent_vendored> <n>
//	    user <email> [owner|admin|member] [<display name>]
//	}
func parseOrgBlock(d *caddyfile.Dispenser) (identity.Org, error) {
	var org identity.Org
	if !d.AllArgs(&org.Name) {
		return org, d.ArgErr()
	}
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		key := d.Val()
		if key != "user" && key != "feature" {
			if seen[key] {
				return org, d.Errf("duplicate org sub-directive %q", key)
			}
			seen[key] = true
		}
		switch key {
		case "application_url":
			if !d.AllArgs(&org.ApplicationURL) {
				return org, d.ArgErr()
			}
		case "entitlements":
			if !d.AllArgs(&org.Entitlements) {
				return org, d.ArgErr()
			}
		case "require_mfa", "disabled":
			if d.NextArg() {
				return org, d.ArgErr()
			}
			if key == "disabled" {
				org.Disabled = true
			} else {
				org.RequireMFA = true
			}
		case "feature":
			if org.Features == nil {
				org.Features = new(identity.Features)
			}
			if !d.NextArg() {
				return org, d.ArgErr()
			}
			if err := setOption(d, org.Features, seen); err != nil {
				return org, err
			}
		case "user":
			args := d.RemainingArgs()
			if len(args) == 0 {
				return org, d.ArgErr()
			}
			u := identity.User{Email: args[0]}
			if len(args) > 1 {
				u.Role = args[1]
			}
			if len(args) > 2 {
				u.Name = strings.Join(args[2:], " ")
			}
			org.Users = append(org.Users, u)
		default:
			return org, d.Errf("unknown org sub-directive %q", key)
		}
	}
	return org, nil
}

// applyIdentity writes the declared organizations and users (never
// deleting anything) and sizes the caps on external scanner calls from the
// default organization's features.
func (a *App) applyIdentity() error {
	if err := identity.Apply(a.shared.store, a.Orgs); err != nil {
		return fmt.Errorf("applying declared organizations: %w", err)
	}
	org, err := a.shared.store.GetOrg(defaultOrgID())
	if err != nil {
		return err
	}
	cs := org.Features.BlueTeam.CustomScanners
	custom, vendored := cs.MaxConcurrentCustom, cs.MaxConcurrentVendored
	if custom <= 0 {
		custom = defaultMaxConcurrentCustom
	}
	if vendored <= 0 {
		vendored = defaultMaxConcurrentVendored
	}
	a.shared.external.set(custom, vendored)
	return nil
}

// endpointResolver answers GET /backend/v1/endpoint from the compiled
// endpoints of the running config.
type endpointResolver struct{ app *App }

// Resolve returns the chatbot's endpoint (inheriting from its project's
// default and the global settings), the project's default endpoint, or with
// neither given the default endpoint (the global settings applied).
func (r endpointResolver) Resolve(groupID, chatbotID string) (api.EndpointView, error) {
	var found *compiledEndpoint
	for _, ep := range r.app.endpoints {
		switch {
		case chatbotID != "":
			if ep.ChatbotID == chatbotID && (groupID == "" || ep.ProjectID == groupID) {
				found = ep
			}
		case groupID != "":
			if ep.ProjectID == groupID && ep.ChatbotID == "" {
				found = ep
			}
		default:
			if ep.Name == DefaultEndpointName {
				found = ep
			}
		}
	}
	if found == nil {
		return api.EndpointView{}, api.ErrEndpointNotFound
	}
	view := api.EndpointView{
		ID: found.ID, Name: found.Name, ChatbotID: found.ChatbotID, GroupID: found.ProjectID,
		CreatedAt: store.Timestamp(r.app.loadedAt),
		Config: api.EndpointConfig{
			Packages:  []api.ScannerSetting{},
			Scanners:  make([]api.ScannerSetting, 0, len(found.settings)),
			Providers: []api.EndpointProvider{},
		},
	}
	for _, s := range found.settings {
		view.Config.Scanners = append(view.Config.Scanners, apiSetting(s))
	}
	for i, name := range found.Providers {
		ep := api.EndpointProvider{Name: name, Enabled: true, Default: fmt.Sprint(i == 0)}
		if p, ok := r.app.provider(name); ok {
			ep.ID, ep.Type, ep.Enabled = p.cfg.ID, p.cfg.Type, !p.cfg.Disabled
		}
		view.Config.Providers = append(view.Config.Providers, ep)
	}
	if len(found.Providers) > 0 {
		view.Config.ProviderRouting = "default"
	}
	for _, name := range found.Packages {
		view.Config.Packages = append(view.Config.Packages, api.ScannerSetting{
			ID: name, Version: "1", Enabled: "true", Blocking: "true", Force: "false", Mode: string(scanner.ModeBlock),
		})
	}
	return view, nil
}

// apiSetting is a setting as GET /backend/v1/endpoint serves it: the spec's
// seven fields.
func apiSetting(s scanner.Setting) api.ScannerSetting {
	return policy.Strings(s).Spec()
}

var _ api.EndpointResolver = endpointResolver{}
