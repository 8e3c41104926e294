package caddymodule

import (
	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/promptleak"
)

func init() {
	caddy.RegisterModule(new(PromptLeakScanner))
}

// PromptLeakScanner is the `prompt_leak` detector: answers that reveal the system prompt or a planted canary.
type PromptLeakScanner struct{ promptleak.Config }

// CaddyModule returns the Caddy module information.
func (*PromptLeakScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("prompt_leak", func() caddy.Module { return new(PromptLeakScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *PromptLeakScanner) NewScanner() (scanner.Scanner, error) { return promptleak.New(m.Config) }

// Interface guard
var _ ScannerModule = (*PromptLeakScanner)(nil)
