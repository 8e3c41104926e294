package secrets

import (
	"encoding/base64"
	"slices"
	"testing"
)

// TestGenericEvidence runs the scanner with only its generic rules, as a
// provider without a rule here meets it: a credential is caught by what
// labels it or by its own shape, and what only looks random (hashes,
// identifiers, UUIDs, images, public keys) is left alone. The tokens are
// made up for this test and belong to no provider the rules name.
func TestGenericEvidence(t *testing.T) {
	// b64JSONKey is base64 of {"k":"Rq7Lm2Xv9Tt4Wb7Yc3Nd6Pf1Kh5Js0Ga","n":"ci"}.
	b64JSONKey := base64.StdEncoding.EncodeToString([]byte(`{"k":"Rq7Lm2Xv9Tt4Wb7Yc3Nd6Pf1Kh5Js0Ga","n":"ci"}`))
	// jweHeader is a JOSE header whose random values are a key id and a
	// PBES2 salt, both public.
	jweHeader := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"PBES2-HS256+A128KW","enc":"A256GCM","kid":"Zq8Lm2Xv9Rt4Wb7Yc3Nd6Pf1","p2s":"f5oteQKho9yx2d-HiLf-9A"}`))
	const tok = "Zq8Lm2Xv9Rt4Wb7Yc3Nd6Pf1Kh5Js0Ga" // 32 mixed-case, digits
	// jwt is signed JSON of an issuer no rule names; notJWT has the same
	// shape, but its header names no algorithm, so it signs nothing.
	b64 := base64.RawURLEncoding.EncodeToString
	jwt := b64([]byte(`{"alg":"ES256","kid":"k1"}`)) + "." + b64([]byte(`{"sub":"svc-7","aud":"acme","iat":1767225600}`)) + "." + tok
	notJWT := b64([]byte(`{"typ":"cursor","v":2}`)) + "." + b64([]byte(`{"page":3,"sort":"name"}`)) + "." + tok
	tests := []struct{ name, text, want string }{ // want: the secret, "" for clean
		// A credential-named key or word labels the value, in any syntax.
		{"env assignment", "ACME_API_KEY=" + tok, tok},
		{"json camelCase", `{"clientSecret": "` + tok + `"}`, tok},
		{"yaml", "acme:\n  token: " + tok + "\n", tok},
		{"cli flag", "acmectl login --password Wint3r!2024 --region eu", "Wint3r!2024"},
		{"cli flag with equals", "acmectl sync --api-key=" + tok + " --dry-run", tok},
		{"cli flag ending in secret", "acmectl auth --client-secret " + tok, tok},
		{"cli flag ending in token", "acmeadm join 10.0.0.7:6443 --tls-bootstrap-token k7x4q2.p9m3zt8w5r1vb6yc", "k7x4q2.p9m3zt8w5r1vb6yc"},
		{"bot token after its word", "bot token: 7123456789:AAH3kLm9Rt4Wv7Yb3Nc6Pd1Kh5Js0GaQ2x", "7123456789:AAH3kLm9Rt4Wv7Yb3Nc6Pd1Kh5Js0GaQ2x"},
		{"xml element", "<server>\n  <id>acme</id>\n  <username>deploy</username>\n  <password>Wint3r!2024</password>\n</server>", "Wint3r!2024"},
		{"xml name and value attributes", `<property name="password" value="Wint3r!2024"/>`, "Wint3r!2024"},
		{"xml key and value attributes", `<add key="AcmeApiKey" value="` + tok + `" />`, tok},
		{"bare jwt", "curl -b session=" + jwt + " https://acme.test", jwt},
		{"header", `curl -H "X-Api-Key: ` + tok + `" https://api.acme.test/v1`, tok},
		{"authorization bearer", "Authorization: Bearer " + tok, tok},
		{"authorization token scheme", `-H 'Authorization: token ` + tok + `'`, tok},
		{"url user info", "https://deploy:" + tok + "@git.acme.test/repo.git", tok},
		{"query string password", "jdbc:acme://db.acme.test/app?user=svc&password=Wint3r!2024&ssl=true", "Wint3r!2024"},
		{"dsn password", "Server=db1;Database=app;User Id=svc;Password=Wint3r!2024;", "Wint3r!2024"},
		{"netrc", "machine api.acme.test\n  login svc\n  password " + tok + "\n", tok},
		{"pgpass", "~/.pgpass:\ndb.acme.test:5432:app:svc:Wint3r!2024\n", "Wint3r!2024"},
		{"npmrc", "//npm.acme.test/:_authToken=" + tok + "\n", tok},
		{"docker config", `{"auths": {"registry.acme.test": {"auth": "c3ZjOldpbnQzciEyMDI0X3Byb2Q="}}}`, "c3ZjOldpbnQzciEyMDI0X3Byb2Q="},
		{"value two lines below its label", "variable \"acme_token\" {\n  default = \"" + tok + "\"\n}", tok},
		{"parameter after method", `{"method": "auth.login_with_api_key", "params": ["7-` + tok + `"]}`, "7-" + tok},
		{"word before bare token", "vault operator unseal " + tok, tok},
		{"prose", "The installer generated a password; use it to log in:\n\n" + tok + "\n", tok},
		{"escaped key body", `"-----BEGIN ACME PRIVATE KEY-----\r\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB\r\n"`, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB"},
		{"hex secret", "acme_secret: 9f3e5a0c7b1d46e2\n", "9f3e5a0c7b1d46e2"},
		{"dotted key value", `ACME_SERVICE_KEY="eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoic2VydmljZSJ9.Zq8Lm2Xv9Rt4Wb7Yc3Nd6Pf1Kh5"`, "eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoic2VydmljZSJ9.Zq8Lm2Xv9Rt4Wb7Yc3Nd6Pf1Kh5"},
		{"cli user and password", `system("acmeexec \\\\10.0.0.7 -u Administrator -p dev_adm1n shutdown")`, "dev_adm1n"},
		{"mysql glued password", "mysql -h db -u root -pS3cr3t!x app", "S3cr3t!x"},
		{"session cookie", "curl 'https://app.acme.test/me' -H 'cookie: _ga=GA1.1.1234567890.1700000000; sid=" + tok + "; theme=dark'", tok},
		{"set-cookie", "Set-Cookie: JSESSIONID=8F3A2C1B9D7E4F6A0B5C3D2E1F0A9B8C; Path=/; HttpOnly", "8F3A2C1B9D7E4F6A0B5C3D2E1F0A9B8C"},
		{"curl cookie flag", "curl --cookie 'session=" + tok + "' https://app.acme.test", tok},
		{"login call", `server.login("ops@acme.test", "Wint3r!2024")`, "Wint3r!2024"},
		{"auth tuple", `r = requests.get(url, auth=("svc", "Wint3r!2024"))`, "Wint3r!2024"},
		{"basic auth call", `req.SetBasicAuth("svc", "Wint3r!2024")`, "Wint3r!2024"},
		{"auth method", `await request(app).get("/admin").auth("svc", "Wint3r!2024")`, "Wint3r!2024"},
		{"securestring", `$pw = ConvertTo-SecureString "Wint3r!2024" -AsPlainText -Force`, "Wint3r!2024"},
		{"securestring flags first", `ConvertTo-SecureString -AsPlainText -Force -String 'Wint3r!2024'`, "Wint3r!2024"},
		{"cli upper-case user and password", `sqlcmd -S db1 -U sa -P Wint3r!2024 -Q "select 1"`, "Wint3r!2024"},
		{"credential constructor", `var c = new UsernamePasswordCredentials("svc", "Wint3r!2024");`, "Wint3r!2024"},
		// A value compared with or assigned to a name ending in "secret" is
		// one, however chosen; a long random printable value is one under
		// any credential name, whatever symbols it holds.
		{"secret compared", "if (req.clientSecret === 'let-me-in') {", "let-me-in"},
		{"secret equals call", `if (hook.Secret.Equals("shibboleth")) {`, "shibboleth"},
		{"password equals call", `if (password.equals("letmein42")) {`, "letmein42"},
		{"nested yaml secret", "session:\n  Secret: 'blue#harbor'\n  ttl: 30m\n", "blue#harbor"},
		{"chosen client secret", `client_secret = "Tr0ub4dor"`, "Tr0ub4dor"},
		{"random printable secret", `"signing_secret": "v;3Qe^L{8w)Zk$_T!r9#Bx2[Gm@n5%Hy&Ju*P4"`, "v;3Qe^L{8w)Zk$_T!r9#Bx2[Gm@n5%Hy&Ju*P4"},
		{"random printable password", `DB_PASSWORD="Zk$_T!r9#Bx2[Gm@n5%Hy&Ju*P4v;3Qe^L{8w)q"`, "Zk$_T!r9#Bx2[Gm@n5%Hy&Ju*P4v;3Qe^L{8w)q"},
		// A user and a password of letters only, after a tool other than a
		// MySQL client.
		{"cli password of letters", `system("acmeexec \\\\10.0.0.7 -u Administrator -p braquemart shutdown")`, "braquemart"},
		{"docker login password", "docker login -u deploy -p letmein registry.acme.test", "letmein"},
		// A connection URI, a user and a password passed to one call.
		{"jdbc connect", `Connection c = DriverManager.getConnection("jdbc:mysql://db.acme.test/app", "svc", "Wint3r!2024");`, "Wint3r!2024"},
		{"ldap entry over lines", "var e = new DirectoryEntry(\"LDAP://dc.acme.test\",\n    \"svc@acme.test\",\n    \"Acme2024\", AuthenticationTypes.Secure);", "Acme2024"},
		// Base64 of a JSON object holding a random value.
		{"base64 json key", `client = AcmeClient("` + b64JSONKey + `", host=h)`, b64JSONKey},

		// Shapes that say "credential" without a label.
		{"prefixed token", "try acme_live_" + tok + " on staging", "acme_live_" + tok},
		{"glued prefix and hex", "the key dapx0f3e5a0c7b1d46e29a8b7c6d5e4f3a2b1 was revoked", "dapx0f3e5a0c7b1d46e29a8b7c6d5e4f3a2b1"},
		{"argon2 hash", "admin:$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG", "$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG"},
		{"yescrypt hash", "root:$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7:19000:0:99999:7:::", "$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7"},

		// Not credentials, though random-looking or near a credential word.
		{"git sha", "commit 3f2a9c1b7e4d5f6a8b9c0d1e2f3a4b5c6d7e8f9a\nAuthor: dev", ""},
		{"short sha near token", "fix token refresh (a1b2c3d)", ""},
		{"uuid near key", "idempotency key: 3f2a9c1b-7e4d-4f6a-8b9c-0d1e2f3a4b5c", ""},
		{"uuid after token word", "token 3f2a9c1b-7e4d-4f6a-8b9c-0d1e2f3a4b5c was issued", ""},
		{"npm lock integrity", `"resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",
    "integrity": "sha512-XI5MPzVNApjAyhQzphX8BkmKsKUxD4LdyK24iZeQXmAT7l2UqbnZU6IT6hypg1mr+AzKjwVBa0fHV6krTiC+Hg=="`, ""},
		{"go.sum", "golang.org/x/crypto v0.31.0 h1:ihbySMvVjLAeSH1IbfcRTkD/iNscyz8rGzjF/E5hV6U=", ""},
		{"yarn lock", "  resolved \"https://registry.yarnpkg.com/js-tokens/-/js-tokens-4.0.0.tgz#19203fb59991df98e3a287050d4647cdeb05b499\"", ""},
		{"sha256 checksum", "sha256sum: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08  token-cli.tar.gz", ""},
		{"base64 image", `<img alt="api key screenshot" src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==">`, ""},
		{"ssh public key", "public key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHq8Lm2Xv9Rt4Wb7Yc3Nd6Pf1Kh5Js0Ga dev@laptop", ""},
		{"authorized key", "add this key to authorized_keys: ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7vbqajDhA dev@ci", ""},
		{"code identifiers", "const tokenizerConfig = loadTokenizerFromPretrained(modelName2024, cacheDirectory)", ""},
		{"camelCase identifier value", "apiKey: process.env.ACME_API_KEY_FOR_INTEGRATION_TESTS_V2", ""},
		{"slug", "secret name: ws-plugin--s2member-amazon-s3-comp-files-access-key", ""},
		{"key in prose", "The key insight from 2024Q3ResultsPresentationFinal is growth.", ""},
		{"primary key", "PRIMARY KEY (order_id, line_no) -- idx_orders_customer_2024_01_15_archive", ""},
		{"monkey", "monkey 8fQ2xLm9Rt4Wv7Yb3Nc6Pd1Kh5Js0Ga", ""},
		{"token count", "prompt tokens: 1532, completion tokens: 211, total tokens: 1743", ""},
		{"account scheme", `ACME_STREAM_KEY = "126031192_IgvUabrXbWSihj2ENnA59G1F8"`, ""},
		{"path after word", "secret stored at /var/lib/acme/credentials/svc-8fQ2xLm9Rt4Wv7Yb3Nc6", ""},
		{"url after word", "token endpoint https://auth.acme.test/oauth2/v1/token?client=8fQ2xLm9Rt4Wv7Yb3Nc6", ""},
		{"go.sum auth module", "cloud.google.com/go/auth v0.23.3 h1:UMK+oBtuNGMCR/6i6mmySUItqjOazpJrbmZyhGbGBWo=", ""},
		{"go variable named after the key", "pass := passBlocking\nif !st.Blocking {\n\tpass = passDeferred\n}", ""},
		{"dotted call in code", "key := parts[0]\nbinary.LittleEndian.PutUint64(n[:], uint64(len(key)))", ""},
		{"flag documented", "pass the password with `--password value` or a file", ""},
		{"prose elision", `docs say "the password is '...'" and move on`, ""},
		{"qualified names after key", "priv := ed25519.NewKeyFromSeed(seed)\nif len(key) != ed25519.PrivateKeySize {", ""},
		{"key usage", "ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},", ""},
		{"constant names", "case pkcs11.CKA_SENSITIVE: // key attribute\n\tkeyType = tspiconst.TSS_KEY_SIZE_2048", ""},
		{"versioned enum", "const token = u.OfToolSearchToolBm25_20251119", ""},
		{"dated model names", "model: shared.ChatModelGPT5_2025_08_07 // api key from env", ""},
		{"arguments after key", "--set go_template_args=my_key2=my_value2", ""},
		{"integrity after key", `"key": "lodash", "integrity": "sha512-ojmeN0qd+y0jszEtoY48r0Peq5dwMEkIlCOu6Q5f41lfkswXuKtYrhgoTpLnyIcHm24Uhqx+5Tqm2InSwLhE6Q=="`, ""},
		{"id after token", "token usage for msg_2KWPBgLlAfxdpx2AI54pPJ85f4W was 1532", ""},
		{"mysql prompts", "mysql -u root -p mydb < dump.sql", ""},
		{"docker port", "docker run -u 1000 -p 8080:80 nginx", ""},
		{"cli password from env", "acmeexec -u admin -p %ADMIN_PW% run", ""},
		{"cookie header of analytics and settings", "Cookie: _ga=GA1.1.1234567890.1700000000; _fbp=fb.1.1700000000000.1234567890; theme=dark; lang=en-US", ""},
		{"cookie header described", "The Cookie: header carries name=value pairs separated by semicolons.", ""},
		{"cookie header from a variable", `curl --cookie "session=$SESSION" https://app.acme.test`, ""},
		{"login call with variables", "server.login(user, password)", ""},
		{"login call with a placeholder", `client.login("user", "password")`, ""},
		{"login call with a template", `auth=("svc", "${ACME_PASSWORD}")`, ""},
		{"login call with labels", `i18n.login("Sign in", "Log in to continue")`, ""},
		{"login defined with defaults", "def login(self, user = '', password = ''):", ""},
		{"securestring from a variable", "$pw = ConvertTo-SecureString $plain -AsPlainText -Force", ""},
		{"securestring encrypted", `ConvertTo-SecureString "01000000d08c9ddf0115d1118c7a00c04fc297eb0100" -Key $k`, ""},
		{"cli upper-case user and port", "psql -h db -U postgres -p 5432 app", ""},
		{"cli upper-case password from env", "sqlcmd -S db1 -U sa -P $env:SA_PASSWORD", ""},
		{"credential constructor with variables", "new NetworkCredential(user, password)", ""},
		{"shell positional dollars", `echo "$1$2$3" and $HOME$PATH`, ""},
		{"php variables", `$user$password = $a . $b;`, ""},
		{"secret compared with empty", `if secret != "" && secret != "none" {`, ""},
		{"password equals empty", `if (password.equals("")) {`, ""},
		{"password equals variable", "if (password.equals(confirmPassword)) {", ""},
		{"password compared with empty", "if password == '':\n    raise ValueError('the password field must not be empty')", ""},
		{"secret type compared", `if secretType == "opaque" {`, ""},
		{"token compared in a lexer", `if token == "return" {`, ""},
		{"secret name", `secretName: "db-credentials"`, ""},
		{"kubernetes secret named", "volumes:\n  - secret: \"db-credentials\"\n", ""},
		{"vault path", `secret: "secret/data/app"`, ""},
		{"json pointer", `"clientSecret": "#/components/schemas/Secret"`, ""},
		{"secret described", `"secret": "Signs the session cookie."`, ""},
		{"secret from helm", `secret: "{{ .Values.jwt.secret }}"`, ""},
		{"secrets inherited", "secrets: \"inherit\"", ""},
		{"password policy regexp", `passwordRegex: "^(?=.*[A-Z])(?=.*[a-z])(?=.*\\d)(?=.*[!@#$%^&*]).{12,}$"`, ""},
		{"secret format regexp", `secret: "^[A-Za-z0-9_\\-]{32,64}$|^[0-9a-f]{8}-[0-9a-f]{4}$"`, ""},
		{"mysql after sudo", "sudo mysql -u root -p appdb", ""},
		{"mariadb in docker", "docker exec -it db mariadb -u root -p shop", ""},
		{"connect with database and collection", `client.connect("mongodb://db.acme.test", "shop", "orders")`, ""},
		{"connect with variables", `DriverManager.getConnection("jdbc:mysql://db/app", user, password)`, ""},
		{"connect with env password", `DriverManager.getConnection("jdbc:mysql://db/app", "svc", System.getenv("DB_PW"))`, ""},
		{"connect with template", `DriverManager.getConnection("jdbc:mysql://db/app", "svc", "${DB_PASSWORD}")`, ""},
		{"http call with three literals", `request("https://api.acme.test/v1", "POST", "application/json")`, ""},
		{"go struct tag after a secret type", "\tSecrets []*Secret `json:\"secrets,omitempty\"`", ""},
		{"secret manager path", "pass a Secret Manager secret: `projects/*/secrets/*/versions/*`", ""},
		{"jwe header with salt and key id", `"protected": "` + jweHeader + `"`, ""},
		{"jwt header alone", "header eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9 then", ""},
		{"dotted base64 json without an algorithm", "next=" + notJWT, ""},
		{"cli flag naming a file", "acmectl login --password-file /run/secrets/acme_pw", ""},
		{"cli flag from a variable", `acmectl login --token "$ACME_TOKEN"`, ""},
		{"cli flag naming a key", "acmectl keys create --key-name deploy-key-2024", ""},
		{"cli flag with a counting placeholder", "acmeadm join --tls-bootstrap-token abcdef.0123456789abcdef", ""},
		{"xml element from a property", "<password>${env.ACME_PASSWORD}</password>", ""},
		{"xml element schema type", "<xs:element><Password>string</Password></xs:element>", ""},
		{"xml element in prose", "type your <password> and press enter, see </password> docs", ""},
		{"jsx element holding a hint", "<PasswordHint>Use 8 or more characters</PasswordHint>", ""},
		{"jsx element holding a label", "<Password>Enter your password</Password>", ""},
		{"xml attributes without a value", `<property name="passwordEncoder" ref="bcryptEncoder"/>`, ""},
		{"xml attributes from a property", `<property name="password" value="${db.password}"/>`, ""},
		{"xml attributes naming a length", `<add key="PasswordLength" value="12" />`, ""},
		{"c# doc comment", `/// <param name="password">The user's password, 8 characters or more.</param>`, ""},
		{"html password field", `<input type="password" name="password" value="">`, ""},
		{"html value of another name", `<input name="username" value="deploy2024">`, ""},
		{"base64 json cursor", "next=eyJwYWdlIjoyLCJzb3J0IjoibmFtZSIsIm9yZGVyIjoiYXNjIn0", ""},
		{"eyJ inside a base64 run", "data:AAAAeyJrIjoiY21sM1JRYjB6RnVYSTNLenRWQkFEaWN2bXI2V202U2IiLCJuIjoiYSJ9", ""},
	}
	s, err := newScanner(Config{}, func(id string) bool { return !slices.Contains(genericRules, id) })
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { expectSecret(t, s, tt.text, tt.want) })
	}
}
