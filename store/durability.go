package store

import (
	"context"
	"fmt"
	"time"
)

// Durability says when a record counts as stored, and so when the caller
// may acknowledge the request it records.
type Durability string

const (
	// DurabilitySync: callers wait (Reservation.Wait) until the record's
	// transaction is on disk before they acknowledge. The writer commits
	// as soon as records are queued, and records that queue while a
	// commit is being synced go in the next one (group commit), so a
	// request waits for about one fsync, not for BatchWait.
	DurabilitySync Durability = "sync"
	// DurabilityBatched: Reservation.Wait returns at once and the writer
	// waits up to BatchWait to fill a batch. A crash loses the records of
	// requests answered in the last BatchWait plus one commit.
	DurabilityBatched Durability = "batched"
)

// ParseDurability reads a durability setting; "" is the default.
func ParseDurability(s string) (Durability, error) {
	if s == "" {
		return DurabilitySync, nil
	}
	d := Durability(s)
	return d, d.valid()
}

func (d Durability) valid() error {
	switch d {
	case DurabilitySync, DurabilityBatched:
		return nil
	}
	return fmt.Errorf("store: durability %q: must be %q or %q", string(d), DurabilitySync, DurabilityBatched)
}

// Durability returns the store's durability setting.
func (s *Store) Durability() Durability {
	if s.durable.Load() {
		return DurabilitySync
	}
	return DurabilityBatched
}

// SetDurability changes the durability setting of an open store (a config
// reload); records committed from then on follow it.
func (s *Store) SetDurability(d Durability) error {
	if err := d.valid(); err != nil {
		return err
	}
	s.durable.Store(d == DurabilitySync)
	return nil
}

// Wait returns once the record committed through r is durable in sync
// mode, or at once in batched mode (see WaitCommitted) and for a
// reservation that was cancelled or never committed. It fails with ctx's
// error, or with the store's error when it closed without committing it.
func (r *Reservation) Wait(ctx context.Context) error {
	if !r.s.durable.Load() {
		return nil
	}
	return r.WaitCommitted(ctx)
}

// WaitCommitted waits, whatever the durability setting, until the record
// committed through r is on disk: read-your-writes for an id handed to a
// client that may read it, or reference it from a chat or template, at
// once.
func (r *Reservation) WaitCommitted(ctx context.Context) error {
	t := r.ticket.Load()
	if t == 0 {
		return nil
	}
	return r.s.waitCommitted(ctx, t)
}

// readYourWrites bounds how long a read of an id that is not found waits
// for the records queued before it to commit.
const readYourWrites = 5 * time.Second

// awaitQueued is called by reads that found no record: if records are
// queued, the id may be one of them (returned to a client in a header
// before its batch committed), so it waits for them and reports whether
// the read should be tried again.
func (s *Store) awaitQueued() bool {
	s.mu.Lock()
	pending := s.enqueued > s.committed
	s.mu.Unlock()
	if !pending {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), readYourWrites)
	defer cancel()
	// Whether or not the wait completed, one more read costs little.
	_ = s.Sync(ctx)
	return true
}
