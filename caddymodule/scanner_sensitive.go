package caddymodule

import (
	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/sensitive"
)

func init() {
	caddy.RegisterModule(new(SensitiveOutputScanner))
}

// SensitiveOutputScanner is the `sensitive_output` detector: secrets and
// personal data in a model's answer.
type SensitiveOutputScanner struct{ sensitive.Config }

// CaddyModule returns the Caddy module information.
func (*SensitiveOutputScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("sensitive_output", func() caddy.Module { return new(SensitiveOutputScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *SensitiveOutputScanner) NewScanner() (scanner.Scanner, error) {
	return sensitive.New(m.Config)
}

// OutputOnly makes output the default direction: the detector judges answers.
func (*SensitiveOutputScanner) OutputOnly() bool { return true }

// Interface guards
var (
	_ ScannerModule = (*SensitiveOutputScanner)(nil)
	_ OutputScanner = (*SensitiveOutputScanner)(nil)
)
