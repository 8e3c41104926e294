// Package pgstore keeps everything Promptwall stores in PostgreSQL, so that
// several gateway instances share one database: records, orgs, users and
// tokens (as SHA-256 hashes only), provider configuration versions, chats,
// templates, and red-team campaigns with their runs. A record written
// through one instance is listed by the API of every other, and a cursor
// issued by one is accepted by all (they share the cursor key from
// configuration).
//
// It implements store.Backend with the bbolt store's semantics: the same
// rules (store's backendkit.go), the same sentinel errors, orders and
// cursors, and the same write path (store.Queue): capacity is reserved
// before a request is forwarded, one writer goroutine per instance commits
// queued records in batches (COPY), and a store that cannot write fills its
// queue and refuses new requests with store.ErrQueueFull instead of losing
// records. Work that must be done once is: writers of all instances take
// turns on an advisory lock (so records list in commit order), one
// instance sweeps at a time, config written by several instances at once
// converges on unique constraints, and TryLock (store.Locker) lets one
// instance run a scheduled campaign. An unreachable database makes calls
// fail with store.ErrUnavailable. The schema is migrated at Open from
// embedded, versioned files.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/promptwall/promptwall/store"
)

// Advisory lock keys, one per kind of work done by one instance at a time.
// They are arbitrary constants; "pw" in the high bytes keeps them apart
// from keys other software might use in the same database.
const (
	lockMigrate int64 = 0x7077_0000_0000_0001
	lockWriter  int64 = 0x7077_0000_0000_0002
	lockSweep   int64 = 0x7077_0000_0000_0003
)

// Options configures Open. Zero fields take the bbolt store's defaults.
type Options struct {
	// DSN is the PostgreSQL connection string; required.
	DSN string
	// CursorKey signs pagination cursors; required, at least 32 bytes.
	// Every instance sharing the database must use the same key, or a
	// cursor from one is refused by another.
	CursorKey []byte
	// MaxConns bounds the connection pool. Default 10.
	MaxConns int32
	// QueueSize, BatchSize, BatchWait, EnqueueWait, Retention,
	// SweepInterval and DrainTimeout mean what store.Options says, with
	// store's defaults except BatchSize (DefaultBatchSize).
	QueueSize     int
	BatchSize     int
	BatchWait     time.Duration
	EnqueueWait   time.Duration
	Retention     time.Duration
	SweepInterval time.Duration
	DrainTimeout  time.Duration
	// Durability says when a record counts as stored, as in
	// store.Options: DurabilitySync (the default) or DurabilityBatched.
	Durability store.Durability
	// Observer receives queue and commit events; optional.
	Observer store.Observer
	// Logger receives commit failures and sweeps; optional.
	Logger *zap.Logger

	// noSweeper leaves sweeping to explicit Sweep calls; tests use it to
	// decide when a sweep runs.
	noSweeper bool
	// noCopy writes every batch with the multi-row upsert instead of COPY;
	// the writer benchmark compares the two.
	noCopy bool
}

// DefaultBatchSize is the most records one transaction writes: larger than
// the bbolt store's, because each PostgreSQL transaction costs a round
// trip, a turn on the writers' lock and a WAL flush that large batches
// amortize.
const DefaultBatchSize = 2048

// Store is an open PostgreSQL record store, safe for concurrent use.
type Store struct {
	pool    *pgxpool.Pool
	opts    Options
	log     *zap.Logger
	obs     store.Observer
	cursors store.Cursors
	// fold is the collation searches lower-case under: ICU's root locale
	// when the server has it, which folds every script whatever the
	// database's locale (in the C locale lower() folds ASCII only).
	fold string

	// q is the write path: reservations, the writer and its batches.
	q *store.Queue[*row]

	sweeperDone chan struct{}

	// locks are the connections holding TryLock's locks, by their release.
	locksMu sync.Mutex
	locks   map[*pgx.Conn]func()
	// copyBuf is the writer's COPY data, reused from batch to batch.
	copyBuf []byte
	// knownSets are scanner settings known to be stored; see unknownSets.
	setsMu    sync.Mutex
	knownSets map[string]bool
	closeOnce sync.Once
	closeErr  error
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// Open connects, applies the schema migrations and starts the writer and
// the retention sweeper.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.DSN == "" {
		return nil, errors.New("pgstore: Options.DSN is required")
	}
	cursors, err := store.NewCursors(opts.CursorKey)
	if err != nil {
		return nil, err
	}
	setDefault(&opts.MaxConns, 10)
	setDefault(&opts.QueueSize, store.DefaultQueueSize)
	setDefault(&opts.BatchSize, DefaultBatchSize)
	setDefault(&opts.BatchWait, store.DefaultBatchWait)
	setDefault(&opts.EnqueueWait, store.DefaultEnqueueWait)
	setDefault(&opts.Retention, store.DefaultRetention)
	setDefault(&opts.SweepInterval, store.DefaultSweepInterval)
	setDefault(&opts.DrainTimeout, store.DefaultDrainTimeout)
	setDefault(&opts.Durability, store.DurabilitySync)
	if err := opts.Durability.Validate(); err != nil {
		return nil, err
	}
	opts.BatchSize = min(opts.BatchSize, opts.QueueSize)

	cfg, err := pgxpool.ParseConfig(opts.DSN)
	if err != nil {
		// The DSN may hold a password: the error says where, not what.
		return nil, errors.New("pgstore: the DSN is not a valid PostgreSQL connection string")
	}
	cfg.MaxConns = opts.MaxConns
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: connect: %w", err)
	}
	if _, err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	s := &Store{
		pool:        pool,
		opts:        opts,
		log:         opts.Logger,
		obs:         opts.Observer,
		cursors:     cursors,
		sweeperDone: make(chan struct{}),
		knownSets:   map[string]bool{},
	}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	var icu bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu')`).Scan(&icu); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	if icu {
		s.fold = ` COLLATE "und-x-icu"`
	} else {
		s.log.Warn("PostgreSQL has no ICU collation und-x-icu: searches fold case by the database's locale")
	}
	if s.obs == nil {
		s.obs = nopObserver{}
	}
	s.q = store.NewQueue(store.QueueConfig[*row]{
		QueueSize: opts.QueueSize, BatchSize: opts.BatchSize, BatchWait: opts.BatchWait, EnqueueWait: opts.EnqueueWait,
		Durable: opts.Durability == store.DurabilitySync, Observer: s.obs, Logger: s.log,
		Encode: encodeRow, Write: s.writeBatch, ID: func(r *row) string { return r.id },
	})
	// Nobody can commit before Open returns: the first sweep cannot race
	// a record.
	if s.opts.Retention >= 0 && !s.opts.noSweeper {
		s.sweepAndLog()
	}
	go s.runSweeper()
	return s, nil
}

type nopObserver struct{}

func (nopObserver) QueueDepth(int)                      {}
func (nopObserver) Committed(int, time.Duration, error) {}
func (nopObserver) Rejected()                           {}

// Pool returns the connection pool, for its metrics.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close stops accepting reservations, waits up to DrainTimeout for those
// outstanding, writes every queued record and closes the pool. Records it
// could not write make the error wrap store.ErrUncommitted.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Store) close() error {
	lost := s.q.Close(s.opts.DrainTimeout)
	<-s.sweeperDone
	s.releaseLocks()
	s.pool.Close()
	return lost
}

var _ store.Backend = (*Store)(nil)
