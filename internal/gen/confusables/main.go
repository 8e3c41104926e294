// Command confusables generates scanner/confusables_table.go, the table the
// Canonical view uses to fold look-alike characters (Cyrillic 'а', Greek
// 'Ο', Cherokee 'Ꭺ', small capitals, smart quotes, ...) to the Latin
// characters they imitate.
//
// Usage, from the scanner directory (see the go:generate line in
// scanner/normalize.go):
//
//	go run ../internal/gen/confusables -out confusables_table.go
//
// # Source
//
// The data is Unicode's UTS #39 confusables.txt, read from the JSON form
// shipped by Debian's python3-confusable-homoglyphs package (install it with
// apt-get install python3-confusable-homoglyphs; -in names the file). That
// JSON records each line "source → prototype" of confusables.txt twice, as
// json[source] += prototype and json[prototype] += source, in file order. A
// prototype never appears as a source, so a key with one entry whose partner
// has several is a source; for an isolated pair the key written first is the
// source (the Python dict keeps insertion order and the JSON keeps it too,
// which is why the file is read as a token stream, not into a map).
//
// # What is kept
//
// The Canonical view is NFKC first, so the table is keyed by the code
// points NFKC leaves alone: a fullwidth or mathematical letter never reaches
// it. For each such code point c the generator computes the UTS #39
// skeleton of c alone: NFD(c), each base rune replaced by its prototype,
// then NFKC again (so Cyrillic 'ё' becomes Latin 'ë'). A mapping is kept
// when:
//
//   - c is not ASCII. ASCII sources ('1' → 'l', '0' → 'O', 'm' → "rn") are
//     the noise the skeleton algorithm needs for identifier comparison but
//     would wreck ordinary text; digits in words are the Folded view's
//     leetspeak business.
//   - the skeleton differs from c and consists of printable ASCII and
//     accented ASCII letters only: the view exists to expose Latin words
//     written with look-alikes; a mapping onto Cyrillic, onto small capitals
//     ('и' → 'ᴎ') or onto a letter plus an overlay mark ('ł' → "l̸") helps
//     no detector and would garble natural text.
//   - a Latin source maps onto pure ASCII only ('ı' → 'i', 'ɑ' → 'a'): a
//     Latin letter whose skeleton is itself or another accented Latin letter
//     is a spelling, not a disguise (the identity and Latin-to-Latin
//     mappings that make up much of the file are dropped).
//   - c is not a decimal digit of another script: Arabic-Indic one → 'l'
//     would turn numbers into words and Bengali four → '8' would change
//     their value.
//   - c is not from a right-to-left script nor from Han, Hiragana, Katakana,
//     Hangul or Bopomofo: mixing those into a Latin word is visible (bidi
//     reordering, full-width glyphs), while folding them would rewrite
//     natural text in those languages (Hebrew vav and Arabic alef → 'l').
//   - combining marks are left as they are; only base characters are
//     mapped, so accented Latin text keeps its accents.
//
// Two prototype classes are refined so that case survives: the class of 'l'
// (which holds 'I', '1' and '|') maps upper-case sources (Greek 'Ι',
// Cyrillic 'І') to 'I'; the class "rn" maps to 'm' and the class of two
// apostrophes (curly double quotes) to the ASCII double quote.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"io"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/bidi"
	"golang.org/x/text/unicode/norm"
)

const debianJSON = "/usr/lib/python3/dist-packages/confusable_homoglyphs/confusables.json"

func main() {
	in := flag.String("in", debianJSON, "confusables.json of python3-confusable-homoglyphs")
	out := flag.String("out", "confusables_table.go", "Go file to write")
	pkg := flag.String("pkg", "scanner", "package name of the generated file")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("confusables: ")

	raw, err := os.ReadFile(*in)
	if err != nil {
		log.Fatalf("%v (apt-get install python3-confusable-homoglyphs, or pass -in)", err)
	}
	keys, entries, err := parse(raw)
	if err != nil {
		log.Fatalf("%s: %v", *in, err)
	}
	protos := sources(keys, entries)
	table := build(protos)

	sum := sha256.Sum256(raw)
	src := sourceInfo{
		path:     *in,
		sha256:   hex.EncodeToString(sum[:]),
		upstream: upstreamVersion(filepath.Join(filepath.Dir(*in), "_version.py")),
		debian:   debianVersion("/var/lib/dpkg/status", "python3-confusable-homoglyphs"),
		sources:  len(protos),
	}
	code, err := render(*pkg, src, table)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, code, 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("%d source mappings read, %d kept, wrote %s", len(protos), len(table), *out)
}

// parse reads the JSON object as a token stream so that key order (which
// tells sources from prototypes) is kept. It returns the keys in file order
// and, for each key, its partners with the LRM wrapping of right-to-left
// text removed.
func parse(raw []byte) ([]string, map[string][]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, fmt.Errorf("want a JSON object: %v", err)
	}
	var keys []string
	entries := map[string][]string{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k := unwrap(t.(string))
		var list []struct {
			C string `json:"c"`
		}
		if err := dec.Decode(&list); err != nil {
			return nil, nil, fmt.Errorf("key %q: %w", k, err)
		}
		if _, seen := entries[k]; !seen {
			keys = append(keys, k)
		}
		for _, e := range list {
			entries[k] = append(entries[k], unwrap(e.C))
		}
	}
	return keys, entries, nil
}

// unwrap removes the U+200E marks the Python generator copied from
// confusables.txt's comments, where they keep right-to-left samples legible.
func unwrap(s string) string {
	const lrm = "\u200e"
	if len(s) > 2*len(lrm) && strings.HasPrefix(s, lrm) && strings.HasSuffix(s, lrm) {
		return s[len(lrm) : len(s)-len(lrm)]
	}
	return s
}

// sources recovers confusables.txt's source → prototype lines.
func sources(keys []string, entries map[string][]string) map[rune]string {
	pos := make(map[string]int, len(keys))
	for i, k := range keys {
		pos[k] = i
	}
	out := map[rune]string{}
	for _, k := range keys {
		list := entries[k]
		if len(list) != 1 || utf8.RuneCountInString(k) != 1 {
			continue // a prototype (several sources) or a multi-rune prototype
		}
		p := list[0]
		back := entries[p]
		isSource := len(back) > 1 || (len(back) == 1 && back[0] == k && pos[k] < pos[p])
		if !isSource {
			continue
		}
		r, _ := utf8.DecodeRuneInString(k)
		out[r] = p
	}
	return out
}

type mapping struct {
	from rune
	to   string
}

// build computes the single-code-point skeletons and applies the filters of
// the package comment.
func build(protos map[rune]string) []mapping {
	var table []mapping
	for c := rune(utf8.RuneSelf); c <= unicode.MaxRune; c++ {
		if c >= 0xD800 && c <= 0xDFFF {
			continue
		}
		if !unicode.IsGraphic(c) || unicode.Is(unicode.Cf, c) || unicode.IsMark(c) || unicode.IsDigit(c) {
			// Invisible characters are removed, not folded; digits of
			// other scripts keep their value (Bengali four looks like '8').
			continue
		}
		self := string(c)
		if norm.NFKC.String(self) != self || excludedScript(c) {
			continue
		}
		var sk strings.Builder
		for _, r := range norm.NFD.String(self) {
			p, ok := protos[r]
			if !ok || r < utf8.RuneSelf || unicode.IsMark(r) {
				sk.WriteRune(r)
				continue
			}
			sk.WriteString(refine(r, p))
		}
		to := norm.NFKC.String(sk.String())
		if to == self || !asciiish(to) {
			continue
		}
		if unicode.Is(unicode.Latin, c) && !isASCII(to) {
			continue // Latin to accented Latin: a spelling, not a disguise
		}
		table = append(table, mapping{c, to})
	}
	sort.Slice(table, func(i, j int) bool { return table[i].from < table[j].from })
	return table
}

// refine picks, within a prototype class that holds several ASCII
// characters, the one that keeps the source's case and shape.
func refine(src rune, proto string) string {
	switch proto {
	case "l":
		if unicode.IsUpper(src) {
			return "I"
		}
	case "rn":
		return "m"
	case "''":
		return `"`
	}
	return proto
}

func excludedScript(c rune) bool {
	if p, _ := bidi.LookupRune(c); p.Class() == bidi.R || p.Class() == bidi.AL {
		return true
	}
	return unicode.In(c, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Bopomofo)
}

// asciiish reports whether s is printable ASCII and accented ASCII letters
// ('ë' from Cyrillic 'ё'). Small capitals, stroked letters and uncomposed
// marks are left out: they are not what a Latin detector looks for.
func asciiish(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < utf8.RuneSelf {
			if r < ' ' || r == 0x7F {
				return false
			}
			continue
		}
		d := norm.NFD.String(string(r))
		if !unicode.Is(unicode.Latin, r) || d[0] >= utf8.RuneSelf || !unicode.IsLetter(rune(d[0])) {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

type sourceInfo struct {
	path, sha256, upstream, debian string
	sources                        int
}

var versionRE = regexp.MustCompile(`"version":\s*"([^"]+)"`)

// upstreamVersion reads the versioneer file that sits beside the JSON.
func upstreamVersion(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	if m := versionRE.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return "unknown"
}

// debianVersion reads the installed package's version from dpkg's status
// file, so the header says exactly which build the table came from.
func debianVersion(status, pkg string) string {
	f, err := os.Open(status)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return "unknown"
	}
	for _, stanza := range strings.Split(string(b), "\n\n") {
		if !strings.HasPrefix(stanza, "Package: "+pkg+"\n") {
			continue
		}
		for _, line := range strings.Split(stanza, "\n") {
			if v, ok := strings.CutPrefix(line, "Version: "); ok {
				return v
			}
		}
	}
	return "unknown"
}

func render(pkg string, src sourceInfo, table []mapping) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, `// Code generated by internal/gen/confusables; DO NOT EDIT.

// Source: Unicode UTS #39 confusables.txt, as shipped in the JSON of
// Debian's python3-confusable-homoglyphs %s (upstream confusable_homoglyphs
// %s), file %s, sha256 %s.
// confusables.txt is Copyright © Unicode, Inc., distributed under the Unicode
// License (Data Files and Software), https://www.unicode.org/copyright.html;
// confusable_homoglyphs is MIT licensed.
//
// %d source mappings read; %d single-code-point skeletons kept (see the
// generator's package comment for what is kept and why).

package %s

// confusables maps a code point (NFKC-stable, not ASCII) to the Latin or
// ASCII text it imitates, sorted by code point for binary search.
var confusables = [...]confusable{
`, src.debian, src.upstream, filepath.Base(src.path), src.sha256, src.sources, len(table), pkg)
	for _, m := range table {
		fmt.Fprintf(&b, "\t{0x%04X, %q}, // %s\n", m.from, m.to, printable(m.from))
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

// printable shows the source character in the comment when a reader's
// editor can render it.
func printable(r rune) string {
	if unicode.IsPrint(r) && !unicode.IsSpace(r) {
		return string(r)
	}
	return fmt.Sprintf("U+%04X", r)
}
