package caddymodule

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/policy"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/webhook"
)

// ScannerModule is what a module in the promptwall.scanners namespace
// provides: a configured detector. Third parties add scanners by registering
// such a module and building with `xcaddy build --with`.
type ScannerModule interface {
	caddy.Module
	NewScanner() (scanner.Scanner, error)
}

// ScannerConfig is one scanner of an endpoint: its setting (mode,
// blocking, force, directions...) plus the detector module that does the
// work.
type ScannerConfig struct {
	// ID names this scanner in results and metrics. Default: the detector's
	// module name (e.g. "secrets"). Unique within an endpoint.
	ID string `json:"id,omitempty"`
	// Version is reported as scannerVersionMeta. Default: "1".
	Version string `json:"version,omitempty"`
	// Enabled switches the scanner on or off. Default: true.
	Enabled *bool `json:"enabled,omitempty"`
	// Mode is block, modify (redact and forward) or flag (forward and
	// record). Default: block.
	Mode string `json:"mode,omitempty"`
	// Blocking runs the scanner before forwarding. When false it runs after
	// the response, off the latency path, and can only flag. Default: true.
	Blocking *bool `json:"blocking,omitempty"`
	// Force stops narrower configurations from overriding this setting.
	// Default: false.
	Force bool `json:"force,omitempty"`
	// FlagMessage is what the end user reads when this scanner blocks.
	// Default: a generic refusal naming no detail of the detection.
	FlagMessage string `json:"flag_message,omitempty"`
	// FailMode decides a request when the scanner fails: "closed" blocks,
	// "open" forwards and records the error. Default: closed.
	FailMode string `json:"fail_mode,omitempty"`
	// Timeout is the scanner's time budget per screening. Default: 100ms.
	Timeout caddy.Duration `json:"timeout,omitempty"`
	// Directions are the sides screened: "input", "output" or both.
	// Default: input, except for output-only detectors.
	Directions []string `json:"directions,omitempty"`
	// DetectorRaw is the detector module, e.g. {"scanner": "secrets", ...}.
	DetectorRaw json.RawMessage `json:"detector,omitempty" caddy:"namespace=promptwall.scanners inline_key=scanner"`

	detector ScannerModule
	// declared is the setting with its defaults applied, set by provision.
	declared scanner.Setting
}

// Endpoint is a named endpoint configuration: the scanners that screen the
// traffic of a route, a project or a chatbot.
type Endpoint struct {
	// Name identifies the endpoint in handler config, records and metrics.
	Name string `json:"name"`
	// ID is the endpoint's UUID as served by the API. Default: derived
	// deterministically from the name, so it is stable across restarts.
	ID string `json:"id,omitempty"`
	// ProjectID makes this endpoint the default of a project (the spec's
	// group). Chatbot endpoints of the same project inherit from it.
	ProjectID string `json:"project_id,omitempty"`
	// ChatbotID makes this endpoint the one of a chatbot (an application).
	ChatbotID string `json:"chatbot_id,omitempty"`
	// Providers names the providers this endpoint routes to (the spec's
	// EndpointConfig.providers; the first is the default).
	Providers []string `json:"providers,omitempty"`
	// Packages names bundles of scanner settings (see the app's packages)
	// included before Scanners.
	Packages []string `json:"packages,omitempty"`
	// Scanners of this endpoint.
	Scanners []ScannerConfig `json:"scanners,omitempty"`
	// OnBlock is how a blocked exchange is answered: "error" (the
	// provider's own error shape, status BlockStatus) or "completion" (a
	// normal answer whose text is the flagMessage). Default: error.
	OnBlock string `json:"on_block,omitempty"`
	// BlockStatus is the HTTP status of a blocked request. Default: 403.
	BlockStatus int `json:"block_status,omitempty"`
	// RestorePlaceholders puts the values that modify mode replaced in a
	// request ([EMAIL_ADDRESS_1]) back into the (non-streamed) answer, so
	// the provider never sees them and the user still reads them.
	// Default: false.
	RestorePlaceholders bool `json:"restore_placeholders,omitempty"`
}

// Package is a named bundle of scanner settings endpoints include by name.
type Package struct {
	Name     string          `json:"name"`
	Scanners []ScannerConfig `json:"scanners"`
}

// provision loads the detector module and checks the setting.
func (sc *ScannerConfig) provision(ctx caddy.Context) error {
	if sc.DetectorRaw == nil {
		return fmt.Errorf("scanner %q: no detector module configured", sc.ID)
	}
	mod, err := ctx.LoadModule(sc, "DetectorRaw")
	if err != nil {
		return fmt.Errorf("loading scanner module: %w", err)
	}
	det, ok := mod.(ScannerModule)
	if !ok {
		return fmt.Errorf("module %T is not a Promptwall scanner", mod)
	}
	sc.detector = det
	if sc.ID == "" {
		sc.ID = det.CaddyModule().ID.Name()
	}
	sc.declared, err = sc.setting()
	return err
}

// setting decodes the config into the engine's setting; the policy
// compiler applies the defaults of the fields left unset and validates it.
func (sc *ScannerConfig) setting() (scanner.Setting, error) {
	fm, err := scanner.ParseFailMode(sc.FailMode)
	if err != nil {
		return scanner.Setting{}, fmt.Errorf("scanner %q: %w", sc.ID, err)
	}
	s := scanner.Setting{
		ID:          sc.ID,
		Version:     sc.Version,
		Enabled:     sc.Enabled == nil || *sc.Enabled,
		Mode:        scanner.Mode(sc.Mode),
		Blocking:    sc.Blocking == nil || *sc.Blocking,
		Force:       sc.Force,
		FlagMessage: sc.FlagMessage,
		FailMode:    fm,
		Timeout:     time.Duration(sc.Timeout),
	}
	for _, d := range sc.Directions {
		s.Directions = append(s.Directions, scanner.Direction(d))
	}
	return policy.Complete(s, isOutputOnly(sc.detector))
}

// OutputScanner is implemented by detectors that only make sense on answers
// (prompt_leak, sensitive_output), so their default direction is output.
type OutputScanner interface {
	OutputOnly() bool
}

func isOutputOnly(det ScannerModule) bool {
	o, ok := det.(OutputScanner)
	return ok && o.OutputOnly()
}

// endpointID derives a stable UUID (version 8, name-based) from a name, so
// an endpoint declared only by name keeps its id across restarts.
func endpointID(name string) string {
	sum := sha256.Sum256([]byte("promptwall/endpoint/" + name))
	sum[6] = (sum[6] & 0x0f) | 0x80
	sum[8] = (sum[8] & 0x3f) | 0x80
	h := hex.EncodeToString(sum[:16])
	return strings.Join([]string{h[0:8], h[8:12], h[12:16], h[16:20], h[20:32]}, "-")
}

// pooledScanner is implemented by detectors that need state surviving
// reloads (the caps on concurrent external calls): the app builds them with
// the usage pool's state instead of calling NewScanner.
type pooledScanner interface {
	NewPooledScanner(*externalLimits) (scanner.Scanner, error)
}

// Defaults of blueTeam.customScanners when the organization sets no caps.
const (
	defaultMaxConcurrentCustom   = 32
	defaultMaxConcurrentVendored = 32
)

// externalLimits caps the concurrent calls to custom and vendored external
// scanners. It lives in the usage pool.
type externalLimits struct {
	mu                     sync.Mutex
	custom, vendored       *webhook.Limiter
	customCap, vendoredCap int
}

// set sizes the caps; a changed cap gets a new limiter (calls in flight
// finish on the old one), an unchanged one is kept so a reload does not
// reset the count.
func (l *externalLimits) set(custom, vendored int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.custom == nil || l.customCap != custom {
		l.custom, l.customCap = webhook.NewLimiter(custom), custom
	}
	if l.vendored == nil || l.vendoredCap != vendored {
		l.vendored, l.vendoredCap = webhook.NewLimiter(vendored), vendored
	}
}

// limiters returns the current limiters, sized at the defaults until set.
func (l *externalLimits) limiters() (custom, vendored *webhook.Limiter) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.custom == nil {
		l.custom, l.customCap = webhook.NewLimiter(defaultMaxConcurrentCustom), defaultMaxConcurrentCustom
		l.vendored, l.vendoredCap = webhook.NewLimiter(defaultMaxConcurrentVendored), defaultMaxConcurrentVendored
	}
	return l.custom, l.vendored
}

// compiledEndpoint is an endpoint ready to screen traffic.
type compiledEndpoint struct {
	Endpoint
	pipeline *scanner.Pipeline
	settings []scanner.Setting
	// hasOutput tells the handler whether answers must be held for
	// screening or can be streamed straight through.
	hasOutput bool
	// hasDeferred tells whether non-blocking scanners run after the answer.
	hasDeferred bool

	settingsOnce sync.Once
	settingsStr  string
}

// endpoint returns a compiled endpoint by name.
func (a *App) endpoint(name string) (*compiledEndpoint, error) {
	ep, ok := a.endpoints[name]
	if !ok {
		return nil, fmt.Errorf("unknown endpoint %q", name)
	}
	return ep, nil
}

// compileEndpoints loads every scanner's detector module, hands the
// declarations to the policy compiler and builds each endpoint's pipeline.
func (a *App) compileEndpoints(ctx caddy.Context) error {
	if !slices.ContainsFunc(a.Endpoints, func(ep Endpoint) bool { return ep.Name == DefaultEndpointName }) {
		a.Endpoints = append(a.Endpoints, defaultEndpoint())
	}
	cfg := policy.Config[*ScannerConfig]{Packages: make(map[string][]policy.Scanner[*ScannerConfig], len(a.Packages))}
	var err error
	if cfg.Global, err = provisionScanners(ctx, a.Scanners); err != nil {
		return fmt.Errorf("global scanners: %w", err)
	}
	for i := range a.Packages {
		p := &a.Packages[i]
		if cfg.Packages[p.Name], err = provisionScanners(ctx, p.Scanners); err != nil {
			return fmt.Errorf("package %q: %w", p.Name, err)
		}
	}
	for i := range a.Endpoints {
		ep := &a.Endpoints[i]
		declared, err := provisionScanners(ctx, ep.Scanners)
		if err != nil {
			return fmt.Errorf("endpoint %q: %w", ep.Name, err)
		}
		cfg.Endpoints = append(cfg.Endpoints, policy.Endpoint[*ScannerConfig]{
			Name: ep.Name, ProjectID: ep.ProjectID, ChatbotID: ep.ChatbotID, Packages: ep.Packages, Scanners: declared,
		})
	}

	a.endpoints = make(map[string]*compiledEndpoint, len(a.Endpoints))
	for i := range a.Endpoints {
		ep := a.Endpoints[i]
		if ep.ID == "" {
			ep.ID = endpointID(ep.Name)
		}
		if ep.BlockStatus == 0 {
			ep.BlockStatus = 403
		}
		if ep.OnBlock == "" {
			ep.OnBlock = onBlockError
		}
		resolved, err := cfg.Resolve(i)
		if err != nil {
			return err
		}
		compiled, err := a.compile(ep, resolved)
		if err != nil {
			return fmt.Errorf("endpoint %q: %w", ep.Name, err)
		}
		a.endpoints[ep.Name] = compiled
	}
	return nil
}

// provisionScanners loads the detectors of one layer of scanners and
// returns them as the policy compiler's declarations.
func provisionScanners(ctx caddy.Context, layer []ScannerConfig) ([]policy.Scanner[*ScannerConfig], error) {
	out := make([]policy.Scanner[*ScannerConfig], 0, len(layer))
	for i := range layer {
		sc := &layer[i]
		if err := sc.provision(ctx); err != nil {
			return nil, err
		}
		out = append(out, policy.Scanner[*ScannerConfig]{Setting: sc.declared, Detector: sc})
	}
	return out, nil
}

// compile builds (or reuses) the pipeline of a resolved policy. Pipelines
// are cached by the policy's version so a reload that leaves an endpoint
// unchanged keeps its compiled scanners and its verdict cache entries.
func (a *App) compile(ep Endpoint, resolved []policy.Scanner[*ScannerConfig]) (*compiledEndpoint, error) {
	version := policy.Version(resolved, func(sc *ScannerConfig) []byte { return sc.DetectorRaw })
	sides := policy.SidesOf(resolved)
	out := &compiledEndpoint{
		Endpoint: ep,
		settings: policy.Settings(resolved),
		// Restoring placeholders rewrites answers, so they are held like
		// answers that are screened.
		hasOutput:   sides.Output || ep.RestorePlaceholders,
		hasDeferred: sides.Deferred,
	}
	cacheKey := ep.ID + "/" + version
	if p, ok := a.shared.pipelines.Get(cacheKey); ok {
		a.metrics.cacheHits.WithLabelValues("pipeline").Inc()
		out.pipeline = p
		return out, nil
	}
	a.metrics.cacheMisses.WithLabelValues("pipeline").Inc()
	stages := make([]scanner.Stage, 0, len(resolved))
	for _, s := range resolved {
		det, err := newScanner(s.Detector.detector, a.shared.external)
		if err != nil {
			return nil, fmt.Errorf("scanner %q: %w", s.Setting.ID, err)
		}
		stages = append(stages, scanner.Stage{Setting: s.Setting, Scanner: det})
	}
	p, err := scanner.NewPipeline(stages, scanner.Options{
		Cache:         a.shared.verdicts,
		ConfigVersion: version,
		Observer:      pipelineObserver{a.metrics},
	})
	if err != nil {
		return nil, err
	}
	a.shared.pipelines.Set(cacheKey, p, 1)
	a.shared.pipelines.Wait()
	out.pipeline = p
	return out, nil
}

// newScanner builds a detector, handing it the pool's state if it needs it.
func newScanner(m ScannerModule, external *externalLimits) (scanner.Scanner, error) {
	if p, ok := m.(pooledScanner); ok {
		return p.NewPooledScanner(external)
	}
	return m.NewScanner()
}
