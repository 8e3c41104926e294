// Command langprofiles builds the character-trigram profiles of
// scanner/language from text in Debian packages, and reports how well they
// identify held-out paragraphs.
//
// Source. Running prose in many languages ships with Debian as translated
// manual pages (the manpages-l10n project, GPL) and, for Bulgarian, which
// has no translated manual pages, as a word list (wbulgarian). To rebuild:
//
//	mkdir -p /tmp/langsrc/debs && cd /tmp/langsrc/debs
//	apt-get download manpages manpages-cs manpages-da manpages-de manpages-el \
//	  manpages-es manpages-fi manpages-fr manpages-hu manpages-id manpages-it \
//	  manpages-nb manpages-nl manpages-pl manpages-pt-br manpages-ro manpages-ru \
//	  manpages-sr manpages-sv manpages-uk manpages-vi manpages-tr manpages-mk wbulgarian
//	for d in *.deb; do dpkg-deb -x "$d" ../root; done
//	cd /work/main && go run ./internal/gen/langprofiles -root /tmp/langsrc/root \
//	  -out scanner/language/profiles_gen.go
//
// Only the trigram ranks are kept (no text), top -n per language. Roff
// markup, no-fill blocks (examples, code) and lines that read as English in
// a translated page are dropped first. One file in ten is held out for the
// accuracy report printed at the end.
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// sources maps a language to its man-page directory under usr/share/man
// (English: the untranslated sections), or to a word list under
// usr/share/dict when the directory starts with "dict:".
var sources = map[string]string{
	"en": "", "cs": "cs", "da": "da", "de": "de", "es": "es", "fi": "fi", "fr": "fr", "hu": "hu",
	"id": "id", "it": "it", "nb": "nb", "nl": "nl", "pl": "pl", "pt": "pt_BR", "ro": "ro", "sv": "sv",
	"tr": "tr", "vi": "vi", "ru": "ru", "uk": "uk", "sr": "sr", "mk": "mk", "bg": "dict:bulgarian",
}

// cyrillic marks the languages written in Cyrillic; the others use Latin.
var cyrillic = map[string]bool{"ru": true, "uk": true, "sr": true, "mk": true, "bg": true}

// inScript reports whether every letter of t is Cyrillic (cyr) or Latin.
func inScript(t string, cyr bool) bool {
	for _, r := range t {
		if r == ' ' {
			continue
		}
		if unicode.Is(unicode.Cyrillic, r) != cyr || !cyr && !unicode.Is(unicode.Latin, r) {
			return false
		}
	}
	return true
}

func main() {
	root := flag.String("root", "/tmp/langsrc/root", "directory the .deb files were extracted to")
	out := flag.String("out", "scanner/language/profiles_gen.go", "generated Go file")
	n := flag.Int("n", 400, "trigrams kept per language")
	flag.Parse()

	langs := make([]string, 0, len(sources))
	for l := range sources {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	profiles := map[string][]string{}
	heldOut := map[string][]string{}
	for _, l := range langs {
		train, test, err := load(*root, l, sources[l])
		if err != nil {
			log.Fatalf("%s: %v", l, err)
		}
		for t := range train {
			if !inScript(t, cyrillic[l]) {
				delete(train, t) // option names, untranslated words
			}
		}
		profiles[l] = top(train, *n)
		heldOut[l] = test
		log.Printf("%s: %d trigrams counted, %d held-out paragraphs", l, len(train), len(test))
	}
	if err := write(*out, langs, profiles); err != nil {
		log.Fatal(err)
	}
	report(langs, profiles, heldOut)
}

// load returns the trigram counts of the training files and the held-out
// paragraphs of a language.
func load(root, lang, src string) (map[string]int, []string, error) {
	counts := map[string]int{}
	var test []string
	if dict, ok := strings.CutPrefix(src, "dict:"); ok {
		f, err := os.Open(filepath.Join(root, "usr/share/dict", dict))
		if err != nil {
			return nil, nil, err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for i := 0; sc.Scan(); i++ {
			if i%3 == 0 { // a third of the inflected forms is plenty
				addTrigrams(counts, sc.Text())
			}
		}
		return counts, nil, sc.Err()
	}
	var files []string
	dirs := []string{filepath.Join(root, "usr/share/man", src)}
	if src == "" {
		dirs, _ = filepath.Glob(filepath.Join(root, "usr/share/man/man*"))
	}
	for _, d := range dirs {
		filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(p, ".gz") {
				files = append(files, p)
			}
			return nil
		})
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("no manual pages under %v", dirs)
	}
	// Boilerplate (the coreutils footer, licence notices) repeats in every
	// page: each distinct paragraph counts once.
	seen := map[string]bool{}
	for i, p := range files {
		text, err := prose(p, lang != "en")
		if err != nil {
			return nil, nil, err
		}
		for _, para := range strings.Split(text, "\n\n") {
			para = strings.TrimSpace(para)
			if para == "" || seen[para] {
				continue
			}
			seen[para] = true
			if i%10 == 9 {
				if len([]rune(para)) >= 120 {
					test = append(test, para)
				}
				continue
			}
			addTrigrams(counts, para)
		}
	}
	return counts, test, nil
}

var (
	roffEscape = regexp.MustCompile(`\\(f(\[[^\]]*\]|\(..|.)|\(..|\*(\(..|\[[^\]]*\]|.)|s[-+]?\d+|[-e&|^/,%:!0~c])`)
	links      = regexp.MustCompile(`\S*(://|@|www\.)\S*`)
	english    = regexp.MustCompile(`(?i)\b(the|and|of|to|is|that|with|for|this|are|from|which)\b`)
)

// prose extracts the running text of a gzipped roff page: paragraphs
// separated by blank lines.
func prose(path string, dropEnglish bool) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return "", err
	}
	raw, err := io.ReadAll(z)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	nofill := false
	for _, line := range strings.Split(string(raw), "\n") {
		switch {
		case strings.HasPrefix(line, ".nf") || strings.HasPrefix(line, ".EX"):
			nofill = true
			continue
		case strings.HasPrefix(line, ".fi") || strings.HasPrefix(line, ".EE"):
			nofill = false
			continue
		case strings.HasPrefix(line, ".PP") || strings.HasPrefix(line, ".SH") || strings.HasPrefix(line, ".TP") || strings.HasPrefix(line, ".IP") || strings.HasPrefix(line, ".P") || strings.TrimSpace(line) == "":
			b.WriteString("\n\n")
			continue
		case nofill || strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") || strings.HasPrefix(line, "\\\""):
			continue
		}
		line = roffEscape.ReplaceAllString(line, "")
		line = links.ReplaceAllString(line, " ")
		if dropEnglish && len(english.FindAllString(line, 3)) >= 2 {
			continue
		}
		b.WriteString(line)
		b.WriteByte(' ')
	}
	return b.String(), nil
}

// addTrigrams counts the trigrams of text as scanner/language reads them:
// letters lower-cased, anything else a word boundary.
func addTrigrams(counts map[string]int, text string) {
	var w [3]rune
	n := 0
	push := func(r rune) {
		w[0], w[1], w[2] = w[1], w[2], r
		n++
		if n >= 3 && !(w[1] == ' ' && (w[0] == ' ' || w[2] == ' ')) {
			counts[string(w[:])]++
		}
	}
	push(' ')
	prevSpace := true
	for _, r := range text {
		if unicode.IsLetter(r) {
			push(unicode.ToLower(r))
			prevSpace = false
		} else if !prevSpace {
			push(' ')
			prevSpace = true
		}
	}
	if !prevSpace {
		push(' ')
	}
}

// top returns the n most frequent trigrams, most frequent first.
func top(counts map[string]int, n int) []string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys[:min(n, len(keys))]
}

func write(path string, langs []string, profiles map[string][]string) error {
	var b strings.Builder
	b.WriteString("// Code generated by internal/gen/langprofiles; DO NOT EDIT.\n\n")
	b.WriteString("package language\n\n")
	b.WriteString("// trigramProfiles holds, per language, its most frequent character\n")
	b.WriteString("// trigrams in rank order, concatenated (each is three runes; ' ' marks\n")
	b.WriteString("// a word boundary). Source: Debian manpages-l10n and wbulgarian; see\n")
	b.WriteString("// internal/gen/langprofiles.\n")
	b.WriteString("var trigramProfiles = map[string]string{\n")
	for _, l := range langs {
		fmt.Fprintf(&b, "\t%q: %q,\n", l, strings.Join(profiles[l], ""))
	}
	b.WriteString("}\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// report classifies the held-out paragraphs with the same rank scoring the
// scanner uses, cut to 200 runes like a typical prompt sentence.
func report(langs []string, profiles map[string][]string, heldOut map[string][]string) {
	rank := map[string]map[string]int{}
	for _, l := range langs {
		rank[l] = map[string]int{}
		for i, t := range profiles[l] {
			rank[l][t] = i
		}
	}
	total, right := 0, 0
	for _, l := range langs {
		ok, all := 0, 0
		confusions := map[string]int{}
		for _, p := range heldOut[l] {
			r := []rune(p)
			p = string(r[:min(len(r), 200)])
			counts := map[string]int{}
			addTrigrams(counts, p)
			best, bestScore := "", -1.0
			for _, c := range langs {
				if cyrillic[c] != cyrillic[l] {
					continue // the scanner decides the script first
				}
				s := 0.0
				for t, k := range counts {
					if i, ok := rank[c][t]; ok {
						s += float64(k) * score(i, len(profiles[c]))
					}
				}
				if s > bestScore {
					best, bestScore = c, s
				}
			}
			all++
			if best == l {
				ok++
			} else {
				confusions[best]++
				if os.Getenv("SHOW") == l {
					fmt.Printf("  %s -> %s: %q\n", l, best, p)
				}
			}
		}
		total += all
		right += ok
		if all > 0 {
			fmt.Printf("%s: %d/%d (%.1f%%) confused with %v\n", l, ok, all, 100*float64(ok)/float64(all), confusions)
		}
	}
	fmt.Printf("all: %d/%d (%.1f%%)\n", right, total, 100*float64(right)/float64(total))
}

// score must match scanner/language: the log of a Zipf estimate of the
// trigram's probability relative to the profile's floor.
func score(rank, n int) float64 {
	return logf(float64(n+zipfK) / float64(rank+zipfK))
}

const zipfK = 20

func logf(x float64) float64 { return math.Log(x) }
