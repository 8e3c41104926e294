package defaults

import (
	"testing"
	"time"

	"github.com/promptwall/promptwall/internal/cputime"
)

// reportCPU adds a cpu-ns/op metric: the process's CPU time per iteration,
// GC included. On a machine shared with other builds, wall-clock ns/op
// mostly measures waiting for a core; CPU time is what a screening costs.
// Call it after the b.Loop loop with the value cputime.Process had before
// it.
func reportCPU(b *testing.B, before time.Duration) {
	if b.N > 0 {
		b.ReportMetric(float64(cputime.Process()-before)/float64(b.N), "cpu-ns/op")
	}
}
