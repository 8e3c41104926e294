package store

import (
	"context"
	"encoding/binary"
	"time"

	bolt "go.etcd.io/bbolt"
)

// indexFillPercent packs the sequence-keyed buckets tightly: their keys
// only ever grow, so split pages are never refilled.
const indexFillPercent = 0.95

// Reserve takes one slot of queue capacity; see Queue.Reserve.
func (s *Store) Reserve(ctx context.Context) (*Reservation, error) { return s.q.Reserve(ctx) }

// Put reserves capacity and commits p: Reserve followed by Commit.
func (s *Store) Put(ctx context.Context, p *Prompt) error { return s.q.Put(ctx, p) }

// Sync waits until every record queued before the call is committed, or ctx
// ends. It fails if the store closed without committing them.
func (s *Store) Sync(ctx context.Context) error { return s.q.Sync(ctx) }

// encodeRecord is the queue's Encode: the defaults Commit documents, then
// the stored form.
func encodeRecord(p *Prompt) (*record, error) {
	if p.ID == "" {
		p.ID = NewID()
	}
	if p.ReceivedAt.IsZero() {
		p.ReceivedAt = Timestamp(time.Now().UTC())
	}
	return encodePrompt(p)
}

// written is the queue's Written: bbolt has let go of the values, so their
// buffers can be reused, and the data has grown.
func (s *Store) written(batch []*record) {
	for _, r := range batch {
		r.release()
	}
	s.checkSize()
}

func (s *Store) writeBatch(batch []*record) error {
	if s.opts.beforeCommit != nil {
		if err := s.opts.beforeCommit(len(batch)); err != nil {
			return err
		}
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		prompts := tx.Bucket(bPrompts)
		records := tx.Bucket(bRecords)
		// Bodies are appended in sequence order: full pages waste nothing
		// and are never split again.
		records.FillPercent = 1
		rb := recordBuckets{prompts: prompts, records: records}
		sets := tx.Bucket(bScannerSets)
		orgIdx := tx.Bucket(bOrgIdx)
		userIdx := tx.Bucket(bUserIdx)
		expiry := tx.Bucket(bExpiry)
		// Index buckets and scanner sets repeat across a batch: each is
		// looked up in bbolt once per batch, by the record's own strings,
		// without building its name.
		orgBuckets := make(map[string]*bolt.Bucket)
		userBuckets := make(map[[2]string]*bolt.Bucket)
		setsStored := make(map[string]bool)
		index := func(parent *bolt.Bucket, name []byte) (*bolt.Bucket, error) {
			b, err := parent.CreateBucketIfNotExists(name)
			if err != nil {
				return nil, err
			}
			b.FillPercent = indexFillPercent
			return b, nil
		}
		// bbolt copies keys (not values), so keys are built in scratch.
		var sk [8]byte
		var ek []byte
		for _, r := range batch {
			var seq uint64
			if old, ok := rb.byID(r.key); ok {
				if h, err := parseHeader(old.body); err == nil {
					seq = h.seq
					if err := unindex(tx, r.id, h); err != nil {
						return err
					}
				}
			}
			if seq == 0 {
				var err error
				if seq, err = prompts.NextSequence(); err != nil {
					return err
				}
			}
			binary.BigEndian.PutUint64(r.value[offSeq:], seq)
			// The header's sequence bytes are the body's key and the id's
			// value: bbolt copies keys, and r.value outlives the commit.
			seqBytes := r.value[offSeq : offSeq+seqLen : offSeq+seqLen]
			if err := records.Put(seqBytes, r.value); err != nil {
				return err
			}
			if err := prompts.Put(r.key, seqBytes); err != nil {
				return err
			}
			if r.scannerSetKey != nil && !setsStored[string(r.scannerSetKey)] {
				if sets.Get(r.scannerSetKey) == nil {
					if err := sets.Put(r.scannerSetKey, r.scannerSet); err != nil {
						return err
					}
				}
				setsStored[string(r.scannerSetKey)] = true
			}
			ob := orgBuckets[r.orgID]
			if ob == nil {
				var err error
				if ob, err = index(orgIdx, orgIndexName(r.orgID)); err != nil {
					return err
				}
				orgBuckets[r.orgID] = ob
			}
			binary.BigEndian.PutUint64(sk[:], seq)
			if err := ob.Put(sk[:], r.key); err != nil {
				return err
			}
			if r.userID != "" {
				ub := userBuckets[[2]string{r.orgID, r.userID}]
				if ub == nil {
					var err error
					if ub, err = index(userIdx, userIndexName(r.orgID, r.userID)); err != nil {
						return err
					}
					userBuckets[[2]string{r.orgID, r.userID}] = ub
				}
				if err := ub.Put(sk[:], r.key); err != nil {
					return err
				}
			}
			if !r.preserve {
				ek = appendExpiryKey(ek[:0], r.ms, r.id)
				if err := expiry.Put(ek, nil); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// unindex removes the index entries of a stored record (before it is
// replaced or deleted).
func unindex(tx *bolt.Tx, id string, h header) error {
	k := seqKey(h.seq)
	if b := tx.Bucket(bOrgIdx).Bucket(orgIndexName(string(h.org))); b != nil {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	if len(h.user) > 0 {
		if b := tx.Bucket(bUserIdx).Bucket(userIndexName(string(h.org), string(h.user))); b != nil {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
	}
	if !h.preserve {
		if err := tx.Bucket(bExpiry).Delete(expiryKey(h.ms, id)); err != nil {
			return err
		}
	}
	return nil
}
