package secrets

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/promptwall/promptwall/scanner/internal/scannertest"
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
	// Text in other languages than English, where a control is rare and
	// the eight-byte words hold letters of two bytes, 0xC2 among them
	// ("¿", "¡"), at every offset from a word's start.
	pieces := []string{"a", "b", " ", "é", "ñ", "ü", "¿", "¡", "中", "\n", "\t", "\u0085", "\x01", "\x7f", "\xc2", "\x9f"}
	for n := 0; n < 5000; n++ {
		var b strings.Builder
		for range r.IntN(60) {
			k := r.IntN(len(pieces) * 8)
			if k >= len(pieces) {
				k %= 10 // mostly letters and spaces
			}
			b.WriteString(pieces[k])
		}
		tests = append(tests, b.String())
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

// TestScanSpansWithControls scans random mixes of tokens, control
// characters and multi-byte text: every match must be a non-empty range
// of the original on character boundaries, and a control character
// inside a token must not hide it.
func TestScanSpansWithControls(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	pieces := []string{"ghp_XIxB7KMN", "dAr3zqWtQqhE94qglHqOzn1D1stg", "\x00", "\x1b", "\u0085", "é", "日本", " ", "\n", "password = \"", "\"", "AKIA", "Z3MHQ7TX4KD2WQ5N"}
	r := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 3000; n++ {
		var b strings.Builder
		for k := r.IntN(12); k >= 0; k-- {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		text := b.String()
		f := scannertest.Scan(t, s, text)
		for _, m := range f.Matches {
			if m.Start < 0 || m.End > len(text) || m.Start >= m.End || !utf8.RuneStart(text[m.Start]) || m.End < len(text) && !utf8.RuneStart(text[m.End]) {
				t.Fatalf("%q: bad span %d..%d", text, m.Start, m.End)
			}
		}
	}
	for _, sep := range []string{"\x00", "\x08", "\x7f", "\u0080", "\x00\x00\x1f"} {
		text := "ghp_XIxB7KMN" + sep + "dAr3zqWtQqhE94qglHqOzn1D1stg"
		if f := scannertest.Scan(t, s, text); len(f.Matches) != 1 || f.Matches[0].Kind != "GITHUB_TOKEN" || text[f.Matches[0].Start:f.Matches[0].End] != text {
			t.Errorf("%q: got %+v", text, f.Matches)
		}
	}
}

func TestEntropy(t *testing.T) {
	tests := []struct {
		v    string
		want float64
	}{
		{"", 0}, {"aaaa", 0}, {"ab", 1}, {"abcd", 2}, {"aabb", 1}, {"0123456789abcdef", 4},
		{strings.Repeat("ab", 300), 1}, // counts above the table's range
	}
	for _, tt := range tests {
		if got := entropy(tt.v); got < tt.want-1e-9 || got > tt.want+1e-9 {
			t.Errorf("entropy(%.20q) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

// TestScanPrefixedWalk checks the probing walk against a byte-by-byte one
// on random text: both must find the same tokens.
func TestScanPrefixedWalk(t *testing.T) {
	naive := func(text string) []hit {
		var hits []hit
		for i := 0; i < len(text); {
			if !tokenByte[text[i]] {
				i++
				continue
			}
			j := i
			for j < len(text) && tokenByte[text[j]] {
				j++
			}
			if j-i >= minPrefixedLen && (i == 0 || !isPathByte(text[i-1]) || i >= 2 && text[i-2:i] == "//") && !labelledID(text, i) {
				if vs, ve, ok := prefixedToken(text, i, j, DefaultEntropyThreshold); ok {
					hits = append(hits, hit{vs, ve, nil})
				}
			}
			i = j
		}
		return hits
	}
	pieces := []string{"sk_live_", "Zq3vB8nT1xK9mR2wL5yP7cJ4", "hF6gD0sA3eU8", " ", "\n", "_", "-", ".", "a", "word ", "//", "/", "x9"}
	r := rand.New(rand.NewPCG(5, 6))
	found := 0
	for n := 0; n < 5000; n++ {
		var b strings.Builder
		for k := r.IntN(14); k >= 0; k-- {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		text := b.String()
		got, want := scanPrefixed(text, DefaultEntropyThreshold, nil, nil), naive(text)
		found += len(want)
		if len(got) != len(want) {
			t.Fatalf("%q: walk found %v, byte by byte %v", text, got, want)
		}
		for k := range got {
			if got[k].start != want[k].start || got[k].end != want[k].end {
				t.Fatalf("%q: walk found %v, byte by byte %v", text, got, want)
			}
		}
	}
	if found < 100 {
		t.Errorf("only %d tokens in the random texts: the test does not exercise the walk", found)
	}
}

// FuzzScan checks that no input makes Scan panic or report a span outside
// the text or inside a character. `go test` runs the seeds; `go test
// -fuzz FuzzScan` explores.
func FuzzScan(f *testing.F) {
	for _, seed := range []string{
		"AKIAZ7VR\x00SQ4LMB2XK3NP", `{"k": "AKIAZ7VR\u0000SQ4L"}`, "x\\u00", "a\\x1", "jwt:\n  secret:", "jwt: {",
		"password is", "--password", "token:\n", "https://hooks.x/", "http://a/api/v1/", "sk_live_\xc2",
		"-----BEGIN PRIVATE KEY-----\" + \"", "Unseal Key 1:", "Authorization: token ", "\xc2\x85\xc2",
		"-u a -p", "$y$j9T$", "unseal \\r\\n", ".pgpass\nh:1:d:u:", "Credential(\"a\", \"", "dapi0f", "key: a.B",
	} {
		f.Add(seed)
	}
	s, err := New(Config{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		fd := scannertest.Scan(t, s, text)
		for _, m := range fd.Matches {
			if m.Start < 0 || m.End > len(text) || m.Start >= m.End {
				t.Fatalf("%q: bad span %d..%d", text, m.Start, m.End)
			}
		}
	})
}
