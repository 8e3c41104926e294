package pgstore

import (
	"context"
	"crypto/rand"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/promptwall/promptwall/internal/testsvc"
	"github.com/promptwall/promptwall/store"
	"github.com/promptwall/promptwall/store/storetest"
)

// freshSchema creates a schema of its own for one test and returns a DSN
// whose connections use it: every store opened on it sees an empty
// database, migrated from scratch.
func freshSchema(t testing.TB) string {
	t.Helper()
	dsn := testsvc.PostgresDSN(t)
	schema := testsvc.Name("pwtest_")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		_, _ = conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("DSN: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func randomKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}

func openTest(t testing.TB, o Options) *Store {
	t.Helper()
	if o.DSN == "" {
		o.DSN = freshSchema(t)
	}
	if o.CursorKey == nil {
		o.CursorKey = randomKey()
	}
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

var harness = storetest.Harness{
	Open: func(t testing.TB, o storetest.Options) store.Backend {
		return openTest(t, Options{QueueSize: o.QueueSize, BatchWait: o.BatchWait, Retention: o.Retention})
	},
	Sweep: func(s store.RecordStore, now time.Time) (int, error) {
		n, _, err := s.(*Store).Sweep(now)
		return n, err
	},
}

func TestConformance(t *testing.T) { storetest.RunAll(t, harness) }

func hostPort(t testing.TB, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// viaProxy returns dsn with its host:port replaced by addr.
func viaProxy(t testing.TB, dsn, addr string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	return u.String()
}
