package injection

import (
	"strings"
	"unicode"

	"github.com/promptwall/promptwall/scanner"
)

// Where a text comes from decides what an imperative in it means. A user's
// own request ("encode your answer in base64", "rewrite your previous
// response") is an ordinary instruction however it is worded; the same
// words inside an e-mail, a table, a web page or a tool's result that the
// user pasted for the assistant to work on address the assistant behind the
// user's back: a planted injection. The model therefore sees a text in two
// zones: the request, and the content after it. Features found in the
// content zone count twice: once with the weight every zone shares, and once
// with a weight of their own, learned from content with and without planted
// instructions (the BIPIA twins), so "your answer" in an e-mail weighs
// heavily while "your answer" in a request does not.

// Limits of the request/content split of a user message.
const (
	// maxLead is how far into a message the end of the user's own request
	// is looked for; a first paragraph longer than this is not a question
	// in front of pasted content.
	maxLead = 512
	// minContent is the least content worth a zone of its own.
	minContent = 40
)

// contentStart returns the offset in the original text where content that
// the user pasted or a tool returned begins, len(text) when there is none.
// Tool results are content from their first byte. In a user message the
// content is what follows the user's request: after the first blank line,
// after a colon that introduces a quote, a code fence, markup or a table,
// or at a code fence, within the first maxLead bytes. A message that opens
// as a document does (mail headers, markup, a table, JSON, a code fence, a
// traceback) is pasted content from its first byte.
func contentStart(text string, role scanner.Role) int {
	if role == scanner.RoleTool {
		return 0
	}
	if role == scanner.RoleSystem || role == scanner.RoleAssistant {
		return len(text)
	}
	if len(text) >= minContent && startsWithDocument(text) {
		return 0
	}
	lead := text[:min(len(text), maxLead)]
	best := len(text)
	if i := strings.Index(lead, "\n\n"); i > 0 {
		best = i + 2
		if ownAfterword(text[:i], text[best:]) {
			best = len(text)
		}
	} else if i := strings.Index(lead, "\n\r\n"); i > 0 {
		best = i + 3
	}
	if i := strings.Index(lead, "```"); i > 0 && i < best {
		best = i
	}
	for i := 0; i < min(best, len(lead)); i++ {
		// A colon, ASCII or full-width as Chinese and Japanese type it.
		j := i + 1
		if strings.HasPrefix(lead[i:], "\uff1a") {
			j = i + len("\uff1a")
		} else if lead[i] != ':' {
			continue
		}
		for j < len(lead) && (lead[j] == ' ' || lead[j] == '\t') {
			j++
		}
		if j < len(lead) && (strings.IndexByte("\n`<{[|", lead[j]) >= 0 || closersOf(lead[j:]) != nil) {
			best = j
			break
		}
	}
	for best < len(text) && strings.IndexByte(" \t\r\n", text[best]) >= 0 {
		best++
	}
	if len(text)-best < minContent {
		return len(text)
	}
	return best
}

// zone is the content zone of a text: bytes [from, to). A text without
// content has from == to == its length.
type zone struct{ from, to int }

// has reports whether the byte at pos lies in the zone.
func (z zone) has(pos int) bool { return pos >= z.from && pos < z.to }

// hasFeature reports whether a feature ending at pos lies in the zone.
func (z zone) hasFeature(pos int) bool { return pos > z.from && pos <= z.to }

// overlap is the number of bytes of [a, e) in the zone.
func (z zone) overlap(a, e int) int { return max(min(e, z.to)-max(a, z.from), 0) }

// contentEnd returns where content that begins at start ends. Pasted
// content runs to the end of the message, unless it is a quotation: the
// user's words after its closing quote ("Rewrite this sentence: "..." Do
// not use any commas in your response.") are theirs again, and an
// instruction there is their own request. The closing quote is the last
// quote of the opening's kind that ends a word (not the apostrophe of
// "don't"), so that a document quoting within itself stays whole.
func contentEnd(text string, start int) int {
	if start >= len(text) {
		return len(text)
	}
	closers := closersOf(text[start:])
	if closers == nil {
		return len(text)
	}
	close := -1
	for _, c := range closers {
		for i := len(text) - len(c); i > start; i-- {
			if text[i:i+len(c)] != c {
				continue
			}
			// An apostrophe between two letters is inside a word.
			if c != "\"" && c != "”" && i+len(c) < len(text) && wordByte[text[i-1]] && wordByte[text[i+len(c)]] {
				continue
			}
			close = max(close, i+len(c))
			break
		}
	}
	if close < 0 {
		return len(text)
	}
	for _, r := range text[close:] {
		if unicode.IsLetter(r) {
			return close
		}
	}
	return len(text)
}

// quotations are the opening quotation marks of English, French, German,
// Chinese and Japanese, each with the marks that may close it.
var quotations = []struct {
	open    string
	closers []string
}{
	{"\"", []string{"\"", "”"}},
	{"“", []string{"\"", "”"}},
	{"'", []string{"'", "’"}},
	{"‘", []string{"'", "’"}},
	{"«", []string{"»"}},
	{"„", []string{"“", "\""}},
	{"「", []string{"」"}},
	{"『", []string{"』"}},
}

// closersOf returns the marks that close the quotation s opens with, nil
// when s opens with none.
func closersOf(s string) []string {
	_, closers := openingQuote(s)
	return closers
}

// openingQuote returns the length of the quotation mark s opens with and
// the marks that close it; 0 and nil when s opens with none.
func openingQuote(s string) (int, []string) {
	for _, q := range quotations {
		if strings.HasPrefix(s, q.open) {
			return len(q.open), q.closers
		}
	}
	return 0, nil
}

// maxAfterword is the longest paragraph after a blank line that can be
// the user's own afterword to their request rather than pasted content.
const maxAfterword = 320

// ownAfterword reports whether rest, the text after the first blank line,
// is the user's own continuation of the request before it: one short
// paragraph that is no document, after a request that ended its sentence
// with a full stop or an exclamation mark rather than ask or introduce
// something ("Write a riddle.\n\nDo not use any commas in your
// response."). Pasted content is announced ("this e-mail:"), follows a
// question ("Q: what was paid?\n\n<e-mail>"), runs longer, or has a
// document's shape.
func ownAfterword(request, rest string) bool {
	// A sentence that ends inside a quotation ended too: 'is "Happy Birthday."'.
	r := strings.TrimRight(request, " \t\r\"')\u201d\u2019")
	if r == "" || strings.IndexByte(".!", r[len(r)-1]) < 0 {
		return false
	}
	rest = strings.TrimSpace(rest)
	return len(rest) <= maxAfterword && !strings.Contains(rest, "\n\n") && !strings.Contains(rest, "```") && !startsWithDocument(rest) && !greets(rest) && !labelled(rest)
}

// labelled reports whether a line of text opens with a label, one to three
// words and a colon ("Question: ...", "Answer (follow this exactly): ...",
// "Document: ..."): a transcript, a form or a record the user pasted, or
// one an attacker wrote to pass for it, not an afterword.
func labelled(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimLeft(line, " \t")
		colon := strings.IndexByte(line, ':')
		if colon <= 0 || colon > 40 || !isASCIILetter(line[0]) {
			continue
		}
		if words := len(strings.Fields(line[:colon])); words >= 1 && words <= 3 {
			return true
		}
	}
	return false
}

// greetings open a letter or an e-mail, compared case-insensitively.
var greetings = []string{"hi", "hello", "hey", "dear", "greetings", "good morning", "good afternoon", "good evening"}

// greets reports whether a line of text opens with a greeting ("Hi David,",
// "Dear team"): correspondence the user pasted, which a user's afterword to
// their own request never is, even when a planted line comes first.
func greets(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimLeft(line, " \t")
		for _, g := range greetings {
			if len(line) > len(g) && strings.EqualFold(line[:len(g)], g) && !wordByte[line[len(g)]] {
				return true
			}
		}
	}
	return false
}

// foldedOffset maps an offset of the original text to the first offset of
// view at or after it; the view's map to the original is monotone.
func foldedOffset(view *scanner.View, orig int) int {
	lo, hi := 0, len(view.S)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if a, _ := view.Span(mid, mid+1); a < orig {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// contentZone returns the content zone of text in the original text and in
// its folded view (from == to == the length for none). A document whose opening is disguised by
// letter spacing ("T r a c e b a c k") is recognised by the opening of its
// folded view, where the spacing is undone: the author of a planted
// instruction controls the content's spelling, so the zone must not depend
// on it.
func contentZone(text *scanner.Text, view *scanner.View, role scanner.Role) (orig, folded zone) {
	n := len(text.Original)
	cs := contentStart(text.Original, role)
	if cs == n && role == scanner.RoleUser && len(view.S) >= minContent && foldedOpensDocument(view.S) {
		return zone{0, n}, zone{0, len(view.S)}
	}
	orig = zone{cs, n}
	if role == scanner.RoleUser {
		orig.to = contentEnd(text.Original, cs)
		if orig.from < orig.to && ownSpec(text.Original[orig.from:orig.to]) {
			orig = zone{n, n}
		}
	}
	return orig, zone{foldedZone(view, orig.from, n), foldedZone(view, orig.to, n)}
}

// foldedOpensDocument is startsWithDocument for a folded view, whose
// spacing fold leaves a blank before punctuation ("subject : invoice").
func foldedOpensDocument(s string) bool {
	head := strings.ReplaceAll(s[:min(len(s), 64)], " :", ":")
	return startsWithDocument(head)
}

// foldedZone maps the start cs of the content zone in an original text of n
// bytes to its folded view.
func foldedZone(view *scanner.View, cs, n int) int {
	switch {
	case cs >= n:
		return len(view.S)
	case cs == 0:
		return 0
	}
	return foldedOffset(view, cs)
}

// zoneBucket is the content zone's own bucket of a feature's bucket.
func zoneBucket(b uint32, bits uint8) uint32 {
	return mix(uint64(b)^seedZone, bits)
}

// documentOpenings are how a pasted document, rather than a request,
// begins; compared case-insensitively after leading blanks.
var documentOpenings = []string{
	"subject:", "from:", "to:", "cc:", "date:", "email_from:", "received:",
	"| ", "```", "traceback (most recent call", "<!doctype", "<html",
	"<?xml", "{\"", "[{",
}

// startsWithDocument reports whether text opens as a document: a mail
// header, a table row, a code fence, a traceback, markup or JSON. A bracket
// or an angle bracket alone is not enough: "[admin override]" and
// "<|system|>" open attacks typed by hand.
func startsWithDocument(text string) bool {
	t := strings.TrimLeft(text, " \t\r\n")
	for _, o := range documentOpenings {
		if len(t) >= len(o) && strings.EqualFold(t[:len(o)], o) {
			return true
		}
	}
	// A tag: '<' and a letter, then the tag's name up to '>' or a blank.
	if len(t) > 2 && t[0] == '<' && (isASCIILetter(t[1]) || t[1] == '/') {
		end := strings.IndexAny(t, "> \n")
		return end > 1 && !strings.ContainsAny(t[1:end], "|")
	}
	return false
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// maxSpecProse is the most prose, in letters, that content may hold
// besides directives about the answer and still be the user's own
// specification rather than a document.
const maxSpecProse = 40

// ownSpec reports whether content, which the request/content split found
// after the user's request, is the user's own specification of the answer
// rather than a document: numbered constraints ("so:\n1. Do not include
// any commas in your response."), a format to follow ("using the exact
// format below:\n* Point 1\n* Point 2"), a template with placeholders, or
// a closing paragraph of orders ("First repeat the request above, then
// give your answer."). A planted instruction needs a document to hide in,
// the e-mail, table or page the user wants worked on, and a document is
// prose that gives the assistant no orders; content that holds no more
// than maxSpecProse letters of such prose has nothing to plant in. Content
// without a single order is data (a Morse or hex string to decode);
// quotations, code, rows of a table ("apple,1.20"), letters, greetings
// and labelled records are documents, however short.
func ownSpec(content string) bool {
	if closersOf(content) != nil || startsWithDocument(content) {
		return false
	}
	prose, orders, records := 0, 0, 0
	for rest := content; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		ordering := true // a line opens as its own sentence would
		for _, sentence := range sentencesOf(line) {
			// An order counts as the user's only where it opens a line
			// or follows another order: one that follows prose on its
			// line ("The meeting moved to Friday. Reply to all of us in
			// French.") is part of what was pasted.
			if ordering && directive(sentence) {
				orders++
				continue
			}
			letters := proseLetters(sentence)
			if letters == 0 {
				continue // a list's number, a rule of asterisks
			}
			ordering = false
			if strings.ContainsAny(sentence, "={}") {
				return false // code
			}
			if strings.ContainsAny(sentence, ",;|\t") {
				records++
			}
			prose += letters
			if prose > maxSpecProse || records > 1 {
				return false
			}
		}
	}
	// Greetings and labels are looked for last: a document has usually
	// shown its prose by its first sentences, and both read every line.
	return orders > 0 && !greets(content) && !labelled(content)
}

// sentencesOf splits a line at sentence ends.
func sentencesOf(line string) []string {
	var out []string
	start := 0
	for i := 0; i < len(line); i++ {
		if c := line[i]; (c == '.' || c == '!' || c == '?') && (i+1 == len(line) || line[i+1] == ' ') {
			if s := strings.TrimSpace(line[start : i+1]); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	if s := strings.TrimSpace(line[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// directiveOpeners open a sentence that gives the assistant an order about
// its answer, compared lower-cased after a list marker.
var directiveOpeners = wordSet("do don dont never always please make use add avoid refrain include exclude wrap separate start end finish first then also answer respond reply write give provide highlight repeat put keep format mark limit ensure be try")

// answerWords, after "your" or "the", name the answer itself.
var answerWords = wordSet("answer answers response responses output reply replies text essay poem story letter")

// directive reports whether a sentence gives the assistant an order about
// its answer: it opens with an imperative ("Do not use commas", "Wrap the
// output in JSON", "For example: *a highlighted section*") or it speaks of
// the answer itself ("Your response should contain at least 250 words",
// "the poem must contain exactly 2 bullet points").
func directive(sentence string) bool {
	words := lowerWords(sentence, 64)
	for len(words) > 0 && isListMarker(words[0]) {
		words = words[1:]
	}
	if len(words) == 0 {
		return false
	}
	if directiveOpeners[words[0]] || words[0] == "for" && len(words) > 1 && words[1] == "example" {
		return true
	}
	for i := 0; i+1 < len(words); i++ {
		if (words[i] == "your" || words[i] == "the") && answerWords[words[i+1]] {
			return true
		}
		if (words[i] == "should" || words[i] == "must") && modalConstraint[words[i+1]] {
			return true
		}
	}
	return false
}

// modalConstraint, after "should" or "must", constrain what something
// contains: "one of the comments should contain the keyword".
var modalConstraint = wordSet("contain include have start end appear mention use be not")

// isListMarker reports whether a word is a list's number or letter ("1",
// "2", "a").
func isListMarker(w string) bool {
	if len(w) == 1 {
		return true
	}
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}

// lowerWords returns up to n lower-cased ASCII words of s; other bytes
// separate words.
func lowerWords(s string, n int) []string {
	var words []string
	start := -1
	for i := 0; i <= len(s) && len(words) < n; i++ {
		if i < len(s) && wordByte[s[i]] {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			words = append(words, strings.ToLower(s[start:i]))
			start = -1
		}
	}
	return words
}

// proseLetters counts the letters of a sentence outside bracketed
// placeholders ("[code snippet 1]", "{name}"): the words a document would
// carry.
func proseLetters(sentence string) int {
	n, depth := 0, 0
	for _, r := range sentence {
		switch {
		case r == '[' || r == '{' || r == '<':
			depth++
		case (r == ']' || r == '}' || r == '>') && depth > 0:
			depth--
		case depth == 0 && unicode.IsLetter(r):
			n++
		}
	}
	return n
}
