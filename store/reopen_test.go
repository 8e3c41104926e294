package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/promptwall/promptwall/store"
	"github.com/promptwall/promptwall/store/storetest"
)

// reopen opens the database at path again, closed when the test ends.
func reopen(t *testing.T, path string) *store.Store {
	t.Helper()
	s, err := store.Open(store.Options{Path: path})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConcurrentWritersSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pw.db")
	s, err := store.Open(store.Options{Path: path, BatchSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 32, 150
	var wg sync.WaitGroup
	acked := make([][]string, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				p := &store.Prompt{PromptFields: store.PromptFields{OrgID: "org", UserID: fmt.Sprint("u", w), Input: fmt.Sprint(w, "-", i)}}
				if err := s.Put(context.Background(), p); err != nil {
					t.Errorf("Put: %v", err)
					return
				}
				acked[w] = append(acked[w], p.ID)
			}
		})
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	s = reopen(t, path)
	// Records are encoded in recycled buffers: each must read back as its
	// own, not as a later record that reused its buffer.
	for w, list := range acked {
		for i, id := range list {
			p, err := s.GetPrompt(id)
			if err != nil {
				t.Fatalf("acknowledged record %s lost: %v", id, err)
			}
			if want := fmt.Sprint(w, "-", i); p.Input != want || p.ID != id {
				t.Fatalf("record %s reads back as %s with input %q, want %q", id, p.ID, p.Input, want)
			}
		}
	}
	pages, _ := storetest.Walk(t, s, store.Query{OrgID: "org", Limit: 100})
	got := slices.Concat(pages...)
	if len(got) != writers*each {
		t.Fatalf("listed %d records, want %d", len(got), writers*each)
	}
	// Per writer, commit order must follow acknowledgement order.
	pos := make(map[string]int, len(got))
	for i, id := range got {
		pos[id] = -i
	}
	for w, list := range acked {
		for i := 1; i < len(list); i++ {
			if pos[list[i-1]] >= pos[list[i]] {
				t.Fatalf("writer %d: record %d committed before record %d", w, i, i-1)
			}
		}
	}
}
