package secrets

import (
	"math"
	"strings"
)

// Generic evidence: what catches a credential whose format no rule here
// names. A value is reported when the text says it is a credential (a
// credential-named key or word just before it) and the value looks
// generated; or, without any label, when its own shape says so (a
// modular-crypt hash, a short provider prefix glued to a hex body).

// nearWords are the words after which a generated-looking token, within
// nearWindow bytes, is taken for the credential the word names:
// "vault operator unseal <key>", `"method": "login_with_api_key",
// "params": ["<key>"]`, `variable "db_token" { default = "<token>" }`,
// "PRIVATE KEY-----\r\n<base64>". Lower case; matched in any case.
var nearWords = []string{
	"token", "secret", "password", "passwd", "passphrase", "apikey", "api_key", "api-key", "unseal", "credential", "auth",
	"bearer", "private key", "private_key", "privatekey", "access_key", "accesskey", "auth_key", "license_key",
	"client_key", "signing_key", "license", "access", "key",
}

// nearWindow is how far past its word a token may start, and nearRuns how
// many token runs of that stretch are examined: the syntax between a label
// and its value (quotes, a colon, a brace, a line break, a parameter name)
// is short; further on, a token belongs to something else.
const (
	nearWindow = 48
	nearRuns   = 6
	// minNearLen is the shortest unlabelled token reported: shorter
	// random-looking runs are common in code (short hashes, ids).
	minNearLen = 20
)

// nearByte marks the bytes a token near a credential word is made of:
// base64, base64url, hex, and the dots and tildes of dotted tokens.
var nearByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = isWordByte(byte(c)) || c == '-' || c == '.' || c == '+' || c == '/' || c == '=' || c == '~'
	}
	return t
}()

// matchNear finds a generated-looking token that follows a credential word
// [ks, ke) within nearWindow bytes.
func matchNear(s string, ks, ke int, th float64) (int, int, bool) {
	if !nearWordAlone(s, ks, ke) {
		return 0, 0, false
	}
	end := min(len(s), ke+nearWindow)
	i, runs, lines := ke, 0, 0
	// inURL is set from a "://" to the next space or quote: the runs of a
	// URL are its host, path and query, not a value the word labels.
	inURL := inURLAt(s, ks)
	for i < end && runs < nearRuns {
		c := s[i]
		switch c {
		case '\n':
			if lines++; lines > 2 {
				return 0, 0, false
			}
			inURL = false
		case ' ', '\t', '\r', '"', '\'', '`':
			inURL = false
		case ':':
			inURL = inURL || strings.HasPrefix(s[i:], "://")
		}
		if !nearByte[c] || c == '=' || c == '-' || c == '.' || c == '/' {
			// '=', '-', '.', '/' separate a label from its value
			// (key=..., --token ..., ./path); a token never starts with
			// one.
			i++
			continue
		}
		if i > 0 && s[i-1] == '\\' && (c == 'n' || c == 'r' || c == 't') {
			// An escaped line break inside a string literal
			// ("-----\\r\\n<base64>"): the value starts after it.
			i++
			continue
		}
		j := i
		for j < len(s) && j-i < maxQuoted && nearByte[s[j]] {
			// '=' inside a run assigns ("args=my_key2=my_value2");
			// only a run's trailing '=' is base64 padding.
			if s[j] == '=' && j+1 < len(s) && nearByte[s[j+1]] && s[j+1] != '=' {
				break
			}
			j++
		}
		runs++
		// The run ends where a value would: trailing padding stays, a
		// trailing dot or dash does not.
		ve := j
		for ve > i && (s[ve-1] == '.' || s[ve-1] == '-') {
			ve--
		}
		v := s[i:ve]
		// Paths, fragments, URLs and data URIs ("data:image/png;base64,")
		// hold random-looking runs that are not credentials.
		if len(v) < minNearLen || inURL || i > 0 && isPathByte(s[i-1]) || strings.HasSuffix(s[max(0, i-7):i], "base64,") || digestLabel(s, i) || idPrefixed(v) {
			i = j
			continue
		}
		if looksRandom(v, th) {
			// Judged last, as few words are followed by a token: the
			// word names a public key, or the token is one.
			if nearPublic(s, ks) || sshPublicKey(s, i) {
				return 0, 0, false
			}
			return i, i + len(v), true
		}
		i = j
	}
	return 0, 0, false
}

// nearWordAlone reports whether the word at [ks, ke) is a word of its own
// or the last part of a name (api_token, clientSecret, PRIVATE KEY), not
// a piece of a longer word (monkey, keyboard, tokenizer, secretary).
func nearWordAlone(s string, ks, ke int) bool {
	if ks > 0 && s[ks-1] == '/' || ke < len(s) && s[ke] == '/' {
		// A path segment ("cloud.google.com/go/auth v0.23.3 h1:...")
		// names a module or a route, not a credential.
		return false
	}
	if ke < len(s) && isLetter(s[ke]) {
		// A plural ("tokens", "keys") names credentials in general.
		return false
	}
	if ks > 0 && isLetter(s[ks-1]) {
		// camelCase (clientSecret, apiKey) is a name part; lower case
		// before it (monkey, turkey) is a longer word.
		return s[ks-1] >= 'a' && s[ks-1] <= 'z' && s[ks] >= 'A' && s[ks] <= 'Z'
	}
	// After a digit the word is inside a blob ("...9key0Zx..."), not a
	// label.
	return ks == 0 || s[ks-1] < '0' || s[ks-1] > '9'
}

// nearPublic reports a word that names a public or non-secret key: the
// name it ends ("public_key", "cache-key", "primaryKey", "key_id") or the
// word before it ("public key", "primary key").
func nearPublic(s string, ks int) bool {
	start := ks
	for start > 0 && ks-start < 64 && (isIdent(s[start-1]) || s[start-1] == ' ') {
		start--
	}
	for _, w := range keyNameSkip {
		if containsFold(s[start:ks], w) {
			return true
		}
	}
	return false
}

// containsFold reports whether s contains the lower-case ASCII word w in
// any case, without allocating.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(w)], w) {
			return true
		}
	}
	return false
}

// looksRandom reports a token that a machine generated: digits and letters
// mixed, not a UUID, not a counting placeholder, not a path or an
// identifier made of words, and at the entropy a random string of its
// length and alphabet has. A hex-only token must be 32 or longer: shorter
// hex is a commit or a short hash far more often than a key.
func looksRandom(v string, th float64) bool {
	if isUUIDShaped(v) || isSequential(v) || isWordy(v) || isFileName(v) || strings.Count(v, "/") > 2 || isSlug(v) || accountScheme(v) || codeName(v) {
		return false
	}
	var digits, letters int
	hex := true
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'z':
			letters++
			hex = hex && c <= 'f'
		case c >= 'A' && c <= 'Z':
			letters++
			hex = false
		default:
			hex = false
		}
	}
	if digits < 2 || letters < 4 {
		return false
	}
	if hex && len(v) < 32 {
		return false
	}
	return entropy(v) >= entropyNeeded(v, th)
}

// entropyNeeded is the entropy a generated value of v's length reaches:
// th, or less for short values, whose entropy is capped by their length;
// hex a little less again, since sixteen symbols cap it at 4 bits (16
// random hex digits average about 3.3).
func entropyNeeded(v string, th float64) float64 {
	need := math.Min(th, math.Log2(float64(len(v)))-0.7)
	if isHex(v) {
		need -= 0.2
	}
	return need
}

func isHex(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// sshPublicKey reports a run that is the body of an OpenSSH public key
// ("ssh-ed25519 AAAAC3Nz..."), published by design.
func sshPublicKey(s string, i int) bool {
	w := s[max(0, i-24):i]
	return strings.Contains(w, "ssh-") || strings.Contains(w, "ecdsa-")
}

// cryptHashes finds password hashes in the modular crypt format that
// crypt(3), hashcat and John the Ripper share: "$<scheme>$" then
// "$"-separated fields, the last a long salted digest ("$2b$12$...",
// "$argon2id$v=19$m=65536,t=3,p=4$<salt>$<hash>", "$krb5asrep$23$...").
// The scheme name is not checked, so schemes without a rule here are
// caught too; what is checked is that the last field is random.
func cryptHashes(text string, th float64, r *rule, hits []hit) []hit {
	for off := 0; off < len(text); {
		i := strings.IndexByte(text[off:], '$')
		if i < 0 {
			break
		}
		i += off
		off = i + 1
		if i > 0 && (isWordByte(text[i-1]) || text[i-1] == '$') {
			continue
		}
		// Scheme: 1 to 16 lower-case letters, digits or dashes.
		j := i + 1
		for j < len(text) && j-i <= 16 && (text[j] >= 'a' && text[j] <= 'z' || text[j] >= '0' && text[j] <= '9' || text[j] == '-') {
			j++
		}
		if j == i+1 || j-i > 16 || j >= len(text) || text[j] != '$' {
			continue
		}
		// Fields run to the first byte that no hash field holds.
		e := j
		for e < len(text) && e-i < 1024 && cryptByte(text[e]) {
			e++
		}
		last := strings.LastIndexByte(text[i:e], '$') + i
		if strings.Count(text[j:e], "$") < 2 || last == j {
			continue
		}
		// The digest ends where crypt's alphabet does (an /etc/shadow
		// line goes on with ":19000:0:99999:7:::").
		de := last + 1
		for de < e && (isWordByte(text[de]) && text[de] != '_' || text[de] == '.' || text[de] == '/' || text[de] == '+' || text[de] == '=') {
			de++
		}
		digest := text[last+1 : de]
		if len(digest) < 22 || !isHashField(digest) || entropy(digest) < math.Min(th, math.Log2(float64(len(digest)))-0.7) {
			continue
		}
		hits = append(hits, hit{i, de, r})
		off = de
	}
	return hits
}

// cryptByte marks the bytes of a crypt hash's fields: crypt's base64
// alphabet, hex, and the parameters and user names some schemes carry
// ("rounds=5000", "m=65536,t=3", "user@domain.com:").
func cryptByte(c byte) bool {
	return isWordByte(c) || c == '$' || c == '.' || c == '/' || c == '+' || c == '=' || c == ',' || c == '@' || c == ':' || c == '-'
}

// isHashField reports a digest field: crypt's base64 alphabet only, with
// digits and letters.
func isHashField(v string) bool {
	var digit, letter bool
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case isLetter(c):
			letter = true
		case c == '.' || c == '/' || c == '+' || c == '=':
		default:
			return false
		}
	}
	return digit && letter
}

// isSlug reports a name built of words ("ws-plugin--s2member-amazon-s3-
// comp-files-access-key", "release_2024_candidate_build"): three or more
// separated segments, each lower-case letters with at most two digits, or
// digits alone. A generated token has long segments that mix cases and
// digits freely.
func isSlug(v string) bool {
	segs, digits, n := 0, 0, 0
	for i := 0; i <= len(v); i++ {
		if i == len(v) || v[i] == '_' || v[i] == '-' || v[i] == '.' || v[i] == '/' {
			if n > 0 {
				segs++
				if digits > 2 && digits < n {
					return false
				}
			}
			digits, n = 0, 0
			continue
		}
		switch c := v[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'z':
		default:
			return false
		}
		n++
	}
	return segs >= 3
}

// accountScheme reports a value that starts with a long number and a
// separator ("126031192_IgvUab..."): an account or user number followed
// by a part of some provider's scheme, which that provider's rule judges.
func accountScheme(v string) bool {
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	return i >= 6 && i < len(v) && isSeparator(v[i])
}

// wordShare is the share of v's letters that stand in runs reading as
// words: four or more letters, a capital or a lower-case letter then
// lower-case letters ("Field", "descriptor"). In a random base62 token
// such runs are rare: most of its letters stand in runs of one to three.
// (Runs of capitals are not counted: base64 of binary data has long ones,
// "AAAAAB".)
func wordShare(v string) float64 {
	letters, wordy := 0, 0
	for i := 0; i < len(v); {
		c := v[i]
		if !isLetter(c) {
			i++
			continue
		}
		j := i + 1
		for j < len(v) && v[j] >= 'a' && v[j] <= 'z' {
			j++
		}
		n := j - i
		letters += n
		if n >= 4 {
			wordy += n
		}
		i = j
	}
	if letters == 0 {
		return 0
	}
	return float64(wordy) / float64(letters)
}

// codeName reports a qualified or compound name from code
// ("x509.ExtKeyUsageServerAuth", "pkcs11.CKM_ECDH1_DERIVE",
// "descriptor.FieldDescriptorProto_TYPE_SFIXED32",
// "telemetry-destinations-2026-08-11"): every part between separators is
// a number, a one-case word with a digit run or two, or camelCase words.
// The parts of a generated token mix cases and digits at random.
func codeName(v string) bool {
	start := 0
	for i := 0; i <= len(v); i++ {
		if i < len(v) && strings.IndexByte("._-/+", v[i]) < 0 {
			continue
		}
		if seg := v[start:i]; seg != "" && !identPart(seg) {
			return false
		}
		start = i + 1
	}
	return true
}

// identPart reports one part of a code name (see codeName).
func identPart(seg string) bool {
	var lower, upper, digits, digitRuns int
	for i := 0; i < len(seg); i++ {
		switch c := seg[i]; {
		case c >= 'a' && c <= 'z':
			lower++
		case c >= 'A' && c <= 'Z':
			upper++
		case c >= '0' && c <= '9':
			digits++
			if i == 0 || seg[i-1] < '0' || seg[i-1] > '9' {
				digitRuns++
			}
		default:
			return false
		}
	}
	switch {
	case digits == len(seg):
		// A number, a date part, a version.
		return len(seg) <= 14
	case upper == 0 || lower == 0:
		// "linkedca", "s2av2pb", "SFIXED32", "chacha20poly1305", and
		// hex-lettered "ed25519"; not "f59dffd2" (hex digits at random).
		if digits > 0 && isHex(seg) {
			return digitRuns == 1 && (seg[0] <= '9' || seg[len(seg)-1] <= '9')
		}
		return len(seg) <= 24 && (digits <= 3 || digitRuns <= 2)
	case len(seg) <= 8:
		// "Udp6", "5Pro2026": too short to tell; the other parts decide.
		return true
	default:
		w := wordShare(seg)
		return digits <= 8 && (w >= 0.5 || len(seg) <= 12 && w >= 0.4)
	}
}

// inURLAt reports whether offset i is inside a URL: a "://" precedes it
// in the same space- and quote-free stretch.
func inURLAt(s string, i int) bool {
	for k := i - 1; k >= 2 && i-k < 512; k-- {
		switch s[k] {
		case ' ', '\t', '\n', '\r', '"', '\'', '`':
			return false
		case '/':
			if s[k-2:k+1] == "://" {
				return true
			}
		}
	}
	return false
}

// matchCLIPassword finds the password of a command line that passes a user
// and a password as short flags: "-u admin -p s3cr3t!", "-u Administrator
// -p braksha" (PsExec, docker login, az login and many other tools),
// "-u root -pS3cret" (mysql), "-U sa -P s3cr3t!" (sqlcmd). The MySQL and MariaDB clients take the
// password glued to "-p" and prompt for it otherwise, so after "mysql -u
// root -p" the next word is the database: there a value without a digit
// or a symbol is left alone.
func matchCLIPassword(s string, ks, ke int, _ float64) (int, int, bool) {
	if ks > 0 && s[ks-1] != ' ' && s[ks-1] != '\t' {
		return 0, 0, false
	}
	i := skipSpaces(s, ke)
	j := i
	for j < len(s) && j-i < 64 && !isValueStop(s[j]) {
		j++
	}
	k := skipSpaces(s, j)
	if j == i || k == j || !strings.HasPrefix(s[k:], passwordFlag(s, ks)) {
		return 0, 0, false
	}
	k = skipSpaces(s, k+2)
	e := k
	for e < len(s) && e-k < 128 && !isValueStop(s[e]) {
		e++
	}
	v := s[k:e]
	if len(v) < 4 || v[0] == '-' || v[0] == '%' || isPort(v) || notLiteral(assignment{key: "p"}, v) {
		return 0, 0, false
	}
	if !hasDigitOrSymbol(v) && mysqlCommand(s, ks) {
		return 0, 0, false
	}
	return k, e, true
}

// passwordFlag is the password flag that goes with the user flag at ks:
// sqlcmd, bcp and isql spell the pair -U and -P, so the password flag
// takes the user flag's case.
func passwordFlag(s string, ks int) string {
	if s[ks+1] == 'U' {
		return "-P"
	}
	return "-p"
}

// mysqlCommand reports whether the command whose flag starts at ks runs a
// MySQL or MariaDB client (mysql, mysqldump, mariadb-dump, possibly after
// sudo or docker exec): the words from the start of the command to ks
// name one. It reads at most 64 bytes back, within what a stream keeps
// (see lookbehind).
func mysqlCommand(s string, ks int) bool {
	start := ks
	for start > 0 && ks-start < 64 && strings.IndexByte("\n\"'`;|&(", s[start-1]) < 0 {
		start--
	}
	return containsFold(s[start:ks], "mysql") || containsFold(s[start:ks], "mariadb")
}

// isPort reports a port or a port mapping ("8080", "8080:80", "127.0.0.1:5432").
func isPort(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c >= '0' && c <= '9' || c == ':' || c == '.' || c == '/') {
			return false
		}
	}
	return true
}

// literalPassword reports a quoted password literal that is not a
// placeholder or a reference (see notLiteral).
func literalPassword(v string) bool { return !notLiteral(assignment{quoted: true}, v) }

// digestLabel reports a run that a digest's algorithm labels: "h1:" (go.sum),
// "sha256:", "sha512-" (npm integrity), "md5=".
func digestLabel(s string, i int) bool {
	if i < 3 || !(s[i-1] == ':' || s[i-1] == '-' || s[i-1] == '=') {
		return false
	}
	j := i - 1
	for j > 0 && i-j < 10 && (isLetter(s[j-1]) || s[j-1] >= '0' && s[j-1] <= '9') {
		j--
	}
	return j < i-1 && isIDPrefix(s[j:i-1]) || s[j:i-1] == "h1"
}

// idPrefixed reports a run that an identifier or digest prefix starts
// ("msg_2KWPBg...", "sha512-ojme..."): see idPrefixes.
func idPrefixed(v string) bool {
	for i := 1; i < len(v) && i <= 9; i++ {
		if isSeparator(v[i]) || v[i] == ':' {
			return isIDPrefix(v[:i])
		}
	}
	return false
}

// matchB64JSON finds a base64-encoded JSON object ("eyJ" encodes `{"`)
// that carries a random string value: a key that wraps its secret in
// JSON before encoding it (Grafana's "eyJrIjoi...", a Kubernetes
// .dockerconfigjson, a session blob). Encoded JSON without a random
// value (a JWT header, a cursor of small numbers and names) is left
// alone, and so is "eyJ" inside a longer base64 run.
func matchB64JSON(s string, ks, ke int, th float64) (int, int, bool) {
	if s[ks:ke] != "eyJ" || ks > 0 && b64Value[s[ks-1]] >= 0 {
		return 0, 0, false
	}
	e := ks
	for e < len(s) && e-ks < maxB64JSON && b64Value[s[e]] >= 0 {
		e++
	}
	n := e - ks
	for e < len(s) && e-ks-n < 2 && s[e] == '=' {
		e++
	}
	if n < minB64JSON {
		return 0, 0, false
	}
	var buf [maxB64JSON * 3 / 4]byte
	if !jsonRandomValue(decodeB64(buf[:], s[ks:ks+n]), th) {
		return 0, 0, false
	}
	return ks, e, true
}

// minB64JSON is the shortest run examined: `{"k":"` and a 16-byte value
// take 32 characters, and a key worth the name is longer. maxB64JSON
// bounds what is decoded (and so the run reported).
const (
	minB64JSON = 40
	maxB64JSON = 1024
)

// b64Value maps both base64 alphabets (standard and URL-safe) to their
// six-bit values, and every other byte to -1.
var b64Value = func() (t [256]int8) {
	for c := range t {
		t[c] = -1
	}
	const std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	for i := 0; i < len(std); i++ {
		t[std[i]] = int8(i)
	}
	t['+'], t['-'] = 62, 62
	t['/'], t['_'] = 63, 63
	return t
}()

// decodeB64 decodes src, a run of b64Value bytes without padding, into
// dst and returns the bytes written; a trailing partial byte is dropped.
func decodeB64(dst []byte, src string) []byte {
	var acc uint32
	bits, n := 0, 0
	for i := 0; i < len(src) && n < len(dst); i++ {
		acc = acc<<6 | uint32(b64Value[src[i]])
		if bits += 6; bits >= 8 {
			bits -= 8
			dst[n] = byte(acc >> bits)
			n++
		}
	}
	return dst[:n]
}

// jsonRandomValue reports whether the JSON text d (possibly cut short)
// has a string value, not a key, that looksRandom: 16 bytes or more and
// not an identifier's prefixed id. A JOSE header (it names an "alg") is
// left to the JWT rule: its random values are key ids and salts. So are
// values under names that say they are not secret (see notSecretKey).
func jsonRandomValue(d []byte, th float64) bool {
	if len(d) < 2 || d[0] != '{' || containsBytes(d, `"alg"`) {
		return false
	}
	key := ""
	for i := 1; i < len(d); i++ {
		if d[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(d) && d[j] != '"' {
			if d[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(d) {
			return false
		}
		v := string(d[i+1 : j])
		k := j + 1
		for k < len(d) && (d[k] == ' ' || d[k] == '\n' || d[k] == '\t' || d[k] == '\r') {
			k++
		}
		if k < len(d) && d[k] == ':' {
			key = v
		} else if len(v) >= 16 && !notSecretKey(key) && looksRandom(v, th) && !idPrefixed(v) {
			return true
		}
		i = j
	}
	return false
}

// notSecretKey reports a JSON name whose value is public by design: an
// id or a reference (see isReferenceName), a salt, a nonce, an IV.
func notSecretKey(key string) bool {
	switch lowerASCII(key) {
	case "id", "kid", "jti", "sub", "iss", "aud", "salt", "nonce", "iv", "p2s":
		return true
	}
	return isReferenceName(key)
}

// matchConnectionCall finds the password passed, as the third string
// literal, to a call whose first argument is a connection URI of a
// database, directory or broker (see connectionSchemes): the (uri, user,
// password) signature of JDBC's DriverManager.getConnection, .NET's
// DirectoryEntry and many drivers' connect. Other arguments may follow.
// The password must have a digit or a symbol: a word there is as often a
// database or collection name ("mongodb://...", "shop", "orders").
func matchConnectionCall(s string, ks, _ int, _ float64) (int, int, bool) {
	_, vs, ve, st := connectionCall(s, ks)
	if st != callFound {
		return 0, 0, false
	}
	v := s[vs:ve]
	if len(v) < 4 || !hasDigitOrSymbol(v) || !literalPassword(v) {
		return 0, 0, false
	}
	return vs, ve, true
}

// callState is how far connectionCall got.
type callState int

const (
	callNone  callState = iota // not a (uri, user, password) call
	callOpen                   // the text ended before it could tell
	callFound                  // the third argument is at [vs, ve)
)

// connectionCall reads `(` "<scheme>://..." `,` "<user>" `,` "<password>"
// then `)` or `,`, around the "://" at ks. It returns where the scheme
// starts, the third argument's span, and how far it got.
func connectionCall(s string, ks int) (ss, vs, ve int, st callState) {
	ss = ks
	for ss > 0 && ks-ss < 32 && (isWordByte(s[ss-1]) || s[ss-1] == '+' || s[ss-1] == ':' || s[ss-1] == '-' || s[ss-1] == '.') {
		ss--
	}
	if ss == ks || ss < 2 || !isQuote(s[ss-1]) || !isConnectionScheme(lowerASCII(s[ss:ks])) {
		return ss, 0, 0, callNone
	}
	q := s[ss-1]
	if b := skipSpacesBack(s, ss-1); b == 0 || s[b-1] != '(' {
		return ss, 0, 0, callNone
	}
	e := strings.IndexByte(s[ks:min(len(s), ks+512)], q)
	if e < 0 {
		if len(s)-ks < 512 {
			return ss, 0, 0, callOpen
		}
		return ss, 0, 0, callNone
	}
	i := ks + e + 1
	for arg := 0; arg < 2; arg++ {
		if i = skipBlank(s, i); i >= len(s) {
			return ss, 0, 0, callOpen
		}
		if s[i] != ',' {
			return ss, 0, 0, callNone
		}
		if i = skipBlank(s, i+1); i >= len(s) {
			return ss, 0, 0, callOpen
		}
		if s[i] != q {
			return ss, 0, 0, callNone
		}
		j := i + 1
		for j < len(s) && j-i < 256 && s[j] != q && s[j] != '\n' {
			j++
		}
		if j >= len(s) {
			return ss, 0, 0, callOpen
		}
		if s[j] != q {
			return ss, 0, 0, callNone
		}
		vs, ve, i = i+1, j, j+1
	}
	if i = skipBlank(s, i); i >= len(s) {
		return ss, 0, 0, callOpen
	}
	if s[i] != ')' && s[i] != ',' {
		return ss, 0, 0, callNone
	}
	return ss, vs, ve, callFound
}

// skipBlank skips spaces, tabs and line breaks, as between the arguments
// of a call wrapped over lines.
func skipBlank(s string, i int) int {
	for n := 0; i < len(s) && n < 64 && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'); n++ {
		i++
	}
	return i
}

// skipSpacesBack returns the start of the spaces and tabs that end at i.
func skipSpacesBack(s string, i int) int {
	for n := 0; i > 0 && n < 40 && (s[i-1] == ' ' || s[i-1] == '\t'); n++ {
		i--
	}
	return i
}

// matchCookie finds a session in a Cookie or Set-Cookie header, or after
// curl's --cookie: the first cookie value that looks generated (see
// looksRandom). Whoever sends a session cookie is the user it was issued
// to, whatever the site, and browsers' "copy as cURL" pastes every cookie
// along with the request. Analytics cookies ("_ga=GA1.1.123.456") and
// short or word-like values are left alone by looksRandom.
func matchCookie(s string, _, ke int, th float64) (int, int, bool) {
	i := ke
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || isQuote(s[i])) {
		i++
	}
	for n := 0; n < 32 && i < len(s); n++ {
		// name=value; the header ends at a quote or the end of the line.
		eq := i
		for eq < len(s) && eq-i < 128 && s[eq] != '=' && s[eq] != ';' && !isCookieEnd(s[eq]) {
			eq++
		}
		if eq >= len(s) || s[eq] != '=' {
			return 0, 0, false
		}
		vs := eq + 1
		ve := vs
		for ve < len(s) && ve-vs < maxQuoted && s[ve] != ';' && s[ve] != ' ' && !isCookieEnd(s[ve]) {
			ve++
		}
		if ve-vs >= minNearLen && looksRandom(s[vs:ve], th) {
			return vs, ve, true
		}
		if ve >= len(s) || s[ve] != ';' {
			return 0, 0, false
		}
		i = ve + 1
		for i < len(s) && s[i] == ' ' {
			i++
		}
	}
	return 0, 0, false
}

// isCookieEnd reports the bytes that end a Cookie header's pairs.
func isCookieEnd(c byte) bool { return c == '\n' || c == '\r' || isQuote(c) }
