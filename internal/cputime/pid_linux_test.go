package cputime

import (
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want time.Duration
		ok   bool
	}{
		{"plain", "42 (bash) S 1 42 42 0 -1 4194560 100 0 0 0 150 50 0 0 20 0 1 0", 2 * time.Second, true},
		{"name with spaces and parens", "7 (a) b (c) R 1 7 7 0 -1 0 0 0 0 0 3 7 0 0", 100 * time.Millisecond, true},
		{"truncated", "7 (x) R 1 7", 0, false},
		{"not numbers", "7 (x) R 1 7 7 0 -1 0 0 0 0 0 u s 0 0", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseStat(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Errorf("parseStat(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}
