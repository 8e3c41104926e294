//go:build !linux

package main

import "time"

// pacer falls back to Go's timers where nanosleep is not wired up; pacing
// is then only as precise as the platform's timer.
type pacer struct{}

func newPacer() *pacer { return &pacer{} }

func (*pacer) until(at time.Time) {
	if d := time.Until(at); d > 0 {
		time.Sleep(d)
	}
}

func (*pacer) stop() {}
