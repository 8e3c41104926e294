package caddymodule

import "github.com/caddyserver/caddy/v2"

// scannerModuleInfo is the module information of a built-in detector in the
// promptwall.scanners namespace.
func scannerModuleInfo(name string, newFn func() caddy.Module) caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: caddy.ModuleID("promptwall.scanners." + name), New: newFn}
}
