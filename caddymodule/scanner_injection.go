package caddymodule

import (
	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/injection"
)

func init() {
	caddy.RegisterModule(new(InjectionScanner))
}

// InjectionScanner is the `prompt_injection` detector: prompt injection and jailbreak attempts, also when obfuscated or encoded.
type InjectionScanner struct{ injection.Config }

// CaddyModule returns the Caddy module information.
func (*InjectionScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("prompt_injection", func() caddy.Module { return new(InjectionScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *InjectionScanner) NewScanner() (scanner.Scanner, error) { return injection.New(m.Config) }

// Interface guard
var _ ScannerModule = (*InjectionScanner)(nil)
