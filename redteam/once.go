package redteam

import (
	"context"

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
//     as it executes: a run whose lock can be taken has no live executor.

func scheduleLock(scheduleID string) string { return "redteam.schedule:" + scheduleID }

func runLock(runID string) string { return "redteam.run:" + runID }

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
