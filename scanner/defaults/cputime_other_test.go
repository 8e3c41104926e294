//go:build !unix

package defaults

import (
	"testing"
	"time"
)

// processCPU is unavailable here; reportCPU then reports nothing.
func processCPU() time.Duration { return 0 }

func reportCPU(*testing.B, time.Duration) {}
