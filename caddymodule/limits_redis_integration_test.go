package caddymodule_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"
	"github.com/redis/go-redis/v9"

	"github.com/promptwall/promptwall/internal/testsvc"
	"github.com/promptwall/promptwall/limits"
)

func redisLimitsConfig(dbPath, upstream, redisAddr, prefix string) string {
	limits := fmt.Sprintf(`limits redis {
			addr %s
			prefix %s
			lease_ttl 2s
			timeout 300ms
		}
		`, redisAddr, prefix)
	return testCaddyfile(dbPath, upstream, limits+openaiProvider(upstream, "request_concurrency_limit 2"), "provider openai")
}

// TestRedisLimitsSharedWithAnotherInstance: the gateway counts the slots
// another instance holds in Redis, answers 503 while Redis is unreachable
// (fail closed) and recovers without a restart.
func TestRedisLimitsSharedWithAnotherInstance(t *testing.T) {
	addr := testsvc.RedisAddr(t)
	proxy := testsvc.NewProxy(t, addr)
	prefix := testsvc.Name("pwgw:") + ":"
	up := newCountingUpstream(t, 300*time.Millisecond)
	tester := caddytest.NewTester(t)
	tester.InitServer(redisLimitsConfig(filepath.Join(t.TempDir(), "pw.db"), up.Listener.Addr().String(), proxy.Addr(), prefix), "caddyfile")

	// The other instance: same Redis, same prefix, holding one of the two
	// slots for the whole first round.
	client := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = client.Close() })
	other := limits.NewRedisSet(client, limits.RedisOptions{Prefix: prefix, LeaseTTL: 2 * time.Second})
	t.Cleanup(func() { _ = other.Close() })
	releaseOther, err := other.Get("openai", limits.Config{RequestConcurrencyLimit: 2}).Acquire(context.Background(), 0)
	if err != nil {
		t.Fatalf("other instance: %v", err)
	}

	var wg sync.WaitGroup
	var ok, limited atomic.Int64
	for range 6 {
		wg.Go(func() {
			resp, _ := postWithKey(t, tester.Client, "", chatBody("hello"))
			switch resp.StatusCode {
			case http.StatusOK:
				ok.Add(1)
			case http.StatusTooManyRequests:
				limited.Add(1)
			}
		})
	}
	wg.Wait()
	releaseOther()
	if m := up.maxInFlight.Load(); m > 1 {
		t.Errorf("the other instance holds 1 of 2 slots, yet %d requests were upstream at once", m)
	}
	if ok.Load() == 0 || limited.Load() == 0 || ok.Load()+limited.Load() != 6 {
		t.Errorf("%d passed and %d got 429 of 6; want some of each and nothing else", ok.Load(), limited.Load())
	}

	proxy.Cut()
	resp, body := postWithKey(t, tester.Client, "", chatBody("while redis is away"))
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "limiter_unavailable") {
		t.Errorf("Redis unreachable, fail closed: %d %s, want 503 limiter_unavailable", resp.StatusCode, body)
	}
	before := up.total.Load()
	proxy.Restore()
	resp, body = postWithKey(t, tester.Client, "", chatBody("redis is back"))
	if resp.StatusCode != http.StatusOK {
		t.Errorf("after Redis returned: %d %s, want 200 without a restart", resp.StatusCode, body)
	}
	if up.total.Load() != before+1 {
		t.Errorf("the upstream saw %d requests after recovery, want 1", up.total.Load()-before)
	}
}
