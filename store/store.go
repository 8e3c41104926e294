// Package store persists Promptwall's records (screened prompts and scans)
// and the identities that may read them, in one bbolt file.
//
// Records are written by a single writer goroutine that commits queued
// records in batches, so the request path never waits on an fsync. Capacity
// in the queue is reserved before a request is forwarded upstream, which lets
// the gateway fail closed (503) instead of forwarding traffic it could not
// record. Reads are short View transactions; nothing returned by the store
// aliases bbolt memory.
//
// The package imports no Caddy: the Caddy app owns a *Store through a usage
// pool so that it survives config reloads.
package store

import (
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
	"go.uber.org/zap"
)

// Sentinel errors. Errors returned by the store wrap one of these (or a
// context error) so callers can branch with errors.Is.
var (
	// ErrNotFound: no record, org, user or token has that key.
	ErrNotFound = errors.New("store: not found")
	// ErrQueueFull: no queue capacity became free within EnqueueWait (or
	// before the context ended). The HTTP layer answers 503.
	ErrQueueFull = errors.New("store: write queue full")
	// ErrClosed: the store is closing or closed.
	ErrClosed = errors.New("store: closed")
	// ErrLocked: the database file is locked by another process or by
	// another open Store in this process.
	ErrLocked = errors.New("store: database file is locked")
	// ErrBadCursor: a pagination cursor is malformed, tampered with, from
	// another database, or was issued for a query with other filters.
	ErrBadCursor = errors.New("store: invalid cursor")
	// ErrInvalidLimit: a page size outside 1..MaxLimit.
	ErrInvalidLimit = errors.New("store: limit out of range")
	// ErrInvalidRecord: a record to store lacks a required field or has
	// one too long to be a key.
	ErrInvalidRecord = errors.New("store: invalid record")
	// ErrReservationUsed: Commit on a reservation already committed or
	// cancelled.
	ErrReservationUsed = errors.New("store: reservation already used")
	// ErrUncommitted: Close could not commit every acknowledged record
	// within DrainTimeout (the disk kept failing). The error says how many.
	ErrUncommitted = errors.New("store: records not committed")
	// ErrConflict: an org name or a user e-mail (within its org) is
	// already taken, or CreateOrg/CreateUser found the id in use.
	ErrConflict = errors.New("store: already exists")
	// ErrUnavailable: a shared database could not be reached, or refused
	// work for want of resources (the bbolt store never returns it). The
	// HTTP layer answers 503: the request may succeed once it returns.
	ErrUnavailable = errors.New("store: database unavailable")
)

// Defaults applied by Open to zero Options fields.
const (
	DefaultOpenTimeout   = 5 * time.Second
	DefaultQueueSize     = 16384
	DefaultBatchSize     = 256
	DefaultBatchWait     = 10 * time.Millisecond
	DefaultEnqueueWait   = time.Second
	DefaultRetention     = 30 * 24 * time.Hour
	DefaultSweepInterval = time.Hour
	DefaultDrainTimeout  = 30 * time.Second
)

// Options configures Open. Zero fields take the documented default.
type Options struct {
	// Path of the bbolt file; required. It is created if missing.
	Path string
	// OpenTimeout bounds the wait for the file lock. Default 5s.
	OpenTimeout time.Duration
	// QueueSize is how many records may be reserved or queued and not yet
	// committed. Default 16384.
	QueueSize int
	// BatchSize is the most records committed in one transaction.
	// Default 256.
	BatchSize int
	// BatchWait is how long the writer waits to fill a batch after its
	// first record. Default 10ms.
	BatchWait time.Duration
	// EnqueueWait is how long Reserve waits for queue capacity before
	// ErrQueueFull. Default 1s.
	EnqueueWait time.Duration
	// Retention is how long records are kept, judged by receivedAt;
	// records with Preserve are kept forever. Default 30 days; a negative
	// value disables expiry (zero means "default", as everywhere in
	// Options).
	Retention time.Duration
	// SweepInterval is how often expired records are deleted. Default 1h.
	SweepInterval time.Duration
	// DrainTimeout bounds how long Close waits for outstanding
	// reservations and for a failing disk to accept the queued records.
	// Default 30s.
	DrainTimeout time.Duration
	// MaxSize bounds the data in the database file, in bytes: past it the
	// oldest records that are not preserved are deleted first. Zero means
	// no bound. Identities, campaigns and preserved records are never
	// deleted to make room.
	MaxSize int64
	// Durability says when a record counts as stored: DurabilitySync
	// (the default) or DurabilityBatched; see Durability.
	Durability Durability
	// Observer receives queue and commit events for metrics; optional.
	Observer Observer
	// Logger receives commit failures and sweep results; optional.
	Logger *zap.Logger

	// beforeCommit runs before each batch transaction; an error fails the
	// attempt as a full disk would. Tests use it to stall or break the
	// writer.
	beforeCommit func(batch int) error
}

// Observer receives store events, for metrics. Methods are called from the
// store's goroutines and from request goroutines; they must be cheap and safe
// for concurrent use.
type Observer interface {
	// QueueDepth is called with the number of records reserved, queued or
	// being committed, whenever it changes for a record queued, a batch
	// committed or a reservation cancelled: an idle store reports 0.
	QueueDepth(depth int)
	// Committed is called after every commit attempt; err is nil on
	// success. A failed batch is retried and reported again.
	Committed(batch int, d time.Duration, err error)
	// Rejected is called when Reserve gives up with ErrQueueFull.
	Rejected()
}

type nopObserver struct{}

func (nopObserver) QueueDepth(int)                      {}
func (nopObserver) Committed(int, time.Duration, error) {}
func (nopObserver) Rejected()                           {}

// Bucket names. Identity buckets sit beside the record buckets so the
// identity model (roles, teams, chats) can grow by adding buckets.
var (
	bMeta = []byte("meta")
	// bPrompts maps a record's id to its commit sequence (8 bytes, big
	// endian), the key of its body in bRecords; see recordBuckets.byID.
	bPrompts = []byte("prompts")
	// bRecords holds record bodies by commit sequence, so the writer only
	// ever appends to it.
	bRecords = []byte("records")
	// bScannerSets holds each distinct scanner settings JSON once, by key.
	bScannerSets = []byte("scanner_sets")
	bOrgIdx      = []byte("idx_org")  // nested per org: seq -> id
	bUserIdx     = []byte("idx_user") // nested per org+user: seq -> id
	bExpiry      = []byte("expiry")   // receivedAt+id -> nil, non-preserved only
	bOrgs        = []byte("orgs")
	bUsers       = []byte("users")
	bOrgUsers    = []byte("org_users") // org\x00user -> nil
	bTokens      = []byte("tokens")    // sha256 -> token
	allBuckets   = [][]byte{bMeta, bPrompts, bRecords, bOrgIdx, bUserIdx, bExpiry, bOrgs, bUsers, bOrgUsers, bTokens, bOrgNames, bOrgEmails, bTokenIDs,
		bCampaigns, bSchedules, bCampaignRuns, bCampaignRunIx, bAttackRuns,
		bProviders, bProviderSeq, bChats, bChatPrompts, bTemplates, bTemplatePrompts, bScannerSets}

	keyCursorKey = []byte("cursor_hmac_key")
)

// Store is an open record store. It is safe for concurrent use.
type Store struct {
	db   *bolt.DB
	opts Options
	log  *zap.Logger
	obs  Observer

	cursorKey []byte

	// q is the write path: reservations, the writer and its batches.
	q *Queue[*record]

	sweeperDone chan struct{}
	sizeCheck   chan struct{}

	closeOnce sync.Once
	closeErr  error
	// locks are the names held through TryLock.
	locks localLocks
}

// NewID returns a new record id: a UUIDv7, so ids sort by creation time.
func NewID() string {
	return uuid.Must(uuid.NewV7()).String()
}

// Open opens (creating if needed) the database at opts.Path and starts the
// writer and the retention sweeper.
func Open(opts Options) (*Store, error) {
	if opts.Path == "" {
		return nil, errors.New("store: Options.Path is required")
	}
	setDefault(&opts.OpenTimeout, DefaultOpenTimeout)
	setDefault(&opts.QueueSize, DefaultQueueSize)
	setDefault(&opts.BatchSize, DefaultBatchSize)
	setDefault(&opts.BatchWait, DefaultBatchWait)
	setDefault(&opts.EnqueueWait, DefaultEnqueueWait)
	setDefault(&opts.Retention, DefaultRetention)
	setDefault(&opts.SweepInterval, DefaultSweepInterval)
	setDefault(&opts.DrainTimeout, DefaultDrainTimeout)
	setDefault(&opts.Durability, DurabilitySync)
	if err := opts.Durability.valid(); err != nil {
		return nil, err
	}
	if opts.BatchSize > opts.QueueSize {
		opts.BatchSize = opts.QueueSize
	}

	db, err := bolt.Open(opts.Path, 0o600, &bolt.Options{Timeout: opts.OpenTimeout})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s: another process, or another open Store in this process, holds its lock (waited %s); close the other user or use another path",
			ErrLocked, opts.Path, opts.OpenTimeout)
	}
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", opts.Path, err)
	}
	s := &Store{
		db:          db,
		opts:        opts,
		log:         opts.Logger,
		obs:         opts.Observer,
		sweeperDone: make(chan struct{}),
		sizeCheck:   make(chan struct{}, 1),
	}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	if s.obs == nil {
		s.obs = nopObserver{}
	}
	if err := s.init(); err != nil {
		_ = db.Close()
		return nil, err
	}
	s.q = NewQueue(QueueConfig[*record]{
		QueueSize: opts.QueueSize, BatchSize: opts.BatchSize, BatchWait: opts.BatchWait, EnqueueWait: opts.EnqueueWait,
		Durable: opts.Durability == DurabilitySync, Observer: s.obs, Logger: s.log,
		Encode: encodeRecord, Write: s.writeBatch, Written: s.written,
		ID: func(r *record) string { return r.id },
	})
	// Nobody can commit before Open returns: the first sweep cannot race
	// a record.
	if opts.Retention >= 0 {
		if n, err := s.sweep(time.Now()); err != nil {
			s.log.Error("store retention sweep failed", zap.Error(err))
		} else if n > 0 {
			s.log.Info("store retention sweep", zap.Int("deleted", n), zap.Duration("retention", opts.Retention))
		}
	}
	go s.runSweeper()
	return s, nil
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// init creates the buckets and the per-database cursor key. The key is
// random per database so a cursor from another Promptwall installation (or
// a restored copy of another one) is rejected.
func (s *Store) init() error {
	return s.db.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("store: create bucket %s: %w", name, err)
			}
		}
		meta := tx.Bucket(bMeta)
		if k := meta.Get(keyCursorKey); len(k) == 32 {
			s.cursorKey = append([]byte(nil), k...)
			return nil
		}
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return fmt.Errorf("store: cursor key: %w", err)
		}
		s.cursorKey = k
		return meta.Put(keyCursorKey, k)
	})
}

// Path returns the database file path.
func (s *Store) Path() string { return s.opts.Path }

// QueueDepth returns how many records are reserved, queued or being
// committed.
func (s *Store) QueueDepth() int { return s.q.QueueDepth() }

// Close stops accepting reservations, waits (up to DrainTimeout) for
// outstanding reservations, commits every queued record, stops the
// goroutines and closes the file. It is idempotent; later calls return the
// first call's result. If the disk kept failing so that acknowledged records
// could not be committed, the error wraps ErrUncommitted.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Store) close() error {
	lost := s.q.Close(s.opts.DrainTimeout)
	<-s.sweeperDone
	return errors.Join(lost, s.db.Close())
}
