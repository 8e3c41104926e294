package pgstore

import (
	"context"
	"fmt"
	"testing"

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
				benchWriter(b, Options{noCopy: c.noCopy}, load.parallelism, load.acked)
			})
		}
	}
}

func benchWriter(b *testing.B, o Options, parallelism int, acked bool) {
	s := openTest(b, o)
	ctx := context.Background()
	result := store.PromptResult{Outcome: "passed", ScannerResults: []store.ScannerResult{{
		ScannerID: "pii", Outcome: "passed", ScanDirection: "input", Data: store.ScannerData{Type: "pii"}}}}
	b.SetParallelism(parallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			p := &store.Prompt{OrgID: "org", UserID: "u", Type: store.TypePrompt, Provider: "openai",
				Input:    fmt.Sprintf("Summarize the meeting notes of week %d in three bullet points.", i),
				Scanners: `[{"id":"pii","mode":"flag"},{"id":"secrets","mode":"block"}]`, Result: result}
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
}
