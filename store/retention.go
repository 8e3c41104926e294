package store

import (
	"bytes"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/zap"
)

// sweepChunk bounds one sweep transaction, so a large backlog of expired
// records never holds the write lock long enough to stall the writer.
const sweepChunk = 1000

func (s *Store) runSweeper() {
	defer close(s.sweeperDone)
	if s.opts.Retention < 0 {
		return
	}
	t := time.NewTicker(s.opts.SweepInterval)
	defer t.Stop()
	for {
		n, err := s.sweep(time.Now())
		if err != nil {
			s.log.Error("store retention sweep failed", zap.Error(err))
		} else if n > 0 {
			s.log.Info("store retention sweep", zap.Int("deleted", n), zap.Duration("retention", s.opts.Retention))
		}
		select {
		case <-s.closingCh:
			return
		case <-t.C:
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
		n := 0
		err := s.db.Update(func(tx *bolt.Tx) error {
			expiry := tx.Bucket(bExpiry)
			rb := recordBucketsOf(tx)
			var keys [][]byte
			c := expiry.Cursor()
			for k, _ := c.First(); k != nil && len(keys) < sweepChunk; k, _ = c.Next() {
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
		total += n
		if err != nil {
			return total, err
		}
		if n < sweepChunk {
			return total, nil
		}
		select {
		case <-s.closingCh:
			return total, nil
		default:
		}
	}
}
