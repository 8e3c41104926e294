package caddymodule

import (
	"net/http"
	"sync"

	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/webhook"
)

func init() {
	caddy.RegisterModule(new(WebhookScanner))
}

// WebhookScanner is the `webhook` detector: an external classifier (a
// vendor's or an ML sidecar) called over HTTP, under the organization's
// caps on concurrent custom and vendored scanner calls.
type WebhookScanner struct{ webhook.Config }

// CaddyModule returns the Caddy module information.
func (*WebhookScanner) CaddyModule() caddy.ModuleInfo {
	return scannerModuleInfo("webhook", func() caddy.Module { return new(WebhookScanner) })
}

// NewScanner builds the detector with the organization's concurrency caps.
func (m *WebhookScanner) NewScanner() (scanner.Scanner, error) {
	custom, vendored := externalScannerLimits()
	return webhook.New(m.Config, webhook.Options{Client: webhookClient, Custom: custom, Vendored: vendored})
}

// webhookClient is shared by every webhook scanner so connections to the
// same classifier are reused; each call is bounded by the scanner's timeout.
var webhookClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}

// Defaults of blueTeam.customScanners when the organization sets no caps.
const (
	defaultMaxConcurrentCustom   = 32
	defaultMaxConcurrentVendored = 32
)

var externalLimits struct {
	sync.Mutex
	custom, vendored *webhook.Limiter
	customCap        int
	vendoredCap      int
}

// setExternalScannerLimits sizes the caps; a changed cap gets a new limiter
// (calls in flight finish on the old one), an unchanged one is kept so a
// reload does not reset the count.
func setExternalScannerLimits(custom, vendored int) {
	externalLimits.Lock()
	defer externalLimits.Unlock()
	if externalLimits.custom == nil || externalLimits.customCap != custom {
		externalLimits.custom, externalLimits.customCap = webhook.NewLimiter(custom), custom
	}
	if externalLimits.vendored == nil || externalLimits.vendoredCap != vendored {
		externalLimits.vendored, externalLimits.vendoredCap = webhook.NewLimiter(vendored), vendored
	}
}

func externalScannerLimits() (custom, vendored *webhook.Limiter) {
	externalLimits.Lock()
	defer externalLimits.Unlock()
	if externalLimits.custom == nil {
		externalLimits.custom, externalLimits.customCap = webhook.NewLimiter(defaultMaxConcurrentCustom), defaultMaxConcurrentCustom
		externalLimits.vendored, externalLimits.vendoredCap = webhook.NewLimiter(defaultMaxConcurrentVendored), defaultMaxConcurrentVendored
	}
	return externalLimits.custom, externalLimits.vendored
}

// Interface guard
var _ ScannerModule = (*WebhookScanner)(nil)
