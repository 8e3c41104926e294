package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/promptwall/promptwall/store"
)

const (
	retryBackoffMin = 10 * time.Millisecond
	retryBackoffMax = time.Second
	// writeTimeout bounds one batch statement, so a hung server is a
	// failed attempt (retried) rather than a writer stuck forever.
	writeTimeout = 30 * time.Second
)

// row is one record encoded for the batch insert.
type row struct {
	id, org, user, outcome, project, provider, endpoint, input string
	ms                                                         int64
	preserve                                                   bool
	body                                                       []byte
	scannersRef, scanners                                      string
}

func encodeRow(p *store.Prompt) (*row, error) {
	if err := store.PrepareRecord(p); err != nil {
		return nil, err
	}
	cp := *p
	cp.Input = ""
	r := &row{id: p.ID, org: p.OrgID, user: p.UserID, outcome: p.Result.Outcome, project: p.ProjectID,
		provider: p.ProviderID, endpoint: p.EndpointID, input: p.Input,
		ms: p.ReceivedAt.Time().UnixMilli(), preserve: p.Preserve}
	if cp.Scanners != "" {
		sum := sha256.Sum256([]byte(cp.Scanners))
		r.scannersRef, r.scanners = hex.EncodeToString(sum[:]), cp.Scanners
		cp.Scanners, cp.ScannersRef = "", ""
	}
	body, err := store.AppendPromptJSON(nil, &cp)
	if err != nil {
		return nil, err
	}
	r.body = body
	return r, nil
}

type reservation struct {
	s    *Store
	used atomic.Bool
}

// Reserve takes one slot of queue capacity as store.Store.Reserve does.
func (s *Store) Reserve(ctx context.Context) (*store.Reservation, error) {
	select {
	case <-s.closingCh:
		return nil, store.ErrClosed
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
			return nil, fmt.Errorf("%w: %d records waiting, none written within %s", store.ErrQueueFull, s.QueueDepth(), s.opts.EnqueueWait)
		case <-ctx.Done():
			s.obs.Rejected()
			return nil, fmt.Errorf("%w: %w", store.ErrQueueFull, ctx.Err())
		case <-s.closingCh:
			return nil, store.ErrClosed
		}
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		<-s.slots
		return nil, store.ErrClosed
	}
	s.outstanding++
	s.mu.Unlock()
	return store.NewReservation(&reservation{s: s}), nil
}

// Commit queues p for the writer; see store.Reservation.Commit.
func (r *reservation) Commit(p *store.Prompt) error {
	if !r.used.CompareAndSwap(false, true) {
		return store.ErrReservationUsed
	}
	s := r.s
	rw, err := encodeRow(p)
	if err != nil {
		s.release()
		return err
	}
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		s.release()
		return store.ErrClosed
	}
	s.queue <- rw
	s.enqueued++
	s.doneReservationLocked()
	s.mu.Unlock()
	s.obs.QueueDepth(s.QueueDepth())
	return nil
}

// Cancel returns the reserved capacity; a no-op after Commit.
func (r *reservation) Cancel() {
	if r.used.CompareAndSwap(false, true) {
		r.s.release()
	}
}

func (s *Store) release() {
	s.mu.Lock()
	s.doneReservationLocked()
	s.mu.Unlock()
	<-s.slots
	s.obs.QueueDepth(s.QueueDepth())
}

func (s *Store) doneReservationLocked() {
	s.outstanding--
	if s.outstanding == 0 && s.idle != nil {
		close(s.idle)
		s.idle = nil
	}
}

// Put reserves capacity and commits p.
func (s *Store) Put(ctx context.Context, p *store.Prompt) error {
	r, err := s.Reserve(ctx)
	if err != nil {
		return err
	}
	return r.Commit(p)
}

// Sync waits until every record queued before the call is written.
func (s *Store) Sync(ctx context.Context) error {
	s.mu.Lock()
	target := s.enqueued
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
			return store.ErrClosed
		}
		s.mu.Lock()
	}
	s.mu.Unlock()
	return nil
}

// runWriter is this instance's only writer. It gathers up to BatchSize
// records or BatchWait, whichever comes first, into one statement.
func (s *Store) runWriter() {
	defer close(s.writerDone)
	batch := make([]*row, 0, s.opts.BatchSize)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case r := <-s.queue:
			batch = append(batch[:0], r)
		case <-s.stopWriter:
			s.drain(batch[:0])
			return
		}
		if len(s.queue) < s.opts.BatchSize-1 {
			timer.Reset(s.opts.BatchWait)
			select {
			case <-timer.C:
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

func (s *Store) takeQueued(batch []*row) []*row {
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

func (s *Store) drain(batch []*row) {
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

// abandon is reached only when Close's DrainTimeout ran out while the
// database kept failing: the records are counted and named, never dropped
// silently.
func (s *Store) abandon(batch []*row) {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	ids := make([]string, 0, len(batch)+len(s.queue))
	for _, r := range batch {
		ids = append(ids, r.id)
	}
	for done := false; !done; {
		select {
		case r := <-s.queue:
			ids = append(ids, r.id)
		default:
			done = true
		}
	}
	s.log.Error("store closed with unwritten records", zap.Int("records", len(ids)), zap.Strings("ids", ids))
	s.mu.Lock()
	s.lostErr = fmt.Errorf("%w: %d records could not be written before DrainTimeout", store.ErrUncommitted, len(ids))
	s.mu.Unlock()
}

// commit writes batch, retrying with backoff until it succeeds: records
// keep their queue slots meanwhile, so an unreachable database fills the
// queue and Reserve refuses requests (503) instead of losing records. It
// gives up only after Close's drain deadline.
func (s *Store) commit(batch []*row) bool {
	backoff := retryBackoffMin
	stop := s.stopWriter
	var deadline time.Time
	for attempt := 1; ; attempt++ {
		start := time.Now()
		err := s.writeBatch(batch)
		s.obs.Committed(len(batch), time.Since(start), err)
		if err == nil {
			if attempt > 1 {
				s.log.Info("store commit recovered", zap.Int("attempts", attempt), zap.Int("batch", len(batch)))
			}
			for range batch {
				<-s.slots
			}
			s.obs.QueueDepth(s.QueueDepth())
			s.mu.Lock()
			s.committed += uint64(len(batch))
			close(s.commitNotify)
			s.commitNotify = make(chan struct{})
			s.mu.Unlock()
			return true
		}
		s.log.Error("store commit failed; retrying", zap.Error(err), zap.Int("attempt", attempt),
			zap.Int("batch", len(batch)), zap.Int("queue_depth", s.QueueDepth()), zap.Duration("backoff", backoff))
		select {
		case <-stop:
			stop = nil
			deadline = s.drainBy
		default:
		}
		if !deadline.IsZero() && time.Now().Add(backoff).After(deadline) {
			return false
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-stop:
			t.Stop()
			stop = nil
			deadline = s.drainBy
		}
		backoff = min(backoff*2, retryBackoffMax)
	}
}

// insertRecords writes a whole batch in one statement from column arrays.
// A record whose id exists replaces it and keeps its seq, so its place in
// the list order, as in the bbolt store.
const insertRecords = `
INSERT INTO promptwall_prompts
	(id, org_id, user_id, outcome, project_id, provider_id, endpoint_id, received_ms, preserve, input, body, scanners_ref)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
	$8::bigint[], $9::boolean[], $10::text[], $11::bytea[], $12::text[])
ON CONFLICT (id) DO UPDATE SET
	org_id = EXCLUDED.org_id, user_id = EXCLUDED.user_id, outcome = EXCLUDED.outcome,
	project_id = EXCLUDED.project_id, provider_id = EXCLUDED.provider_id, endpoint_id = EXCLUDED.endpoint_id,
	received_ms = EXCLUDED.received_ms, preserve = EXCLUDED.preserve, input = EXCLUDED.input,
	body = EXCLUDED.body, scanners_ref = EXCLUDED.scanners_ref`

const insertScannerSets = `
INSERT INTO promptwall_scanner_sets (ref, settings)
SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (ref) DO NOTHING`

func (s *Store) writeBatch(batch []*row) error {
	// One statement cannot update a row twice: a record written twice in
	// one batch keeps the place of its first write (as a replacement keeps
	// the place of the record it replaces) and the content of its last.
	n := len(batch)
	ids, orgs, users, outcomes := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	projects, providers, endpoints, inputs := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	ms, preserve, bodies, refs := make([]int64, 0, n), make([]bool, 0, n), make([][]byte, 0, n), make([]string, 0, n)
	setRefs, sets := []string{}, []string{}
	seenSet := map[string]bool{}
	at := make(map[string]int, n)
	for _, r := range batch {
		if i, ok := at[r.id]; ok {
			orgs[i], users[i], outcomes[i], projects[i] = r.org, r.user, r.outcome, r.project
			providers[i], endpoints[i], inputs[i], ms[i] = r.provider, r.endpoint, r.input, r.ms
			preserve[i], bodies[i], refs[i] = r.preserve, r.body, r.scannersRef
		} else {
			at[r.id] = len(ids)
			ids, orgs, users, outcomes = append(ids, r.id), append(orgs, r.org), append(users, r.user), append(outcomes, r.outcome)
			projects, providers, endpoints = append(projects, r.project), append(providers, r.provider), append(endpoints, r.endpoint)
			inputs, ms, preserve = append(inputs, r.input), append(ms, r.ms), append(preserve, r.preserve)
			bodies, refs = append(bodies, r.body), append(refs, r.scannersRef)
		}
		if r.scannersRef != "" && !seenSet[r.scannersRef] {
			seenSet[r.scannersRef] = true
			setRefs, sets = append(setRefs, r.scannersRef), append(sets, r.scanners)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	// Writers of every instance take turns, so seq order is commit order:
	// a record never appears behind a cursor already handed out.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockWriter); err != nil {
		return err
	}
	if len(setRefs) > 0 {
		if _, err := tx.Exec(ctx, insertScannerSets, setRefs, sets); err != nil {
			return err
		}
	}
	copied := false
	if !s.opts.noCopy {
		var err error
		copied, err = s.copyRecords(ctx, tx, ids, orgs, users, outcomes, projects, providers, endpoints, ms, preserve, inputs, bodies, refs)
		if err != nil {
			return err
		}
	}
	if !copied {
		if _, err := tx.Exec(ctx, insertRecords, ids, orgs, users, outcomes, projects, providers, endpoints, ms, preserve, inputs, bodies, refs); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// recordColumns are the columns COPY fills, in insertRecords' order.
var recordColumns = []string{"id", "org_id", "user_id", "outcome", "project_id", "provider_id", "endpoint_id",
	"received_ms", "preserve", "input", "body", "scanners_ref"}

// copyRecords writes a batch of new records with COPY, the fastest way
// into PostgreSQL, under a savepoint. COPY cannot update: when a record
// of the batch replaces one already stored, the savepoint is rolled back,
// copied is false, and the caller writes the batch with insertRecords.
func (s *Store) copyRecords(ctx context.Context, tx pgx.Tx, ids, orgs, users, outcomes, projects, providers, endpoints []string,
	ms []int64, preserve []bool, inputs []string, bodies [][]byte, refs []string) (copied bool, err error) {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return false, err
	}
	_, err = sp.CopyFrom(ctx, pgx.Identifier{"promptwall_prompts"}, recordColumns, pgx.CopyFromSlice(len(ids), func(i int) ([]any, error) {
		return []any{ids[i], orgs[i], users[i], outcomes[i], projects[i], providers[i], endpoints[i], ms[i], preserve[i], inputs[i], bodies[i], refs[i]}, nil
	}))
	if uniqueViolation(err, "promptwall_prompts_id_key") {
		return false, sp.Rollback(ctx)
	}
	if err != nil {
		return false, err
	}
	return true, sp.Commit(ctx)
}
