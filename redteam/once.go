package redteam

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/promptwall/promptwall/store"
)

// Several gateway instances sharing one store share its campaigns: a
// scheduled campaign must start once per due time, not once per instance,
// and an instance must not end a run another live instance executes. Both
// rest on the store's Locker, whose locks die with their holder:
//
//   - the schedule lock is held while one instance checks a schedule and
//     starts its run, so the others find the next run time already moved;
//   - the run lock is held by the instance executing the run for as long
//     as it executes: a run whose lock can be taken has no live executor;
//   - the cancel lock is held by an instance asked to cancel a run another
//     instance executes, until that run has ended: the executor checks it
//     every cancelPoll.

func scheduleLock(scheduleID string) string { return "redteam.schedule:" + scheduleID }

func runLock(runID string) string { return "redteam.run:" + runID }

func cancelLock(runID string) string { return "redteam.cancel:" + runID }

// cancelPoll is how often an executing run checks whether another
// instance was asked to cancel it; such a cancel waits up to
// cancelWaitPolls of them for the run to end. A Runner reads it once, in
// NewRunner.
var cancelPoll = 2 * time.Second

const cancelWaitPolls = 5

// watchCancel cancels an executing run once another instance holds its
// cancel lock, until done closes.
func (r *Runner) watchCancel(runID string, cancel context.CancelCauseFunc, done <-chan struct{}) {
	t := time.NewTicker(r.cancelPoll)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		release, ok, err := r.opts.Locker.TryLock(r.ctx, cancelLock(runID))
		switch {
		case err != nil:
			r.log.Warn("red-team run: checking for a cancellation", zap.String("run", runID), zap.Error(err))
		case ok:
			release()
		default:
			cancel(errCancelled)
			return
		}
	}
}

// cancelElsewhere asks the instance executing a run to cancel it and waits
// until the run has ended there (its executor saved its final state).
func (r *Runner) cancelElsewhere(ctx context.Context, runID string) error {
	release, ok, err := r.opts.Locker.TryLock(ctx, cancelLock(runID))
	if err != nil {
		return err
	}
	if ok {
		// Otherwise another instance is asking already; wait with it.
		defer release()
	}
	deadline := time.Now().Add(cancelWaitPolls * r.cancelPoll)
	for {
		busy, err := r.executedElsewhere(ctx, runID)
		if err != nil || !busy {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redteam: run %s did not stop within %s on the instance executing it", runID, cancelWaitPolls*r.cancelPoll)
		}
		time.Sleep(r.cancelPoll / 4)
	}
}

// tryLock takes the lock called name. Without a Locker (one process per
// store) there is nobody to exclude and it always succeeds.
func (r *Runner) tryLock(ctx context.Context, name string) (release func(), ok bool, err error) {
	if r.opts.Locker == nil {
		return func() {}, true, nil
	}
	return r.opts.Locker.TryLock(ctx, name)
}

// executedElsewhere reports whether another live instance executes the run:
// it is not this process's and its run lock is held.
func (r *Runner) executedElsewhere(ctx context.Context, runID string) (bool, error) {
	if r.opts.Locker == nil || r.Done(runID) != nil {
		return false, nil
	}
	release, ok, err := r.opts.Locker.TryLock(ctx, runLock(runID))
	if err != nil || !ok {
		return err == nil, err
	}
	release()
	return false, nil
}

// scheduleBusyAnywhere reports whether a run of the schedule is still
// queued or executing, in this process or (with a Locker) in another live
// instance.
func (r *Runner) scheduleBusyAnywhere(ctx context.Context, scheduleID string) (bool, error) {
	if r.scheduleBusy(scheduleID) {
		return true, nil
	}
	if r.opts.Locker == nil {
		return false, nil
	}
	runs, err := r.opts.Store.CampaignRunsWithStatus(store.RunQueued, store.RunRunning)
	if err != nil {
		return false, err
	}
	for _, run := range runs {
		if run.ScheduleID != scheduleID {
			continue
		}
		if busy, err := r.executedElsewhere(ctx, run.ID); err != nil || busy {
			return busy, err
		}
	}
	return false, nil
}
