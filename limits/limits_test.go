package limits

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a manual clock: After fires when Advance passes its time.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	pending []fakeTimer
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.pending = append(c.pending, fakeTimer{at: c.now.Add(d), ch: ch})
	return ch
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.pending[:0]
	for _, t := range c.pending {
		if !t.at.After(c.now) {
			t.ch <- c.now
			continue
		}
		kept = append(kept, t)
	}
	c.pending = kept
}

// waitTimers blocks until n timers are pending: a goroutine under test has
// reached its wait.
func (c *fakeClock) waitTimers(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		k := len(c.pending)
		c.mu.Unlock()
		if k >= n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("no goroutine started waiting (want %d timers)", n)
}

type countObserver struct {
	mu       sync.Mutex
	rejected map[string]int
	waited   []time.Duration
	inFlight int
}

func (o *countObserver) InFlight(_ string, n int) {
	o.mu.Lock()
	o.inFlight = n
	o.mu.Unlock()
}

func (o *countObserver) Rejected(_ string, reason string) {
	o.mu.Lock()
	if o.rejected == nil {
		o.rejected = map[string]int{}
	}
	o.rejected[reason]++
	o.mu.Unlock()
}

func (o *countObserver) Waited(_ string, d time.Duration) {
	o.mu.Lock()
	o.waited = append(o.waited, d)
	o.mu.Unlock()
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		rps, conc string
		want      Config
		err       bool
	}{
		{"", "", Config{}, false},
		{"5", "", Config{MaxRequestsPerSecond: 5}, false},
		{"0.5", "3", Config{MaxRequestsPerSecond: 0.5, RequestConcurrencyLimit: 3}, false},
		{"0", "", Config{}, true},
		{"-1", "", Config{}, true},
		{"1e3", "", Config{}, true},
		{"Inf", "", Config{}, true},
		{"NaN", "", Config{}, true},
		{" 5", "", Config{}, true},
		{"", "0", Config{}, true},
		{"", "2.5", Config{}, true},
		{"", "x", Config{}, true},
	}
	for _, tt := range tests {
		got, err := ParseConfig(tt.rps, tt.conc)
		if (err != nil) != tt.err {
			t.Errorf("ParseConfig(%q, %q) error = %v, want error %v", tt.rps, tt.conc, err, tt.err)
			continue
		}
		if err != nil && !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("ParseConfig(%q, %q) error %v does not wrap ErrInvalidConfig", tt.rps, tt.conc, err)
		}
		if got != tt.want {
			t.Errorf("ParseConfig(%q, %q) = %+v, want %+v", tt.rps, tt.conc, got, tt.want)
		}
	}
}

func limitErr(t *testing.T, err error, want error) *LimitError {
	t.Helper()
	le, ok := errors.AsType[*LimitError](err)
	if !ok || !errors.Is(err, want) {
		t.Fatalf("error %v, want a *LimitError wrapping %v", err, want)
	}
	return le
}

func TestTokenBucket(t *testing.T) {
	tests := []struct {
		name      string
		rate      float64
		burst     int           // requests admitted at once
		retry     time.Duration // Retry-After of the next one
		refill    time.Duration // time after which one more is admitted
		refillOne bool
	}{
		{name: "2/s", rate: 2, burst: 2, retry: 500 * time.Millisecond, refill: 500 * time.Millisecond},
		{name: "0.5/s", rate: 0.5, burst: 1, retry: 2 * time.Second, refill: 2 * time.Second},
		{name: "2.5/s", rate: 2.5, burst: 3, retry: 400 * time.Millisecond, refill: 400 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			obs := &countObserver{}
			l := New("p", Config{MaxRequestsPerSecond: tt.rate}, clk, obs)
			for i := range tt.burst {
				if _, err := l.Acquire(context.Background(), 0); err != nil {
					t.Fatalf("request %d of the burst: %v", i, err)
				}
			}
			_, err := l.Acquire(context.Background(), 0)
			if le := limitErr(t, err, ErrRateLimited); le.RetryAfter != tt.retry {
				t.Fatalf("RetryAfter = %s, want %s", le.RetryAfter, tt.retry)
			}
			clk.Advance(tt.refill - time.Millisecond)
			if _, err := l.Acquire(context.Background(), 0); !errors.Is(err, ErrRateLimited) {
				t.Fatalf("just before the refill: %v, want ErrRateLimited", err)
			}
			clk.Advance(time.Millisecond)
			if _, err := l.Acquire(context.Background(), 0); err != nil {
				t.Fatalf("after the refill: %v", err)
			}
			if obs.rejected[ReasonRate] != 2 {
				t.Fatalf("rejected = %v, want 2 rate rejections", obs.rejected)
			}
		})
	}
}

func TestUnlimitedFastPath(t *testing.T) {
	l := New("p", Config{}, nil, nil)
	allocs := testing.AllocsPerRun(100, func() {
		release, err := l.Acquire(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		release()
	})
	if allocs != 0 {
		t.Fatalf("unlimited Acquire allocates %.0f times, want 0", allocs)
	}
}

// inFlight counts the holders of a slot, and the most that ever held one
// at once.
type inFlight struct{ cur, peak atomic.Int64 }

// hold counts one holder in for d.
func (f *inFlight) hold(d time.Duration) {
	n := f.cur.Add(1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			break
		}
	}
	time.Sleep(d)
	f.cur.Add(-1)
}

func TestConcurrencyNeverExceeded(t *testing.T) {
	const limit, workers = 3, 40
	l := New("p", Config{RequestConcurrencyLimit: limit}, nil, nil)
	var in inFlight
	var wg sync.WaitGroup
	var failed atomic.Int32
	for range workers {
		wg.Go(func() {
			release, err := l.Acquire(context.Background(), 10*time.Second)
			if err != nil {
				failed.Add(1)
				return
			}
			defer release()
			in.hold(time.Millisecond)
		})
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d requests failed to get a slot within 10s", failed.Load())
	}
	if p := in.peak.Load(); p > limit {
		t.Fatalf("peak in flight %d > limit %d", p, limit)
	}
	if p := in.peak.Load(); p < 2 {
		t.Fatalf("peak in flight %d: the test did not run requests concurrently", p)
	}
	if n := l.InFlight(); n != 0 {
		t.Fatalf("in flight after all released = %d", n)
	}
}

func TestReleaseIdempotentAndOnPanic(t *testing.T) {
	l := New("p", Config{RequestConcurrencyLimit: 1}, nil, nil)
	func() {
		defer func() { _ = recover() }()
		release, err := l.Acquire(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		panic("handler failed")
	}()
	if n := l.InFlight(); n != 0 {
		t.Fatalf("slot not released by the deferred release after a panic: %d in flight", n)
	}
	r1, err := l.Acquire(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	r1()
	r1() // a second call must not free a slot it does not hold
	r2, err := l.Acquire(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r2()
	if _, err := l.Acquire(context.Background(), 0); !errors.Is(err, ErrConcurrencyLimited) {
		t.Fatalf("double release freed an extra slot: %v", err)
	}
}

func TestCancelWhileWaiting(t *testing.T) {
	clk := newFakeClock()
	obs := &countObserver{}
	l := New("p", Config{RequestConcurrencyLimit: 1}, clk, obs)
	hold, err := l.Acquire(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := l.Acquire(ctx, time.Minute)
		done <- err
	}()
	clk.waitTimers(t, 1)
	cancel()
	limitErr(t, <-done, context.Canceled)
	hold()
	// The cancelled waiter must be gone: the freed slot is available.
	r, err := l.Acquire(context.Background(), 0)
	if err != nil {
		t.Fatalf("slot leaked to a cancelled waiter: %v", err)
	}
	r()
	if obs.rejected[ReasonCanceled] != 1 {
		t.Fatalf("rejected = %v, want one cancellation", obs.rejected)
	}
}

func TestQueueWait(t *testing.T) {
	t.Run("token arrives within the wait", func(t *testing.T) {
		clk := newFakeClock()
		obs := &countObserver{}
		l := New("p", Config{MaxRequestsPerSecond: 1}, clk, obs)
		if _, err := l.Acquire(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := l.Acquire(context.Background(), 2*time.Second)
			done <- err
		}()
		clk.waitTimers(t, 1)
		clk.Advance(time.Second)
		if err := <-done; err != nil {
			t.Fatalf("waiting for the token: %v", err)
		}
		if len(obs.waited) != 2 || obs.waited[1] != time.Second {
			t.Fatalf("waited = %v, want [0 1s]", obs.waited)
		}
	})
	t.Run("token too late for the wait", func(t *testing.T) {
		clk := newFakeClock()
		l := New("p", Config{MaxRequestsPerSecond: 1}, clk, nil)
		if _, err := l.Acquire(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
		_, err := l.Acquire(context.Background(), 500*time.Millisecond)
		if le := limitErr(t, err, ErrRateLimited); le.RetryAfter != time.Second {
			t.Fatalf("RetryAfter = %s, want 1s", le.RetryAfter)
		}
		// The refused request gave its reservation back: one second
		// later exactly one token is due, not zero.
		clk.Advance(time.Second)
		if _, err := l.Acquire(context.Background(), 0); err != nil {
			t.Fatalf("refused request kept its token: %v", err)
		}
	})
	t.Run("slot frees within the wait", func(t *testing.T) {
		clk := newFakeClock()
		l := New("p", Config{RequestConcurrencyLimit: 1}, clk, nil)
		hold, _ := l.Acquire(context.Background(), 0)
		done := make(chan error, 1)
		go func() {
			r, err := l.Acquire(context.Background(), time.Second)
			if err == nil {
				r()
			}
			done <- err
		}()
		clk.waitTimers(t, 1)
		hold()
		if err := <-done; err != nil {
			t.Fatalf("waiting for the slot: %v", err)
		}
	})
	t.Run("slot wait times out", func(t *testing.T) {
		clk := newFakeClock()
		l := New("p", Config{RequestConcurrencyLimit: 1}, clk, nil)
		hold, _ := l.Acquire(context.Background(), 0)
		defer hold()
		done := make(chan error, 1)
		go func() {
			_, err := l.Acquire(context.Background(), time.Second)
			done <- err
		}()
		clk.waitTimers(t, 1)
		clk.Advance(time.Second)
		if le := limitErr(t, <-done, ErrConcurrencyLimited); le.RetryAfter != time.Second {
			t.Fatalf("RetryAfter = %s, want 1s", le.RetryAfter)
		}
		if n := l.InFlight(); n != 1 {
			t.Fatalf("in flight = %d, want 1", n)
		}
	})
	t.Run("slot taken but no token gives the slot back", func(t *testing.T) {
		clk := newFakeClock()
		l := New("p", Config{RequestConcurrencyLimit: 5, MaxRequestsPerSecond: 1}, clk, nil)
		r, _ := l.Acquire(context.Background(), 0)
		defer r()
		if _, err := l.Acquire(context.Background(), 0); !errors.Is(err, ErrRateLimited) {
			t.Fatalf("second request: %v, want ErrRateLimited", err)
		}
		if n := l.InFlight(); n != 1 {
			t.Fatalf("in flight = %d, want 1: the rate-refused request kept its slot", n)
		}
	})
}

func TestResizeWhileBusy(t *testing.T) {
	t.Run("shrink", func(t *testing.T) {
		l := New("p", Config{RequestConcurrencyLimit: 3}, nil, nil)
		var held []func()
		for range 3 {
			r, err := l.Acquire(context.Background(), 0)
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, r)
		}
		l.SetConfig(Config{RequestConcurrencyLimit: 1})
		if n := l.InFlight(); n != 3 {
			t.Fatalf("shrink changed the count of held slots: %d", n)
		}
		held[0]()
		held[1]()
		// One still in flight: the new limit of 1 is full.
		if _, err := l.Acquire(context.Background(), 0); !errors.Is(err, ErrConcurrencyLimited) {
			t.Fatalf("after shrink to 1 with 1 in flight: %v", err)
		}
		held[2]()
		r, err := l.Acquire(context.Background(), 0)
		if err != nil {
			t.Fatalf("after all old holders left: %v", err)
		}
		r()
		if n := l.InFlight(); n != 0 {
			t.Fatalf("in flight = %d, want 0", n)
		}
	})
	t.Run("grow admits waiters", func(t *testing.T) {
		l := New("p", Config{RequestConcurrencyLimit: 1}, nil, nil)
		hold, _ := l.Acquire(context.Background(), 0)
		defer hold()
		done := make(chan error, 1)
		go func() {
			r, err := l.Acquire(context.Background(), time.Minute)
			if err == nil {
				defer r()
			}
			done <- err
		}()
		for {
			l.mu.Lock()
			n := len(l.waiters)
			l.mu.Unlock()
			if n == 1 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		l.SetConfig(Config{RequestConcurrencyLimit: 2})
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("grow did not admit the waiter")
		}
	})
	t.Run("limit removed while held", func(t *testing.T) {
		l := New("p", Config{RequestConcurrencyLimit: 1}, nil, nil)
		r, _ := l.Acquire(context.Background(), 0)
		l.SetConfig(Config{})
		r()
		l.SetConfig(Config{RequestConcurrencyLimit: 1})
		r2, err := l.Acquire(context.Background(), 0)
		if err != nil {
			t.Fatalf("slot leaked across unlimit/limit: %v", err)
		}
		r2()
	})
}

func TestRegistryKeepsStateAcrossReloads(t *testing.T) {
	clk := newFakeClock()
	reg := NewRegistry(clk, nil)
	cfg := Config{MaxRequestsPerSecond: 2, RequestConcurrencyLimit: 3}
	l := reg.Get("openai", cfg)
	r, _ := l.Acquire(context.Background(), 0)
	defer r()
	if _, err := l.Acquire(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	// A reload with the same config: same limiter, bucket still empty.
	l2 := reg.Get("openai", cfg)
	if l2 != l {
		t.Fatal("reload replaced the limiter")
	}
	if _, err := l2.Acquire(context.Background(), 0); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("reload refilled the bucket: %v", err)
	}
	// A reload with a higher rate keeps the empty bucket and the slots.
	l3 := reg.Get("openai", Config{MaxRequestsPerSecond: 10, RequestConcurrencyLimit: 2})
	if _, err := l3.Acquire(context.Background(), 0); !errors.Is(err, ErrConcurrencyLimited) {
		t.Fatalf("shrunk to the 2 slots held, a third request got: %v", err)
	}
	if l3 != l || l3.Config().MaxRequestsPerSecond != 10 {
		t.Fatalf("config not updated in place: %+v", l3.Config())
	}
	if n := l3.InFlight(); n != 2 {
		t.Fatalf("in flight after reload = %d, want 2", n)
	}
	if reg.Get("anthropic", Config{}) == l {
		t.Fatal("providers share a limiter")
	}
	if n := reg.Retain([]string{"openai"}); n != 1 {
		t.Fatalf("Retain forgot %d, want 1", n)
	}
	if _, ok := reg.Lookup("anthropic"); ok {
		t.Fatal("Retain kept a removed provider")
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want int
	}{{0, 1}, {time.Millisecond, 1}, {time.Second, 1}, {1001 * time.Millisecond, 2}, {2500 * time.Millisecond, 3}} {
		if got := RetryAfterSeconds(tt.d); got != tt.want {
			t.Errorf("RetryAfterSeconds(%s) = %d, want %d", tt.d, got, tt.want)
		}
	}
}
