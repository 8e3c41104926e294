package pii

import (
	"testing"

	"github.com/promptwall/promptwall/scanner/internal/scannertest"
)

func TestHold(t *testing.T) {
	s, err := New(Config{Entities: []string{"all"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{
		"Your card 4111 1111 1111 1111 was charged today.",
		"Call me on +1 (415) 555-0132 after lunch.",
		"Write to jane.doe@example.com for details.",
		"The IBAN is DE89 3704 0044 0532 0130 00 for the transfer.",
		"His SSN is 536-22-8713 apparently.",
	} {
		t.Run(text, func(t *testing.T) { scannertest.HoldPrefixes(t, s, text, nil) })
	}
	tests := []struct {
		text string
		want int
	}{
		{"the capital of France is Par", 25},
		{"my card is 4111 1111 ", 11},
		{"my card is 4111 1111 and", 21},
		{"Sure, here it is", 14},
	}
	for _, tt := range tests {
		if got := scannertest.Hold(s, tt.text, nil); got != tt.want {
			t.Errorf("Hold(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}

func TestHoldCardsOnly(t *testing.T) {
	s, err := New(Config{Entities: []string{KindCreditCard}})
	if err != nil {
		t.Fatal(err)
	}
	scannertest.HoldPrefixes(t, s, "Charge 4111 1111 1111 1111 today.", nil)
	tests := []struct {
		text string
		want int
	}{
		{"the capital of France is Par", 28},
		{"The Capital", 11},
		{"card 4111 1111", 5},
	}
	for _, tt := range tests {
		if got := scannertest.Hold(s, tt.text, nil); got != tt.want {
			t.Errorf("Hold(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}
