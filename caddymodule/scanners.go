package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/banned"
	"github.com/promptwall/promptwall/scanner/code"
	"github.com/promptwall/promptwall/scanner/injection"
	"github.com/promptwall/promptwall/scanner/invisible"
	"github.com/promptwall/promptwall/scanner/language"
	"github.com/promptwall/promptwall/scanner/pii"
	"github.com/promptwall/promptwall/scanner/promptleak"
	"github.com/promptwall/promptwall/scanner/regex"
	"github.com/promptwall/promptwall/scanner/secrets"
	"github.com/promptwall/promptwall/scanner/sensitive"
	"github.com/promptwall/promptwall/scanner/tokenlimit"
	"github.com/promptwall/promptwall/scanner/urls"
	"github.com/promptwall/promptwall/scanner/webhook"
)

// The built-in detectors: each is a module in the promptwall.scanners
// namespace whose JSON config is the detector package's own Config.
func init() {
	caddy.RegisterModule(new(BannedSubstringsScanner))
	caddy.RegisterModule(new(CodeScanner))
	caddy.RegisterModule(new(InjectionScanner))
	caddy.RegisterModule(new(InvisibleTextScanner))
	caddy.RegisterModule(new(LanguageScanner))
	caddy.RegisterModule(new(PIIScanner))
	caddy.RegisterModule(new(PromptLeakScanner))
	caddy.RegisterModule(new(RegexScanner))
	caddy.RegisterModule(new(SecretsScanner))
	caddy.RegisterModule(new(SensitiveOutputScanner))
	caddy.RegisterModule(new(TokenLimitScanner))
	caddy.RegisterModule(new(URLsScanner))
	caddy.RegisterModule(new(WebhookScanner))
}

// scannerModuleInfo is the module information of a built-in detector in the
// promptwall.scanners namespace.
func scannerModuleInfo(name string, newFn func() caddy.Module) caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: caddy.ModuleID("promptwall.scanners." + name), New: newFn}
}

// BannedSubstringsScanner is the `banned_substrings` detector: banned phrases, matched case-, confusable- and leetspeak-insensitively.
type BannedSubstringsScanner struct{ banned.Config }

// CaddyModule returns the Caddy module information.
func (*BannedSubstringsScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("banned_substrings", func() caddy.Module { return new(BannedSubstringsScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *BannedSubstringsScanner) NewScanner() (scanner.Scanner, error) { return banned.New(m.Config) }

// CodeScanner is the `code` detector: programming code in a prompt.
type CodeScanner struct{ code.Config }

// CaddyModule returns the Caddy module information.
func (*CodeScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("code", func() caddy.Module { return new(CodeScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *CodeScanner) NewScanner() (scanner.Scanner, error) { return code.New(m.Config) }

// InjectionScanner is the `prompt_injection` detector: prompt injection and jailbreak attempts, also when obfuscated or encoded.
type InjectionScanner struct{ injection.Config }

// CaddyModule returns the Caddy module information.
func (*InjectionScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("prompt_injection", func() caddy.Module { return new(InjectionScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *InjectionScanner) NewScanner() (scanner.Scanner, error) { return injection.New(m.Config) }

// InvisibleTextScanner is the `invisible_text` detector: invisible, tag and bidi-control characters used to smuggle instructions.
type InvisibleTextScanner struct{ invisible.Config }

// CaddyModule returns the Caddy module information.
func (*InvisibleTextScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("invisible_text", func() caddy.Module { return new(InvisibleTextScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *InvisibleTextScanner) NewScanner() (scanner.Scanner, error) { return invisible.New(m.Config) }

// LanguageScanner is the `language` detector: texts written in a language that is not allowed.
type LanguageScanner struct{ language.Config }

// CaddyModule returns the Caddy module information.
func (*LanguageScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("language", func() caddy.Module { return new(LanguageScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *LanguageScanner) NewScanner() (scanner.Scanner, error) { return language.New(m.Config) }

// PIIScanner is the `pii` detector: e-mail addresses, phone numbers, payment cards, IBANs, SSNs, IP addresses, names and addresses.
type PIIScanner struct{ pii.Config }

// CaddyModule returns the Caddy module information.
func (*PIIScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("pii", func() caddy.Module { return new(PIIScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *PIIScanner) NewScanner() (scanner.Scanner, error) { return pii.New(m.Config) }

// PromptLeakScanner is the `prompt_leak` detector: answers that reveal the system prompt or a planted canary.
type PromptLeakScanner struct{ promptleak.Config }

// CaddyModule returns the Caddy module information.
func (*PromptLeakScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("prompt_leak", func() caddy.Module { return new(PromptLeakScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *PromptLeakScanner) NewScanner() (scanner.Scanner, error) { return promptleak.New(m.Config) }

// RegexScanner is the `regex` detector: custom named regular expressions.
type RegexScanner struct{ regex.Config }

// CaddyModule returns the Caddy module information.
func (*RegexScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("regex", func() caddy.Module { return new(RegexScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *RegexScanner) NewScanner() (scanner.Scanner, error) { return regex.New(m.Config) }

// SecretsScanner is the `secrets` detector: API keys, tokens, private keys, JWTs, connection strings and high-entropy assignments.
type SecretsScanner struct{ secrets.Config }

// CaddyModule returns the Caddy module information.
func (*SecretsScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("secrets", func() caddy.Module { return new(SecretsScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *SecretsScanner) NewScanner() (scanner.Scanner, error) { return secrets.New(m.Config) }

// SensitiveOutputScanner is the `sensitive_output` detector: secrets and personal data in a model's answer.
type SensitiveOutputScanner struct{ sensitive.Config }

// CaddyModule returns the Caddy module information.
func (*SensitiveOutputScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("sensitive_output", func() caddy.Module { return new(SensitiveOutputScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *SensitiveOutputScanner) NewScanner() (scanner.Scanner, error) {
	return sensitive.New(m.Config)
}

// TokenLimitScanner is the `token_limit` detector: texts longer than a token budget, counted with a real tokenizer.
type TokenLimitScanner struct{ tokenlimit.Config }

// CaddyModule returns the Caddy module information.
func (*TokenLimitScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("token_limit", func() caddy.Module { return new(TokenLimitScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *TokenLimitScanner) NewScanner() (scanner.Scanner, error) { return tokenlimit.New(m.Config) }

// URLsScanner is the `urls` detector: URLs outside the allowed domains, denied domains and suspicious links.
type URLsScanner struct{ urls.Config }

// CaddyModule returns the Caddy module information.
func (*URLsScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("urls", func() caddy.Module { return new(URLsScanner) })
}

// NewScanner builds the detector from its configuration.
func (m *URLsScanner) NewScanner() (scanner.Scanner, error) { return urls.New(m.Config) }

// OutputOnly makes output the default direction: the detector judges answers.
func (*SensitiveOutputScanner) OutputOnly() bool { return true }

// WebhookScanner is the `webhook` detector: an external classifier (a
// vendor's or an ML sidecar) called over HTTP, under the organization's
// caps on concurrent custom and vendored scanner calls.
type WebhookScanner struct{ webhook.Config }

// CaddyModule returns the Caddy module information.
func (*WebhookScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("webhook", func() caddy.Module { return new(WebhookScanner) })
}

// NewScanner builds the detector under caps of its own, at their defaults;
// the app builds it with NewPooledScanner instead.
func (m *WebhookScanner) NewScanner() (scanner.Scanner, error) {
	return m.NewPooledScanner(new(externalLimits))
}

// NewPooledScanner builds the detector under the organization's caps, which
// live in the usage pool so a reload does not reset the count of calls in
// flight.
func (m *WebhookScanner) NewPooledScanner(l *externalLimits) (scanner.Scanner, error) {
	custom, vendored := l.limiters()
	return webhook.New(m.Config, webhook.Options{Client: webhookClient, Custom: custom, Vendored: vendored})
}

// webhookClient is shared by every webhook scanner so connections to the
// same classifier are reused; each call is bounded by the scanner's timeout.
var webhookClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}

// Interface guards
var (
	_ ScannerModule = (*BannedSubstringsScanner)(nil)
	_ ScannerModule = (*CodeScanner)(nil)
	_ ScannerModule = (*InjectionScanner)(nil)
	_ ScannerModule = (*InvisibleTextScanner)(nil)
	_ ScannerModule = (*LanguageScanner)(nil)
	_ ScannerModule = (*PIIScanner)(nil)
	_ ScannerModule = (*PromptLeakScanner)(nil)
	_ ScannerModule = (*RegexScanner)(nil)
	_ ScannerModule = (*SecretsScanner)(nil)
	_ ScannerModule = (*SensitiveOutputScanner)(nil)
	_ ScannerModule = (*TokenLimitScanner)(nil)
	_ ScannerModule = (*URLsScanner)(nil)
	_ ScannerModule = (*WebhookScanner)(nil)
	_ OutputScanner = (*SensitiveOutputScanner)(nil)
	_ pooledScanner = (*WebhookScanner)(nil)
)
