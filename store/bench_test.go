package store

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func benchPrompt(i int) *Prompt {
	return &Prompt{
		OrgID:      "org",
		UserID:     fmt.Sprint("user", i%50),
		ProjectID:  "project",
		ProviderID: "openai",
		EndpointID: "endpoint",
		Type:       TypePrompt,
		Input:      strings.Repeat("Please summarise the quarterly report. ", 12) + fmt.Sprint(i),
		Result: PromptResult{Outcome: "passed", ScannerResults: []ScannerResult{{
			ScannerID: "pii", Outcome: "passed", ScanDirection: "input", Data: ScannerData{Type: "pii"},
		}}},
	}
}

// BenchmarkWriter measures sustained records/s through Put and the batch
// writer, with fsync on, from many request goroutines. The queue fills, so
// the figure is the writer's: BatchSize records per commit latency.
func BenchmarkWriter(b *testing.B) {
	for _, batch := range []int{DefaultBatchSize, 1024} {
		b.Run(fmt.Sprint("batch=", batch), func(b *testing.B) {
			obs := &benchObserver{}
			// A long EnqueueWait measures throughput, not admission under a
			// loaded host.
			s := openTest(b, Options{Observer: obs, BatchSize: batch, EnqueueWait: time.Minute})
			b.ReportAllocs()
			b.SetParallelism(8)
			start := time.Now()
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
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
			if n := obs.commits.Load(); n > 0 {
				b.ReportMetric(float64(obs.records.Load())/float64(n), "records/commit")
				b.ReportMetric(float64(obs.nanos.Load())/float64(n)/1e6, "ms/commit")
			}
		})
	}
}

// benchObserver reports the batch sizes the writer reaches, which with the
// commit latency (fsync) explain the throughput.
type benchObserver struct {
	commits, records, nanos atomic.Int64
}

func (o *benchObserver) Enqueued(int) {}
func (o *benchObserver) Rejected()    {}
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
