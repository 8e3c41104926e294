package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/promptwall/promptwall/internal/cputime"
)

func benchPrompt(i int) *Prompt {
	return &Prompt{
		PromptFields: PromptFields{OrgID: "org", UserID: fmt.Sprint("user", i%50), ProjectID: "project",
			Type:  TypePrompt,
			Input: strings.Repeat("Please summarise the quarterly report. ", 12) + fmt.Sprint(i),
			Result: PromptResult{Outcome: "passed", ScannerResults: []ScannerResult{{
				ScannerID: "pii", Outcome: "passed", ScanDirection: "input", Data: ScannerData{Type: "pii"},
			}}}},
		ProviderID: "openai", EndpointID: "endpoint",
	}
}

// BenchmarkWriter measures sustained records/s through Put and the batch
// writer, with fsync on, from many request goroutines. The queue fills, so
// the figure is the writer's: BatchSize records per commit latency. Batches
// of 64 are what the gateway reaches at its BatchWait. cpu-us/record is the
// process's CPU per record, request side and writer alike: records/s is
// mostly fsync latency, CPU is what the gateway pays.
func BenchmarkWriter(b *testing.B) {
	for _, batch := range []int{64, DefaultBatchSize, 1024} {
		b.Run(fmt.Sprint("batch=", batch), func(b *testing.B) {
			obs := &benchObserver{}
			// A long EnqueueWait measures throughput, not admission under a
			// loaded host.
			s := openTest(b, Options{Observer: obs, BatchSize: batch, EnqueueWait: time.Minute})
			b.ReportAllocs()
			b.SetParallelism(8)
			start, cpu := time.Now(), cputime.Process()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					if err := s.Put(context.Background(), benchPrompt(i)); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
			syncStore(b, s)
			reportCPU(b, cputime.Process()-cpu, b.N)
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
			if n := obs.commits.Load(); n > 0 {
				b.ReportMetric(float64(obs.records.Load())/float64(n), "records/commit")
				b.ReportMetric(float64(obs.nanos.Load())/float64(n)/1e6, "ms/commit")
			}
		})
	}
}

// gatewayPrompt is a record as the gateway's load benchmark makes it write
// for a 2 KB chat prompt: a fresh id, no user (anonymous traffic), the
// endpoint's scanner settings, scanner results on both sides and an answer.
func gatewayPrompt(i int) *Prompt {
	sr := func(id, dir string) ScannerResult {
		now := Timestamp(time.Now())
		return ScannerResult{ScannerID: id, Outcome: "passed", ScanDirection: dir, StartedDate: now, CompletedDate: now,
			Data: ScannerData{Type: id, Matches: [][2]int{}}}
	}
	return &Prompt{
		PromptFields: PromptFields{ID: NewID(), ReceivedAt: Timestamp(time.Now()), OrgID: "org", ProjectID: "project",
			Provider: "openai", Type: TypePrompt,
			Input: strings.Repeat("Please summarise the quarterly report for the board. ", 38) + fmt.Sprint(i),
			Result: PromptResult{Outcome: "passed", Response: strings.Repeat("The quarter went well. ", 8),
				ScannerResults: []ScannerResult{sr("pii", "input"), sr("secrets", "input"), sr("injection", "input"), sr("pii", "output")}}},
		ProviderID: "openai", EndpointID: "endpoint",
		Scanners: `[{"id":"pii","enabled":true},{"id":"secrets","enabled":true},{"id":"injection","enabled":true}]`,
	}
}

// BenchmarkWriteBatch measures the writer alone: one op is one gateway-sized
// record committed in a batch of the given size, fsync included, with the
// records encoded outside the timer. cpu-us/record is the writer's CPU per
// record; writes/record (bbolt's page writes) and bytes/record (file size)
// show what the commits put on disk.
//
// The gateway takes a record's id (and receivedAt) when the request
// arrives and commits the record when the upstream has answered, so ids
// reach the writer in id order only when upstream latency is uniform, as in
// the load benchmark. With window=N each commit takes a random one of the N
// oldest uncommitted ids instead, as varying upstream latency does.
func BenchmarkWriteBatch(b *testing.B) {
	for _, c := range []struct{ batch, window int }{{64, 1}, {DefaultBatchSize, 1}, {64, 4096}} {
		b.Run(fmt.Sprintf("batch=%d/window=%d", c.batch, c.window), func(b *testing.B) {
			s := openTest(b, Options{})
			rng := rand.New(rand.NewPCG(1, 2))
			pending := make([]*Prompt, c.window)
			for i := range pending {
				pending[i] = gatewayPrompt(i)
			}
			recs := make([]*record, 0, c.batch)
			writes := pageWrites(s)
			var cpu time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for n := 0; n < b.N; n += len(recs) {
				b.StopTimer()
				recs = recs[:0]
				for i := n; i < min(n+c.batch, b.N); i++ {
					j := rng.IntN(len(pending))
					r, err := encodePrompt(pending[j])
					if err != nil {
						b.Fatal(err)
					}
					pending[j] = gatewayPrompt(i + c.window)
					recs = append(recs, r)
				}
				b.StartTimer()
				c := cputime.Process()
				if err := s.writeBatch(recs); err != nil {
					b.Fatal(err)
				}
				cpu += cputime.Process() - c
			}
			b.StopTimer()
			reportCPU(b, cpu, b.N)
			b.ReportMetric(float64(pageWrites(s)-writes)/float64(b.N), "writes/record")
			if err := s.db.View(func(tx *bolt.Tx) error {
				b.ReportMetric(float64(tx.Size())/float64(b.N), "bytes/record")
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// pageWrites is how many writes bbolt's commits have made so far.
func pageWrites(s *Store) int64 {
	st := s.db.Stats()
	return st.TxStats.GetWrite()
}

// reportCPU adds cpu-us/record: cpu, CPU time of the whole process (GC and
// the time in write and fsync syscalls included), per record. Nothing is
// reported where the process's CPU time cannot be read.
func reportCPU(b *testing.B, cpu time.Duration, records int) {
	if cpu > 0 && records > 0 {
		b.ReportMetric(float64(cpu)/1e3/float64(records), "cpu-us/record")
	}
}

// benchObserver reports the batch sizes the writer reaches, which with the
// commit latency (fsync) explain the throughput.
type benchObserver struct {
	commits, records, nanos atomic.Int64
}

func (o *benchObserver) QueueDepth(int) {}
func (o *benchObserver) Rejected()      {}
func (o *benchObserver) Committed(n int, d time.Duration, err error) {
	if err == nil {
		o.commits.Add(1)
		o.records.Add(int64(n))
		o.nanos.Add(int64(d))
	}
}

func BenchmarkListPrompts(b *testing.B) {
	s := openTest(b, Options{})
	const n = 20000
	for i := range n {
		put(b, s, benchPrompt(i))
	}
	syncStore(b, s)
	mid, err := s.ListPrompts(Query{OrgID: "org", Limit: 100})
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		q    Query
	}{
		{"first page 10", Query{OrgID: "org", Limit: 10}},
		{"first page 100", Query{OrgID: "org", Limit: 100}},
		{"next page 10", Query{OrgID: "org", Limit: 10, Cursor: mid.Next}},
		{"only user 10", Query{OrgID: "org", UserID: "user7", Limit: 10}},
		{"search 10", Query{OrgID: "org", Search: "REPORT. 1999", Limit: 10}},
		{"search no hit (full scan)", Query{OrgID: "org", Search: "no such text", Limit: 10}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.ListPrompts(c.q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncodePrompt measures what every request pays on its own
// goroutine to hand a record to the writer.
func BenchmarkEncodePrompt(b *testing.B) {
	p := benchPrompt(1)
	p.ID = NewID()
	p.Result.ScannerResults = make([]ScannerResult, 4)
	for i := range p.Result.ScannerResults {
		p.Result.ScannerResults[i] = ScannerResult{ScannerID: "secrets", Outcome: "passed", ScanDirection: "input",
			StartedDate: Timestamp(time.Now()), CompletedDate: Timestamp(time.Now()),
			Data: ScannerData{Type: "secret", Matches: [][2]int{}}}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodePrompt(p); err != nil {
			b.Fatal(err)
		}
	}
}
