package scanner

import "testing"

func TestVaultOpen(t *testing.T) {
	var v Vault
	email := "jane.doe@example.com"
	if ph := v.Redact(email, []Match{{Start: 0, End: len(email), Kind: "EMAIL_ADDRESS"}}); ph != "[EMAIL_ADDRESS_1]" {
		t.Fatalf("placeholder %q", ph)
	}
	tests := []struct {
		text string
		want int
	}{
		{"Write to ", 9},
		{"Write to [", 9},
		{"Write to [EMAIL_ADD", 9},
		{"Write to [EMAIL_ADDRESS_1", 9},
		{"Write to [EMAIL_ADDRESS_1]", 26}, // complete: restored as it leaves
		{"Write to [EMAIL_ADDRESS_2", 25},  // not one of the vault's
		{"See [1] and [EMAIL_", 12},
		{"[x] [EM", 4},
		{"", 0},
	}
	for _, tc := range tests {
		if got := v.Open(tc.text); got != tc.want {
			t.Errorf("Open(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
	var empty Vault
	if got := empty.Open("Write to [EMAIL_"); got != 16 {
		t.Errorf("an empty vault holds from %d", got)
	}
}
