package main

import (
	"runtime"
	"syscall"
	"time"
)

// pacer wakes the open-loop sender at each request's scheduled time. Go's
// timers round a sub-millisecond sleep up to about a millisecond on Linux
// (measured: a 200 µs time.Sleep takes 1.13 ms), which would send a fixed
// rate in lumps and charge every level up to a millisecond of the sender's
// own lateness. nanosleep on a locked thread with a 1 ns timer slack wakes
// within about 0.1 ms, without spinning a core the gateway needs.
type pacer struct{}

// PR_SET_TIMERSLACK, from linux/prctl.h.
const prSetTimerSlack = 29

func newPacer() *pacer {
	runtime.LockOSThread()
	// Best effort: without it nanosleep still has the default 50 µs slack.
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)
	return &pacer{}
}

func (*pacer) until(at time.Time) {
	for {
		d := time.Until(at)
		if d <= 0 {
			return
		}
		ts := syscall.NsecToTimespec(int64(d))
		if err := syscall.Nanosleep(&ts, nil); err == nil {
			return
		}
		// EINTR: sleep the rest.
	}
}

func (*pacer) stop() { runtime.UnlockOSThread() }
