package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/zap"
)

const (
	retryBackoffMin = 10 * time.Millisecond
	retryBackoffMax = time.Second
	// indexFillPercent packs the sequence-keyed buckets tightly: their keys
	// only ever grow, so split pages are never refilled.
	indexFillPercent = 0.95
)

// Reservation is queue capacity for one record, taken before the request is
// forwarded so that a full queue refuses the request instead of losing its
// record. Use it exactly once: Commit, or Cancel when the request ends
// without a record. Cancel after Commit is a no-op, so `defer r.Cancel()`
// is the safe pattern.
type Reservation struct {
	s    *Store
	used atomic.Bool
	// ext is the reservation of another Backend (see NewReservation).
	ext Pending
	// ticket is the record's place in commit order (set by Commit): it is
	// durable once the writer has committed that many records.
	ticket atomic.Uint64
}

// Reserve takes one slot of queue capacity, waiting up to EnqueueWait (or
// until ctx ends) for one to free up. It fails with ErrQueueFull when none
// does (wrapping ctx's error too when ctx ended first) and with ErrClosed
// once Close has begun.
func (s *Store) Reserve(ctx context.Context) (*Reservation, error) {
	select {
	case <-s.closingCh:
		return nil, ErrClosed
	default:
	}
	select {
	case s.slots <- struct{}{}:
	default:
		t := time.NewTimer(s.opts.EnqueueWait)
		defer t.Stop()
		select {
		case s.slots <- struct{}{}:
		case <-t.C:
			s.obs.Rejected()
			return nil, fmt.Errorf("%w: %d records waiting, none committed within %s", ErrQueueFull, s.QueueDepth(), s.opts.EnqueueWait)
		case <-ctx.Done():
			s.obs.Rejected()
			return nil, fmt.Errorf("%w: %w", ErrQueueFull, ctx.Err())
		case <-s.closingCh:
			return nil, ErrClosed
		}
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		<-s.slots
		return nil, ErrClosed
	}
	s.outstanding++
	s.mu.Unlock()
	return &Reservation{s: s}, nil
}

// Commit queues p for the writer without waiting for disk. An empty p.ID is
// set to NewID() and a zero p.ReceivedAt to now, so the caller can read
// them back from p; p is encoded before Commit returns, so the caller may
// reuse it afterwards. A record with an existing ID replaces it and keeps
// its place in the list order.
//
// On any error the reservation is released. ErrClosed means Close finished
// draining before this Commit: the record was not stored.
func (r *Reservation) Commit(p *Prompt) error {
	if r.ext != nil {
		return r.ext.Commit(p)
	}
	if !r.used.CompareAndSwap(false, true) {
		return ErrReservationUsed
	}
	s := r.s
	if p.ID == "" {
		p.ID = NewID()
	}
	if p.ReceivedAt.IsZero() {
		p.ReceivedAt = Timestamp(time.Now().UTC())
	}
	rec, err := encodePrompt(p)
	if err != nil {
		s.release()
		return err
	}
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		s.release()
		return ErrClosed
	}
	// Sending under mu keeps the enqueued count in channel order (Sync
	// relies on it) and orders every send before the writer's final drain.
	s.queue <- rec
	s.enqueued++
	r.ticket.Store(s.enqueued)
	// The writer holds a batch's first record while it waits, so a batch is
	// complete at BatchSize-1 queued.
	if len(s.queue) >= s.opts.BatchSize-1 {
		select {
		case s.batchFull <- struct{}{}:
		default:
		}
	}
	s.doneReservationLocked()
	s.mu.Unlock()
	s.reportDepth()
	return nil
}

// Cancel returns the reserved capacity. It is a no-op after Commit.
func (r *Reservation) Cancel() {
	if r.ext != nil {
		r.ext.Cancel()
		return
	}
	if r.used.CompareAndSwap(false, true) {
		r.s.release()
	}
}

func (s *Store) release() {
	s.mu.Lock()
	s.doneReservationLocked()
	s.mu.Unlock()
	<-s.slots
	s.reportDepth()
}

func (s *Store) doneReservationLocked() {
	s.outstanding--
	if s.outstanding == 0 && s.idle != nil {
		close(s.idle)
		s.idle = nil
	}
}

// Put reserves capacity and commits p: Reserve followed by Commit.
func (s *Store) Put(ctx context.Context, p *Prompt) error {
	r, err := s.Reserve(ctx)
	if err != nil {
		return err
	}
	return r.Commit(p)
}

// Sync waits until every record queued before the call is committed, or ctx
// ends. It fails if the store closed without committing them.
func (s *Store) Sync(ctx context.Context) error {
	s.mu.Lock()
	target := s.enqueued
	s.mu.Unlock()
	return s.waitCommitted(ctx, target)
}

// waitCommitted waits until the writer has committed target records.
func (s *Store) waitCommitted(ctx context.Context, target uint64) error {
	s.mu.Lock()
	for s.committed < target {
		ch := s.commitNotify
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.writerDone:
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.committed >= target {
				return nil
			}
			if s.lostErr != nil {
				return s.lostErr
			}
			return ErrClosed
		}
		s.mu.Lock()
	}
	s.mu.Unlock()
	return nil
}

// runWriter is the only goroutine that writes records. It batches up to
// BatchSize records or BatchWait, whichever comes first, into one Update.
// While it fills a batch it sleeps rather than taking each record as it is
// queued: a wake-up per record costs the gateway a context switch per
// request on a loaded CPU, and the batch commits no later for it.
func (s *Store) runWriter() {
	defer close(s.writerDone)
	batch := make([]*record, 0, s.opts.BatchSize)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case r := <-s.queue:
			batch = append(batch[:0], r)
		case <-s.stopWriter:
			s.drain(batch)
			return
		}
		// A signal from before this batch began is stale: drop it, then
		// let the queue's length decide.
		select {
		case <-s.batchFull:
		default:
		}
		// In sync mode requests wait for their batch: commit at once
		// (group commit: what queues during this fsync is the next batch).
		if !s.durable.Load() && len(s.queue) < s.opts.BatchSize-1 {
			timer.Reset(s.opts.BatchWait)
			select {
			case <-timer.C:
			case <-s.batchFull:
			case <-s.stopWriter:
			}
			timer.Stop()
		}
		batch = s.takeQueued(batch)
		if !s.commit(batch) {
			s.abandon(batch)
			return
		}
	}
}

// takeQueued appends queued records to batch, without waiting, until the
// queue is empty or batch holds BatchSize.
func (s *Store) takeQueued(batch []*record) []*record {
	for len(batch) < s.opts.BatchSize {
		select {
		case r := <-s.queue:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// drain commits everything left after Close stopped new Commits.
func (s *Store) drain(batch []*record) {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	for {
		batch = s.takeQueued(batch[:0])
		if len(batch) == 0 {
			return
		}
		if !s.commit(batch) {
			s.abandon(batch)
			return
		}
	}
}

// abandon is reached only when Close's DrainTimeout ran out while the disk
// kept failing. The records cannot be kept; they are counted and named in
// the log and in Close's error rather than dropped silently.
func (s *Store) abandon(batch []*record) {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	ids := make([]string, 0, len(batch)+len(s.queue))
	for _, r := range batch {
		ids = append(ids, r.id)
	}
	for {
		select {
		case r := <-s.queue:
			ids = append(ids, r.id)
			continue
		default:
		}
		break
	}
	s.log.Error("store closed with uncommitted records", zap.Int("records", len(ids)), zap.Strings("ids", ids))
	s.mu.Lock()
	s.lostErr = fmt.Errorf("%w: %d records could not be written before DrainTimeout", ErrUncommitted, len(ids))
	s.mu.Unlock()
}

// commit writes batch, retrying with backoff until it succeeds. Records
// keep their queue slots while retrying, so a failing disk fills the queue
// and Reserve starts refusing requests instead of anything being dropped.
// It gives up (returning false) only after Close's drain deadline.
func (s *Store) commit(batch []*record) bool {
	backoff := retryBackoffMin
	stop := s.stopWriter
	var deadline time.Time
	for attempt := 1; ; attempt++ {
		start := time.Now()
		err := s.writeBatch(batch)
		d := time.Since(start)
		s.obs.Committed(len(batch), d, err)
		if err == nil {
			if attempt > 1 {
				s.log.Info("store commit recovered", zap.Int("attempts", attempt), zap.Int("batch", len(batch)))
			}
			// bbolt has let go of the values: their buffers can be reused.
			// Slots first, so a Sync that returns sees the depth fall.
			for _, r := range batch {
				r.release()
				<-s.slots
			}
			s.reportDepth()
			s.mu.Lock()
			s.committed += uint64(len(batch))
			close(s.commitNotify)
			s.commitNotify = make(chan struct{})
			s.mu.Unlock()
			s.checkSize()
			return true
		}
		s.log.Error("store commit failed; retrying",
			zap.Error(err), zap.Int("attempt", attempt), zap.Int("batch", len(batch)),
			zap.Int("queue_depth", s.QueueDepth()), zap.Duration("backoff", backoff))
		select {
		case <-stop:
			stop = nil
			deadline = s.drainDeadline
		default:
		}
		if !deadline.IsZero() && time.Now().Add(backoff).After(deadline) {
			return false
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-stop:
			// Close began: keep retrying, now against its deadline.
			t.Stop()
			stop = nil
			deadline = s.drainDeadline
		}
		backoff = min(backoff*2, retryBackoffMax)
	}
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

// reportDepth tells the observer the queue depth. The depth is read under
// depthMu, so reports reach the observer in the order they read it: every
// change is followed by a report, so the last one holds the current depth,
// whatever order concurrent commits and cancels finish in.
func (s *Store) reportDepth() {
	s.depthMu.Lock()
	s.obs.QueueDepth(len(s.slots))
	s.depthMu.Unlock()
}
