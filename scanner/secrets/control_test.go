package secrets

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestFirstControl(t *testing.T) {
	naive := func(s string) int {
		for i := 0; i < len(s); i++ {
			if isControl[s[i]] || c1At(s, i) {
				return i
			}
		}
		return -1
	}
	tests := []string{
		"", "plain ascii text with\nline breaks\tand tabs\r\n", "x\x00", "\x7f", "0123456\x1b89",
		"é and ü are not controls", "a C1 control: \u0085 here", "\u00c2\u00a0nbsp", strings.Repeat("abcdefgh", 9) + "\x01",
		"\xc2", // a truncated sequence is not a C1 control
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab \n\t\x00\x1f\x7f\xc2\x85\x9f\xc3")
	for n := 0; n < 2000; n++ {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		tests = append(tests, string(b))
	}
	for _, s := range tests {
		if got, want := firstControl(s), naive(s); got != want {
			t.Fatalf("firstControl(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestDropControlsSpans(t *testing.T) {
	tests := []struct {
		text, secret string
	}{
		{"id AKIAZ7VR\x00SQ4LMB2XK3NP.", "AKIAZ7VR\x00SQ4LMB2XK3NP"},
		{"\x00\x01id AKIAZ7\x7fVR\x00\x00SQ4LMB2XK3NP", "AKIAZ7\x7fVR\x00\x00SQ4LMB2XK3NP"},
		{"x \x00AKIAZ7VRSQ4LMB2XK3NP\x00 y", "AKIAZ7VRSQ4LMB2XK3NP"},
	}
	for _, tt := range tests {
		cv := dropControls(tt.text)
		clean := strings.Map(func(r rune) rune {
			if r < 0x20 && r != '\n' || r == 0x7f {
				return -1
			}
			return r
		}, tt.secret)
		k := strings.Index(cv.s, clean)
		if k < 0 {
			t.Fatalf("%q: view %q lacks %q", tt.text, cv.s, clean)
		}
		s, e := cv.span(k, k+len(clean))
		if got := tt.text[s:e]; got != tt.secret {
			t.Errorf("%q: span %q, want %q", tt.text, got, tt.secret)
		}
	}
	if cv := dropControls("no controls here"); cv.cuts != nil || cv.s != "no controls here" {
		t.Errorf("clean text rewritten: %+v", cv)
	}
}
