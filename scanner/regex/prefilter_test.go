package regex

import (
	"context"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/internal/scannertest"
)

func TestLiteralsOf(t *testing.T) {
	digits := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}
	tests := []struct {
		pattern string
		want    []string // nil: no prefilter, the pattern always runs
	}{
		// Literals are lower-cased: the automaton folds ASCII case, and a
		// false positive only costs a regexp run.
		{`TCK-[0-9]{6}`, []string{"tck-"}},
		{`\bTICKET-[0-9]{4,}\b`, []string{"ticket-"}},
		{`(?i)\bproject\s+(falcon|osprey)\b`, []string{"project"}},
		{`\d{3}-\d{4}`, []string{"-"}},
		{`[a-z]+@example\.com`, []string{"@example.com"}},
		{`^foo$`, []string{"foo"}},
		{`(?m)^foo$`, []string{"foo"}},
		{`\bfoo\B`, []string{"foo"}},

		// Fold case: regexp folds with unicode.SimpleFold, so k and s also
		// match U+212A KELVIN SIGN and U+017F LONG S; those need literals
		// of their own.
		{`kelvin`, []string{"kelvin"}},
		{`(?i)kelvin`, []string{"kelvin", "\u212aelvin"}},
		{`(?i)[k]ey`, []string{"key", "\u212aey"}},
		{`(?i)secret`, []string{"secret", "\u017fecret"}},
		{`(?i)Straße`, []string{"straße", "straẞe", "ſtraße", "ſtraẞe"}},
		{`é(?i)é`, []string{"éé", "éÉ"}},
		{`(?i)falcon|osprey`, []string{"falcon", "osprey", "oſprey"}},
		// Too many variants as a whole: the best run of it.
		{`(?i)ssssssss`, variants(6)},

		// Alternation: one set per branch, or nothing.
		{`abc|de`, []string{"abc", "de"}},
		{`(falcon|osprey)`, []string{"falcon", "osprey"}},
		{`abc|d*`, nil},
		{`abc|\b`, nil},

		// Optional parts and repetition.
		{`(abc)?def`, []string{"abcdef", "def"}},
		{`(abc)?`, nil},
		{`x*abc`, []string{"abc"}},
		{`(?:abc)+x`, []string{"abc"}},
		{`(?:abc){0,3}x`, []string{"abcabcabcx", "abcabcx", "abcx", "x"}},
		{`(?:abc){2,3}`, []string{"abcabc", "abcabcabc"}},
		{`(?:ab|cd)*`, nil},
		{`api[_-]?key`, []string{"api-key", "api_key", "apikey"}},

		// Classes: expanded when small.
		{`a[bc]d`, []string{"abd", "acd"}},
		{`[0-9]+`, digits},
		{`[a-z]+`, strings.Split("abcdefghijklmnopqrstuvwxyz", "")},
		{`\pL+`, nil},
		{`.+`, nil},
		{`.*`, nil},

		// Empty-width only.
		{`\b`, nil},
		{`^`, nil},

		// U+FFFD stands for any invalid byte in the text: never a literal.
		{`a\x{FFFD}bcd`, []string{"bcd"}},
		{`\x{FFFD}`, nil},
		{`[\x{FFFD}x]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			got, ok := literalsOf(tt.pattern)
			if ok != (tt.want != nil) || !slices.Equal(got, sorted(tt.want)) {
				t.Errorf("literalsOf(%q) = %q, %v; want %q", tt.pattern, got, ok, tt.want)
			}
		})
	}
}

// variants lists every string of n runes 's' or 'ſ'.
func variants(n int) []string {
	set := []string{""}
	for range n {
		set, _ = product(set, []string{"s", "ſ"})
	}
	return set
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// reference is the scan the prefilter must not change: every pattern's
// regexp over the whole text.
func reference(cfg Config, text string) scanner.Finding {
	tx := scanner.NewText(text)
	s := tx.Original
	var view *scanner.View
	if cfg.MatchOn != MatchOriginal {
		view = tx.Canonical()
		s = view.S
	}
	var f scanner.Finding
	var names []string
	for _, p := range cfg.Patterns {
		expr := p.Pattern
		if cfg.CaseInsensitive {
			expr = "(?i)" + expr
		}
		kind := p.Kind
		if kind == "" {
			kind = kindOf(p.Name)
		}
		locs := regexp.MustCompile(expr).FindAllStringIndex(s, -1)
		for _, l := range locs {
			if l[0] == l[1] {
				continue
			}
			start, end := l[0], l[1]
			if view != nil {
				start, end = view.Span(start, end)
			}
			f.Matches = append(f.Matches, scanner.Match{Start: start, End: end, Kind: kind, Score: 1})
		}
		if len(locs) > 0 {
			names = append(names, p.Name)
		}
	}
	if len(f.Matches) > 0 {
		f.Detected, f.Score = true, 1
		f.Reason = "matched pattern(s): " + strings.Join(names, ", ")
	}
	return f
}

// equivalencePatterns mix filtered and unfiltered patterns, fold case,
// non-ASCII literals, and one (\bx*) that can match empty between words.
var equivalencePatterns = []string{
	`TCK-[0-9]{6}`,
	`\bTICKET-[0-9]{4,}\b`,
	`(?i)\bproject\s+(falcon|osprey)\b`,
	`kelvin`,
	`(?i)kelvin`,
	`(?i)secret`,
	`(?i)Straße`,
	`é(?i)é`,
	`abc|de`,
	`(abc)?def`,
	`api[_-]?key`,
	`\d{3}-\d{4}`,
	`a\x{FFFD}bcd`,
	`[a-z]+@example\.com`,
	`\bx*`,
	`.`,
}

var equivalenceTexts = []string{
	"",
	"nothing to see here",
	"see TCK-123456 and tck-654321 and TICKET-0042 ticket-0042",
	"Project  Falcon, PROJECT\tosprey, project oſprey, projectfalcon",
	"kelvin KELVIN \u212aelvin \u212aELVIN kelvi",
	"secret SECRET \u017fecret \u017fECRET",
	"Straße STRASSE straẞe \u017ftraße",
	"éé éÉ ÉÉ e\u0301e\u0301",
	"abcdef def abc de",
	"api_key api-key apikey API_KEY",
	"call 555-1234 or 555-123",
	"a\xffbcd a\ufffdbcd bcd",
	// Only the non-ASCII fold variant or only the invalid byte: nothing
	// else would make the pattern run.
	"\u212aELVIN",
	"\u017fECRET",
	"\u017ftraße",
	"project o\u017fprey",
	"a\xffbcd",
	"mail bob@example.com or @example.com",
	"xx x yxy",
	"ＴＣＫ-１２３４５６ ｋｅｌｖｉｎ",                     // NFKC folds full-width in the canonical view
	"TCK-12\u200b3456 pro\u200bject falcon", // the canonical view drops zero-width
}

func TestPrefilterMatchesReference(t *testing.T) {
	var all []Pattern
	for i, p := range equivalencePatterns {
		all = append(all, Pattern{Name: "p" + string(rune('a'+i)), Pattern: p})
	}
	var cfgs []Config
	for _, fold := range []bool{false, true} {
		for _, on := range []string{MatchCanonical, MatchOriginal} {
			for _, p := range all {
				cfgs = append(cfgs, Config{Patterns: []Pattern{p}, CaseInsensitive: fold, MatchOn: on})
			}
			// Together, for the order of matches and the reason.
			cfgs = append(cfgs, Config{Patterns: all[:len(all)-1], CaseInsensitive: fold, MatchOn: on})
		}
	}
	for _, cfg := range cfgs {
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range equivalenceTexts {
			if got, want := scannertest.Scan(t, s, text), reference(cfg, text); !reflect.DeepEqual(got, want) {
				t.Errorf("%+v on %q:\n got %+v\nwant %+v", cfg, text, got, want)
			}
		}
	}
}

// TestPrefilterManyHits overflows Find's buffer so Scan falls back to Each.
func TestPrefilterManyHits(t *testing.T) {
	cfg := Config{Patterns: []Pattern{{Name: "d", Pattern: `[0-9]+`}, {Name: "t", Pattern: `TCK-[0-9]{6}`}}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("1 2 3 4 ", 100) + "TCK-123456"
	if got, want := scannertest.Scan(t, s, text), reference(cfg, text); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func FuzzPrefilterMatchesReference(f *testing.F) {
	type sc struct {
		cfg Config
		s   *Scanner
	}
	var scanners []sc
	for i, p := range equivalencePatterns {
		for _, fold := range []bool{false, true} {
			for _, on := range []string{MatchCanonical, MatchOriginal} {
				cfg := Config{Patterns: []Pattern{{Name: "p", Pattern: p}}, CaseInsensitive: fold, MatchOn: on}
				s, err := New(cfg)
				if err != nil {
					f.Fatal(err)
				}
				scanners = append(scanners, sc{cfg, s})
			}
		}
		f.Add(uint16(4*i), equivalenceTexts[i%len(equivalenceTexts)])
	}
	for i, text := range equivalenceTexts {
		f.Add(uint16(i), text)
	}
	f.Fuzz(func(t *testing.T, i uint16, text string) {
		c := scanners[int(i)%len(scanners)]
		got, err := c.s.Scan(context.Background(), &scanner.Target{Text: scanner.NewText(text)})
		if err != nil {
			t.Fatal(err)
		}
		if want := reference(c.cfg, text); !reflect.DeepEqual(got, want) {
			t.Errorf("%+v on %q:\n got %+v\nwant %+v", c.cfg, text, got, want)
		}
	})
}
