package regex

import (
	"testing"

	"github.com/promptwall/promptwall/scanner/internal/scannertest"
)

func TestHold(t *testing.T) {
	s, err := New(Config{Patterns: []Pattern{
		{Name: "employee id", Pattern: `EMP-\d{6}`},
		{Name: "codename", Pattern: `(?i)operation\s+[a-z]+\s+phase\s+\d`},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{
		"Her id is EMP-123456 as filed.",
		"We start Operation Tangerine Phase 2 next week.",
	} {
		t.Run(text, func(t *testing.T) { scannertest.HoldPrefixes(t, s, text, nil) })
	}
	tests := []struct {
		text string
		want int
	}{
		{"we start operation tangerine", 9},
		{"we start operation tangerine now", 32},
		{"id EMP-12", 3},
	}
	for _, tt := range tests {
		if got := scannertest.Hold(s, tt.text, nil); got != tt.want {
			t.Errorf("Hold(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}
