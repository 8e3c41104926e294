package secrets

import (
	"math"
	"strings"
)

// Providers mint tokens in one shape: a short lower- or upper-case prefix
// naming the provider and kind ("sk-ant-api03-", "dckr_pat_", "NRAK-",
// "dp.pt.", "jina_"), then a long random body. scanPrefixed finds that
// shape without knowing the provider, which is how a token of a provider
// without a rule here is still caught.

// tokenByte marks the bytes a prefixed token is made of.
var tokenByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
	}
	return t
}()

// minPrefixedLen is the shortest run examined: a two-letter prefix, a
// separator and a 20-byte body.
const minPrefixedLen = 23

// idPrefixes name identifiers and digests rather than credentials:
// "sha256-<digest>", "user_<id>", "app-<hash>.css". Compared lower-cased.
var idPrefixes = []string{
	"sha", "sha1", "sha224", "sha256", "sha384", "sha512", "md5", "blake2b", "blake3", "crc32", "hash", "digest",
	"commit", "rev", "ref", "id", "uuid", "guid", "user", "req", "request", "trace", "span", "build", "run",
	"job", "file", "img", "image", "asset", "chunk", "cache", "etag", "test", "mock", "example", "sample",
	// Payment and commerce object ids (Stripe's in_, cus_, ch_, pi_ ...).
	"in", "inv", "cus", "ch", "pi", "pm", "py", "sub", "si", "evt", "txn", "price", "prod", "acct", "ord",
	"order", "seti", "src", "re", "po", "ii", "il", "cs", "card", "ba", "tr", "tok", "msg", "thread",
	"asst", "batch", "ft", "chatcmpl", "call", "resp",
}

// scanPrefixed appends every prefixed token of text to hits. A token is a
// run of at least minPrefixedLen token bytes, so the walk probes the last
// byte of each window of that length: a probe that is not a token byte
// rules the whole window out, and prose (a space every few bytes) costs a
// few lookups per window instead of one per byte.
func scanPrefixed(text string, th float64, r *rule, hits []hit) []hit {
	for i := 0; i+minPrefixedLen <= len(text); {
		p := i + minPrefixedLen - 1
		if !tokenByte[text[p]] {
			i = p + 1
			continue
		}
		// text[i-1] is never a token byte, so the run starts at or after i.
		start := p
		for start > i && tokenByte[text[start-1]] {
			start--
		}
		// A run from start must reach start+22; if that byte ends it, no
		// run long enough starts before it either.
		if q := start + minPrefixedLen - 1; q > p && (q >= len(text) || !tokenByte[text[q]]) {
			i = q + 1
			continue
		}
		end := p + 1
		for end < len(text) && tokenByte[text[end]] {
			end++
		}
		if end-start >= minPrefixedLen && (start == 0 || !isPathByte(text[start-1]) || start >= 2 && text[start-2:start] == "//") && !labelledID(text, start) {
			// After "//" the run starts a URL's authority, where a token
			// stands as the user name (https://ghs_...@github.com).
			if vs, ve, ok := prefixedToken(text, start, end, th); ok {
				hits = append(hits, hit{vs, ve, r})
			}
		}
		i = end + 1
	}
	return hits
}

// isPathByte reports bytes after which a token-shaped run is a path or a
// fragment (a file name, an anchor), not a pasted credential.
func isPathByte(c byte) bool { return c == '/' || c == '\\' || c == '#' || c == '@' }

// prefixedToken checks the run text[i:j] and returns the token's span.
func prefixedToken(text string, i, j int, th float64) (int, int, bool) {
	run := strings.TrimRight(text[i:j], "._-")
	// Most long runs in prose and code are dotted or snake_case names
	// without a digit (http.StatusInternalServerError): reject them first.
	if !hasDigit(run) {
		return 0, 0, false
	}
	// Prefix: one to four short segments, each starting with a letter,
	// all of one case, ending at a separator.
	k, segs, firstEnd := 0, 0, 0
	for segs < 4 {
		e := k
		lower, upper := false, false
		for e < len(run) && e-k <= 10 && isWordByte(run[e]) && run[e] != '_' {
			c := run[e]
			lower = lower || c >= 'a' && c <= 'z'
			upper = upper || c >= 'A' && c <= 'Z'
			e++
		}
		if e == k || e-k > 10 || e >= len(run) || !isSeparator(run[e]) || !isLetter(run[k]) || lower && upper {
			break
		}
		if segs == 0 {
			firstEnd = e
		}
		k, segs = e+1, segs+1
	}
	if segs == 0 {
		if gluedHex(run, th) {
			return i, i + len(run), true
		}
		return 0, 0, false
	}
	body := run[k:]
	if isFileName(body) {
		return 0, 0, false
	}
	// first is the length of the body's first segment.
	first, alnum := -1, 0
	var lower, upper, digit, nonHex bool
	for n := 0; n < len(body); n++ {
		c := body[n]
		if isSeparator(c) {
			if first < 0 {
				first = n
			}
			continue
		}
		alnum++
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z':
			lower = true
			nonHex = nonHex || c > 'f'
		default:
			upper = true
			nonHex = true
		}
	}
	if first < 0 {
		first = len(body)
	}
	// The random part starts right after the prefix: a short segment
	// there ("live_126031192_...", "AQAAUPJ-iQc.") is an identifier
	// scheme, not a provider prefix.
	if alnum < 20 || first < 12 || !digit || isUUIDShaped(body) || codeName(run) {
		return 0, 0, false
	}
	// A hex body is a digest unless it is long; other bodies must mix
	// cases or letters and digits at random.
	if !nonHex && alnum < 32 || !lower && !upper {
		return 0, 0, false
	}
	if isIDPrefix(run[:firstEnd]) || segs > 1 && isPublishable(run[:firstEnd+1], run[firstEnd+1:]) {
		return 0, 0, false
	}
	if entropy(body) < math.Min(th, math.Log2(float64(len(body)))-0.7) {
		return 0, 0, false
	}
	return i, i + len(run), true
}

func isSeparator(c byte) bool { return c == '_' || c == '-' || c == '.' }

func isIDPrefix(p string) bool {
	for _, w := range idPrefixes {
		if len(p) == len(w) && strings.EqualFold(p, w) {
			return true
		}
	}
	return false
}

// isFileName reports a body ending in a file extension (".png", ".js").
func isFileName(body string) bool {
	dot := strings.LastIndexByte(body, '.')
	if dot < 0 || len(body)-dot-1 < 1 || len(body)-dot-1 > 4 {
		return false
	}
	for _, c := range []byte(body[dot+1:]) {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// isUUIDShaped reports a body that is a UUID, which names a record far
// more often than it authenticates anything.
func isUUIDShaped(b string) bool {
	if len(b) != 36 {
		return false
	}
	for n := 0; n < 36; n++ {
		c := b[n]
		if n == 8 || n == 13 || n == 18 || n == 23 {
			if c != '-' {
				return false
			}
		} else if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// isPublishable reports the prefixes of keys made to be published in web
// pages ("pk_live_", "pk_test_"), which grant nothing secret; rest is the
// run after the first prefix segment and its separator.
func isPublishable(first, rest string) bool {
	if lowerASCII(first) != "pk_" || len(rest) < 5 || !isSeparator(rest[4]) {
		return false
	}
	second := lowerASCII(rest[:4])
	return second == "live" || second == "test"
}

// webhookWords are path segments after which a random segment of a URL
// is the credential itself: whoever has a webhook URL can post to it.
var webhookWords = []string{"webhook", "webhooks", "webhookb2", "hooks", "incomingwebhook"}

// matchURLToken finds a random segment in a URL path that authenticates
// the request: on a webhook host or after a webhook segment
// (".../webhook/<id>", "hooks.slack.com/services/T../B../<secret>"), or
// right after an API version ("/api/v1/<device token>/telemetry").
func matchURLToken(s string, ks, _ int, th float64) (int, int, bool) {
	i := ks + 3
	// Skip the authority; a webhook host ("hooks.example.com") makes the
	// whole path a candidate.
	for i < len(s) && i-ks < 256 && s[i] != '/' && !isURLStop(s[i]) {
		i++
	}
	host := lowerASCII(s[ks+3 : i])
	hint := strings.HasPrefix(host, "hooks.") || strings.Contains(host, "webhook")
	prev := ""
	for n := 0; n < 16 && i < len(s) && s[i] == '/'; n++ {
		j := i + 1
		for j < len(s) && j-i < 256 && s[j] != '/' && s[j] != '?' && s[j] != '#' && !isURLStop(s[j]) {
			j++
		}
		seg := s[i+1 : j]
		if hint && randomSegment(seg, th) {
			return i + 1, j, true
		}
		lseg := lowerASCII(seg)
		for _, w := range webhookWords {
			hint = hint || lseg == w
		}
		hint = hint || isAPIVersion(lseg) && lowerASCII(prev) == "api"
		prev = seg
		i = j
	}
	return 0, 0, false
}

func isURLStop(c byte) bool {
	return c <= ' ' || c == '"' || c == '\'' || c == '`' || c == '<' || c == '>' || c == '\\'
}

// isAPIVersion reports "v1", "v2", ...
func isAPIVersion(seg string) bool { return len(seg) >= 2 && seg[0] == 'v' && isDigits(seg[1:]) }

// randomSegment reports a path segment that looks generated: 20 or more
// token bytes mixing letters and digits at high entropy, not a UUID (which
// names a resource) and not hex shorter than 32.
func randomSegment(seg string, th float64) bool {
	if len(seg) < 20 || isUUIDShaped(seg) || isSequential(seg) {
		return false
	}
	var letter, digit, nonHex bool
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case isLetter(c):
			letter = true
			nonHex = nonHex || !(c >= 'a' && c <= 'f')
		case c == '_' || c == '-':
		default:
			return false
		}
	}
	if !letter || !digit || !nonHex && len(seg) < 32 {
		return false
	}
	return entropy(seg) >= math.Min(th, math.Log2(float64(len(seg)))-0.7)
}

// labelledID reports a run that the text itself calls an id ("Invoice
// ID: in_...", "order_id=", `"invoiceId": "`): the name just before it
// ends in the word "id".
func labelledID(text string, i int) bool {
	j := i
	for j > 0 && i-j < 4 && strings.IndexByte(" :=\"'", text[j-1]) >= 0 {
		j--
	}
	if j == i || j < 2 || !strings.EqualFold(text[j-2:j], "id") {
		return false
	}
	// A word of its own or the last word of a name, not "paid" or "valid".
	return j == 2 || !isLetter(text[j-3]) || text[j-2] == 'I'
}

// gluedHex reports a short lower-case prefix glued to a long hex body
// ("dapi" + 32 hex digits): the prefix has a letter past 'f', so it is
// not part of the hex, and is not a digest's name ("sha256...").
func gluedHex(run string, th float64) bool {
	p := 0
	nonHex := false
	for p < len(run) && p < 9 && run[p] >= 'a' && run[p] <= 'z' {
		nonHex = nonHex || run[p] > 'f'
		p++
	}
	// The prefix ends where the body's first digit starts: hex letters
	// just before it belong to the prefix or the body alike, and the
	// prefix is taken to be the letters up to the last non-hex letter.
	q := p
	for q > 0 && run[q-1] <= 'f' {
		q--
	}
	body := run[q:]
	if !nonHex || q < 3 || q > 8 || len(body) < 32 || !isHex(body) || isIDPrefix(run[:q]) {
		return false
	}
	digits := 0
	for i := 0; i < len(body); i++ {
		if body[i] <= '9' {
			digits++
		}
	}
	return digits >= 4 && digits < len(body) && !isSequential(body) && entropy(body) >= entropyNeeded(body, th)
}
