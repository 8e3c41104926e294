package pii

import (
	"strings"
	"testing"
	"unicode"

	"github.com/promptwall/promptwall/internal/dataset"
)

// refLookup is lookup written the plain way: fold, then the lexicon map.
func refLookup(w string) uint16 {
	if len(w) == 0 {
		return 0
	}
	if h := lexHash(w); lexFilter[h>>6]&(1<<(h&63)) == 0 {
		return 0
	}
	var buf [40]byte
	b := fold(w, buf[:0])
	if b == nil {
		return 0
	}
	return lexicon[string(b)]
}

// TestLookupMatchesReference holds lookup's table to the lexicon map on
// every key in three spellings, their near misses, and every word and
// two-word phrase of the everyday sets and, when present, the dev set.
func TestLookupMatchesReference(t *testing.T) {
	var words []string
	for k := range lexicon {
		words = append(words, k, strings.ToUpper(k), strings.ToUpper(k[:1])+k[1:], k+"s", k[:len(k)-1], "x"+k)
	}
	type row struct {
		Text string `json:"text"`
	}
	files := []string{"../injection/testdata/everyday_ifeval.jsonl", "../injection/testdata/everyday_mtbench.jsonl"}
	if dir := dataset.Dir(); dir != "" {
		files = append(files, dir+"/injection/dev.jsonl")
	}
	for _, file := range files {
		rows, err := dataset.ReadJSONL[row](file)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			f := strings.FieldsFunc(r.Text, func(c rune) bool { return !unicode.IsLetter(c) && c != '\'' && c != '-' && c != '.' })
			for i, w := range f {
				words = append(words, w)
				if i+1 < len(f) {
					words = append(words, w+" "+f[i+1])
				}
			}
		}
	}
	found := 0
	for _, w := range words {
		got, want := lookup(w), refLookup(w)
		if got != want {
			t.Fatalf("lookup(%q) = %#x, reference %#x", w, got, want)
		}
		if want != 0 {
			found++
		}
	}
	if found < len(lexicon) {
		t.Errorf("only %d of %d words found in the lexicon", found, len(words))
	}
	t.Logf("%d words agree, %d in the lexicon", len(words), found)
}
