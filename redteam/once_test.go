package redteam

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store"
)

// Two runners over one store with its Locker stand for two gateway
// instances sharing a database: a due schedule starts one run, not one per
// instance, and one instance's recovery never ends a run the other is
// executing.
func TestSchedulesAcrossInstances(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	target := &mockTarget{hold: 1, started: make(chan struct{})}
	a := newRig(t, target, func(o *Options) { o.Now = clock })
	a.r.opts.Locker = a.s
	b, err := NewRunner(Options{Store: a.s, Library: a.lib, Target: target, Now: clock, Locker: a.s})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	id := a.campaign(t, store.Campaign{Name: "Hourly", Providers: []string{"p1"}, Packs: []string{"hand"}, Schedule: "1h"})
	ctx := context.Background()
	active := func() []*store.CampaignRun {
		t.Helper()
		runs, err := a.s.CampaignRunsWithStatus(store.RunQueued, store.RunRunning)
		if err != nil {
			t.Fatal(err)
		}
		return runs
	}

	a.r.TickSchedules(ctx)
	advance(time.Hour)

	// While one instance checks the schedule (holding its lock), the
	// other leaves it alone.
	release, ok, err := a.s.TryLock(ctx, scheduleLock(ScheduleID(id)))
	if err != nil || !ok {
		t.Fatalf("TryLock: %v %v", ok, err)
	}
	b.TickSchedules(ctx)
	if n := len(active()); n != 0 {
		t.Fatalf("a schedule locked by another instance started %d runs", n)
	}
	release()

	// Both instances tick at once: one run.
	var wg sync.WaitGroup
	for _, r := range []*Runner{a.r, b} {
		wg.Go(func() { r.TickSchedules(ctx) })
	}
	wg.Wait()
	runs := active()
	if len(runs) != 1 {
		t.Fatalf("a due schedule ticked by two instances started %d runs, want 1", len(runs))
	}
	<-target.started
	owner, other := a.r, b
	if a.r.Done(runs[0].ID) == nil {
		owner, other = b, a.r
	}

	// Due again while the run executes on one instance: the other skips
	// it too, and its recovery leaves the live run alone.
	advance(time.Hour)
	other.TickSchedules(ctx)
	if n := len(active()); n != 1 {
		t.Fatalf("the other instance overlapped a run executing elsewhere: %d runs", n)
	}
	if n, err := other.Recover(); err != nil || n != 0 {
		t.Fatalf("Recover on the other instance ended %d runs (%v), want 0", n, err)
	}
	if got, _ := a.s.GetCampaignRun(runs[0].ID, false); got.Status != store.RunRunning {
		t.Fatalf("live run is %s after the other instance's Recover", got.Status)
	}

	// A run whose executor died (nobody holds its lock) is ended.
	orphan := &store.CampaignRun{CampaignRunFields: store.CampaignRunFields{ID: store.NewID(), Name: "Hourly", CampaignID: id,
		Status: store.RunRunning, Total: "0"}, OrgID: "o1"}
	if err := a.s.CreateCampaignRun(orphan); err != nil {
		t.Fatal(err)
	}
	if n, err := other.Recover(); err != nil || n != 1 {
		t.Fatalf("Recover of an orphan ended %d runs (%v), want 1", n, err)
	}
	if _, err := owner.Cancel("o1", runs[0].ID); err != nil {
		t.Fatal(err)
	}
	waitDone(t, owner, runs[0].ID)
}

// A run cancelled through an instance that does not execute it stops on
// the instance that does, and ends cancelled.
func TestCancelAcrossInstances(t *testing.T) {
	defer func(p time.Duration) { cancelPoll = p }(cancelPoll)
	cancelPoll = 20 * time.Millisecond
	target := &mockTarget{hold: 1, started: make(chan struct{})}
	a := newRig(t, target, func(o *Options) { o.Concurrency = 1 })
	a.r.opts.Locker = a.s
	b, err := NewRunner(Options{Store: a.s, Library: a.lib, Target: target, Locker: a.s})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	id := a.campaign(t, store.Campaign{Name: "Long", Providers: []string{"p1"}, Packs: []string{"hand"}})
	run, err := a.r.Start(context.Background(), "o1", id, "")
	if err != nil {
		t.Fatal(err)
	}
	<-target.started
	got, err := b.Cancel("o1", run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.RunCancelled {
		t.Fatalf("run cancelled through the other instance is %s", got.Status)
	}
	waitDone(t, a.r, run.ID)
	if got, _ := a.s.GetCampaignRun(run.ID, false); got.Status != store.RunCancelled {
		t.Fatalf("stored run is %s after it stopped", got.Status)
	}
}
