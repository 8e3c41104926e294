package caddymodule

import (
	"fmt"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/promptwall/promptwall/limits"
)

// provisionLimits loads the limits engine named in the config, if any.
func (a *App) provisionLimits(ctx caddy.Context) error {
	a.limitsEngine = nil
	if a.LimitsRaw == nil {
		return nil
	}
	mod, err := ctx.LoadModule(a, "LimitsRaw")
	if err != nil {
		return fmt.Errorf("loading limits engine: %w", err)
	}
	engine, ok := mod.(LimitsEngine)
	if !ok {
		return fmt.Errorf("module %T is not a limits engine", mod)
	}
	a.limitsEngine = engine
	return nil
}

// limitSet returns where providers' limits are kept: the configured
// engine, else this process's registry (kept across reloads).
func (a *App) limitSet() limits.Set {
	if a.limitsEngine != nil {
		return a.limitsEngine.Set()
	}
	return limits.Local(a.shared.limits)
}

// parseLimitsEngine reads `limits <engine> { ... }` of the promptwall
// global option into the JSON of the module promptwall.limits.<engine>.
func parseLimitsEngine(d *caddyfile.Dispenser) ([]byte, error) {
	if !d.NextArg() {
		return nil, d.ArgErr()
	}
	name := d.Val()
	modID := "promptwall.limits." + name
	unm, err := caddyfile.UnmarshalModule(d, modID)
	if err != nil {
		return nil, err
	}
	return caddyconfig.JSONModuleObject(unm, "engine", name, nil), nil
}
