package regex

import (
	"regexp/syntax"
	"slices"
	"unicode"
	"unicode/utf8"
)

// The prefilter: Go's regexp only skips ahead to a literal prefix, so a
// pattern like `\bTICKET-[0-9]{4,}\b` steps its automaton through every
// byte of a clean prompt. Instead, New derives for each pattern a set of
// literals of which every match must contain one, Scan finds all patterns'
// literals in one Aho-Corasick pass, and a pattern's regexp runs only when
// one of its literals occurred. Results are unchanged: the regexp still
// runs over the whole text whenever it could match at all.
//
// Literals are kept in ASCII lower case because the automaton folds ASCII
// case. For a case-sensitive literal that only adds false positives, which
// the regexp then rejects.

// maxLiterals bounds every literal set the analysis builds (a character
// class, a cross product, a union): beyond it a set says too little about
// the text to be worth its automaton states, and the part is given up on.
const maxLiterals = 64

// literalsOf returns the prefilter literals of a valid pattern expr, as
// requiredLiterals does. It parses expr as regexp.Compile does (Perl
// flags, then Simplify), so the literals come from the tree it matches.
func literalsOf(expr string) ([]string, bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, false
	}
	return requiredLiterals(re.Simplify())
}

// requiredLiterals returns literals, sorted and without duplicates, of
// which every match of re contains at least one, or false when it cannot
// tell (the pattern then always runs). re must be simplified.
//
// Every match, even an empty one, must contain a literal, so a pattern that
// can match the empty string somewhere (`\b`) never gets a prefilter: an
// empty match names the pattern in Scan's reason.
func requiredLiterals(re *syntax.Regexp) ([]string, bool) {
	lits, ok := required(re)
	if !ok {
		return nil, false
	}
	slices.Sort(lits)
	return slices.Compact(lits), true
}

// required returns a usable set of literals every match of re contains.
func required(re *syntax.Regexp) ([]string, bool) {
	if set, ok := exact(re); ok && usable(set) {
		return set, true
	}
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		// Simplify rewrites counted repetitions; kept for safety.
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpAlternate:
		// A match is some branch's match: one set per branch, all needed.
		var union []string
		for _, sub := range re.Sub {
			set, ok := required(sub)
			if !ok || len(union)+len(set) > maxLiterals {
				return nil, false
			}
			union = append(union, set...)
		}
		return union, true
	case syntax.OpConcat:
		return requiredConcat(re.Sub)
	case syntax.OpLiteral:
		// Too many fold variants as a whole: take the best run of it.
		return requiredConcat([]*syntax.Regexp{re})
	}
	return nil, false
}

// requiredConcat picks the best required set of a concatenation. A match
// is its parts' matches end to end, so any part's required set will do,
// and so will the cross product of the exact sets of adjacent parts: runes
// of literals (split so that a long fold-case literal can still give a
// run), small classes, and empty-width assertions, which add "".
func requiredConcat(subs []*syntax.Regexp) ([]string, bool) {
	var best []string
	run := []string{""}
	closeRun := func() {
		if usable(run) && better(run, best) {
			best = run
		}
		run = []string{""}
	}
	extend := func(u []string) {
		if p, ok := product(run, u); ok {
			run = p
			return
		}
		closeRun()
		run = u
	}
	for _, sub := range subs {
		if sub.Op == syntax.OpLiteral {
			for _, r := range sub.Rune {
				if u, ok := runeLiterals(r, sub.Flags&syntax.FoldCase != 0); ok {
					extend(u)
				} else {
					closeRun()
				}
			}
			continue
		}
		if set, ok := exact(sub); ok {
			extend(set)
			continue
		}
		closeRun()
		if set, ok := required(sub); ok && better(set, best) {
			best = set
		}
	}
	closeRun()
	return best, best != nil
}

// exact returns every string re can match, or false when they are not a
// finite set of at most maxLiterals. An empty-width assertion counts as ""
// (it consumes nothing), so the set may hold strings that cannot match in
// context: it is a superset, which is all a prefilter needs.
func exact(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []string{""}, true
	case syntax.OpLiteral:
		set := []string{""}
		for _, r := range re.Rune {
			u, ok := runeLiterals(r, re.Flags&syntax.FoldCase != 0)
			if !ok {
				return nil, false
			}
			if set, ok = product(set, u); !ok {
				return nil, false
			}
		}
		return set, true
	case syntax.OpCharClass:
		// A fold-case class already lists every fold of its members.
		n := 0
		for i := 0; i < len(re.Rune); i += 2 {
			if n += int(re.Rune[i+1]-re.Rune[i]) + 1; n > maxLiterals {
				return nil, false
			}
		}
		var set []string
		for i := 0; i < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				u, ok := runeLiterals(r, false)
				if !ok {
					return nil, false
				}
				set = append(set, u...)
			}
		}
		slices.Sort(set)
		return slices.Compact(set), true
	case syntax.OpCapture:
		return exact(re.Sub[0])
	case syntax.OpQuest:
		set, ok := exact(re.Sub[0])
		if !ok || len(set) >= maxLiterals {
			return nil, false
		}
		return append(set, ""), true
	case syntax.OpConcat:
		set := []string{""}
		for _, sub := range re.Sub {
			u, ok := exact(sub)
			if !ok {
				return nil, false
			}
			if set, ok = product(set, u); !ok {
				return nil, false
			}
		}
		return set, true
	case syntax.OpAlternate:
		var union []string
		for _, sub := range re.Sub {
			set, ok := exact(sub)
			if !ok || len(union)+len(set) > maxLiterals {
				return nil, false
			}
			union = append(union, set...)
		}
		return union, true
	}
	return nil, false
}

// runeLiterals returns the literals one rune of a pattern matches. With
// fold case, Go's regexp matches every rune of r's simple-fold orbit: 'k'
// also matches U+212A KELVIN SIGN and 's' U+017F LATIN SMALL LETTER LONG
// S. The automaton folds ASCII only, so the orbit's ASCII members become
// one lower-case literal and every other member a literal of its own.
//
// U+FFFD is refused: the regexp reads each invalid UTF-8 byte of the text
// as U+FFFD, which the automaton, matching bytes, would not see.
func runeLiterals(r rune, fold bool) ([]string, bool) {
	if r == utf8.RuneError || !utf8.ValidRune(r) {
		return nil, false
	}
	set := []string{string(lowerASCII(r))}
	if fold {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if l := string(lowerASCII(f)); !slices.Contains(set, l) {
				set = append(set, l)
			}
		}
	}
	return set, true
}

func lowerASCII(r rune) rune {
	if 'A' <= r && r <= 'Z' {
		return r + 'a' - 'A'
	}
	return r
}

// product returns every a+b, or false when there would be more than
// maxLiterals.
func product(as, bs []string) ([]string, bool) {
	if len(as)*len(bs) > maxLiterals {
		return nil, false
	}
	p := make([]string, 0, len(as)*len(bs))
	for _, a := range as {
		for _, b := range bs {
			p = append(p, a+b)
		}
	}
	return p, true
}

// usable reports whether set can serve as a prefilter: an empty literal
// would occur in every text.
func usable(set []string) bool {
	return len(set) > 0 && !slices.Contains(set, "")
}

// better reports whether set is a more selective prefilter than best (nil
// when there is none yet): its shortest literal is longer, or as long with
// fewer literals.
func better(set, best []string) bool {
	if best == nil {
		return true
	}
	a, b := minLen(set), minLen(best)
	return a > b || a == b && len(set) < len(best)
}

func minLen(set []string) int {
	n := len(set[0])
	for _, s := range set[1:] {
		n = min(n, len(s))
	}
	return n
}
