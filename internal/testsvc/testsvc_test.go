package testsvc

import (
	"strings"
	"testing"
)

func TestNameIsUniqueAndPrefixed(t *testing.T) {
	a, b := Name("pw_"), Name("pw_")
	if a == b {
		t.Fatalf("two names are equal: %q", a)
	}
	for _, n := range []string{a, b} {
		if !strings.HasPrefix(n, "pw_") || len(n) != len("pw_")+12 || strings.ToLower(n) != n {
			t.Errorf("name %q: want pw_ and 12 lower-case hex digits", n)
		}
	}
}

func TestInCI(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want bool
	}{{"true", true}, {"1", true}, {"TRUE", true}, {"", false}, {"false", false}} {
		t.Setenv("CI", tc.env)
		if got := InCI(); got != tc.want {
			t.Errorf("CI=%q: InCI() = %v, want %v", tc.env, got, tc.want)
		}
	}
}
