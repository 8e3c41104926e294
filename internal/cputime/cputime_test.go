package cputime

import (
	"os"
	"runtime"
	"testing"
	"time"
)

func TestProcessGrowsWithWork(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no rusage here")
	}
	before := Process()
	deadline := time.Now().Add(50 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	if after := Process(); after <= before {
		t.Errorf("CPU time did not grow over 50ms of work: %v then %v", before, after)
	}
}

func TestPIDOfThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	if _, ok := PID(os.Getpid()); !ok {
		t.Error("own /proc stat unreadable")
	}
	if _, ok := PID(-1); ok {
		t.Error("a pid that cannot exist read as ok")
	}
}
