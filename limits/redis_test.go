package limits

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/promptwall/promptwall/internal/testsvc"
)

// redisInstances returns n RedisSets sharing one fresh key prefix, each
// with its own client: n gateway instances.
func redisInstances(t testing.TB, addr string, n int, opts RedisOptions) []*RedisSet {
	t.Helper()
	opts.Prefix = testsvc.Name("pwtest:") + ":"
	sets := make([]*RedisSet, n)
	for i := range sets {
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 300 * time.Millisecond})
		sets[i] = NewRedisSet(c, opts)
		t.Cleanup(func() {
			_ = sets[i].Close()
			_ = c.Close()
		})
	}
	return sets
}

func mustAcquire(t *testing.T, g Gate, wait time.Duration) func() {
	t.Helper()
	release, err := g.Acquire(context.Background(), wait)
	if err != nil {
		t.Fatalf("%s: Acquire: %v", g.Name(), err)
	}
	return release
}

func wantRefused(t *testing.T, g Gate, wait time.Duration, sentinel error) *LimitError {
	t.Helper()
	release, err := g.Acquire(context.Background(), wait)
	if err == nil {
		release()
		t.Fatalf("%s: Acquire admitted, want %v", g.Name(), sentinel)
	}
	var le *LimitError
	if !errors.As(err, &le) || !errors.Is(err, sentinel) {
		t.Fatalf("%s: Acquire error %v, want a *LimitError wrapping %v", g.Name(), err, sentinel)
	}
	return le
}

// TestRedisRateSharedAcrossInstances: one bucket for the fleet, whichever
// instance a request reaches.
func TestRedisRateSharedAcrossInstances(t *testing.T) {
	addr := testsvc.RedisAddr(t)
	for _, tc := range []struct {
		name  string
		rate  float64
		burst int
	}{
		{"5 per second", 5, 5},
		{"half per second holds one", 0.5, 1},
		{"2.5 per second holds 3", 2.5, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sets := redisInstances(t, addr, 2, RedisOptions{})
			cfg := Config{MaxRequestsPerSecond: tc.rate}
			a, b := sets[0].Get("openai", cfg), sets[1].Get("openai", cfg)
			for i := range tc.burst {
				g := a
				if i%2 == 1 {
					g = b
				}
				mustAcquire(t, g, 0)()
			}
			for _, g := range []Gate{a, b} {
				le := wantRefused(t, g, 0, ErrRateLimited)
				if le.RetryAfter <= 0 || le.RetryAfter > time.Duration(float64(time.Second)/tc.rate)+time.Millisecond {
					t.Errorf("RetryAfter %s, want in (0, one emission interval]", le.RetryAfter)
				}
			}
		})
	}
}

// TestRedisRateWaitsForToken: a request whose token is due within its
// wait is admitted after waiting, not refused.
func TestRedisRateWaitsForToken(t *testing.T) {
	sets := redisInstances(t, testsvc.RedisAddr(t), 2, RedisOptions{})
	cfg := Config{MaxRequestsPerSecond: 10}
	a, b := sets[0].Get("p", cfg), sets[1].Get("p", cfg)
	for range 10 {
		mustAcquire(t, a, 0)()
	}
	wantRefused(t, b, 0, ErrRateLimited)
	mustAcquire(t, b, 2*time.Second)()
}

// TestRedisRateCancelledWaiterRefunds: a caller that gives up while
// waiting for its token gets a cancellation, and its token goes back to
// the bucket for the next caller.
func TestRedisRateCancelledWaiterRefunds(t *testing.T) {
	sets := redisInstances(t, testsvc.RedisAddr(t), 1, RedisOptions{})
	g := sets[0].Get("p", Config{MaxRequestsPerSecond: 0.2}) // one token per 5s
	mustAcquire(t, g, 0)()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := g.Acquire(ctx, 10*time.Second) // reserves the token due in 5s
		errc <- err
	}()
	// The waiter has reserved once a zero-wait request sees the next
	// token 10s away instead of 5s.
	deadline := time.Now().Add(5 * time.Second)
	for {
		le := wantRefused(t, g, 0, ErrRateLimited)
		if le.RetryAfter > 6*time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the waiter never reserved its token")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v, want context.Canceled", err)
	}
	le := wantRefused(t, g, 0, ErrRateLimited)
	if le.RetryAfter > 5*time.Second {
		t.Errorf("after the refund the next token is %s away, want at most 5s", le.RetryAfter)
	}
}

// TestRedisConcurrencySharedAcrossInstances: the slots are the fleet's,
// a release on one instance frees a slot for another.
func TestRedisConcurrencySharedAcrossInstances(t *testing.T) {
	sets := redisInstances(t, testsvc.RedisAddr(t), 2, RedisOptions{})
	cfg := Config{RequestConcurrencyLimit: 2}
	a, b := sets[0].Get("p", cfg), sets[1].Get("p", cfg)
	ra := mustAcquire(t, a, 0)
	rb := mustAcquire(t, b, 0)
	le := wantRefused(t, a, 0, ErrConcurrencyLimited)
	if le.RetryAfter != concurrencyRetryAfter {
		t.Errorf("RetryAfter %s, want %s", le.RetryAfter, concurrencyRetryAfter)
	}
	wantRefused(t, b, 50*time.Millisecond, ErrConcurrencyLimited)
	ra()
	ra() // a second release must not free a second slot
	rb2 := mustAcquire(t, b, 0)
	wantRefused(t, a, 0, ErrConcurrencyLimited)
	rb()
	rb2()
	if n := sets[0].HeldLeases() + sets[1].HeldLeases(); n != 0 {
		t.Errorf("%d leases still held after every release", n)
	}
}

// TestRedisConcurrencyNeverExceeded: many goroutines on three instances,
// the slots held at once never exceed the limit.
func TestRedisConcurrencyNeverExceeded(t *testing.T) {
	sets := redisInstances(t, testsvc.RedisAddr(t), 3, RedisOptions{PollInterval: 2 * time.Millisecond})
	const limit = 3
	var in inFlight
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for i := range 24 {
		g := sets[i%3].Get("p", Config{RequestConcurrencyLimit: limit})
		wg.Go(func() {
			for range 5 {
				release, err := g.Acquire(context.Background(), 10*time.Second)
				if err != nil {
					t.Errorf("Acquire: %v", err)
					return
				}
				in.hold(time.Millisecond)
				admitted.Add(1)
				release()
			}
		})
	}
	wg.Wait()
	if p := in.peak.Load(); p > limit {
		t.Errorf("%d requests inside at once, limit %d", p, limit)
	}
	if n := admitted.Load(); n != 24*5 {
		t.Errorf("%d admitted, want %d", n, 24*5)
	}
}

// TestRedisWaiterGetsReleasedSlot: a request waiting on one instance is
// admitted when another instance releases.
func TestRedisWaiterGetsReleasedSlot(t *testing.T) {
	sets := redisInstances(t, testsvc.RedisAddr(t), 2, RedisOptions{})
	cfg := Config{RequestConcurrencyLimit: 1}
	a, b := sets[0].Get("p", cfg), sets[1].Get("p", cfg)
	ra := mustAcquire(t, a, 0)
	got := make(chan error, 1)
	go func() {
		release, err := b.Acquire(context.Background(), 10*time.Second)
		if err == nil {
			release()
		}
		got <- err
	}()
	ra()
	if err := <-got; err != nil {
		t.Fatalf("waiter: %v", err)
	}
}

// TestRedisCrashedHolderLeaseReturns: an instance that dies holding slots
// (no release, no renewal) gives them back within the lease time, while a
// live holder keeps its slot past it by renewing.
func TestRedisCrashedHolderLeaseReturns(t *testing.T) {
	const ttl = 600 * time.Millisecond
	sets := redisInstances(t, testsvc.RedisAddr(t), 3, RedisOptions{LeaseTTL: ttl})
	cfg := Config{RequestConcurrencyLimit: 2}
	crashed, live, other := sets[0].Get("p", cfg), sets[1].Get("p", cfg), sets[2].Get("p", cfg)
	mustAcquire(t, crashed, 0)
	releaseLive := mustAcquire(t, live, 0)
	wantRefused(t, other, 0, ErrConcurrencyLimited)

	sets[0].abandon()
	// The crashed slot comes back within the lease time (plus the poll).
	release := mustAcquire(t, other, ttl+500*time.Millisecond)
	defer release()
	// The live holder renewed: its slot is still taken after several
	// lease times, so the fleet is still at its limit.
	time.Sleep(3 * ttl)
	wantRefused(t, other, 0, ErrConcurrencyLimited)
	releaseLive()
	mustAcquire(t, other, 0)()
}

// TestRedisUnavailable: with Redis gone, fail_closed refuses with
// ErrUnavailable and fail_open admits; both recover without a restart
// when Redis is back.
func TestRedisUnavailable(t *testing.T) {
	addr := testsvc.RedisAddr(t)
	for _, tc := range []struct {
		name     string
		failOpen bool
	}{{"fail closed", false}, {"fail open", true}} {
		t.Run(tc.name, func(t *testing.T) {
			proxy := testsvc.NewProxy(t, addr)
			sets := redisInstances(t, proxy.Addr(), 1, RedisOptions{FailOpen: tc.failOpen, CallTimeout: 500 * time.Millisecond})
			g := sets[0].Get("p", Config{MaxRequestsPerSecond: 100, RequestConcurrencyLimit: 1})
			mustAcquire(t, g, 0)()

			proxy.Cut()
			for range 3 {
				release, err := g.Acquire(context.Background(), 0)
				switch {
				case tc.failOpen && err != nil:
					t.Fatalf("fail open: refused: %v", err)
				case tc.failOpen:
					release()
				case !errors.Is(err, ErrUnavailable):
					t.Fatalf("fail closed: %v, want ErrUnavailable", err)
				}
			}

			proxy.Restore()
			release := mustAcquire(t, g, time.Second)
			wantRefused(t, g, 0, ErrConcurrencyLimited)
			release()
		})
	}
}

// TestRedisSetKeepsGatesAcrossReloads: Get updates the limits in place and
// Retain forgets providers removed from the config.
func TestRedisSetKeepsGatesAcrossReloads(t *testing.T) {
	sets := redisInstances(t, testsvc.RedisAddr(t), 1, RedisOptions{})
	s := sets[0]
	g1 := s.Get("openai", Config{RequestConcurrencyLimit: 1})
	s.Get("anthropic", Config{RequestConcurrencyLimit: 1})
	g2 := s.Get("openai", Config{RequestConcurrencyLimit: 2})
	if g1 != g2 {
		t.Fatal("Get made a second gate for the same provider")
	}
	if c := g1.Config(); c.RequestConcurrencyLimit != 2 {
		t.Errorf("limit after reload %d, want 2", c.RequestConcurrencyLimit)
	}
	if n := s.Retain([]string{"openai"}); n != 1 {
		t.Errorf("Retain forgot %d, want 1", n)
	}
	if _, ok := s.Lookup("anthropic"); ok {
		t.Error("anthropic still known after Retain")
	}
	if _, ok := s.Lookup("openai"); !ok {
		t.Error("openai forgotten by Retain")
	}
}
