package caddymodule

import (
	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/banned"
)

func init() {
	caddy.RegisterModule(new(BannedSubstringsScanner))
}

// BannedSubstringsScanner is the `banned_substrings` detector: banned phrases, matched case-, confusable- and leetspeak-insensitively.
type BannedSubstringsScanner struct{ banned.Config }

// CaddyModule returns the Caddy module information.
func (*BannedSubstringsScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("banned_substrings", func() caddy.Module { return new(BannedSubstringsScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *BannedSubstringsScanner) NewScanner() (scanner.Scanner, error) { return banned.New(m.Config) }

// Interface guard
var _ ScannerModule = (*BannedSubstringsScanner)(nil)
