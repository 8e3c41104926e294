package store

import (
	"bytes"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/zap"
)

// sweepChunk bounds one sweep transaction, so a large backlog of expired
// records never holds the write lock long enough to stall the writer.
const sweepChunk = 1000

// evictChunk is how many records one size check deletes before measuring
// again: small, so that a bound is not overshot by a whole sweep chunk.
const evictChunk = 64

func (s *Store) runSweeper() {
	defer close(s.sweeperDone)
	t := time.NewTicker(s.opts.SweepInterval)
	defer t.Stop()
	// Open swept once before returning, so records written after Open
	// never race the first sweep.
	for first := true; ; first = false {
		// A negative Retention keeps records forever; the size bound
		// still applies.
		if s.opts.Retention >= 0 && !first {
			n, err := s.sweep(time.Now())
			if err != nil {
				s.log.Error("store retention sweep failed", zap.Error(err))
			} else if n > 0 {
				s.log.Info("store retention sweep", zap.Int("deleted", n), zap.Duration("retention", s.opts.Retention))
			}
		}
		for {
			select {
			case <-s.q.Closing():
				return
			case <-s.sizeCheck:
				s.enforceMaxSize()
				continue
			case <-t.C:
			}
			break
		}
	}
}

// sweep deletes records received before now-Retention that are not
// preserved, and returns how many. Preserved records never enter the expiry
// index, so the sweep reads only what it deletes.
func (s *Store) sweep(now time.Time) (int, error) {
	cutoff := now.Add(-s.opts.Retention).UnixMilli()
	total := 0
	for {
		n, err := s.deleteOldest(cutoff, sweepChunk)
		total += n
		if err != nil {
			return total, err
		}
		if n < sweepChunk {
			return total, nil
		}
		select {
		case <-s.q.Closing():
			return total, nil
		default:
		}
	}
}

// deleteOldest deletes, in one transaction, up to limit of the oldest
// records that are not preserved and were received before cutoff (Unix
// milliseconds), and returns how many expiry entries it consumed.
func (s *Store) deleteOldest(cutoff int64, limit int) (int, error) {
	n := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		expiry := tx.Bucket(bExpiry)
		rb := recordBucketsOf(tx)
		var keys [][]byte
		c := expiry.Cursor()
		for k, _ := c.First(); k != nil && len(keys) < limit; k, _ = c.Next() {
			if len(k) < 8 || expiryKeyTime(k) >= cutoff {
				break
			}
			// Copied: deleting while a cursor walks the same
			// bucket invalidates the key memory.
			keys = append(keys, bytes.Clone(k))
		}
		for _, k := range keys {
			id := k[8:]
			if ref, ok := rb.byID(id); ok {
				h, err := parseHeader(ref.body)
				// A record replaced since it was indexed has its own
				// expiry entry; only the matching one deletes it.
				if err == nil && !h.preserve && h.ms == expiryKeyTime(k) {
					if err := unindex(tx, string(id), h); err != nil {
						return err
					}
					if err := rb.delete(id, ref); err != nil {
						return err
					}
				}
			}
			if err := expiry.Delete(k); err != nil {
				return err
			}
		}
		n = len(keys)
		return nil
	})
	return n, err
}

// UsedBytes is the size of the data in the database file: the file's
// pages less those free for reuse. Deleting records frees pages that later
// commits reuse; the file itself never shrinks.
func (s *Store) UsedBytes() int64 {
	var size, pageSize int64
	// Inside a read transaction the file cannot be remapped under Info.
	_ = s.db.View(func(tx *bolt.Tx) error {
		size, pageSize = tx.Size(), int64(tx.DB().Info().PageSize)
		return nil
	})
	st := s.db.Stats()
	return size - int64(st.FreePageN+st.PendingPageN)*pageSize
}

// enforceMaxSize deletes the oldest records that are not preserved, a chunk
// at a time, until the data fits in MaxSize, and reports what it did.
func (s *Store) enforceMaxSize() {
	if s.opts.MaxSize <= 0 {
		return
	}
	evicted := 0
	used := s.UsedBytes()
	for used > s.opts.MaxSize {
		n, err := s.deleteOldest(math.MaxInt64, evictChunk)
		if err != nil {
			s.log.Error("store size limit: deleting the oldest records failed", zap.Error(err))
			break
		}
		if n == 0 {
			s.log.Warn("store size limit exceeded by preserved records and identities alone",
				zap.Int64("used_bytes", used), zap.Int64("max_size", s.opts.MaxSize))
			break
		}
		evicted += n
		used = s.UsedBytes()
		select {
		case <-s.q.Closing():
			used = 0
		default:
		}
	}
	if so, ok := s.obs.(SizeObserver); ok {
		so.Size(used, evicted)
	}
	if evicted > 0 {
		s.log.Warn("store size limit: oldest records deleted", zap.Int("records", evicted), zap.Int64("max_size", s.opts.MaxSize))
	}
}

// SizeObserver is an optional extension of Observer: with MaxSize set, it
// receives the data size after each check and how many records the check
// deleted to stay within MaxSize.
type SizeObserver interface {
	Size(usedBytes int64, evicted int)
}

// checkSize asks the sweeper to enforce MaxSize; called after each commit.
func (s *Store) checkSize() {
	if s.opts.MaxSize <= 0 {
		return
	}
	select {
	case s.sizeCheck <- struct{}{}:
	default:
	}
}
