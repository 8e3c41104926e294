package evasion

import "testing"

func TestTransforms(t *testing.T) {
	for _, tt := range []struct {
		fn       func(string) string
		in, want string
	}{
		{Base64, "hi", "aGk="},
		{Leet, "Ignore tests", "1gn0r3 73575"},
		// Letters with substitutes take them in turn; every fourth stays.
		{LeetSymbols, "Ignore all tests", "16n0re 4|1 t3$7s"},
		{Confusables, "cape", "саре"},
		{Invisible, "abc d", "a\u200bb\u200dc\U000E0001 d\u200b"},
		{Spaced, "ignore  all\nnow", "i g n o r e   a l l   n o w"},
	} {
		if got := tt.fn(tt.in); got != tt.want {
			t.Errorf("%q -> %q, want %q", tt.in, got, tt.want)
		}
	}
	if len(All) != 6 {
		t.Errorf("%d transforms", len(All))
	}
}
