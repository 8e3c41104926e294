package pgstore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store"
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
	a := &store.Prompt{OrgID: "o", Input: "a"}
	b := &store.Prompt{OrgID: "o", Input: "b"}
	putSync(a)
	putSync(b)
	a2 := *a
	a2.Input = "a replaced"
	c := &store.Prompt{OrgID: "o", Input: "c"}
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
