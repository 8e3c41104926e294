package pgstore

import (
	"context"
	"fmt"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/promptwall/promptwall/internal/cputime"
	"github.com/promptwall/promptwall/internal/testsvc"
	"github.com/promptwall/promptwall/store"
)

// BenchmarkWriter measures the records per second one instance's writer
// sustains with records shaped like the gateway's (a scanner result, shared
// scanner settings); the clock stops once all are written.
//
//   - queued: 8 goroutines Put without waiting, so the writer always has a
//     backlog: the most it can write.
//   - acked: 256 concurrent callers each Commit and Wait in sync mode, as
//     the gateway does before acknowledging a request: a record counts
//     only once its transaction committed.
//
// The multi-row upsert (the writer before COPY) runs in the same process
// and on the same server, for a before/after comparison.
//
// records/batch is the mean batch committed: in sync mode it shows the group
// commit at work.
//
// On a machine shared with other work, records/s says as much about the
// neighbours as about the writer; cpu-us/record does not: it is the CPU
// time this process and the store's server backends (when the server is
// local) spent per record, so 1e6 / cpu-us/record is the records per
// second one dedicated core sustains.
func BenchmarkWriter(b *testing.B) {
	for _, c := range []struct {
		how    string
		noCopy bool
	}{{"multirow", true}, {"copy", false}} {
		for _, load := range []struct {
			name        string
			parallelism int
			acked       bool
		}{{"queued", 4, false}, {"acked", 128, true}} {
			b.Run(fmt.Sprintf("%s/%s", c.how, load.name), func(b *testing.B) {
				// Queued mode overloads the writer on purpose: callers wait
				// for queue room instead of being refused.
				benchWriter(b, Options{noCopy: c.noCopy, EnqueueWait: time.Minute}, load.parallelism, load.acked)
			})
		}
	}
}

func benchWriter(b *testing.B, o Options, parallelism int, acked bool) {
	if o.DSN == "" {
		o.DSN = freshSchema(b)
	}
	app := testsvc.Name("pwbench_")
	o.DSN = withParam(b, o.DSN, "application_name", app)
	commits := &commitCounter{}
	o.Observer = commits
	s := openTest(b, o)
	ctx := context.Background()
	backends := func() map[int]time.Duration {
		rows, err := s.pool.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = $1`, app)
		if err != nil {
			b.Fatal(err)
		}
		pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			b.Fatal(err)
		}
		out := map[int]time.Duration{}
		for _, pid := range pids {
			if d, ok := cputime.PID(int(pid)); ok {
				out[int(pid)] = d
			}
		}
		return out
	}
	// Every pool connection, opened now so that all are counted.
	conns := make([]*pgxpool.Conn, 0, s.pool.Config().MaxConns)
	for range cap(conns) {
		c, err := s.pool.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Release()
	}
	serverBefore, clientBefore := backends(), cputime.Process()
	result := store.PromptResult{Outcome: "passed", ScannerResults: []store.ScannerResult{{
		ScannerID: "pii", Outcome: "passed", ScanDirection: "input", Data: store.ScannerData{Type: "pii"}}}}
	b.SetParallelism(parallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			p := &store.Prompt{
				PromptFields: store.PromptFields{OrgID: "org", UserID: "u", Type: store.TypePrompt, Provider: "openai",
					Input:  fmt.Sprintf("Summarize the meeting notes of week %d in three bullet points.", i),
					Result: result},
				Scanners: `[{"id":"pii","mode":"flag"},{"id":"secrets","mode":"block"}]`,
			}
			r, err := s.Reserve(ctx)
			if err == nil {
				err = r.Commit(p)
			}
			if err == nil && acked {
				err = r.Wait(ctx)
			}
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	if err := s.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(b.N)/float64(max(commits.n.Load(), 1)), "records/batch")
	cpu := cputime.Process() - clientBefore
	after := backends()
	if len(after) == 0 {
		return // the server is not local: its CPU is not ours to read
	}
	for pid, d := range after {
		cpu += d - serverBefore[pid]
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/record")
}

// commitCounter counts the batches committed.
type commitCounter struct{ n atomic.Int64 }

func (c *commitCounter) QueueDepth(int) {}
func (c *commitCounter) Rejected()      {}
func (c *commitCounter) Committed(_ int, _ time.Duration, err error) {
	if err == nil {
		c.n.Add(1)
	}
}

// withParam sets a connection parameter in a DSN URL.
func withParam(t testing.TB, dsn, key, value string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}
