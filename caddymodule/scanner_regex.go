package caddymodule

import (
	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/regex"
)

func init() {
	caddy.RegisterModule(new(RegexScanner))
}

// RegexScanner is the `regex` detector: custom named regular expressions.
type RegexScanner struct{ regex.Config }

// CaddyModule returns the Caddy module information.
func (*RegexScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("regex", func() caddy.Module { return new(RegexScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *RegexScanner) NewScanner() (scanner.Scanner, error) { return regex.New(m.Config) }

// Interface guard
var _ ScannerModule = (*RegexScanner)(nil)
