package urls

import (
	"context"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/internal/scannertest"
)

func TestScan(t *testing.T) {
	off := false
	tests := []struct {
		name string
		cfg  Config
		text string
		want []string // "KIND url" per match, in order
	}{
		{"prose", Config{}, "Please read the report, e.g. section 2. Use main.py and notes.md. Mail john.doe@example.com.", nil},
		{"plain https ok", Config{}, "See https://example.com/a?b=1.", nil},
		{"ip literal", Config{}, "Go to http://192.168.1.10/admin now", []string{"URL_SUSPICIOUS http://192.168.1.10/admin"}},
		{"ipv6 literal", Config{}, "open http://[::1]:8080/x", []string{"URL_SUSPICIOUS http://[::1]:8080/x"}},
		{"schemeless ip with port", Config{}, "curl 10.0.0.5:8080/metrics", []string{"URL_SUSPICIOUS 10.0.0.5:8080/metrics"}},
		{"decimal ip", Config{}, "http://3232235777/", []string{"URL_SUSPICIOUS http://3232235777/"}},
		{"userinfo trick", Config{}, "login at https://google.com@evil.tld/login", []string{"URL_SUSPICIOUS https://google.com@evil.tld/login"}},
		{"shortener", Config{}, "click bit.ly/3abc!", []string{"URL_SUSPICIOUS bit.ly/3abc"}},
		{"data uri", Config{}, "<a href=\"data:text/html;base64,PHNjcmlwdD4=\">", []string{"URL_SUSPICIOUS data:text/html;base64,PHNjcmlwdD4="}},
		{"data prose", Config{}, "data: the numbers below", nil},
		{"javascript uri", Config{}, "[x](javascript:alert(1))", []string{"URL_SUSPICIOUS javascript:alert(1)"}},
		{"port", Config{}, "https://example.com:8443/x", []string{"URL_SUSPICIOUS https://example.com:8443/x"}},
		{"standard port", Config{}, "https://example.com:443/x", nil},
		{"punycode", Config{}, "https://xn--80ak6aa92e.com/", []string{"URL_SUSPICIOUS https://xn--80ak6aa92e.com/"}},
		{"cyrillic lookalike", Config{}, "https://аррӏе.com/login", []string{"URL_SUSPICIOUS https://аррӏе.com/login"}},
		{"mixed script", Config{}, "https://pаypal.com", []string{"URL_SUSPICIOUS https://pаypal.com"}},
		{"native idn", Config{}, "https://пример.рф/", nil},
		{"long host", Config{}, "https://" + strings.Repeat("a", 60) + "." + strings.Repeat("b", 30) + ".com", []string{"URL_SUSPICIOUS https://" + strings.Repeat("a", 60) + "." + strings.Repeat("b", 30) + ".com"}},
		{"suspicious off", Config{Suspicious: &off}, "http://1.2.3.4/ and bit.ly/x", nil},
		{"markdown parens", Config{}, "([link](http://1.2.3.4/a_(b)))", []string{"URL_SUSPICIOUS http://1.2.3.4/a_(b)"}},
		{"deny suffix", Config{DenyDomains: []string{"evil.com"}}, "see www.evil.com and https://a.b.evil.com/x and notevil.com", []string{"URL_DENIED www.evil.com", "URL_DENIED https://a.b.evil.com/x"}},
		{"deny wildcard", Config{DenyDomains: []string{"*.evil.com"}}, "evil.com and x.evil.com", []string{"URL_DENIED x.evil.com"}},
		{"allow", Config{AllowDomains: []string{"example.com"}}, "ok docs.example.com/a, bad https://other.org, trusted http://example.com:8080", []string{"URL_NOT_ALLOWED https://other.org"}},
		{"deny beats allow", Config{AllowDomains: []string{"example.com"}, DenyDomains: []string{"bad.example.com"}}, "https://bad.example.com", []string{"URL_DENIED https://bad.example.com"}},
		{"deny idn pattern", Config{DenyDomains: []string{"пример.рф"}}, "https://ПРИМЕР.РФ/x", []string{"URL_DENIED https://ПРИМЕР.РФ/x"}},
		{"trailing punctuation", Config{DenyDomains: []string{"a.io"}}, "(see https://a.io/x).", []string{"URL_DENIED https://a.io/x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			f, err := s.Scan(context.Background(), &scanner.Target{Text: scanner.NewText(tc.text)})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range f.Matches {
				got = append(got, m.Kind+" "+tc.text[m.Start:m.End])
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") || f.Detected != (len(tc.want) > 0) {
				t.Fatalf("got %q (detected %v), want %q", got, f.Detected, tc.want)
			}
			if f.Detected && strings.Contains(f.Reason, "evil") {
				t.Fatalf("reason quotes the text: %q", f.Reason)
			}
		})
	}
}

func TestNewValidates(t *testing.T) {
	for _, cfg := range []Config{
		{AllowDomains: []string{"http://x.com"}},
		{DenyDomains: []string{""}},
		{DenyDomains: []string{"a*.com"}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

func BenchmarkScan(b *testing.B) {
	s, _ := New(Config{})
	tgt := &scanner.Target{Text: scanner.NewText(scannertest.Fill("Please summarise the attached quarterly report for the board, e.g. list three risks. ", 2048))}
	b.SetBytes(2048)
	b.ReportAllocs()
	for b.Loop() {
		if f, _ := s.Scan(context.Background(), tgt); f.Detected {
			b.Fatal("clean prompt flagged")
		}
	}
}
