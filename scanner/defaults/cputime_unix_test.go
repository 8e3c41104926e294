//go:build unix

package defaults

import (
	"syscall"
	"testing"
	"time"
)

// processCPU returns the CPU time (user + system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds a cpu-ns/op metric: the process's CPU time per iteration,
// GC included. On a machine shared with other builds, wall-clock ns/op
// mostly measures waiting for a core; CPU time is what a screening costs.
// Call it after the b.Loop loop with the value processCPU had before it.
func reportCPU(b *testing.B, before time.Duration) {
	if b.N > 0 {
		b.ReportMetric(float64(processCPU()-before)/float64(b.N), "cpu-ns/op")
	}
}
