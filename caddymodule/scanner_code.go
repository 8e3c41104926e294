package caddymodule

import (
	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/code"
)

func init() {
	caddy.RegisterModule(new(CodeScanner))
}

// CodeScanner is the `code` detector: programming code in a prompt.
type CodeScanner struct{ code.Config }

// CaddyModule returns the Caddy module information.
func (*CodeScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("code", func() caddy.Module { return new(CodeScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *CodeScanner) NewScanner() (scanner.Scanner, error) { return code.New(m.Config) }

// Interface guard
var _ ScannerModule = (*CodeScanner)(nil)
