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
func BenchmarkWriter(b *testing.B) {
	for _, batch := range []int{256, 2048} {
		b.Run(fmt.Sprint("batch=", batch), func(b *testing.B) { benchWriter(b, batch) })
	}
}

func benchWriter(b *testing.B, batch int) {
	s := openTest(b, Options{BatchSize: batch})
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
