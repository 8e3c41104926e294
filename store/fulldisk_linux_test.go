package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/promptwall/promptwall/internal/testdisk"
	"github.com/promptwall/promptwall/store"
)

// diskObserver records the store's commit attempts, as the gateway's
// promptwall_store_write_errors_total metric counts them.
type diskObserver struct {
	mu       sync.Mutex
	failures []error
	ok       int
	// failed receives a value per failed attempt (never blocking).
	failed chan struct{}
}

func (o *diskObserver) QueueDepth(int) {}
func (o *diskObserver) Rejected()      {}
func (o *diskObserver) Committed(_ int, _ time.Duration, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err == nil {
		o.ok++
		return
	}
	o.failures = append(o.failures, err)
	select {
	case o.failed <- struct{}{}:
	default:
	}
}

// A real disk that fills up: commits fail with ENOSPC and are retried,
// the failures are reported, in sync mode no record is acknowledged while
// they fail, and once space returns every queued record is committed and
// survives a reopen, whatever the mode.
func TestFullDiskRealFilesystem(t *testing.T) {
	for _, d := range []store.Durability{store.DurabilitySync, store.DurabilityBatched} {
		t.Run(string(d), func(t *testing.T) { fullDisk(t, d) })
	}
}

func fullDisk(t *testing.T, durability store.Durability) {
	dir := testdisk.Small(t, 4<<20)
	obs := &diskObserver{failed: make(chan struct{}, 1)}
	path := filepath.Join(dir, "pw.db")
	opts := store.Options{Path: path, Retention: -1, Durability: durability, Observer: obs, DrainTimeout: time.Minute}
	s, err := store.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			s.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// A record that fits, before the disk is full.
	if err := put(ctx, s, "before the disk filled"); err != nil {
		t.Fatal(err)
	}
	ballast := testdisk.Fill(t, dir)

	// Records large enough that bbolt must write new pages for them.
	const n = 40
	big := strings.Repeat("lorem ipsum ", 2000)
	type ack struct {
		id  string
		err error
	}
	acks := make(chan ack, n)
	for i := range n {
		go func() {
			r, err := s.Reserve(ctx)
			if err != nil {
				acks <- ack{err: err}
				return
			}
			p := &store.Prompt{PromptFields: store.PromptFields{OrgID: "org", Input: fmt.Sprint(i, " ", big)}}
			if err := r.Commit(p); err != nil {
				acks <- ack{err: err}
				return
			}
			acks <- ack{p.ID, r.Wait(ctx)}
		}()
	}

	// Wait for three failed attempts: the writer is retrying.
	for range 3 {
		select {
		case <-obs.failed:
		case <-ctx.Done():
			t.Fatal("the full disk never failed a commit")
		}
	}
	obs.mu.Lock()
	firstErr := obs.failures[0]
	obs.mu.Unlock()
	if !errors.Is(firstErr, syscall.ENOSPC) || !strings.Contains(firstErr.Error(), "no space left on device") {
		t.Errorf("commit error %q does not say the disk is full", firstErr)
	}
	if durability == store.DurabilitySync {
		select {
		case a := <-acks:
			t.Fatalf("a record was acknowledged while every commit failed (id %s, err %v)", a.id, a.err)
		default:
		}
	}

	// Space returns: every waiting record is committed and acknowledged.
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range n {
		a := <-acks
		if a.err != nil {
			t.Fatalf("record not acknowledged: %v", a.err)
		}
		ids = append(ids, a.id)
	}
	if err := put(ctx, s, "after recovery"); err != nil {
		t.Fatalf("a new record after recovery: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true

	// Nothing acknowledged is lost: Close drained what batched mode had
	// acknowledged before its commit.
	s, err = store.Open(store.Options{Path: path, Retention: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, id := range ids {
		if _, err := s.GetPrompt(id); err != nil {
			t.Errorf("acknowledged record %s lost: %v", id, err)
		}
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	t.Logf("%d failed commit attempts while full, %d successful commits", len(obs.failures), obs.ok)
}

func put(ctx context.Context, s *store.Store, input string) error {
	r, err := s.Reserve(ctx)
	if err != nil {
		return err
	}
	if err := r.Commit(&store.Prompt{PromptFields: store.PromptFields{OrgID: "org", Input: input}}); err != nil {
		return err
	}
	return r.Wait(ctx)
}
