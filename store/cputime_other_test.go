//go:build !unix

package store

import "time"

// processCPU is unavailable here; the CPU metrics then read 0.
func processCPU() time.Duration { return 0 }
