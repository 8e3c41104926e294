package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/promptwall/promptwall/store"
)

// TestConfigConverges: two instances applying the same config-as-code at
// once (orgs, users, tokens, provider versions, each from several
// goroutines) end with exactly one copy of everything and one version per
// provider, and every write succeeds.
func TestConfigConverges(t *testing.T) {
	dsn, key := freshSchema(t), randomKey()
	instances := []*Store{openTest(t, Options{DSN: dsn, CursorKey: key}), openTest(t, Options{DSN: dsn, CursorKey: key})}
	const perInstance = 4
	apply := func(s *Store, at time.Time) error {
		if err := s.PutOrg(&store.Org{ID: "o1", Name: "Acme"}); err != nil {
			return fmt.Errorf("PutOrg: %w", err)
		}
		for i := range 3 {
			u := &store.User{ID: fmt.Sprint("u", i), OrgID: "o1", Email: fmt.Sprintf("u%d@acme.example", i), Role: store.RoleMember}
			if err := s.PutUser(u); err != nil {
				return fmt.Errorf("PutUser: %w", err)
			}
			tok := &store.Token{Hash: store.HashToken(fmt.Sprint("pw_config_", i)), ID: fmt.Sprint("t", i), UserID: u.ID, OrgID: "o1"}
			if err := s.PutToken(tok); err != nil {
				return fmt.Errorf("PutToken: %w", err)
			}
		}
		var provs []*store.ProviderRecord
		for _, n := range []string{"a", "b", "c"} {
			provs = append(provs, &store.ProviderRecord{ID: n, Name: n, ProjectID: "p", Public: json.RawMessage(`{"id":"` + n + `"}`)})
		}
		if err := s.SyncProviders("o1", provs, at); err != nil {
			return fmt.Errorf("SyncProviders: %w", err)
		}
		return s.PutProviderVersion(&store.ProviderRecord{ID: "a", OrgID: "o1", Name: "a", ProjectID: "p", Public: json.RawMessage(`{"id":"a"}`)})
	}
	start := make(chan struct{})
	errs := make(chan error, len(instances)*perInstance)
	var wg sync.WaitGroup
	for i, s := range instances {
		for j := range perInstance {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				// Each instance stamps its reload with its own clock.
				errs <- apply(s, time.Now().Add(time.Duration(i*perInstance+j)*time.Millisecond))
			}()
		}
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent apply: %v", err)
		}
	}

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, tc := range []struct {
		table string
		want  int
	}{
		{"promptwall_orgs", 1},
		{"promptwall_users", 3},
		{"promptwall_tokens", 3},
		{"promptwall_provider_seqs", 3},
		{"promptwall_provider_versions", 3},
	} {
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+tc.table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != tc.want {
			t.Errorf("%s has %d rows, want %d", tc.table, n, tc.want)
		}
	}
	for _, s := range instances {
		page, err := s.ListProviders(store.ProviderQuery{OrgID: "o1", Limit: 10})
		if err != nil || len(page.Items) != 3 {
			t.Fatalf("ListProviders = %+v, %v", page, err)
		}
		for _, p := range page.Items {
			if p.Version != 1 {
				t.Errorf("provider %s at version %d, want 1", p.ID, p.Version)
			}
		}
		if o, err := s.GetOrgByName("acme"); err != nil || o.ID != "o1" {
			t.Errorf("GetOrgByName = %+v, %v", o, err)
		}
	}
}

// TestCreateOrgOnce: two instances creating orgs of the same name at once
// create one; every other attempt fails with store.ErrConflict.
func TestCreateOrgOnce(t *testing.T) {
	dsn, key := freshSchema(t), randomKey()
	instances := []*Store{openTest(t, Options{DSN: dsn, CursorKey: key}), openTest(t, Options{DSN: dsn, CursorKey: key})}
	const attempts = 8
	start := make(chan struct{})
	errs := make(chan error, attempts)
	var wg sync.WaitGroup
	for i := range attempts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs <- instances[i%2].CreateOrg(&store.Org{Name: "Same Name"})
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	created := 0
	for err := range errs {
		switch {
		case err == nil:
			created++
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("CreateOrg: %v, want nil or ErrConflict", err)
		}
	}
	if created != 1 {
		t.Fatalf("%d orgs created, want 1", created)
	}
	orgs, err := instances[0].ListOrgs()
	if err != nil || len(orgs) != 1 {
		t.Fatalf("ListOrgs = %v, %v", orgs, err)
	}
}

// TestLockAcrossInstances: a lock taken through one instance is refused
// to another until released, and comes free when the holder's session
// dies, as it does when its instance crashes.
func TestLockAcrossInstances(t *testing.T) {
	dsn, key := freshSchema(t), randomKey()
	a := openTest(t, Options{DSN: dsn, CursorKey: key})
	b := openTest(t, Options{DSN: dsn, CursorKey: key})
	ctx := context.Background()
	tryLock := func(s *Store, name string, want bool) func() {
		t.Helper()
		release, ok, err := s.TryLock(ctx, name)
		if err != nil || ok != want {
			t.Fatalf("TryLock(%q) = %v, %v; want %v", name, ok, err, want)
		}
		if ok {
			t.Cleanup(release)
		}
		return release
	}
	release := tryLock(a, "campaign:nightly", true)
	tryLock(b, "campaign:nightly", false)
	tryLock(b, "campaign:weekly", true)
	release()
	releaseB := tryLock(b, "campaign:nightly", true)
	tryLock(a, "campaign:nightly", false)

	// b's instance "crashes": the server ends its lock session.
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var killed int
	if err := conn.QueryRow(ctx, `WITH k AS (SELECT `+lockKey+` AS key)
		SELECT count(pg_terminate_backend(pid)) FROM pg_locks, k
		WHERE locktype = 'advisory' AND granted AND objsubid = 1
		AND classid = ((key >> 32) & 4294967295)::oid AND objid = (key & 4294967295)::oid
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`, "campaign:nightly").Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if killed == 0 {
		t.Fatal("no lock session found to end")
	}
	// The server frees the lock as it ends the session; TryLock retries
	// until then, within a bound.
	deadline := time.Now().Add(10 * time.Second)
	for {
		release, ok, err := a.TryLock(ctx, "campaign:nightly")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			release()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lock of a dead session was never freed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	releaseB() // closing an already dead session is harmless
}

// TestCloseFreesLocks: locks an instance still holds when it closes are
// freed for the others, and a closed instance takes no more.
func TestCloseFreesLocks(t *testing.T) {
	dsn, key := freshSchema(t), randomKey()
	a := openTest(t, Options{DSN: dsn, CursorKey: key})
	b := openTest(t, Options{DSN: dsn, CursorKey: key})
	ctx := context.Background()
	if _, ok, err := a.TryLock(ctx, "campaign:held"); err != nil || !ok {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	release, ok, err := b.TryLock(ctx, "campaign:held")
	if err != nil || !ok {
		t.Fatalf("TryLock after the holder closed = %v, %v; want the lock", ok, err)
	}
	release()
	if _, _, err := a.TryLock(ctx, "campaign:other"); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("TryLock on a closed store: %v, want ErrClosed", err)
	}
}
