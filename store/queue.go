package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

const (
	retryBackoffMin = 10 * time.Millisecond
	retryBackoffMax = time.Second
)

// QueueConfig configures a Queue. Sizes and waits mean what Options says;
// they must be set (backends apply their defaults first).
type QueueConfig[T any] struct {
	QueueSize   int
	BatchSize   int
	BatchWait   time.Duration
	EnqueueWait time.Duration
	// Durable starts the queue in sync mode; see SetDurable.
	Durable  bool
	Observer Observer
	Logger   *zap.Logger
	// Encode checks and encodes a record as Commit is called: an error
	// refuses the record, and its capacity is freed.
	Encode func(p *Prompt) (T, error)
	// Write commits one batch, all or nothing. A failed batch is retried
	// with backoff, so Write must be safe to call again with the same batch.
	Write func(batch []T) error
	// Written, optional, runs after a batch is written and before its
	// records are counted as committed.
	Written func(batch []T)
	// ID names a record in the log when Close has to give records up.
	ID func(T) string
}

// Queue is the write path every backend shares: capacity reserved before a
// request is forwarded, one writer goroutine committing queued records in
// batches, retries with backoff while the engine fails (records keep their
// capacity, so a failing engine fills the queue and Reserve refuses new
// requests instead of anything being dropped), tickets for durability and
// read-your-writes, and a bounded drain on Close.
type Queue[T any] struct {
	cfg QueueConfig[T]
	log *zap.Logger
	obs Observer

	// slots is a semaphore of QueueSize tokens: one per reserved, queued
	// or in-flight record. queue has the same capacity, so a reserved
	// record can always be queued without blocking.
	slots chan struct{}
	// depthMu orders queue depth reports (see reportDepth).
	depthMu sync.Mutex
	queue   chan T
	// batchFull wakes the writer early when a whole batch is queued; below
	// that it sleeps out BatchWait instead of waking once per record.
	batchFull chan struct{}

	mu           sync.Mutex
	closing      bool          // no new reservations
	stopped      bool          // writer drained; Commit fails
	outstanding  int           // reservations neither committed nor cancelled
	idle         chan struct{} // closed when outstanding reaches 0 while closing
	enqueued     uint64
	committed    uint64
	commitNotify chan struct{} // closed and replaced after each commit
	lostErr      error

	closingCh     chan struct{}
	stopWriter    chan struct{}
	drainDeadline time.Time
	writerDone    chan struct{}
	closeOnce     sync.Once

	// durable is true in sync mode; see SetDurable.
	durable atomic.Bool
}

// NewQueue returns a queue and starts its writer.
func NewQueue[T any](cfg QueueConfig[T]) *Queue[T] {
	q := &Queue[T]{
		cfg:          cfg,
		log:          cfg.Logger,
		obs:          cfg.Observer,
		slots:        make(chan struct{}, cfg.QueueSize),
		queue:        make(chan T, cfg.QueueSize),
		batchFull:    make(chan struct{}, 1),
		commitNotify: make(chan struct{}),
		closingCh:    make(chan struct{}),
		stopWriter:   make(chan struct{}),
		writerDone:   make(chan struct{}),
	}
	if q.log == nil {
		q.log = zap.NewNop()
	}
	if q.obs == nil {
		q.obs = nopObserver{}
	}
	q.durable.Store(cfg.Durable)
	go q.runWriter()
	return q
}

// reserver is what a Reservation needs of its queue, whatever the type of
// the queue's records.
type reserver interface {
	commit(r *Reservation, p *Prompt) error
	release()
	waitCommitted(ctx context.Context, target uint64) error
	isDurable() bool
}

// Reservation is queue capacity for one record, taken before the request is
// forwarded so that a full queue refuses the request instead of losing its
// record. Use it exactly once: Commit, or Cancel when the request ends
// without a record. Cancel after Commit is a no-op, so `defer r.Cancel()`
// is the safe pattern.
type Reservation struct {
	q    reserver
	used atomic.Bool
	// ticket is the record's place in commit order (set by Commit): it is
	// durable once the writer has committed that many records.
	ticket atomic.Uint64
}

// Commit queues p for the writer without waiting for the engine. An empty
// p.ID is set to NewID() and a zero p.ReceivedAt to now, so the caller can
// read them back from p; p is encoded before Commit returns, so the caller
// may reuse it afterwards. A record with an existing ID replaces it and
// keeps its place in the list order.
//
// On any error the reservation is released. ErrClosed means Close finished
// draining before this Commit: the record was not stored.
func (r *Reservation) Commit(p *Prompt) error {
	if !r.used.CompareAndSwap(false, true) {
		return ErrReservationUsed
	}
	return r.q.commit(r, p)
}

// Cancel returns the reserved capacity. It is a no-op after Commit.
func (r *Reservation) Cancel() {
	if r.used.CompareAndSwap(false, true) {
		r.q.release()
	}
}

// Wait returns once the record committed through r is durable in sync
// mode, or at once in batched mode (see WaitCommitted) and for a
// reservation that was cancelled or never committed. It fails with ctx's
// error, or with the store's error when it closed without committing it.
func (r *Reservation) Wait(ctx context.Context) error {
	if !r.q.isDurable() {
		return nil
	}
	return r.WaitCommitted(ctx)
}

// WaitCommitted waits, whatever the durability setting, until the record
// committed through r is stored: read-your-writes for an id handed to a
// client that may read it, or reference it from a chat or template, at
// once.
func (r *Reservation) WaitCommitted(ctx context.Context) error {
	t := r.ticket.Load()
	if t == 0 {
		return nil
	}
	return r.q.waitCommitted(ctx, t)
}

// Reserve takes one slot of queue capacity, waiting up to EnqueueWait (or
// until ctx ends) for one to free up. It fails with ErrQueueFull when none
// does (wrapping ctx's error too when ctx ended first) and with ErrClosed
// once Close has begun.
func (q *Queue[T]) Reserve(ctx context.Context) (*Reservation, error) {
	select {
	case <-q.closingCh:
		return nil, ErrClosed
	default:
	}
	select {
	case q.slots <- struct{}{}:
	default:
		t := time.NewTimer(q.cfg.EnqueueWait)
		defer t.Stop()
		select {
		case q.slots <- struct{}{}:
		case <-t.C:
			q.obs.Rejected()
			return nil, fmt.Errorf("%w: %d records waiting, none committed within %s", ErrQueueFull, q.QueueDepth(), q.cfg.EnqueueWait)
		case <-ctx.Done():
			q.obs.Rejected()
			return nil, fmt.Errorf("%w: %w", ErrQueueFull, ctx.Err())
		case <-q.closingCh:
			return nil, ErrClosed
		}
	}
	q.mu.Lock()
	if q.closing {
		q.mu.Unlock()
		<-q.slots
		return nil, ErrClosed
	}
	q.outstanding++
	q.mu.Unlock()
	return &Reservation{q: q}, nil
}

func (q *Queue[T]) commit(r *Reservation, p *Prompt) error {
	rec, err := q.cfg.Encode(p)
	if err != nil {
		q.release()
		return err
	}
	q.mu.Lock()
	if q.stopped {
		q.mu.Unlock()
		q.release()
		return ErrClosed
	}
	// Sending under mu keeps the enqueued count in channel order (Sync
	// relies on it) and orders every send before the writer's final drain.
	q.queue <- rec
	q.enqueued++
	r.ticket.Store(q.enqueued)
	// The writer holds a batch's first record while it waits, so a batch is
	// complete at BatchSize-1 queued.
	if len(q.queue) >= q.cfg.BatchSize-1 {
		select {
		case q.batchFull <- struct{}{}:
		default:
		}
	}
	q.doneReservationLocked()
	q.mu.Unlock()
	q.reportDepth()
	return nil
}

func (q *Queue[T]) release() {
	q.mu.Lock()
	q.doneReservationLocked()
	q.mu.Unlock()
	<-q.slots
	q.reportDepth()
}

func (q *Queue[T]) doneReservationLocked() {
	q.outstanding--
	if q.outstanding == 0 && q.idle != nil {
		close(q.idle)
		q.idle = nil
	}
}

func (q *Queue[T]) isDurable() bool { return q.durable.Load() }

// Durable reports whether the queue is in sync mode.
func (q *Queue[T]) Durable() bool { return q.durable.Load() }

// SetDurable switches sync mode: in it the writer commits a batch as soon
// as it has one record (group commit: what queues meanwhile is the next
// batch) and Reservation.Wait waits for the record's commit; otherwise the
// writer fills batches for up to BatchWait and Wait returns at once.
func (q *Queue[T]) SetDurable(on bool) { q.durable.Store(on) }

// Put reserves capacity and commits p: Reserve followed by Commit.
func (q *Queue[T]) Put(ctx context.Context, p *Prompt) error {
	r, err := q.Reserve(ctx)
	if err != nil {
		return err
	}
	return r.Commit(p)
}

// Sync waits until every record queued before the call is committed, or ctx
// ends. It fails if the store closed without committing them.
func (q *Queue[T]) Sync(ctx context.Context) error {
	q.mu.Lock()
	target := q.enqueued
	q.mu.Unlock()
	return q.waitCommitted(ctx, target)
}

// QueueDepth returns how many records are reserved, queued or being
// committed.
func (q *Queue[T]) QueueDepth() int { return len(q.slots) }

// readYourWrites bounds how long a read of an id that is not found waits
// for the records queued before it to commit.
const readYourWrites = 5 * time.Second

// ReadYourWrites runs read, a lookup by id, and where it finds no record
// (ErrNotFound) while records queued before it began were not all
// committed, waits for those (up to readYourWrites) and reads once more:
// the id may be one of them, handed to a client before its batch
// committed. What was queued is noted before the first read: noted after
// it, a batch committed between the two would leave the miss standing.
func ReadYourWrites[T, R any](q *Queue[T], read func() (R, error)) (R, error) {
	q.mu.Lock()
	queued, pending := q.enqueued, q.enqueued > q.committed
	q.mu.Unlock()
	r, err := read()
	if !pending || !errors.Is(err, ErrNotFound) {
		return r, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), readYourWrites)
	defer cancel()
	// Whether or not the wait completed, one more read costs little.
	_ = q.waitCommitted(ctx, queued)
	return read()
}

// Closing is closed when Close begins.
func (q *Queue[T]) Closing() <-chan struct{} { return q.closingCh }

// waitCommitted waits until the writer has committed target records.
func (q *Queue[T]) waitCommitted(ctx context.Context, target uint64) error {
	q.mu.Lock()
	for q.committed < target {
		ch := q.commitNotify
		q.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-q.writerDone:
			q.mu.Lock()
			defer q.mu.Unlock()
			if q.committed >= target {
				return nil
			}
			if q.lostErr != nil {
				return q.lostErr
			}
			return ErrClosed
		}
		q.mu.Lock()
	}
	q.mu.Unlock()
	return nil
}

// Close stops accepting reservations, waits (up to drainTimeout) for
// outstanding reservations, commits every queued record and stops the
// writer. It is idempotent. If the engine kept failing so that
// acknowledged records could not be committed, the error wraps
// ErrUncommitted.
func (q *Queue[T]) Close(drainTimeout time.Duration) error {
	q.closeOnce.Do(func() { q.close(drainTimeout) })
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.lostErr
}

func (q *Queue[T]) close(drainTimeout time.Duration) {
	deadline := time.Now().Add(drainTimeout)
	q.mu.Lock()
	q.closing = true
	close(q.closingCh)
	var idle chan struct{}
	if q.outstanding > 0 {
		q.idle = make(chan struct{})
		idle = q.idle
	}
	q.mu.Unlock()
	if idle != nil {
		t := time.NewTimer(time.Until(deadline))
		select {
		case <-idle:
		case <-t.C:
			q.mu.Lock()
			n := q.outstanding
			q.mu.Unlock()
			q.log.Warn("closing store with outstanding reservations; their records will be refused",
				zap.Int("reservations", n))
		}
		t.Stop()
	}
	q.drainDeadline = deadline
	close(q.stopWriter)
	<-q.writerDone
}

// runWriter is the only goroutine that writes records. It batches up to
// BatchSize records or BatchWait, whichever comes first, into one Write.
// While it fills a batch it sleeps rather than taking each record as it is
// queued: a wake-up per record costs the gateway a context switch per
// request on a loaded CPU, and the batch commits no later for it.
func (q *Queue[T]) runWriter() {
	defer close(q.writerDone)
	batch := make([]T, 0, q.cfg.BatchSize)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case r := <-q.queue:
			batch = append(batch[:0], r)
		case <-q.stopWriter:
			q.drain(batch)
			return
		}
		// A signal from before this batch began is stale: drop it, then
		// let the queue's length decide.
		select {
		case <-q.batchFull:
		default:
		}
		// In sync mode requests wait for their batch: commit at once
		// (group commit: what queues during this commit is the next batch).
		if !q.durable.Load() && len(q.queue) < q.cfg.BatchSize-1 {
			timer.Reset(q.cfg.BatchWait)
			select {
			case <-timer.C:
			case <-q.batchFull:
			case <-q.stopWriter:
			}
			timer.Stop()
		}
		batch = q.takeQueued(batch)
		if !q.commitBatch(batch) {
			q.abandon(batch)
			return
		}
	}
}

// takeQueued appends queued records to batch, without waiting, until the
// queue is empty or batch holds BatchSize.
func (q *Queue[T]) takeQueued(batch []T) []T {
	for len(batch) < q.cfg.BatchSize {
		select {
		case r := <-q.queue:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// drain commits everything left after Close stopped new Commits.
func (q *Queue[T]) drain(batch []T) {
	q.mu.Lock()
	q.stopped = true
	q.mu.Unlock()
	for {
		batch = q.takeQueued(batch[:0])
		if len(batch) == 0 {
			return
		}
		if !q.commitBatch(batch) {
			q.abandon(batch)
			return
		}
	}
}

// abandon is reached only when Close's drain deadline ran out while the
// engine kept failing. The records cannot be kept; they are counted and
// named in the log and in Close's error rather than dropped silently.
func (q *Queue[T]) abandon(batch []T) {
	q.mu.Lock()
	q.stopped = true
	q.mu.Unlock()
	ids := make([]string, 0, len(batch)+len(q.queue))
	for _, r := range batch {
		ids = append(ids, q.cfg.ID(r))
	}
	for done := false; !done; {
		select {
		case r := <-q.queue:
			ids = append(ids, q.cfg.ID(r))
		default:
			done = true
		}
	}
	q.log.Error("store closed with uncommitted records", zap.Int("records", len(ids)), zap.Strings("ids", ids))
	q.mu.Lock()
	q.lostErr = fmt.Errorf("%w: %d records could not be written before DrainTimeout", ErrUncommitted, len(ids))
	q.mu.Unlock()
}

// commitBatch writes batch, retrying with backoff until it succeeds. It
// gives up (returning false) only after Close's drain deadline.
func (q *Queue[T]) commitBatch(batch []T) bool {
	backoff := retryBackoffMin
	stop := q.stopWriter
	var deadline time.Time
	for attempt := 1; ; attempt++ {
		start := time.Now()
		err := q.cfg.Write(batch)
		q.obs.Committed(len(batch), time.Since(start), err)
		if err == nil {
			if attempt > 1 {
				q.log.Info("store commit recovered", zap.Int("attempts", attempt), zap.Int("batch", len(batch)))
			}
			if q.cfg.Written != nil {
				q.cfg.Written(batch)
			}
			// Slots first, so a Sync that returns sees the depth fall.
			for range batch {
				<-q.slots
			}
			q.reportDepth()
			q.mu.Lock()
			q.committed += uint64(len(batch))
			close(q.commitNotify)
			q.commitNotify = make(chan struct{})
			q.mu.Unlock()
			return true
		}
		q.log.Error("store commit failed; retrying",
			zap.Error(err), zap.Int("attempt", attempt), zap.Int("batch", len(batch)),
			zap.Int("queue_depth", q.QueueDepth()), zap.Duration("backoff", backoff))
		select {
		case <-stop:
			stop = nil
			deadline = q.drainDeadline
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
			deadline = q.drainDeadline
		}
		backoff = min(backoff*2, retryBackoffMax)
	}
}

// reportDepth tells the observer the queue depth. The depth is read under
// depthMu, so reports reach the observer in the order they read it: every
// change is followed by a report, so the last one holds the current depth,
// whatever order concurrent commits and cancels finish in.
func (q *Queue[T]) reportDepth() {
	q.depthMu.Lock()
	q.obs.QueueDepth(len(q.slots))
	q.depthMu.Unlock()
}
