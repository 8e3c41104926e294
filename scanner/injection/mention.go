package injection

import "strings"

// A phrase named as a phrase is talked about, not said: in "why is the
// phrase "ignore previous instructions" so famous?" or "what does "DAN
// mode" mean?" the quoted words address no one. A rule hit that lies
// wholly inside such a quotation is a mention and is dropped; the words
// still count as words. A quotation is named when one of the three words
// before it names an expression ("the phrase", "the term", "the line") or
// the word after it asks what it means. The quotation must be short and on
// one line: a pasted paragraph is content, whatever it is called.

// maxNamed is the longest quotation, in bytes, that can be a named phrase.
const maxNamed = 48

// phraseNouns name a piece of language as such.
var phraseNouns = wordSet("phrase phrases term terms expression expressions saying slogan idiom meme memes buzzword catchphrase line wording jargon")

// meaningWords, right after a quotation, ask what it means.
var meaningWords = wordSet("mean means meaning stand stands")

// matchRules returns the rule hits among toks (words of the folded text s)
// that are not mentions inside a named phrase.
func matchRules(s string, toks []token, hits []hit) []hit {
	hits = rules.match(s, toks, hits)
	if len(hits) == 0 || !strings.ContainsAny(s, "\"“«„「'") {
		return hits
	}
	kept := hits[:0]
	for _, h := range hits {
		if !insideNamedPhrase(s, int(toks[h.from].start), int(toks[h.to-1].end)) {
			kept = append(kept, h)
		}
	}
	return kept
}

// insideNamedPhrase reports whether the bytes [a, e) of s lie inside a
// named phrase (see above).
func insideNamedPhrase(s string, a, e int) bool {
	// The nearest opening quotation mark before a.
	open, openLen := -1, 0
	var closers []string
	for i := a - 1; i >= 0 && a-i <= maxNamed; i-- {
		if s[i] == '\n' {
			return false
		}
		if n, c := openingQuote(s[i:]); c != nil {
			open, openLen, closers = i, n, c
			break
		}
	}
	if open < 0 {
		return false
	}
	// Its closing mark at or after e, on the same line.
	close := -1
	for j := e; j < len(s) && j-open <= maxNamed && s[j] != '\n'; j++ {
		for _, c := range closers {
			if strings.HasPrefix(s[j:], c) {
				close = j + len(c)
				break
			}
		}
		if close >= 0 {
			break
		}
	}
	if close < 0 || open+openLen > a {
		return false
	}
	head := s[max(open-40, 0):open]
	before := splitWords(head, nil)
	for _, w := range before[max(len(before)-3, 0):] {
		if phraseNouns[head[w[0]:w[1]]] {
			return true
		}
	}
	tail := s[close:min(close+20, len(s))]
	after := splitWords(tail, nil)
	return len(after) > 0 && meaningWords[tail[after[0][0]:after[0][1]]]
}
