package caddymodule

import (
	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/language"
)

func init() {
	caddy.RegisterModule(new(LanguageScanner))
}

// LanguageScanner is the `language` detector: texts written in a language that is not allowed.
type LanguageScanner struct{ language.Config }

// CaddyModule returns the Caddy module information.
func (*LanguageScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("language", func() caddy.Module { return new(LanguageScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *LanguageScanner) NewScanner() (scanner.Scanner, error) { return language.New(m.Config) }

// Interface guard
var _ ScannerModule = (*LanguageScanner)(nil)
