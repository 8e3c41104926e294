package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/promptwall/promptwall/internal/testsvc"
	"github.com/promptwall/promptwall/store"
)

// TestTwoInstancesShareRecords: records written through either of two
// instances sharing a database and a cursor key are listed by each, in
// commit order and complete, and a cursor issued by one pages on the other.
func TestTwoInstancesShareRecords(t *testing.T) {
	dsn, key := freshSchema(t), randomKey()
	a := openTest(t, Options{DSN: dsn, CursorKey: key, BatchWait: time.Millisecond})
	b := openTest(t, Options{DSN: dsn, CursorKey: key, BatchWait: time.Millisecond})
	ctx := context.Background()
	var written []string
	for i := range 60 {
		s := a
		if i%3 == 0 {
			s = b
		}
		p := &store.Prompt{PromptFields: store.PromptFields{OrgID: "org", Input: fmt.Sprint("prompt ", i)}}
		if err := s.Put(ctx, p); err != nil {
			t.Fatal(err)
		}
		// Sync makes the commit order the order written here.
		if err := s.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		written = append(written, p.ID)
	}
	slices.Reverse(written) // newest first
	for _, tc := range []struct {
		name        string
		first, rest *Store
	}{{"a then b", a, b}, {"b then a", b, a}, {"a only", a, a}} {
		t.Run(tc.name, func(t *testing.T) {
			q := store.Query{OrgID: "org", Limit: 7}
			var got []string
			page, err := tc.first.ListPrompts(q)
			for {
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range page.Items {
					got = append(got, p.ID)
				}
				if page.Next == "" {
					break
				}
				q.Cursor = page.Next
				page, err = tc.rest.ListPrompts(q)
			}
			if !slices.Equal(got, written) {
				t.Fatalf("listed %d records, want the %d written, newest first", len(got), len(written))
			}
		})
	}
	// A cursor of a database with another key is refused.
	c := openTest(t, Options{DSN: dsn, CursorKey: randomKey()})
	first, err := a.ListPrompts(store.Query{OrgID: "org", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListPrompts(store.Query{OrgID: "org", Limit: 5, Cursor: first.Next}); !errors.Is(err, store.ErrBadCursor) {
		t.Fatalf("cursor under another key: %v, want ErrBadCursor", err)
	}
}

// TestSweepRunsOnce: while one instance sweeps, another skips the round.
func TestSweepRunsOnce(t *testing.T) {
	dsn := freshSchema(t)
	a := openTest(t, Options{DSN: dsn, Retention: time.Hour, noSweeper: true})
	b := openTest(t, Options{DSN: dsn, Retention: time.Hour, noSweeper: true})
	ctx := context.Background()
	for range 5 {
		if err := a.Put(ctx, &store.Prompt{
			PromptFields: store.PromptFields{OrgID: "o", ReceivedAt: store.Timestamp(time.Now().Add(-2 * time.Hour))},
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	// Hold the sweep lock as instance a's sweeper would mid-round.
	conn, err := a.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lockSweep); err != nil {
		t.Fatal(err)
	}
	if n, ran, err := b.Sweep(time.Now()); err != nil || ran || n != 0 {
		t.Fatalf("sweep while another holds the lock: %d deleted, ran %v, %v; want a skipped round", n, ran, err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, lockSweep); err != nil {
		t.Fatal(err)
	}
	conn.Release()
	if n, ran, err := b.Sweep(time.Now()); err != nil || !ran || n != 5 {
		t.Fatalf("sweep: %d deleted, ran %v, %v; want 5", n, ran, err)
	}
}

// TestDatabaseAway: with PostgreSQL unreachable, acknowledged records wait
// in the queue, a full queue refuses new requests with ErrQueueFull (the
// gateway's 503), and everything is written once the database returns,
// without a restart.
func TestDatabaseAway(t *testing.T) {
	dsn := freshSchema(t)
	proxy := testsvc.NewProxy(t, hostPort(t, dsn))
	s := openTest(t, Options{DSN: viaProxy(t, dsn, proxy.Addr()), CursorKey: randomKey(),
		QueueSize: 4, EnqueueWait: 50 * time.Millisecond, BatchWait: time.Millisecond})
	ctx := context.Background()
	proxy.Cut()
	var ids []string
	for range 4 {
		p := &store.Prompt{PromptFields: store.PromptFields{OrgID: "o"}}
		if err := s.Put(ctx, p); err != nil {
			t.Fatalf("Put while the queue has room: %v", err)
		}
		ids = append(ids, p.ID)
	}
	if err := s.Put(ctx, &store.Prompt{PromptFields: store.PromptFields{OrgID: "o"}}); !errors.Is(err, store.ErrQueueFull) {
		t.Fatalf("Put with the database away and the queue full: %v, want ErrQueueFull", err)
	}
	proxy.Restore()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.Sync(sctx); err != nil {
		t.Fatalf("Sync after the database returned: %v", err)
	}
	for _, id := range ids {
		if _, err := s.GetPrompt(id); err != nil {
			t.Errorf("acknowledged record %s: %v", id, err)
		}
	}
	if err := s.Put(ctx, &store.Prompt{PromptFields: store.PromptFields{OrgID: "o"}}); err != nil {
		t.Fatalf("Put after recovery: %v", err)
	}
}

// TestReadsWithDatabaseAway: with PostgreSQL unreachable, every kind of
// read fails with store.ErrUnavailable (the API's 503), and works again
// once it returns, without a restart.
func TestReadsWithDatabaseAway(t *testing.T) {
	dsn := freshSchema(t)
	proxy := testsvc.NewProxy(t, hostPort(t, dsn))
	s := openTest(t, Options{DSN: viaProxy(t, dsn, proxy.Addr()), CursorKey: randomKey()})
	if err := s.PutOrg(&store.Org{ID: "o1", Name: "Acme"}); err != nil {
		t.Fatal(err)
	}
	reads := []struct {
		name string
		op   func() error
	}{
		{"GetOrg", func() error { _, err := s.GetOrg("o1"); return err }},
		{"ListPrompts", func() error { _, err := s.ListPrompts(store.Query{OrgID: "o1", Limit: 5}); return err }},
		{"LookupToken", func() error {
			_, err := s.LookupToken([32]byte{1})
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			return err
		}},
		{"ListProviders", func() error { _, err := s.ListProviders(store.ProviderQuery{OrgID: "o1", Limit: 5}); return err }},
		{"ListUsers", func() error { _, err := s.ListUsers(store.UserQuery{OrgID: "o1", Limit: 5}); return err }},
		{"ListCampaignRuns", func() error {
			_, err := s.ListCampaignRuns(store.CampaignRunQuery{OrgID: "o1", Limit: 5})
			return err
		}},
		{"ChatPrompts", func() error { _, err := s.ChatPrompts("c1"); return err }},
	}
	proxy.Cut()
	for _, r := range reads {
		if err := r.op(); !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s with the database away: %v, want ErrUnavailable", r.name, err)
		}
	}
	if err := s.PutOrg(&store.Org{ID: "o2", Name: "Beta"}); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("PutOrg with the database away: %v, want ErrUnavailable", err)
	}
	proxy.Restore()
	for _, r := range reads {
		if err := r.op(); err != nil {
			t.Errorf("%s after the database returned: %v", r.name, err)
		}
	}
}
