package pgstore

import (
	"context"
	"fmt"
	"testing"

	"github.com/promptwall/promptwall/store"
)

// BenchmarkWriter measures the records per second one instance's writer
// sustains: 8 goroutines commit records shaped like the gateway's (a
// scanner result, shared scanner settings), and the clock stops once all
// are written.
// The multi-row upsert (the writer before COPY) runs in the same process
// and on the same server, for a before/after comparison.
func BenchmarkWriter(b *testing.B) {
	for _, c := range []struct {
		how    string
		noCopy bool
		batch  int
	}{
		{"multirow", true, 256},
		{"multirow", true, DefaultBatchSize},
		{"copy", false, 256},
		{"copy", false, DefaultBatchSize},
	} {
		b.Run(fmt.Sprintf("%s/batch=%d", c.how, c.batch), func(b *testing.B) {
			benchWriter(b, Options{BatchSize: c.batch, noCopy: c.noCopy})
		})
	}
}

func benchWriter(b *testing.B, o Options) {
	s := openTest(b, o)
	ctx := context.Background()
	result := store.PromptResult{Outcome: "passed", ScannerResults: []store.ScannerResult{{
		ScannerID: "pii", Outcome: "passed", ScanDirection: "input", Data: store.ScannerData{Type: "pii"}}}}
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			p := &store.Prompt{OrgID: "org", UserID: "u", Type: store.TypePrompt, Provider: "openai",
				Input:    fmt.Sprintf("Summarize the meeting notes of week %d in three bullet points.", i),
				Scanners: `[{"id":"pii","mode":"flag"},{"id":"secrets","mode":"block"}]`, Result: result}
			if err := s.Put(ctx, p); err != nil {
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
