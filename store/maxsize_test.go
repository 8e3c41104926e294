package store

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

type sizeObserver struct {
	nopObserver
	used    atomic.Int64
	evicted atomic.Int64
	checks  atomic.Int64
}

func (o *sizeObserver) Size(used int64, evicted int) {
	o.used.Store(used)
	o.evicted.Add(int64(evicted))
	o.checks.Add(1)
}

// With MaxSize the data stays bounded however many records arrive: the
// oldest records that are not preserved go first, preserved ones stay.
func TestMaxSizeEvictsOldestFirst(t *testing.T) {
	const maxSize = 2 << 20
	obs := &sizeObserver{}
	s := openTest(t, Options{MaxSize: maxSize, BatchWait: time.Millisecond, Observer: obs, Durability: DurabilityBatched})
	keep := &Prompt{PromptFields: PromptFields{OrgID: "org", Input: "preserved", Preserve: true}}
	put(t, s, keep)
	body := strings.Repeat("x", 4000)
	var ids []string
	for i := range 2000 { // about 8 MB of input
		p := &Prompt{PromptFields: PromptFields{OrgID: "org", Input: fmt.Sprint(i, body)}}
		put(t, s, p)
		ids = append(ids, p.ID)
	}
	syncStore(t, s)
	// The last commit's check may still run: ask once more and wait for it.
	before := obs.checks.Load()
	s.checkSize()
	for obs.checks.Load() == before {
		time.Sleep(time.Millisecond)
	}
	if used := s.UsedBytes(); used > maxSize {
		t.Fatalf("data %d bytes, over MaxSize %d", used, maxSize)
	}
	if obs.evicted.Load() == 0 {
		t.Fatal("nothing was reported evicted")
	}
	if _, err := s.getPrompt(keep.ID); err != nil {
		t.Fatalf("a preserved record was evicted: %v", err)
	}
	if _, err := s.getPrompt(ids[len(ids)-1]); err != nil {
		t.Fatalf("the newest record was evicted: %v", err)
	}
	if _, err := s.getPrompt(ids[0]); err == nil {
		t.Fatal("the oldest record survived while newer ones were evicted")
	}
}
