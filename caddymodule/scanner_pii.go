package caddymodule

import (
	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/pii"
)

func init() {
	caddy.RegisterModule(new(PIIScanner))
}

// PIIScanner is the `pii` detector: e-mail addresses, phone numbers, payment cards, IBANs, SSNs, IP addresses, names and addresses.
type PIIScanner struct{ pii.Config }

// CaddyModule returns the Caddy module information.
func (*PIIScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("pii", func() caddy.Module { return new(PIIScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *PIIScanner) NewScanner() (scanner.Scanner, error) { return pii.New(m.Config) }

// Interface guard
var _ ScannerModule = (*PIIScanner)(nil)
