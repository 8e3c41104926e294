package secrets

import (
	"math"
	"strings"
)

// Keywords of the generic rules. "pass" only counts as a whole name
// segment (DB_PASS, pass:), not inside "passport" or "compass".
var (
	passwordWords = []string{"password", "passwd", "passphrase", "pwd", "pass"}
	secretWords   = []string{"secret", "token", "bearer", "credential", "api_key", "apikey", "api-key", "access_key", "accesskey", "auth_key", "authkey", "private_key", "login"}
)

// assignment is a key = value pair found after a keyword.
type assignment struct {
	key    string // the whole name the keyword sits in
	vs, ve int    // value span in the text
	quoted bool
	op     string
}

func isIdent(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isQuote(c byte) bool { return c == '"' || c == '\'' || c == '`' }

// parseAssignment reads `<name containing the keyword> <op> <value>` in the
// shapes of config files and code: KEY=value, key: "value", "key": "value",
// $key = 'value', key => 'value', key := "value", key == "value" and
// key.equals("value") (hard-coded comparisons), `key "value"` (Groovy,
// HCL), `--key value` (a command-line flag), `key is value` (prose), and
// in XML `<key>value</key>` and `name="key" value="value"`.
// It is hand written because it runs at every keyword hit: most hits are
// prose ("the password policy") and fail on the first bytes after the
// name.
func parseAssignment(s string, ks, ke int) (assignment, bool) {
	var a assignment
	// Extend the name both ways so the value can be compared with it.
	start := ks
	for start > 0 && ks-start < 64 && isIdent(s[start-1]) {
		start--
	}
	i := ke
	for i < len(s) && i-ke < 40 && isIdent(s[i]) {
		i++
	}
	a.key = s[start:i]
	if start > 0 && s[start-1] == '<' && i < len(s) && s[i] == '>' {
		// <password>...</password>: an XML element holds the value
		// (Maven's settings.xml, SOAP headers, config files).
		return elementValue(s, a, i+1)
	}
	if i < len(s) && s[i] == '(' {
		// password.equals("..."), secret.Equals("..."): Java's and C#'s
		// string comparison, read as key == "...".
		key, ok := cutEqualsCall(a.key)
		if !ok || key == "" {
			return a, false
		}
		a.key, a.op = key, "=="
		return quotedValue(s, a, skipSpaces(s, i+1))
	}
	// Closing quote or bracket of the key: "password": / ['password'] =.
	if i < len(s) && s[i] == '\\' && i+1 < len(s) && isQuote(s[i+1]) {
		i += 2
	} else if i < len(s) && (isQuote(s[i]) || s[i] == ']') {
		i++
		if i < len(s) && s[i] == ']' {
			i++
		}
	}
	if q := attrPairValue(s, start, i); q > 0 {
		a.op = "="
		return quotedValue(s, a, q)
	}
	j := skipSpaces(s, i)
	// Operator.
	opStart := j
	for j < len(s) && j-opStart < 3 && strings.IndexByte(":=>!", s[j]) >= 0 {
		j++
	}
	a.op = s[opStart:j]
	// Prose: "my api key is <value>".
	if a.op == "" && j > i && strings.HasPrefix(s[j:], "is ") {
		a.op, j = "is", j+2
	}
	switch a.op {
	case "=", ":", ":=", "=>", "==", "===", "!=", "!==", "is":
	case "":
		// `key "value"` and `--key value` need a space; anything else is
		// prose.
		if j == i {
			return a, false
		}
	default:
		return a, false
	}
	j = skipSpaces(s, j)
	// A quoted value may start on the next line (`access_token:` then
	// `'ya29...'` indented below it, as formatters wrap long literals).
	if a.op != "" && a.op != "is" {
		k := j
		if k < len(s) && s[k] == '\r' {
			k++
		}
		if k < len(s) && s[k] == '\n' {
			if k = skipSpaces(s, k+1); k < len(s) && isQuote(s[k]) {
				j = k
			}
		}
	}
	if j < len(s) && s[j] == '\\' && j+1 < len(s) && isQuote(s[j+1]) {
		j++
	}
	if j >= len(s) {
		return a, false
	}
	if isQuote(s[j]) {
		return quotedValue(s, a, j)
	}
	// `--password value`: a command-line flag takes the next word.
	if a.op == "" && !(a.key[0] == '-' && j > i) {
		return a, false
	}
	end := j
	for end < len(s) && end-j < 256 && !isValueStop(s[end]) {
		end++
	}
	a.vs, a.ve = j, end
	return a, true
}

// elementValue reads the text of an XML element that starts at s[j] into
// a: one word (text with spaces is a label or a hint, as in JSX's
// <PasswordHint>Use eight characters</PasswordHint>), ending at the
// element's own closing tag, so "type your <password> and ..." in prose
// is no element.
func elementValue(s string, a assignment, j int) (assignment, bool) {
	end := j
	for end < len(s) && end-j < maxQuoted && s[end] != '<' && s[end] > ' ' {
		end++
	}
	if end == j || !strings.HasPrefix(s[end:], "</") ||
		!strings.HasPrefix(s[end+2:], a.key) || end+2+len(a.key) >= len(s) || s[end+2+len(a.key)] != '>' {
		return a, false
	}
	a.vs, a.ve, a.quoted, a.op = j, end, true, "="
	return a, true
}

// attrPairValue returns where the quoted value of a name/value pair of
// XML attributes starts, the name being the quoted s[start:i] (with its
// closing quote): name="password" value="..." (Spring's <property>),
// key="ApiKey" value="..." (.NET's appSettings). It returns 0 for any
// other shape; the two attributes must be adjacent.
func attrPairValue(s string, start, i int) int {
	if !attrPairName(s, start, i) {
		return 0
	}
	j := skipSpaces(s, i)
	if j == i || !hasWordFold(s, j, "value=") || j+6 >= len(s) || !isQuote(s[j+6]) {
		return 0
	}
	return j + 6
}

// attrPairName reports whether s[start:i] is a quoted attribute value,
// closing quote included, of an attribute called name or key.
func attrPairName(s string, start, i int) bool {
	if start < 6 || !isQuote(s[start-1]) || s[i-1] != s[start-1] || s[start-2] != '=' {
		return false
	}
	w := start - 2
	for w > 0 && start-2-w < 4 && isLetter(s[w-1]) {
		w--
	}
	name := s[w : start-2]
	return (strings.EqualFold(name, "name") || strings.EqualFold(name, "key")) && w > 0 && strings.IndexByte(" \t\r\n", s[w-1]) >= 0
}

// quotedValue reads the quoted value that starts at s[j] into a.
func quotedValue(s string, a assignment, j int) (assignment, bool) {
	if j >= len(s) || !isQuote(s[j]) {
		return a, false
	}
	q := s[j]
	a.quoted = true
	end := j + 1
	for end < len(s) && end-j < maxQuoted && s[end] != q && s[end] != '\n' {
		end++
	}
	if end >= len(s) || s[end] != q {
		return a, false
	}
	a.vs, a.ve = j+1, end
	// \"value\": drop the escaping backslash before the closing quote.
	if a.ve > a.vs && s[a.ve-1] == '\\' {
		a.ve--
	}
	return a, true
}

// cutEqualsCall returns the name before a string-equality method
// (password.equals, Secret.Equals, token.equalsIgnoreCase).
func cutEqualsCall(key string) (string, bool) {
	for _, m := range []string{".equals", ".Equals", ".equalsIgnoreCase"} {
		if k, ok := strings.CutSuffix(key, m); ok {
			return k, true
		}
	}
	return "", false
}

// maxQuoted bounds a quoted value: long enough for a private key or a
// session token encoded in base64 on one line.
const maxQuoted = 4096

func skipSpaces(s string, i int) int {
	for n := 0; i < len(s) && n < 40 && (s[i] == ' ' || s[i] == '\t'); n++ {
		i++
	}
	return i
}

// isValueStop ends an unquoted value.
func isValueStop(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', '`', ',', ';', '&', ')', ']', '}', '<', '>':
		return true
	}
	return false
}

// notLiteral reports values that name or compute a secret rather than hold
// one: variables and templates ($X, ${X}, {{x}}, <x>, %s, #{x}), calls,
// environment lookups, placeholders (xxxx, ****, null), labels ending in a
// colon, CSS selectors, and strings glued to code ('+x+', '.$x').
func notLiteral(a assignment, v string) bool {
	if v == "" {
		return true
	}
	switch v[0] {
	case '$', '{', '<', '%', '(', '[', '+', '&':
		return true
	case '.':
		if a.quoted {
			return true
		}
	case '*':
		// *config.Password: a pointer dereference.
		if !a.quoted && len(v) > 1 && isLetter(v[1]) {
			return true
		}
	case '#':
		if len(v) > 1 && (v[1] == '{' || isSelector(v[1:])) {
			return true
		}
	}
	if v[len(v)-1] == ':' || allSame(v) {
		return true
	}
	if strings.Contains(v, "${") || strings.Contains(v, "{{") || strings.Contains(v, "<%") || strings.Contains(v, "%s") {
		return true
	}
	if strings.Contains(v, "$(") || strings.Contains(v, "$_") {
		return true
	}
	if !a.quoted {
		// Unquoted: code and shell, not literals.
		if strings.ContainsAny(v, "$([") || isDottedIdent(v) {
			return true
		}
	} else if strings.Contains(v, "'$") || strings.Contains(v, " + ") || strings.Contains(v, "\" +") {
		return true
	}
	if strings.EqualFold(v, a.key) || isReference(v) || isReferenceName(a.key) || isRegexp(v) {
		return true
	}
	lv := lowerASCII(v)
	for _, w := range placeholders {
		if lv == w {
			return true
		}
	}
	for _, w := range placeholderParts {
		if strings.Contains(lv, w) {
			return true
		}
	}
	return strings.Contains(lv, "env[") || strings.Contains(lv, "env.") || strings.Contains(lv, "environ") || strings.Contains(lv, "getenv")
}

// isReference reports values that say where a secret is kept rather than
// what it is: a URL, a file path, an ARN, a JSON pointer ("#/components/
// schemas/Secret").
func isReference(v string) bool {
	if strings.Contains(v, "://") || strings.HasPrefix(v, "arn:") || strings.HasPrefix(v, "#/") {
		return true
	}
	for _, p := range []string{"/", "./", "../", "~/"} {
		if rest, ok := strings.CutPrefix(v, p); ok && strings.Contains(rest, "/") {
			return true
		}
	}
	return false
}

// referenceSuffixes end names whose value says where or which secret,
// not what it is: PASSWORD_FILE, jwt_secret_name, api_key_id, token_url;
// or holds a whole connection string (password-conn-string), whose
// password its own rules judge.
var referenceSuffixes = []string{"file", "path", "name", "env", "ref", "arn", "url", "uri", "id", "type", "length", "len", "policy", "field", "label", "string", "conn", "pattern", "regex", "regexp"}

// isReferenceName reports a name ending in a referenceSuffixes word after
// a separator or a camelCase boundary.
func isReferenceName(key string) bool {
	for _, suf := range referenceSuffixes {
		n := len(key) - len(suf)
		if n < 2 || !strings.EqualFold(key[n:], suf) {
			continue
		}
		if c := key[n-1]; c == '_' || c == '-' || c == '.' || key[n] >= 'A' && key[n] <= 'Z' && c >= 'a' && c <= 'z' {
			return true
		}
	}
	return false
}

// isRegexp reports a regular expression, which describes the values a
// secret may take (a password policy, a token format) rather than
// holding one: anchored at both ends, or built of lookaheads, character
// classes with ranges, or counted repetitions.
func isRegexp(v string) bool {
	if len(v) > 2 && v[0] == '^' && v[len(v)-1] == '$' {
		return true
	}
	for _, p := range []string{"(?=", "(?:", "(?!", "[a-z", "[A-Z", "[0-9", "\\d", "\\w", "]{", "]+", "]*"} {
		if strings.Contains(v, p) {
			return true
		}
	}
	return false
}

// placeholders are values that stand for "no secret here"; compared after
// ASCII lower-casing, so they must be lower case.
var placeholders = []string{
	"null", "none", "nil", "true", "false", "undefined", "empty", "string", "str", "bool", "boolean",
	"int", "number", "any", "object", "text", "varchar", "required", "optional", "char", "bytes",
	"password", "passwd", "pass", "pwd", "secret", "token", "changeme", "redacted", "hidden", "masked", "value",
	"your_password", "yourpassword", "your-password", "your_token", "your_api_key", "your-api-key",
}

// placeholderParts mark a value written to be replaced: "your-api-key-
// here", "example-secret", "xxxx1234", "<insert token>". Compared after
// ASCII lower-casing.
var placeholderParts = []string{
	"your_", "your-", "example", "placeholder", "changeme",
	"change_me", "change-me", "dummy", "xxxx", "insert", "redacted", "_here", "-here", "fixme", "todo",
}

func allSame(v string) bool {
	for i := 1; i < len(v); i++ {
		if v[i] != v[0] {
			return false
		}
	}
	return true
}

// isSelector reports a CSS id or class body: lower-case letters and dashes.
func isSelector(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c >= 'a' && c <= 'z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// isDottedIdent reports a member access (config.password, os.environ)
// rather than a literal.
func isDottedIdent(v string) bool {
	dots := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '.':
			if i == 0 || i == len(v)-1 || v[i-1] == '.' {
				return false
			}
			dots++
		case c == '_' || isLetter(c) || (c >= '0' && c <= '9' && i > 0 && v[i-1] != '.'):
		default:
			return false
		}
	}
	return dots > 0 && isLetter(v[0])
}

func lowerASCII(v string) string {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(v)
		}
	}
	return v
}

// keywordSegment reports whether the short keyword "pass" or "pwd" stands
// alone in the name (DB_PASS, pwd=) rather than inside a longer word.
func keywordSegment(s string, ks, ke int) bool {
	if ks > 0 && isLetter(s[ks-1]) && !(s[ks-1] >= 'a' && s[ks-1] <= 'z' && s[ks] >= 'A' && s[ks] <= 'Z') {
		return false
	}
	if ke < len(s) && isLetter(s[ke]) {
		// camelCase continuation (passWord) is a different word; "passwd"
		// and "password" have their own keywords.
		return false
	}
	return true
}

// matchPassword finds a hard-coded password: a literal of four or more
// bytes assigned to a name containing password/passwd/pwd/pass. Human
// passwords have low entropy ("team10"), so none is required; what keeps
// this precise is notLiteral.
func matchPassword(s string, ks, ke int, _ float64) (int, int, bool) {
	if ke-ks <= 4 && !keywordSegment(s, ks, ke) {
		return 0, 0, false
	}
	a, ok := parseAssignment(s, ks, ke)
	if !ok {
		return 0, 0, false
	}
	v := s[a.vs:a.ve]
	if a.quoted && a.op != "" && randomPrintable(v) {
		return a.vs, a.ve, true
	}
	if len(v) < 4 || notLiteral(a, v) {
		return 0, 0, false
	}
	if a.op == "" && (s[a.vs-1] == '`' || strings.EqualFold(a.key, "pass")) {
		// "pass `next_page` to ...", "supports `Expect`": without an
		// operator, a word followed by a code span is prose.
		return 0, 0, false
	}
	if !a.quoted && isCamelIdent(v) && (a.op == ":=" || len(v) > ke-ks && strings.EqualFold(v[:ke-ks], s[ks:ke])) {
		// pass := passBlocking, pass = passDeferred: an unquoted camelCase
		// name declared in Go or named after the key is a variable.
		return 0, 0, false
	}
	if !a.quoted && (a.op == ":" || a.op == "==" || a.op == "is") && (len(v) < 8 || !hasDigitOrSymbol(v)) {
		// Unquoted after a colon is YAML or prose ("Password: must be
		// long"): ask for a digit or symbol, or length.
		return 0, 0, false
	}
	return a.vs, a.ve, true
}

// matchSecret finds a machine-generated secret assigned to a name
// containing secret/token/api_key...: at least 10 bytes of token
// characters, a digit, and Shannon entropy at or above the threshold
// (relaxed for short values, whose entropy is capped by their length).
func matchSecret(s string, ks, ke int, th float64) (int, int, bool) {
	a, ok := parseAssignment(s, ks, ke)
	if !ok {
		return 0, 0, false
	}
	v := s[a.vs:a.ve]
	if len(v) < 10 || !isTokenChars(v) || !hasDigit(v) || isWordy(v) || codeName(v) {
		return 0, 0, false
	}
	if entropy(v) < entropyNeeded(v, th) || isSequential(v) || notLiteral(a, v) {
		return 0, 0, false
	}
	return a.vs, a.ve, true
}

// matchChosenSecret finds a secret someone chose rather than generated: a
// quoted literal assigned to, or compared with, a name ending in
// "secret" (JWT:\n  Secret: 'development#product', client_secret =
// "Tr0ub4dor", if creds.Secret != "open-sesame"). Like a password, such a
// value may have little entropy, so none is asked for. An assignment
// also names configuration ("db-credentials", "secret/data/app", the
// name of a Kubernetes Secret), so its value must not read as a name
// from code (see codeName) and must have a digit or a symbol; a
// comparison with a literal is a hard-coded check, whatever the literal.
// A long random printable value is a secret whatever it holds (see
// randomPrintable).
func matchChosenSecret(s string, ks, ke int, _ float64) (int, int, bool) {
	if ke < len(s) && isLetter(s[ke]) {
		// secrets, secretary, secretKey: a plural, another word, or a
		// name whose last word is not "secret".
		return 0, 0, false
	}
	a, ok := parseAssignment(s, ks, ke)
	if !ok || !a.quoted || a.op == "" || a.op == "is" || len(a.key) < 6 || !strings.EqualFold(a.key[len(a.key)-6:], "secret") {
		// Without an operator, `Secret "..."` is a type before a Go
		// struct tag or a word before a quotation.
		return 0, 0, false
	}
	v := s[a.vs:a.ve]
	if randomPrintable(v) {
		return a.vs, a.ve, true
	}
	if len(v) < 6 || strings.ContainsAny(v, " \t") || notLiteral(a, v) {
		return 0, 0, false
	}
	switch a.op {
	case "==", "===", "!=", "!==":
		return a.vs, a.ve, true
	}
	// A name from code, or a path ("projects/*/secrets/*/versions/*").
	if codeName(v) || strings.Count(v, "/") > 1 || !hasDigitOrSymbol(v) {
		return 0, 0, false
	}
	return a.vs, a.ve, true
}

// randomPrintable reports a long run of printable ASCII at the entropy
// of random bytes: what password generators print, symbols included
// ("7`D'}/vYR)T;W\\5]EBrf;_&k>qX??]G&3CF=;@vyrVBp[$_hK4^"). notLiteral
// reads some of those symbols as code ("$_", "'+", "["); a value this
// random is no code, but templates ("${", "{{") still mark a reference,
// and a space marks prose or code.
func randomPrintable(v string) bool {
	if len(v) < 32 || strings.Contains(v, "${") || strings.Contains(v, "{{") || isRegexp(v) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] <= ' ' || v[i] >= 0x7f {
			return false
		}
	}
	return entropy(v) >= 4.5
}

// isSequential reports the placeholders people type for a key of the
// right length: runs that count up ("123456789abcdef", "abcdefgh") or
// interleave two such runs ("a1b2c3d4e5f6"). At least 60% of the bytes
// must continue a run at distance one or two.
func isSequential(v string) bool {
	if len(v) < 8 {
		return false
	}
	n := 0
	for i := 2; i < len(v); i++ {
		if v[i] == v[i-1]+1 || v[i] == v[i-2]+1 {
			n++
		}
	}
	return n*10 >= (len(v)-2)*6
}

// keyNameSkip are name parts that make "key" a database, cache or UI key,
// or a public key, rather than a secret. Compared lower-cased.
var keyNameSkip = []string{"public", "primary", "foreign", "sort", "partition", "cache", "idempot", "key_id", "keyid", "hotkey", "keycode", "keyname", "key_name"}

// matchKey finds a machine-generated secret assigned to a name whose last
// word is "key" (license_key, DEVELOPER_KEY, facebook.key, PrivateKey):
// the rules of matchSecret, with at least 16 bytes, since "key" names far
// more non-secrets than "secret" does.
func matchKey(s string, ks, ke int, th float64) (int, int, bool) {
	if !keywordSegment(s, ks, ke) {
		return 0, 0, false
	}
	a, ok := parseAssignment(s, ks, ke)
	if !ok || a.ve-a.vs < 16 {
		return 0, 0, false
	}
	// A key is a base64, base64url or hex blob, or dotted base64url (a
	// JWT); "126031192_live-part", a number then a separator, is an
	// identifier scheme of some provider, left to its rule.
	lead := true
	for i := a.vs; i < a.ve; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
		case isLetter(c) || c == '+' || c == '/' || c == '=':
			lead = false
		case c == '_' || c == '-' || c == '.':
			if lead {
				return 0, 0, false
			}
		default:
			return 0, 0, false
		}
	}
	// A UUID under a "key" names a record (an idempotency key, a license
	// or a partition key) far more often than it authenticates.
	if isPublicKeyName(a.key) || isUUIDShaped(s[a.vs:a.ve]) {
		return 0, 0, false
	}
	return matchSecret(s, ks, ke, th)
}

// isPublicKeyName reports a key name of keyNameSkip: a public, database,
// cache or UI key.
func isPublicKeyName(key string) bool {
	lk := lowerASCII(key)
	for _, w := range keyNameSkip {
		if strings.Contains(lk, w) {
			return true
		}
	}
	return false
}

// isWordy reports identifiers made of lower-case words (bearer_token_v2,
// max-retries-10), which can reach the entropy threshold without being
// random: every segment is letters with at most three trailing digits.
func isWordy(v string) bool {
	segs := 0
	for seg := range strings.FieldsFuncSeq(v, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		segs++
		i := 0
		for i < len(seg) && seg[i] >= 'a' && seg[i] <= 'z' {
			i++
		}
		if i == 0 && len(seg) > 3 || len(seg)-i > 3 || !isDigits(seg[i:]) {
			return false
		}
	}
	return segs >= 2
}

func isDigits(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

func isTokenChars(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c <= ' ' || c >= 0x7f || c == '"' || c == '\'' || c == '`' || c == '\\' {
			return false
		}
	}
	return true
}

func hasDigit(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] >= '0' && v[i] <= '9' {
			return true
		}
	}
	return false
}

func hasDigitOrSymbol(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isLetter(c) {
			return true
		}
	}
	return false
}

// entropy is the Shannon entropy of v in bits per byte.
func entropy(v string) float64 {
	if v == "" {
		return 0
	}
	// H = log2(n) - sum(c*log2(c))/n over the byte counts c; the second
	// pass adds each distinct byte once and clears it, so the cost is the
	// value's length, not the alphabet's.
	var counts [256]uint16
	for i := 0; i < len(v); i++ {
		counts[v[i]]++
	}
	var sum float64
	for i := 0; i < len(v); i++ {
		if c := counts[v[i]]; c > 0 {
			if int(c) < len(cLog2C) {
				sum += cLog2C[c]
			} else {
				sum += float64(c) * math.Log2(float64(c))
			}
			counts[v[i]] = 0
		}
	}
	n := float64(len(v))
	return math.Log2(n) - sum/n
}

// cLog2C[c] is c*log2(c), for the counts of values up to 256 bytes.
var cLog2C = func() (t [257]float64) {
	for c := 1; c < len(t); c++ {
		t[c] = float64(c) * math.Log2(float64(c))
	}
	return t
}()

// connectionSchemes are URI schemes whose userinfo is a database or broker
// credential (reported as CONNECTION_STRING); others (http, ftp, git+ssh)
// are reported as BASIC_AUTH.
var connectionSchemes = []string{
	"postgres", "postgresql", "mysql", "mariadb", "mongodb", "mongodb+srv", "redis", "rediss", "amqp", "amqps",
	"mssql", "sqlserver", "oracle", "cockroachdb", "clickhouse", "cassandra", "couchbase", "couchdb", "neo4j",
	"neo4j+s", "bolt", "nats", "kafka", "ldap", "ldaps", "smtp", "smtps", "imap", "imaps", "snowflake", "memcached",
	"elasticsearch", "influxdb", "jdbc:postgresql", "jdbc:mysql", "jdbc:sqlserver", "jdbc:oracle", "sqlalchemy",
}

// uriCredentials finds user:password@ in the URI whose "://" is at ks.
// The password runs to the last '@' of the authority, since people paste
// unescaped '@' in passwords. It returns the password span and whether
// the scheme is a connection string one.
func uriCredentials(s string, ks int) (int, int, bool, bool) {
	ss := ks
	for ss > 0 && ks-ss < 32 && (isWordByte(s[ss-1]) || s[ss-1] == '+' || s[ss-1] == '.' || s[ss-1] == ':' || s[ss-1] == '-') {
		ss--
	}
	if ss == ks {
		return 0, 0, false, false
	}
	scheme := lowerASCII(s[ss:ks])
	// Authority: up to the first '/', '?', '#' or space.
	as := ks + 3
	ae := as
	colon, at := -1, -1
	for ae < len(s) && ae-as < 512 {
		c := s[ae]
		if c == '/' || c == '?' || c == '#' || c <= ' ' || c == '"' || c == '\'' || c == '`' || c == '<' || c == '>' || c == '\\' {
			break
		}
		if c == ':' && colon < 0 && at < 0 {
			colon = ae
		}
		if c == '@' {
			at = ae
		}
		ae++
	}
	if colon < 0 || at < colon || at+1 >= ae {
		return 0, 0, false, false
	}
	ps, pe := colon+1, at
	p := s[ps:pe]
	if p == "" || p[0] == '$' || p[0] == '{' || p[0] == '<' || p[0] == '*' || p[0] == '[' || strings.Contains(p, "${") {
		return 0, 0, false, false
	}
	switch lowerASCII(p) {
	case "password", "pass", "passwd", "pwd", "<password>", "xxx", "xxxx", "xxxxxx", "****", "******":
		return 0, 0, false, false
	}
	return ps, pe, isConnectionScheme(scheme), true
}

// isConnectionScheme reports a lower-case scheme of connectionSchemes,
// alone or after a prefix ("jdbc:mysql").
func isConnectionScheme(scheme string) bool {
	for _, c := range connectionSchemes {
		if scheme == c || strings.HasSuffix(scheme, ":"+c) {
			return true
		}
	}
	return false
}

// matchURI matches credentials in URIs of connection-string schemes (conn)
// or of the others.
func matchURI(conn bool) func(s string, ks, ke int, th float64) (int, int, bool) {
	return func(s string, ks, _ int, _ float64) (int, int, bool) {
		ps, pe, c, ok := uriCredentials(s, ks)
		return ps, pe, ok && c == conn
	}
}

// matchJWTSecret finds the key a service signs its JWTs with, assigned
// under a name or section about JWTs: JWT_SECRET=..., jwt_signing_key:
// ..., or "secret:" nested under a "jwt:" section in YAML or a "jwt: {"
// object. People choose
// these by hand ("development#product"), so no entropy is asked for;
// what the value must not be is a reference or a placeholder.
func matchJWTSecret(s string, ks, ke int, _ float64) (int, int, bool) {
	end := min(len(s), ke+48)
	for i := ke; i < end; i++ {
		c := s[i]
		if !isIdent(c) && c != ':' && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '"' && c != '\'' && c != '{' {
			return 0, 0, false
		}
		w := 0
		switch {
		case hasWordFold(s, i, "secret"):
			w = 6
		case hasWordFold(s, i, "key"):
			w = 3
		default:
			continue
		}
		a, ok := parseAssignment(s, i, i+w)
		if !ok {
			return 0, 0, false
		}
		v := s[a.vs:a.ve]
		if len(v) < 6 || !a.quoted && len(v) < 8 || isPublicKeyName(a.key) {
			return 0, 0, false
		}
		if !(a.quoted && randomPrintable(v)) && notLiteral(a, v) {
			return 0, 0, false
		}
		return a.vs, a.ve, true
	}
	return 0, 0, false
}

// hasWordFold reports whether s has word w, in any ASCII case, at i.
func hasWordFold(s string, i int, w string) bool {
	return i+len(w) <= len(s) && strings.EqualFold(s[i:i+len(w)], w)
}

// isCamelIdent reports a camelCase name of letters only ("passDeferred").
func isCamelIdent(v string) bool {
	hump := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !isLetter(c) {
			return false
		}
		hump = hump || i > 0 && c >= 'A' && c <= 'Z' && v[i-1] >= 'a' && v[i-1] <= 'z'
	}
	return hump && v[0] >= 'a' && v[0] <= 'z'
}
