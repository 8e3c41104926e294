package caddymodule

import (
	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/secrets"
)

func init() {
	caddy.RegisterModule(new(SecretsScanner))
}

// SecretsScanner is the `secrets` detector: API keys, tokens, private keys, JWTs, connection strings and high-entropy assignments.
type SecretsScanner struct{ secrets.Config }

// CaddyModule returns the Caddy module information.
func (*SecretsScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("secrets", func() caddy.Module { return new(SecretsScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *SecretsScanner) NewScanner() (scanner.Scanner, error) { return secrets.New(m.Config) }

// Interface guard
var _ ScannerModule = (*SecretsScanner)(nil)
