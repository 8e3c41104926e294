// Package code detects programming code in a text: fenced Markdown blocks,
// and unfenced code recognised line by line from cheap signals (line endings
// such as ';' '{' '}', leading keywords, operators, call syntax, symbol
// density, indentation, shebangs). Each region found is classified by
// keyword and marker evidence into one of thirteen languages.
//
// The line pass touches each byte once and allocates nothing; keyword
// classification runs only on regions already judged to be code.
package code

import (
	"context"
	"fmt"
	"strings"

	"github.com/promptwall/promptwall/scanner"
)

// Type is the detector family reported in ScannerResult data.type.
const Type = "code"

// Kind labels code whose language could not be named; code in a known
// language is labelled "CODE_" + the upper-case language name
// ("CODE_PYTHON", "CODE_CPP", ...).
const Kind = "CODE"

// Languages lists the names Config accepts, in Kind order.
func Languages() []string { return append([]string(nil), langNames[:]...) }

// Config configures code detection.
type Config struct {
	// Languages restricts detection to code in these languages (names from
	// Languages(), or common aliases: "golang", "py", "js", "ts", "c++",
	// "c#", "rs", "rb", "bash", ...). Code whose language cannot be named
	// is then not reported. Default: any code, named or not.
	Languages []string `json:"languages,omitempty"`
	// Allowed lists languages that are never reported, for instance to let
	// developers paste Python but nothing else. Unnamed code is still
	// reported. Default: none.
	Allowed []string `json:"allowed,omitempty"`
	// MinLines is the least number of code lines an unfenced region needs
	// to be reported. Fenced blocks are reported from one line, since the
	// author marked them as code. Default 2.
	MinLines int `json:"min_lines,omitempty"`
}

// Scanner detects code. It is safe for concurrent use.
type Scanner struct {
	only     [nLang]bool
	anyLang  bool
	allowed  [nLang]bool
	minLines int
}

// New validates cfg and builds the scanner.
func New(cfg Config) (*Scanner, error) {
	s := &Scanner{anyLang: len(cfg.Languages) == 0, minLines: cfg.MinLines}
	if s.minLines == 0 {
		s.minLines = 2
	}
	if s.minLines < 0 {
		return nil, fmt.Errorf("code: min_lines must be >= 0, got %d", cfg.MinLines)
	}
	for _, n := range cfg.Languages {
		l := lookupLang(n)
		if l == langUnknown {
			return nil, fmt.Errorf("code: unknown language %q in languages (known: %s)", n, strings.Join(langNames[:], ", "))
		}
		s.only[l] = true
	}
	for _, n := range cfg.Allowed {
		l := lookupLang(n)
		if l == langUnknown {
			return nil, fmt.Errorf("code: unknown language %q in allowed (known: %s)", n, strings.Join(langNames[:], ", "))
		}
		s.allowed[l] = true
	}
	return s, nil
}

// Type implements scanner.Scanner.
func (s *Scanner) Type() string { return Type }

// Scan implements scanner.Scanner. Matches span whole code regions (with
// their fences), so modify mode removes the code and keeps the prose.
func (s *Scanner) Scan(ctx context.Context, t *scanner.Target) (scanner.Finding, error) {
	text := t.Text.Original
	var f scanner.Finding
	report := func(start, end int, l lang, score float64) {
		if !s.wants(l) {
			return
		}
		kind := Kind
		if l != langUnknown {
			kind = langKinds[l]
		}
		f.Matches = append(f.Matches, scanner.Match{Start: start, End: end, Kind: kind, Score: score})
		f.Score = max(f.Score, score)
	}

	var (
		reg     = region{pending: -1} // the unfenced region being built
		fenced  bool
		fence   fenceInfo
		fenceAt int
	)
	flush := func() {
		if reg.lines >= s.minLines {
			report(reg.start, reg.end, classify(text[reg.start:reg.end]), reg.score())
		}
		reg = region{pending: -1}
	}
	for pos, n := 0, 0; pos < len(text); n++ {
		if n&1023 == 1023 && ctx.Err() != nil {
			return scanner.Finding{}, ctx.Err()
		}
		// One line: [pos, eol), next line at next.
		eol := strings.IndexByte(text[pos:], '\n')
		next := len(text)
		if eol < 0 {
			eol = len(text)
		} else {
			eol += pos
			next = eol + 1
		}
		line := text[pos:eol]
		if fenced {
			if closesFence(line, fence) {
				body := text[fence.bodyStart:pos]
				report(fenceAt, eol, fence.lang(body), 1)
				fenced = false
			}
		} else if fi, ok := opensFence(line); ok {
			flush()
			fenced, fence, fenceAt = true, fi, pos
			fence.bodyStart = next
		} else {
			p, short := lineScore(line)
			switch {
			case p == neutral:
				if reg.lines > 0 {
					reg.gap++
				}
			case p >= 2:
				if reg.lines == 0 {
					reg.start = pos
					if reg.pending >= 0 && reg.gap <= maxGap {
						reg.start = reg.pending
					}
				}
				reg.lines++
				reg.points += p
				reg.end = pos + len(trimRight(line))
				reg.gap, reg.pending = 0, -1
			case p == 1:
				// A weak line (an import, a bare call, a closing "end")
				// continues code, and starts it if code follows.
				if reg.lines == 0 && reg.pending < 0 {
					reg.pending, reg.gap = pos, 0
				}
				reg.gap++
			case short && reg.lines > 0:
				// A short line with no sentence punctuation ("set -e",
				// "done") inside code is most likely code too.
				reg.gap++
			default:
				flush()
			}
			if reg.gap > maxGap {
				flush()
			}
		}
		pos = next
	}
	if fenced {
		// An unclosed fence runs to the end of the text, as in CommonMark.
		report(fenceAt, len(text), fence.lang(text[min(fence.bodyStart, len(text)):]), 1)
	}
	flush()
	if len(f.Matches) > 0 {
		f.Detected = true
		f.Reason = fmt.Sprintf("%d code region(s) found", len(f.Matches))
	}
	return f, nil
}

// wants reports whether code in language l is to be reported.
func (s *Scanner) wants(l lang) bool {
	if l == langUnknown {
		return s.anyLang
	}
	return (s.anyLang || s.only[l]) && !s.allowed[l]
}

// region is a run of unfenced code lines.
type region struct {
	start, end int
	lines      int // lines scoring >= 2
	points     int
	gap        int // neutral or weak lines since the last code line
	pending    int // start of a weak line that may open the region, or -1
}

// maxGap is how many blank, comment or weak lines may separate code lines
// of one region.
const maxGap = 3

// score maps the average line evidence to a confidence: a region of lines
// that only just pass scores 0.6, one with strong lines approaches 1.
func (r region) score() float64 {
	avg := float64(r.points) / float64(r.lines)
	return min(1, 0.4+avg/10)
}

// fenceInfo describes an open Markdown fence.
type fenceInfo struct {
	char      byte
	n         int
	info      string
	bodyStart int
}

// lang names the fenced language from the info string, or from the body.
func (f fenceInfo) lang(body string) lang {
	if l := lookupLang(f.info); l != langUnknown {
		return l
	}
	return classify(body)
}

// opensFence recognises "```lang" or "~~~lang" indented by at most three
// spaces.
func opensFence(line string) (fenceInfo, bool) {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	if i >= len(line) || line[i] != '`' && line[i] != '~' {
		return fenceInfo{}, false
	}
	c := line[i]
	n := 0
	for i+n < len(line) && line[i+n] == c {
		n++
	}
	if n < 3 {
		return fenceInfo{}, false
	}
	info := strings.TrimSpace(line[i+n:])
	if c == '`' && strings.IndexByte(info, '`') >= 0 {
		return fenceInfo{}, false // inline code spanning a line, not a fence
	}
	if sp := strings.IndexAny(info, " \t{"); sp >= 0 {
		info = info[:sp]
	}
	return fenceInfo{char: c, n: n, info: info}, true
}

// closesFence recognises the closing fence: the same character, at least as
// many, nothing else on the line.
func closesFence(line string, f fenceInfo) bool {
	line = strings.TrimSpace(line)
	if len(line) < f.n {
		return false
	}
	for i := 0; i < len(line); i++ {
		if line[i] != f.char {
			return false
		}
	}
	return true
}

// neutral is the score of lines that neither extend nor break a region:
// blank lines and '#' comments (a shell or Python comment, or a Markdown
// heading).
const neutral = -100

// lineScore rates how much a line looks like code: >= 2 is a code line, 1 a
// weak one, <= 0 prose. short reports a line of at most three words without
// sentence punctuation, which code may contain but should not start with.
func lineScore(line string) (p int, short bool) {
	indent := 0
	for indent < len(line) && (line[indent] == ' ' || line[indent] == '\t') {
		indent++
	}
	t := trimRight(line[indent:])
	if t == "" {
		return neutral, false
	}
	first, last := t[0], t[len(t)-1]
	if first == '#' {
		switch {
		case strings.HasPrefix(t, "#!/"):
			return 4, false
		case strings.HasPrefix(t, "#include") || strings.HasPrefix(t, "#define") || strings.HasPrefix(t, "#import"):
			return 4, false
		}
		return neutral, false
	}
	switch last {
	case ';', '{', '}':
		p += 2
	}
	switch first {
	case '}', ')', ']':
		p += 2
	case '$':
		if len(t) > 2 && t[1] == ' ' {
			p += 2 // a shell prompt "$ command"
		}
	case '/':
		if strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") {
			p += 2
		}
	case '<':
		if strings.HasPrefix(t, "<?php") {
			p += 4
		}
	case '@':
		p++ // decorators and annotations
	case '-', '*', '+':
		if len(t) > 1 && t[1] == ' ' {
			return 0, false // a Markdown bullet, even indented
		}
	case '|':
		return 0, false // a Markdown table row
	}
	// The first word: a statement keyword is strong evidence when it is
	// not also everyday English.
	w := 0
	for w < len(t) && isIdent(t[w]) {
		w++
	}
	if w > 0 {
		kw := lineKeywords[t[:w]]
		p += int(kw)
		if kw > 0 && last == ':' {
			p++ // Python block header: "def f(x):", "else:"
		}
	}
	if indent >= 2 {
		p++
	}
	// Operators, call syntax and symbol density, in one pass.
	var sym, ops, spaces int
	call, assign := false, false
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch c {
		case ' ':
			spaces++
			if i+2 < len(t) && t[i+1] == '=' && t[i+2] == ' ' {
				assign = true
			}
		case '(':
			sym++
			if i > 0 && isIdent(t[i-1]) {
				call = true
			}
		case '{', '}', ')', '[', ']', ';', '<', '>', '$':
			sym++
		case '=', '&', '|', '-', ':', '!', '+':
			// Only '=', '&' and '|' count as symbols: hyphens, colons and
			// exclamation marks are common in prose. All may start an
			// operator.
			if c == '=' || c == '&' || c == '|' {
				sym++
			}
			if i+1 < len(t) {
				switch n := t[i+1]; {
				case n == '=' && c != '-' && c != '+' || n == '>' && (c == '=' || c == '-'),
					n == c && (c == '&' || c == '|' || c == ':' || c == '+'),
					c == ':' && n == '=':
					ops++
				}
			}
		}
	}
	if ops > 0 {
		p++
	}
	if call {
		p++
	}
	if assign {
		p++
	}
	if sym*100 >= len(t)*8 && len(t) >= 4 {
		p++
	}
	// Sentences: several words, few symbols, or final punctuation.
	words := spaces + 1
	sentence := last == '.' || last == '?' || last == '!'
	if sentence || words >= 8 && sym*100 < len(t)*3 {
		p -= 2
	}
	return p, words <= 3 && !sentence && last != ':'
}

// lineKeywords weighs a line's first word: 2 for words that start code
// statements and rarely start an English line, 1 for those that also do
// ("if", "for", "return", "import"). Lower case only: sentences start with a
// capital.
var lineKeywords = map[string]int8{
	"func": 2, "def": 2, "elif": 2, "fn": 2, "impl": 2, "pub": 2, "const": 2, "var": 2, "let": 2, "package": 2,
	"namespace": 2, "using": 1, "struct": 2, "enum": 2, "typedef": 2, "interface": 1, "class": 1, "public": 2, "private": 2,
	"protected": 2, "static": 2, "async": 1, "await": 1, "println": 2, "printf": 2, "console": 2, "echo": 2, "sudo": 2, "mkdir": 2, "chmod": 2, "curl": 2,
	"wget": 2, "npm": 2, "pip": 2, "cd": 2, "ls": 1, "rm": 2, "grep": 2, "git": 1, "docker": 2, "kubectl": 2, "cargo": 2, "export": 1,
	"fi": 2, "esac": 2, "done": 1, "then": 1, "end": 1, "elsif": 2, "puts": 2, "require": 1, "import": 1, "from": 1, "return": 1,
	"if": 1, "for": 1, "while": 1, "else": 1, "try": 1, "catch": 1, "except": 2, "finally": 1, "switch": 1, "case": 1, "break": 1, "continue": 1,
	"int": 2, "void": 2, "char": 2, "float": 1, "double": 1, "bool": 2, "auto": 1, "unsigned": 2, "template": 1, "print": 1, "self": 2,
	"SELECT": 2, "INSERT": 2, "UPDATE": 2, "DELETE": 2, "CREATE": 2, "DROP": 2, "ALTER": 2, "FROM": 2, "WHERE": 2, "JOIN": 2, "VALUES": 2,
	"ORDER": 1, "GROUP": 1, "LIMIT": 1, "AND": 1, "SET": 1,
}

func trimRight(s string) string {
	for len(s) > 0 {
		switch s[len(s)-1] {
		case ' ', '\t', '\r':
			s = s[:len(s)-1]
			continue
		}
		break
	}
	return s
}

var _ scanner.Scanner = (*Scanner)(nil)
