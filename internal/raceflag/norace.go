//go:build !race

// Package raceflag tells tests whether the race detector is on: it makes
// sync.Pool drop items at random, so allocation counts of code that pools
// its buffers mean nothing there.
package raceflag

// Enabled is true in a binary built with the race detector.
const Enabled = false
