// Package urls finds URLs in a text and judges them against domain lists and
// a set of rules for links that hide where they lead.
//
// Found: URLs with a scheme ("https://...", any scheme), "data:" and
// "javascript:"/"vbscript:" URIs, and scheme-less hosts that are certainly
// hosts: "www." names, dotted IPv4 literals followed by a port or path, and
// names ending in a common top-level domain. Top-level domains that are also
// everyday file extensions (.py, .sh, .md, .rs, .pl, .so, .zip, .mov, ...) are
// left out of the scheme-less rule, so "main.py" is not a link; with a scheme
// they are found like any other. E-mail addresses are not URLs.
//
// The finder is one pass over the bytes that stops only at ':' and '.', so a
// text without links is screened without allocating.
package urls

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/promptwall/promptwall/scanner"
)

// Type is the detector family reported in ScannerResult data.type.
const Type = "urls"

// Kinds of match, from the most severe.
const (
	KindDenied     = "URL_DENIED"
	KindNotAllowed = "URL_NOT_ALLOWED"
	KindSuspicious = "URL_SUSPICIOUS"
)

// Config configures URL screening.
type Config struct {
	// AllowDomains, when not empty, is the only set of hosts links may point
	// to; any other host is reported as URL_NOT_ALLOWED. "example.com"
	// matches example.com and every subdomain; "*.example.com" matches the
	// subdomains only. An allowed host is trusted: the suspicious-link rules
	// do not apply to it. Default: empty (any host).
	AllowDomains []string `json:"allow_domains,omitempty"`
	// DenyDomains are hosts reported as URL_DENIED, with the same patterns
	// as AllowDomains. Deny wins over allow. Default: empty.
	DenyDomains []string `json:"deny_domains,omitempty"`
	// Suspicious reports links that hide their destination as
	// URL_SUSPICIOUS: IP-literal hosts (including decimal and hex forms),
	// punycode or mixed-script hostnames, Cyrillic or Greek lookalike
	// names under an ASCII top-level domain, userinfo before the host
	// ("https://google.com@evil.tld"), URL shorteners, data: and
	// javascript: URIs, explicit ports other than 80 and 443, and hostnames
	// longer than 80 characters. Default true.
	Suspicious *bool `json:"suspicious,omitempty"`
}

// Scanner screens URLs. It is safe for concurrent use.
type Scanner struct {
	allow, deny []pattern
	suspicious  bool
}

// pattern is a compiled domain pattern: an ASCII lower-case domain, and
// whether the bare domain itself matches (false for "*.domain").
type pattern struct {
	domain string
	self   bool
}

func (p pattern) match(host string) bool {
	if host == p.domain {
		return p.self
	}
	return strings.HasSuffix(host, p.domain) && host[len(host)-len(p.domain)-1] == '.'
}

// New validates cfg and builds the scanner.
func New(cfg Config) (*Scanner, error) {
	s := &Scanner{suspicious: cfg.Suspicious == nil || *cfg.Suspicious}
	var err error
	if s.allow, err = compile(cfg.AllowDomains); err != nil {
		return nil, fmt.Errorf("urls: allow_domains: %w", err)
	}
	if s.deny, err = compile(cfg.DenyDomains); err != nil {
		return nil, fmt.Errorf("urls: deny_domains: %w", err)
	}
	return s, nil
}

func compile(list []string) ([]pattern, error) {
	out := make([]pattern, 0, len(list))
	for _, d := range list {
		p := pattern{self: true}
		name := strings.TrimSuffix(strings.TrimSpace(d), ".")
		if rest, ok := strings.CutPrefix(name, "*."); ok {
			name, p.self = rest, false
		}
		// Patterns are compared with the ASCII (punycode) form of hosts.
		ascii, err := idna.Lookup.ToASCII(name)
		if err != nil || ascii == "" || strings.ContainsAny(ascii, "*/:@") {
			return nil, fmt.Errorf("invalid domain pattern %q", d)
		}
		p.domain = ascii
		out = append(out, p)
	}
	return out, nil
}

// Type implements scanner.Scanner.
func (s *Scanner) Type() string { return Type }

// Scan implements scanner.Scanner. Each reported URL is one match spanning
// the whole URL, with the most severe kind that applies.
func (s *Scanner) Scan(ctx context.Context, t *scanner.Target) (scanner.Finding, error) {
	text := t.Text.Original
	var f scanner.Finding
	var why string
	for pos := 0; pos < len(text); {
		c, ok := next(text, pos)
		if !ok {
			break
		}
		pos = c.end
		kind, reason := s.judge(text[c.start:c.end], c)
		if kind == "" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return scanner.Finding{}, err
		}
		score := 1.0
		if kind == KindSuspicious {
			score = 0.7
		}
		f.Matches = append(f.Matches, scanner.Match{Start: c.start, End: c.end, Kind: kind, Score: score})
		f.Score = max(f.Score, score)
		if why == "" {
			why = reason
		}
	}
	if len(f.Matches) > 0 {
		f.Detected = true
		f.Reason = fmt.Sprintf("%d URL(s) reported; first: %s", len(f.Matches), why)
	}
	return f, nil
}

// judge returns the kind to report for one URL ("" for none) and why.
func (s *Scanner) judge(raw string, c candidate) (kind, reason string) {
	if c.scriptURI {
		if s.suspicious {
			return KindSuspicious, "data: or script URI"
		}
		return "", ""
	}
	u, host, err := parse(raw, c.schemeless)
	if err != nil {
		if s.suspicious {
			return KindSuspicious, "malformed URL or hostname"
		}
		return "", ""
	}
	for _, p := range s.deny {
		if p.match(host) {
			return KindDenied, "host on the deny list"
		}
	}
	if len(s.allow) > 0 {
		for _, p := range s.allow {
			if p.match(host) {
				return "", ""
			}
		}
		return KindNotAllowed, "host not on the allow list"
	}
	if !s.suspicious {
		return "", ""
	}
	if r := suspicious(u, host); r != "" {
		return KindSuspicious, r
	}
	return "", ""
}

// parse parses a URL and returns its host in lower-case ASCII form.
func parse(raw string, schemeless bool) (*url.URL, string, error) {
	if schemeless {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, "", err
	}
	h := strings.TrimSuffix(u.Hostname(), ".")
	if h == "" {
		if u.Opaque != "" || u.Scheme == "file" {
			return u, "", nil // mailto:, file:///... have no host to judge
		}
		return nil, "", fmt.Errorf("no host")
	}
	if net.ParseIP(h) != nil {
		return u, h, nil
	}
	ascii, err := idna.Lookup.ToASCII(h)
	if err != nil {
		return nil, "", err
	}
	return u, ascii, nil
}

// shorteners are URL-shortening services: the link hides its destination.
var shorteners = map[string]bool{
	"bit.ly": true, "bitly.com": true, "tinyurl.com": true, "t.co": true, "goo.gl": true, "ow.ly": true, "is.gd": true,
	"buff.ly": true, "rebrand.ly": true, "cutt.ly": true, "shorturl.at": true, "tiny.cc": true, "rb.gy": true, "s.id": true,
	"t.ly": true, "v.gd": true, "bl.ink": true, "lnkd.in": true, "adf.ly": true, "shorte.st": true, "qrco.de": true, "x.co": true,
	"tiny.one": true, "short.io": true, "u.to": true, "clck.ru": true, "dub.sh": true,
}

// suspicious returns why a parsed URL hides its destination, or "".
func suspicious(u *url.URL, host string) string {
	switch {
	case u.User != nil:
		return "userinfo before the host"
	case host == "":
		return ""
	case net.ParseIP(host) != nil:
		return "IP-literal host"
	case numericHost(host):
		return "numeric (decimal or hex) IP host"
	case len(host) > 80:
		return "very long hostname"
	case shorteners[host]:
		return "URL shortener"
	}
	if p := u.Port(); p != "" && p != "80" && p != "443" {
		return "non-standard port"
	}
	if strings.Contains(host, "xn--") {
		uni, err := idna.Display.ToUnicode(host)
		if err != nil {
			return "invalid punycode hostname"
		}
		if r := scripts(uni); r != "" {
			return r
		}
		// A name written natively in one script is how its users type
		// it; the same name spelt in punycode is a disguise.
		if strings.Contains(strings.ToLower(u.Hostname()), "xn--") {
			return "punycode hostname"
		}
	}
	return ""
}

// scripts flags labels that mix scripts, and Cyrillic or Greek labels under
// an ASCII top-level domain, the two forms of homograph spoofing.
func scripts(host string) string {
	labels := strings.Split(host, ".")
	tldASCII := isASCII(labels[len(labels)-1])
	for _, l := range labels {
		var latin, cyrillic, greek, other bool
		for _, r := range l {
			switch {
			case r < utf8.RuneSelf:
				latin = latin || 'a' <= r && r <= 'z'
			case unicode.Is(unicode.Cyrillic, r):
				cyrillic = true
			case unicode.Is(unicode.Greek, r):
				greek = true
			case unicode.IsLetter(r) && !unicode.Is(unicode.Latin, r):
				other = true
			case unicode.Is(unicode.Latin, r):
				latin = true
			}
		}
		n := 0
		for _, b := range []bool{latin, cyrillic, greek, other} {
			if b {
				n++
			}
		}
		if n > 1 {
			return "mixed-script hostname"
		}
		if (cyrillic || greek) && tldASCII {
			return "Cyrillic or Greek hostname under an ASCII top-level domain"
		}
	}
	return ""
}

// numericHost reports hosts that browsers read as IPv4 although they are
// not dotted quads: "3232235777", "0x7f000001", "0x7f.1".
func numericHost(h string) bool {
	for _, part := range strings.Split(h, ".") {
		if part == "" {
			return false
		}
		p := part
		if len(p) > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') {
			p = p[2:]
			for i := 0; i < len(p); i++ {
				if !isHex(p[i]) {
					return false
				}
			}
			continue
		}
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

var _ scanner.Scanner = (*Scanner)(nil)
