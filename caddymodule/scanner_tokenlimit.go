package caddymodule

import (
	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/tokenlimit"
)

func init() {
	caddy.RegisterModule(new(TokenLimitScanner))
}

// TokenLimitScanner is the `token_limit` detector: texts longer than a token budget, counted with a real tokenizer.
type TokenLimitScanner struct{ tokenlimit.Config }

// CaddyModule returns the Caddy module information.
func (*TokenLimitScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("token_limit", func() caddy.Module { return new(TokenLimitScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *TokenLimitScanner) NewScanner() (scanner.Scanner, error) { return tokenlimit.New(m.Config) }

// Interface guard
var _ ScannerModule = (*TokenLimitScanner)(nil)
