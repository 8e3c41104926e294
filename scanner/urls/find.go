package urls

import "strings"

// candidate is a URL found in a text.
type candidate struct {
	start, end int
	// schemeless: a bare host ("www.example.com/x"), parsed as http.
	schemeless bool
	// scriptURI: a data:, javascript: or vbscript: URI.
	scriptURI bool
}

// next finds the first URL at or after from.
func next(text string, from int) (candidate, bool) {
	for i := from; i < len(text); i++ {
		switch text[i] {
		case ':':
			if c, ok := atColon(text, from, i); ok {
				return c, true
			}
		case '.':
			if c, ok := atDot(text, from, i); ok {
				return c, true
			}
		}
	}
	return candidate{}, false
}

// atColon recognises "scheme://..." and script URIs around the colon at i.
func atColon(text string, from, i int) (candidate, bool) {
	start := i
	for start > from && isSchemeChar(text[start-1]) {
		start--
	}
	// Schemes start with a letter; skip leading digits and symbols.
	for start < i && !isAlpha(text[start]) {
		start++
	}
	if start == i || i+1 >= len(text) {
		return candidate{}, false
	}
	scheme := text[start:i]
	if strings.HasPrefix(text[i+1:], "//") {
		end := urlEnd(text, start, i+3)
		if end <= i+3 {
			return candidate{}, false
		}
		return candidate{start: start, end: end}, true
	}
	// "data:text/html,..." or "data:image/png;base64,...": a media type
	// right after the colon tells it from prose such as "data: see below".
	if strings.EqualFold(scheme, "data") && isAlpha(text[i+1]) && strings.IndexByte(text[i+1:min(len(text), i+40)], '/') > 0 ||
		(strings.EqualFold(scheme, "javascript") || strings.EqualFold(scheme, "vbscript")) && !isSpace(text[i+1]) {
		return candidate{start: start, end: urlEnd(text, start, i+1), scriptURI: true}, true
	}
	return candidate{}, false
}

// atDot recognises a scheme-less host around the dot at i.
func atDot(text string, from, i int) (candidate, bool) {
	if i == 0 || i+1 >= len(text) || !isHostChar(text[i-1]) || !isHostChar(text[i+1]) {
		return candidate{}, false
	}
	start := i
	for start > from && (isHostChar(text[start-1]) || text[start-1] == '.') {
		start--
	}
	end := i
	for end < len(text) && (isHostChar(text[end]) || text[end] == '.' && end+1 < len(text) && isHostChar(text[end+1])) {
		end++
	}
	// Part of an e-mail address, a path or a URL with a scheme (already
	// consumed when found), or a file name after a slash or backslash.
	if start > 0 {
		switch text[start-1] {
		case '@', '/', '\\', ':', '-', '_', '=':
			return candidate{}, false
		}
	}
	host := text[start:end]
	after := byte(0)
	if end < len(text) {
		after = text[end]
	}
	if after == '@' {
		return candidate{}, false // userinfo-less e-mail local part: "first.last@"
	}
	switch {
	case hasPrefixFold(host, "www.") && strings.Count(host, ".") >= 2:
	case isIPv4(host) && (after == ':' || after == '/'):
	case knownTLD(host[strings.LastIndexByte(host, '.')+1:]):
	default:
		return candidate{}, false
	}
	return candidate{start: start, end: urlEnd(text, start, end), schemeless: true}, true
}

// urlEnd extends a URL from at to its end: the first space or delimiter,
// minus trailing punctuation and unbalanced closing brackets.
func urlEnd(text string, start, at int) int {
	end := at
	for end < len(text) {
		c := text[end]
		if isSpace(c) || c == '<' || c == '>' || c == '"' || c == '`' || c == '\'' || c == '|' || c == '{' || c == '}' {
			break
		}
		end++
	}
	for end > at {
		c := text[end-1]
		switch c {
		case '.', ',', ';', ':', '!', '?', '*':
			end--
			continue
		case ')', ']':
			open := byte('(')
			if c == ']' {
				open = '['
			}
			if strings.Count(text[start:end], string(open)) < strings.Count(text[start:end], string(c)) {
				end--
				continue
			}
		}
		break
	}
	return end
}

// tlds are the top-level domains that make a scheme-less dotted name a host.
// Country codes and generic domains that double as file extensions in
// prompts are left out (see the package comment).
var tlds = map[string]bool{
	"com": true, "net": true, "org": true, "edu": true, "gov": true, "mil": true, "int": true, "info": true, "biz": true,
	"xyz": true, "top": true, "online": true, "site": true, "store": true, "app": true, "dev": true, "page": true, "cloud": true,
	"tech": true, "io": true, "ai": true, "co": true, "club": true, "shop": true, "blog": true, "live": true, "news": true,
	"pro": true, "mobi": true, "name": true, "link": true, "click": true, "work": true, "space": true, "website": true,
	"fun": true, "icu": true, "vip": true, "win": true, "bid": true, "loan": true, "date": true, "stream": true,
	"download": true, "party": true, "trade": true, "science": true, "cam": true, "rest": true, "support": true, "email": true,
	"uk": true, "de": true, "fr": true, "ru": true, "cn": true, "jp": true, "br": true, "in": true, "it": true, "nl": true,
	"es": true, "ca": true, "au": true, "ch": true, "se": true, "no": true, "be": true, "at": true, "dk": true, "fi": true,
	"cz": true, "pt": true, "gr": true, "ie": true, "il": true, "kr": true, "tw": true, "hk": true, "sg": true, "nz": true,
	"mx": true, "ar": true, "za": true, "tr": true, "ua": true, "ir": true, "vn": true, "id": true, "my": true, "ph": true,
	"th": true, "eu": true, "us": true, "me": true, "tv": true, "ly": true, "gl": true, "gd": true, "ws": true, "to": true,
	"tk": true, "ml": true, "ga": true, "cf": true, "gq": true, "cc": true, "su": true, "ro": true, "hu": true, "sk": true,
	"bg": true, "lt": true, "lv": true, "ee": true, "kz": true, "by": true, "cl": true, "pe": true, "ng": true, "ke": true,
}

// knownTLD looks s up case-insensitively without allocating.
func knownTLD(s string) bool {
	if len(s) < 2 || len(s) > 8 {
		return false
	}
	var buf [8]byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return tlds[string(buf[:len(s)])]
}

// isIPv4 reports a dotted quad, without allocating.
func isIPv4(s string) bool {
	parts, n, digits := 0, 0, 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if digits == 0 || digits > 3 || n > 255 {
				return false
			}
			parts, n, digits = parts+1, 0, 0
			continue
		}
		if s[i] < '0' || s[i] > '9' {
			return false
		}
		n, digits = n*10+int(s[i]-'0'), digits+1
	}
	return parts == 4
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isSchemeChar(c byte) bool {
	return isAlpha(c) || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'
}

// isHostChar accepts letters, digits, '-' and any non-ASCII byte, so IDN
// names are taken whole.
func isHostChar(c byte) bool {
	return isAlpha(c) || '0' <= c && c <= '9' || c == '-' || c >= 0x80
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
