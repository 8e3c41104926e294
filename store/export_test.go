package store

import "time"

// Sweep runs the retention sweep as of now; for the conformance suite,
// which runs in package store_test.
func Sweep(s *Store, now time.Time) (int, error) { return s.sweep(now) }
