package store

import "fmt"

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

// Validate reports whether d is DurabilitySync or DurabilityBatched.
func (d Durability) Validate() error { return d.valid() }

func (d Durability) valid() error {
	switch d {
	case DurabilitySync, DurabilityBatched:
		return nil
	}
	return fmt.Errorf("store: durability %q: must be %q or %q", string(d), DurabilitySync, DurabilityBatched)
}

// Durability returns the store's durability setting.
func (s *Store) Durability() Durability {
	if s.q.Durable() {
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
	s.q.SetDurable(d == DurabilitySync)
	return nil
}
