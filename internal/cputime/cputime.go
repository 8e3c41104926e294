// Package cputime reads CPU time for benchmarks: on a machine shared with
// other builds, wall-clock time per operation mostly measures waiting for a
// core, while CPU time is what an operation costs.
package cputime

import "time"

// Process returns the CPU time (user + system) this process has used, GC
// included; 0 where the platform does not report it.
func Process() time.Duration { return process() }

// PID returns the CPU time (user + system) of a local process; ok is false
// when it cannot be read (the process is not local, or the platform has no
// /proc).
func PID(pid int) (d time.Duration, ok bool) { return pidCPU(pid) }
