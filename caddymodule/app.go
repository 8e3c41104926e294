package caddymodule

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/dgraph-io/ristretto/v2"
	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"github.com/promptwall/promptwall/auth"
	"github.com/promptwall/promptwall/identity"
	"github.com/promptwall/promptwall/limits"
	"github.com/promptwall/promptwall/provider"
	"github.com/promptwall/promptwall/redteam"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/store"
)

func init() {
	caddy.RegisterModule(new(App))
}

// App is the `promptwall` app: it owns the record store, the compiled
// endpoint configurations and the state shared by every Promptwall handler.
// State that must outlive a config reload (the open store, caches) lives
// in a usage pool keyed by the database.
type App struct {
	// StorageRaw chooses where records, identities, provider versions,
	// chats, templates and campaigns are kept: a module of the namespace
	// promptwall.storage (bolt, postgres), or a string, the path of a
	// bbolt file. Default: a bbolt file, promptwall/promptwall.db under
	// Caddy's data directory.
	StorageRaw json.RawMessage `json:"storage,omitempty" caddy:"namespace=promptwall.storage inline_key=engine"`
	// OpenTimeout bounds opening the store: the wait for a bbolt file's
	// lock, or connecting to a database server and migrating its schema.
	// Default: 5s.
	OpenTimeout caddy.Duration `json:"open_timeout,omitempty"`
	// Retention is how long records are kept unless marked preserve.
	// Default: 720h (30 days). A negative value keeps records forever.
	Retention caddy.Duration `json:"retention,omitempty"`
	// QueueSize bounds the records reserved or waiting to be written.
	// Default: 16384.
	QueueSize int `json:"queue_size,omitempty"`
	// EnqueueWait bounds how long a request waits for queue space before it
	// is refused with 503. Default: 1s.
	EnqueueWait caddy.Duration `json:"enqueue_wait,omitempty"`
	// MaxSize bounds the data in the database file (bytes): past it the
	// oldest records that are not preserved are deleted first, and
	// promptwall_store_records_evicted_total counts them. Default: 0, no
	// bound.
	MaxSize int64 `json:"max_size,omitempty"`
	// Durability is when a record counts as stored: "sync" (no answer is
	// acknowledged before its record is on disk; inline answers hold
	// their last byte, API answers their response, until the record's
	// batch is committed) or "batched" (records are committed in batches
	// up to 10ms after the answer; a crash loses the last few). Default:
	// sync.
	Durability string `json:"durability,omitempty"`
	// BootstrapToken is the API credential of the default organization's
	// owner. Default: the environment variable PROMPTWALL_BOOTSTRAP_TOKEN.
	// Only its SHA-256 is stored.
	BootstrapToken string `json:"bootstrap_token,omitempty"`
	// VerdictCacheBytes bounds the cache of verdicts on unchanged messages.
	// Default: 16 MiB (about 815,000 verdicts).
	VerdictCacheBytes int64 `json:"verdict_cache_bytes,omitempty"`
	// Scanners are the global scanner settings every endpoint inherits.
	Scanners []ScannerConfig `json:"scanners,omitempty"`
	// Packages are named bundles of scanner settings.
	Packages []Package `json:"packages,omitempty"`
	// Endpoints are the named endpoint configurations. An endpoint named
	// "default" replaces the built-in default set.
	Endpoints []Endpoint `json:"endpoints,omitempty"`
	// Providers are the upstream model APIs, with their limits and keys.
	Providers []provider.Config `json:"providers,omitempty"`
	// Campaigns are red-team campaigns run against the providers.
	Campaigns []Campaign `json:"campaigns,omitempty"`
	// PackFiles are operator attack packs (JSON Lines or YAML) added to
	// the built-in ones. Read when the gateway starts.
	PackFiles []string `json:"pack_files,omitempty"`
	// Orgs declares organizations and their users (config as code). They
	// are created or updated at load, matched by name and e-mail; nothing
	// is ever deleted or unblocked by a config change.
	Orgs []identity.Org `json:"orgs,omitempty"`
	// LimitsRaw chooses where providers' limits are kept: a module of
	// the namespace promptwall.limits (limits_redis.go). Default: in this
	// process, so a limit applies per instance.
	LimitsRaw json.RawMessage `json:"limits,omitempty" caddy:"namespace=promptwall.limits inline_key=engine"`

	shared        *sharedState
	storage       StorageEngine
	limitsEngine  LimitsEngine
	poolKey       string
	bootstrapHash *[32]byte
	auth          *auth.Authenticator
	loadedAt      time.Time
	providers     map[string]*configuredProvider
	endpoints     map[string]*compiledEndpoint
	metrics       *metrics
	logger        *zap.Logger
	// campaigns are the declared campaigns, validated, stored at Start.
	campaigns  []*store.Campaign
	durability store.Durability
	// previous is the config that was live when this one started; stopped
	// is set once Caddy stops this config (see activate.go).
	previous *App
	stopped  bool
}

// CaddyModule returns the Caddy module information.
func (*App) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "promptwall", New: func() caddy.Module { return new(App) }}
}

// BootstrapEnv is the environment variable holding the bootstrap token.
const BootstrapEnv = "PROMPTWALL_BOOTSTRAP_TOKEN"

// DefaultOrgName names the organization the bootstrap token belongs to and
// unauthenticated gateway traffic is recorded under.
const DefaultOrgName = "default"

// loadApp returns the promptwall app of the config a handler is
// provisioned in, loading it first if need be.
func loadApp(ctx caddy.Context) (*App, error) {
	app, err := ctx.App("promptwall")
	if err != nil {
		return nil, fmt.Errorf("loading promptwall app: %w", err)
	}
	return app.(*App), nil
}

// Provision opens (or shares) the store and compiles the endpoints.
func (a *App) Provision(ctx caddy.Context) (err error) {
	a.logger = ctx.Logger()
	a.metrics = getMetrics()
	if err := a.metrics.register(ctx.GetMetricsRegistry()); err != nil {
		return fmt.Errorf("registering metrics: %w", err)
	}
	repl := caddy.NewReplacer()
	if a.BootstrapToken == "" {
		a.BootstrapToken = os.Getenv(BootstrapEnv)
	} else {
		a.BootstrapToken = repl.ReplaceKnown(a.BootstrapToken, "")
	}
	if a.OpenTimeout == 0 {
		a.OpenTimeout = caddy.Duration(5 * time.Second)
	}
	if a.Retention == 0 {
		a.Retention = caddy.Duration(30 * 24 * time.Hour)
	}
	if a.durability, err = store.ParseDurability(a.Durability); err != nil {
		return err
	}
	if a.VerdictCacheBytes == 0 {
		a.VerdictCacheBytes = scanner.DefaultCacheBytes
	}

	if err := getStoreOpMetrics().register(ctx.GetMetricsRegistry()); err != nil {
		return fmt.Errorf("registering store metrics: %w", err)
	}
	if err := a.provisionStorage(ctx); err != nil {
		return err
	}
	a.poolKey = a.storage.StorageKey()
	val, _, err := sharedPool.LoadOrNew(a.poolKey, func() (caddy.Destructor, error) {
		return a.openShared(ctx)
	})
	if err != nil {
		return err
	}
	a.shared = val.(*sharedState)

	a.loadedAt = time.Now()
	if err := a.bootstrap(); err != nil {
		return err
	}
	a.auth = &auth.Authenticator{Store: a.shared.store, BootstrapHash: a.bootstrapHash,
		BootstrapOrgID: defaultOrgID(), Logger: a.logger}
	if err := identity.Validate(a.Orgs); err != nil {
		return err
	}
	if err := a.provisionLimits(ctx); err != nil {
		return err
	}
	if err := a.provisionProviders(); err != nil {
		return err
	}
	if err := a.compileEndpoints(ctx); err != nil {
		return err
	}
	return a.provisionCampaigns()
}

// Validate checks the configuration without side effects.
func (a *App) Validate() error {
	seen := map[string]bool{}
	for _, ep := range a.Endpoints {
		if ep.Name == "" {
			return errors.New("endpoint without a name")
		}
		if seen[ep.Name] {
			return fmt.Errorf("endpoint %q declared twice", ep.Name)
		}
		seen[ep.Name] = true
		switch ep.OnBlock {
		case "", onBlockError, onBlockCompletion:
		default:
			return fmt.Errorf("endpoint %q: on_block must be %q or %q", ep.Name, onBlockError, onBlockCompletion)
		}
	}
	return nil
}

// Cleanup releases this config's reference to the shared state; the store is
// drained and closed when the last reference goes.
func (a *App) Cleanup() error {
	if a.poolKey == "" {
		return nil
	}
	_, err := sharedPool.Delete(a.poolKey)
	return err
}

// Store returns the record store.
func (a *App) Store() store.Backend { return a.shared.store }

// sharedPool holds one sharedState per database, across reloads.
var sharedPool = caddy.NewUsagePool()

// sharedState is what survives a config reload.
type sharedState struct {
	// store is engine with its requests' metrics and its outage guard.
	store  store.Backend
	engine store.Backend
	health *storeHealth
	// limits holds each provider's limiter across reloads.
	limits *limits.Registry
	// runner executes campaigns; runs outlive config reloads.
	runner        *redteam.Runner
	stopSchedules context.CancelFunc
	// current is the config that runs (the last one started and not
	// rolled back), which long-lived work (campaign runs) uses for
	// providers and endpoints.
	current atomic.Pointer[App]
	// activeMu orders Start and Stop of configs sharing this state.
	activeMu sync.Mutex
	// refusals samples the refused requests that are recorded.
	refusals  *rate.Limiter
	verdicts  *scanner.VerdictCache
	pipelines *ristretto.Cache[string, *scanner.Pipeline]
	// external caps the concurrent calls to external scanners, sized from
	// the default organization's features.
	external *externalLimits
}

func (s *sharedState) Destruct() error {
	getStoreOpMetrics().unwatch(s.health)
	if s.runner != nil {
		s.stopSchedules()
		// Runs in flight are marked failed before the store closes.
		if err := s.runner.Close(); err != nil {
			s.closeCaches()
			return errors.Join(err, s.store.Close())
		}
	}
	s.closeCaches()
	return s.store.Close()
}

func (s *sharedState) closeCaches() {
	s.pipelines.Close()
	s.verdicts.Close()
}

// newCaches builds the verdict and pipeline caches.
func newCaches(verdictBytes int64) (*sharedState, error) {
	verdicts, err := scanner.NewVerdictCache(verdictBytes)
	if err != nil {
		return nil, err
	}
	// Pipelines cost 1 each: the cache holds the compiled endpoints of the
	// current and recent configs.
	pipelines, err := ristretto.NewCache(&ristretto.Config[string, *scanner.Pipeline]{
		NumCounters: 10_000,
		MaxCost:     1_000,
		BufferItems: 64,
	})
	if err != nil {
		verdicts.Close()
		return nil, err
	}
	return &sharedState{verdicts: verdicts, pipelines: pipelines, limits: limits.NewRegistry(nil, limitsObserver{getMetrics()}),
		refusals: newRefusalSampler(), external: new(externalLimits)}, nil
}

func (a *App) openShared(ctx context.Context) (*sharedState, error) {
	shared, err := newCaches(a.VerdictCacheBytes)
	if err != nil {
		return nil, err
	}
	health := newStoreHealth(a.storage)
	st, err := a.storage.OpenStore(ctx, a.storageOptions(health))
	if err != nil {
		shared.closeCaches()
		return nil, err
	}
	ops := getStoreOpMetrics()
	ops.watch(health)
	shared.engine, shared.health = st, health
	shared.store = &guardedStore{Backend: st, health: health, ops: ops}
	return shared, nil
}

// bootstrap makes sure the default organization exists. The bootstrap token
// itself is never stored: the API holds only its SHA-256 in memory, so
// changing the environment variable revokes the old token at the next load.
func (a *App) bootstrap() error {
	st := a.shared.store
	orgID := defaultOrgID()
	if _, err := st.GetOrg(orgID); errors.Is(err, store.ErrNotFound) {
		if err := st.PutOrg(&store.Org{ID: orgID, Name: DefaultOrgName, CreatedAt: store.Timestamp(time.Now())}); err != nil {
			return fmt.Errorf("creating default organization: %w", err)
		}
	} else if err != nil {
		return fmt.Errorf("reading default organization: %w", err)
	}
	if a.BootstrapToken == "" {
		a.logger.Warn("no bootstrap token configured: the /backend/v1 API accepts no credential until one is set",
			zap.String("env", BootstrapEnv))
		return nil
	}
	if len(a.BootstrapToken) < 32 {
		a.logger.Warn("the bootstrap token is shorter than 32 characters; use a long random token")
	}
	hash := sha256.Sum256([]byte(a.BootstrapToken))
	a.bootstrapHash = &hash
	return nil
}

// defaultStoragePath is the database path when the config names none.
func defaultStoragePath() string {
	return filepath.Join(caddy.AppDataDir(), "promptwall", "promptwall.db")
}

// defaultOrgID is the id of the default organization. It is derived once:
// every gateway request without a token is recorded under it.
var defaultOrgID = sync.OnceValue(func() string { return endpointID("org/" + DefaultOrgName) })

// Interface guards
var (
	_ caddy.App          = (*App)(nil)
	_ caddy.Provisioner  = (*App)(nil)
	_ caddy.Validator    = (*App)(nil)
	_ caddy.CleanerUpper = (*App)(nil)
)
