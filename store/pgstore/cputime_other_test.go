//go:build !linux

package pgstore

import "time"

func processCPU() time.Duration { return 0 }

func pidCPU(int) (time.Duration, bool) { return 0, false }
