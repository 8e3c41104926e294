//go:build race

package secrets

// raceEnabled: the race detector makes sync.Pool drop items, so regexp
// machines are reallocated and allocation counts are meaningless.
const raceEnabled = true
