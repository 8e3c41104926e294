package scanner

import "testing"

func TestPartialOpen(t *testing.T) {
	tests := []struct {
		name, expr, text string
		want             int
	}{
		{"key prefix at the end", `\bAKIA[A-Z0-9]{16}\b`, "the key AKIAZ7VR", 8},
		{"key complete and ended", `\bAKIA[A-Z0-9]{16}\b`, "the key AKIAZ7VRSQ4LMXWB2PEH and", 32},
		{"key complete at the end may still grow", `\bAKIA[A-Z0-9]{16,20}\b`, "k AKIAZ7VRSQ4LMXWB2PEH", 2},
		{"keyword prefix only", `\bAKIA[A-Z0-9]{16}\b`, "say AK", 4},
		{"prose", `\bAKIA[A-Z0-9]{16}\b`, "the capital of France", 21},
		{"word boundary fails before", `\bAKIA[A-Z0-9]{4}`, "xAKIA", 5},
		{"case folded", `(?i)password\s+is\s+"[^"]+"`, "the PassWord is \"hun", 4},
		{"separator ends the chance", `(?i)password\s+is\s+"[^"]+"`, "the password was", 16},
		{"anchored starts at 0 only", `^secret`, "a secr", 6},
		{"anchored open", `^secret`, "secr", 0},
		{"dot excludes newline", `a.b`, "a\n", 2},
		{"any rune", `(?s)a.b`, "a\n", 0},
		{"empty text", `abc`, "", 0},
		{"non-ASCII text", `é+x`, "café", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPartial(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Open(tt.text); got != tt.want {
				t.Errorf("Open(%q) on %q = %d, want %d", tt.text, tt.expr, got, tt.want)
			}
		})
	}
}

func TestPartialOpenAt(t *testing.T) {
	p, err := NewPartial(`(?i)secret_?key\s*[:=]\s*[A-Za-z0-9]{12,}`)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text string
		from int
		want int
	}{
		{"my secret_key = abc", 3, 3},
		{"my secret_key is long", 3, 21},
		{"my secret_key = abcdefghijkl0 done", 3, 34},
	}
	for _, tt := range tests {
		if got := p.OpenAt(tt.text, tt.from); got != tt.want {
			t.Errorf("OpenAt(%q, %d) = %d, want %d", tt.text, tt.from, got, tt.want)
		}
	}
}

func TestPartialBadExpression(t *testing.T) {
	if _, err := NewPartial(`a(`); err == nil {
		t.Fatal("an invalid expression compiled")
	}
}
