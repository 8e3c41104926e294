//go:build race

package raceflag

// Enabled is true in a binary built with the race detector.
const Enabled = true
