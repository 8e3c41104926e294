package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/promptwall/promptwall/store"
)

// StorageEngine opens the store that holds records, identities, provider
// versions, chats, templates and campaigns. Modules in the namespace
// promptwall.storage implement it; without one the app uses BoltStorage,
// a bbolt file on this machine.
type StorageEngine interface {
	// StorageKey identifies the database: configs with the same key share
	// one open store across reloads. It may contain a secret (a DSN's
	// password) and is never logged.
	StorageKey() string
	// OpenStore opens the store with the app's settings.
	OpenStore(ctx context.Context, o StorageOptions) (store.Backend, error)
}

// StorageOptions are the app's store settings, handed to the engine.
type StorageOptions struct {
	// OpenTimeout bounds opening the store (bbolt's file lock; a database
	// server's connection and migrations).
	OpenTimeout time.Duration
	QueueSize   int
	EnqueueWait time.Duration
	Durability  store.Durability
	// MaxSize bounds a bbolt file; engines that cannot honour it refuse a
	// config that sets it.
	MaxSize int64
	// Retention is 0 to keep records forever.
	Retention time.Duration
	Observer  store.Observer
	Logger    *zap.Logger
}

// unavailabilityReporter is an engine whose store lives on a server that can
// become unreachable: Unavailable tells whether err means that, so requests
// are answered 503 (retry later) rather than 500.
type unavailabilityReporter interface {
	Unavailable(err error) bool
}

// provisionStorage loads the storage engine: the module named in the
// config, else a bbolt file (at the path given as a plain string, the form
// storage took before it had engines, or at the default path).
func (a *App) provisionStorage(ctx caddy.Context) error {
	var engine StorageEngine
	if len(a.StorageRaw) > 0 && a.StorageRaw[0] != '"' {
		mod, err := ctx.LoadModule(a, "StorageRaw")
		if err != nil {
			return fmt.Errorf("loading storage engine: %w", err)
		}
		var ok bool
		if engine, ok = mod.(StorageEngine); !ok {
			return fmt.Errorf("module %T is not a storage engine", mod)
		}
	} else {
		bolt := new(BoltStorage)
		if len(a.StorageRaw) > 0 {
			if err := json.Unmarshal(a.StorageRaw, &bolt.Path); err != nil {
				return fmt.Errorf("storage: %w", err)
			}
		}
		if err := bolt.Provision(ctx); err != nil {
			return err
		}
		engine = bolt
	}
	if _, isBolt := engine.(*BoltStorage); !isBolt && a.MaxSize != 0 {
		return errors.New("max_size bounds a bbolt file; it does not apply to this storage engine")
	}
	a.storage = engine
	return nil
}

// storageOptions are the app's settings for the engine.
func (a *App) storageOptions(health *storeHealth) StorageOptions {
	retention := time.Duration(a.Retention)
	if retention < 0 {
		retention = 0
	}
	return StorageOptions{
		OpenTimeout: time.Duration(a.OpenTimeout),
		QueueSize:   a.QueueSize,
		EnqueueWait: time.Duration(a.EnqueueWait),
		Durability:  a.durability,
		MaxSize:     a.MaxSize,
		Retention:   retention,
		Observer:    storeObserver{m: a.metrics, health: health},
		Logger:      a.logger.Named("store"),
	}
}

// parseStorage reads the storage sub-directive of the promptwall global
// option:
//
//	storage <path>                 # a bbolt file (the default engine)
//	storage <engine> { ... }       # a module of promptwall.storage: bolt, postgres
//
// An argument naming a storage engine is the engine; write a relative file
// path of the same name as ./bolt.
func parseStorage(d *caddyfile.Dispenser) (json.RawMessage, error) {
	if !d.NextArg() {
		return nil, d.ArgErr()
	}
	name := d.Val()
	modID := "promptwall.storage." + name
	if _, err := caddy.GetModule(modID); err != nil {
		if d.NextArg() {
			return nil, d.ArgErr()
		}
		if d.NextBlock(d.Nesting()) {
			return nil, d.Errf("storage %q is not a storage engine (bolt, postgres); a bbolt path takes no block", name)
		}
		return json.Marshal(name)
	}
	unm, err := caddyfile.UnmarshalModule(d, modID)
	if err != nil {
		return nil, err
	}
	return caddyconfig.JSONModuleObject(unm, "engine", name, nil), nil
}

// storeHealth follows whether the store's server is reachable. Only the
// record writer marks it down, on a commit that failed because the server
// is unreachable: the writer retries that batch until it succeeds, which
// marks it up again, so the gateway recovers without a restart. While it
// is down the gateway refuses requests at once (503) instead of queueing
// records it cannot write.
type storeHealth struct {
	unavailable func(error) bool
	down        atomic.Bool
}

func newStoreHealth(engine StorageEngine) *storeHealth {
	h := new(storeHealth)
	if r, ok := engine.(unavailabilityReporter); ok {
		h.unavailable = r.Unavailable
	}
	return h
}

// isUnavailable tells whether err means the store's server is unreachable.
func (h *storeHealth) isUnavailable(err error) bool {
	return err != nil && (errors.Is(err, errStoreUnavailable) || (h.unavailable != nil && h.unavailable(err)))
}

func (h *storeHealth) committed(err error) {
	switch {
	case err == nil:
		h.down.Store(false)
	case h.isUnavailable(err):
		h.down.Store(true)
	}
}

// errStoreUnavailable refuses a reservation while the store's server is
// unreachable.
var errStoreUnavailable = errors.New("the record store's server is unreachable")

// guardedStore is the store the gateway and the API use: reservations are
// refused while the server is known to be unreachable, and the calls made
// on every request (token checks, record reads) are timed and their
// failures counted.
type guardedStore struct {
	store.Backend
	health *storeHealth
	ops    *storeOpMetrics
}

func (s *guardedStore) Reserve(ctx context.Context) (*store.Reservation, error) {
	if s.health.down.Load() {
		return nil, errStoreUnavailable
	}
	return s.Backend.Reserve(ctx)
}

func (s *guardedStore) LookupToken(hash [32]byte) (*store.Token, error) {
	defer s.ops.start(opLookupToken)()
	t, err := s.Backend.LookupToken(hash)
	return t, s.ops.failed(opLookupToken, err)
}

func (s *guardedStore) TouchToken(hash [32]byte, at time.Time) error {
	defer s.ops.start(opTouchToken)()
	return s.ops.failed(opTouchToken, s.Backend.TouchToken(hash, at))
}

func (s *guardedStore) GetUser(id string) (*store.User, error) {
	defer s.ops.start(opGetUser)()
	u, err := s.Backend.GetUser(id)
	return u, s.ops.failed(opGetUser, err)
}

func (s *guardedStore) GetOrg(id string) (*store.Org, error) {
	defer s.ops.start(opGetOrg)()
	o, err := s.Backend.GetOrg(id)
	return o, s.ops.failed(opGetOrg, err)
}

func (s *guardedStore) ListPrompts(q store.Query) (store.Page, error) {
	defer s.ops.start(opListPrompts)()
	p, err := s.Backend.ListPrompts(q)
	return p, s.ops.failed(opListPrompts, err)
}

func (s *guardedStore) GetPrompt(id string) (*store.Prompt, error) {
	defer s.ops.start(opGetPrompt)()
	p, err := s.Backend.GetPrompt(id)
	return p, s.ops.failed(opGetPrompt, err)
}

func (s *guardedStore) Sync(ctx context.Context) error {
	defer s.ops.start(opSync)()
	return s.ops.failed(opSync, s.Backend.Sync(ctx))
}

// storeRefusal answers a request the store failed: 503 with Retry-After
// while its server is unreachable (the client should retry), else 500.
func (a *App) storeRefusal(err error, message string) *refusal {
	if a.shared.health.isUnavailable(err) {
		return &refusal{reason: "store_unavailable", status: http.StatusServiceUnavailable, code: "store_unavailable",
			message: "The gateway cannot reach its record store right now; retry shortly.", retryAfter: "1"}
	}
	return &refusal{status: http.StatusInternalServerError, code: "internal_error", message: message}
}

// reserveRefusal answers a request whose record could not be reserved: the
// store is unreachable or its queue stayed full. Either way nothing was
// forwarded, and the client may retry.
func (a *App) reserveRefusal(err error) *refusal {
	if a.shared.health.isUnavailable(err) {
		return a.storeRefusal(err, "")
	}
	return &refusal{reason: "store_full", status: http.StatusServiceUnavailable, code: "service_unavailable",
		message: "The gateway cannot record requests right now; retry shortly.", retryAfter: "1"}
}

// lockerOf is the store's Locker, through which work that must run once
// across instances (scheduled campaigns) takes turns; nil when the engine
// has none.
func lockerOf(b store.Backend) store.Locker {
	l, _ := b.(store.Locker)
	return l
}
