package caddymodule

import (
	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/invisible"
)

func init() {
	caddy.RegisterModule(new(InvisibleTextScanner))
}

// InvisibleTextScanner is the `invisible_text` detector: invisible, tag and bidi-control characters used to smuggle instructions.
type InvisibleTextScanner struct{ invisible.Config }

// CaddyModule returns the Caddy module information.
func (*InvisibleTextScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("invisible_text", func() caddy.Module { return new(InvisibleTextScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *InvisibleTextScanner) NewScanner() (scanner.Scanner, error) { return invisible.New(m.Config) }

// Interface guard
var _ ScannerModule = (*InvisibleTextScanner)(nil)
