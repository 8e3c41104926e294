package caddymodule

import (
	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/urls"
)

func init() {
	caddy.RegisterModule(new(URLsScanner))
}

// URLsScanner is the `urls` detector: URLs outside the allowed domains, denied domains and suspicious links.
type URLsScanner struct{ urls.Config }

// CaddyModule returns the Caddy module information.
func (*URLsScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("urls", func() caddy.Module { return new(URLsScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *URLsScanner) NewScanner() (scanner.Scanner, error) { return urls.New(m.Config) }

// Interface guard
var _ ScannerModule = (*URLsScanner)(nil)
