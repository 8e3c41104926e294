package limits

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/promptwall/promptwall/internal/testsvc"
)

// BenchmarkRedisAcquire measures what the shared limiter adds to a
// request: Acquire (a lease and a rate token, two round trips) and the
// release (one more), against a limit never reached. It reports the p50
// and p99 of that added latency.
func BenchmarkRedisAcquire(b *testing.B) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"rate+concurrency", Config{MaxRequestsPerSecond: 1e6, RequestConcurrencyLimit: 1 << 20}},
		{"rate", Config{MaxRequestsPerSecond: 1e6}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			addr := testsvc.RedisAddr(b)
			g := redisInstances(b, addr, 1, RedisOptions{})[0].Get("bench", tc.cfg)
			ctx := context.Background()
			d := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				release, err := g.Acquire(ctx, 0)
				if err != nil {
					b.Fatal(err)
				}
				release()
				d = append(d, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(d)
			b.ReportMetric(float64(d[len(d)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(d[len(d)*99/100].Microseconds()), "p99-µs")
		})
	}
}
