package pgstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store"
	"github.com/promptwall/promptwall/store/storetest"
)

// TestCopyFallsBackToUpsert: a batch that replaces a record committed by an
// earlier batch cannot be copied; it is written with the upsert instead,
// whole: the replaced record keeps its place, the new ones are appended.
func TestCopyFallsBackToUpsert(t *testing.T) {
	s := openTest(t, Options{BatchWait: time.Millisecond})
	ctx := context.Background()
	putSync := func(ps ...*store.Prompt) {
		t.Helper()
		for _, p := range ps {
			if err := s.Put(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	a := &store.Prompt{PromptFields: store.PromptFields{OrgID: "o", Input: "a"}}
	b := &store.Prompt{PromptFields: store.PromptFields{OrgID: "o", Input: "b"}}
	putSync(a)
	putSync(b)
	a2 := *a
	a2.Input = "a replaced"
	c := &store.Prompt{PromptFields: store.PromptFields{OrgID: "o", Input: "c"}}
	putSync(&a2, c)
	page, err := s.ListPrompts(store.Query{OrgID: "o", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range page.Items {
		got = append(got, p.Input)
	}
	if want := []string{"c", "b", "a replaced"}; !slices.Equal(got, want) {
		t.Fatalf("records newest first: %q, want %q", got, want)
	}
}

// batchObserver records the largest batch committed.
type batchObserver struct {
	mu  sync.Mutex
	max int
}

func (o *batchObserver) QueueDepth(int) {}
func (o *batchObserver) Rejected()      {}
func (o *batchObserver) Committed(n int, _ time.Duration, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err == nil {
		o.max = max(o.max, n)
	}
}

// TestCopyBatches: batches large enough to go in with COPY keep every
// record, in commit order.
func TestCopyBatches(t *testing.T) {
	obs := &batchObserver{}
	// Full batches of testBatch records commit at once, whatever BatchWait.
	s := openTest(t, Options{Durability: store.DurabilityBatched, BatchSize: testBatch, BatchWait: time.Hour, Observer: obs})
	ctx := context.Background()
	var want []string
	for i := range 3 * testBatch {
		p := &store.Prompt{PromptFields: store.PromptFields{OrgID: "o", Input: fmt.Sprint("record ", i)}}
		if err := s.Put(ctx, p); err != nil {
			t.Fatal(err)
		}
		want = append(want, p.ID)
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	obs.mu.Lock()
	largest := obs.max
	obs.mu.Unlock()
	if largest < testBatch {
		t.Fatalf("largest batch %d: no batch reached COPY's %d records", largest, testBatch)
	}
	pages, _ := storetest.Walk(t, s, store.Query{OrgID: "o", Limit: store.MaxLimit, Ascending: true})
	if got := slices.Concat(pages...); !slices.Equal(got, want) {
		t.Fatalf("listed %d records, want the %d written in order", len(got), len(want))
	}
}

// testBatch is the batch size of TestCopyBatches: several batches, each
// more than a few rows.
const testBatch = 128

// TestScannerSetsAcrossBatches: each batch takes one of the writer's paths
// (settings new to the store, settings it has stored, a replacement that
// falls back to the upsert with new settings, no settings), and every
// record reads back with the settings it was written with.
func TestScannerSetsAcrossBatches(t *testing.T) {
	s := openTest(t, Options{BatchWait: time.Millisecond})
	ctx := context.Background()
	const setA, setB = `[{"id":"pii","mode":"flag"}]`, `[{"id":"secrets","mode":"block"}]`
	firstID := store.NewID()
	for _, step := range []struct {
		name string
		p    store.Prompt
	}{
		{"new settings", store.Prompt{PromptFields: store.PromptFields{ID: firstID, OrgID: "o", Input: "first"}, Scanners: setA}},
		{"stored settings", store.Prompt{PromptFields: store.PromptFields{OrgID: "o", Input: "second"}, Scanners: setA}},
		{"replacement with new settings", store.Prompt{PromptFields: store.PromptFields{ID: firstID, OrgID: "o", Input: "first replaced"}, Scanners: setB}},
		{"no settings", store.Prompt{PromptFields: store.PromptFields{OrgID: "o", Input: "third"}}},
	} {
		p := step.p
		if err := s.Put(ctx, &p); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if err := s.Sync(ctx); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		got, err := s.GetPrompt(p.ID)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got.Input != p.Input || got.Scanners != p.Scanners {
			t.Fatalf("%s: read back input %q scanners %q, want %q %q", step.name, got.Input, got.Scanners, p.Input, p.Scanners)
		}
	}
}
