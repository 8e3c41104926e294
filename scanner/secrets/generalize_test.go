package secrets

import (
	"slices"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/internal/scannertest"
)

// TestGeneralizes covers shapes the dev set lacks: tokens of providers
// without a rule here, credentials in forms the provider rules do not
// anchor on, control characters inside a token, and the code and prose
// that must stay clean (references to a secret are not the secret). The
// examples are written for this test and are not part of any figure.
func TestGeneralizes(t *testing.T) {
	pemConcat := "const key = \"-----BEGIN RSA PRIVATE KEY-----\\n\" +\n" +
		"  \"MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\\n\" +\n" +
		"  \"VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\\n\" +\n" +
		"  \"-----END RSA PRIVATE KEY-----\";"
	pemJava := `String pk = "-----BEGIN PRIVATE KEY-----" + "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj" + "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu" + "-----END PRIVATE KEY-----";`
	tests := []struct{ name, text, want string }{ // want: the secret, "" for clean
		// Provider tokens with no rule of their own: the prefixed-token shape.
		{"jina", "JINA_API_KEY = os.getenv('JINA', 'jina_0a1b2c3d4e5f60718293a4b5c6d7e8f9QwErTyUiOpAsDfGhJkLzXcVbNm1234')",
			"jina_0a1b2c3d4e5f60718293a4b5c6d7e8f9QwErTyUiOpAsDfGhJkLzXcVbNm1234"},
		{"unknown provider in prose", "use the key zzk_live_8fQ2xLm9Rt4Wv7Yb3Nc6Pd1Kh5Js0Ga for staging", "zzk_live_8fQ2xLm9Rt4Wv7Yb3Nc6Pd1Kh5Js0Ga"},
		{"sourcegraph local token", "SRC_ACCESS_TOKEN=sgp_local_2f1e0d9c8b7a69584736251403f2e1d0c9b8a796", "sgp_local_2f1e0d9c8b7a69584736251403f2e1d0c9b8a796"},
		{"sonarqube user token", "sonar-scanner -Dsonar.token=squ_0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c", "squ_0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c"},
		{"sonarqube env", "SONAR_TOKEN: 7d3f2a1b9c8e4d6f0a5b2c1e9d8f7a6b5c4d3e2f", "7d3f2a1b9c8e4d6f0a5b2c1e9d8f7a6b5c4d3e2f"},
		{"newrelic insights query key", `query_key: "NRIQ-Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef"`, "NRIQ-Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef"},
		{"newrelic license key in yaml", "newrelic:\n  license_key: 9f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6\n", "9f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6"},
		{"vault unseal key from init", "Unseal Key 1: 4nkM2OTzt5xNhaFDcLkV8Rqv/Ia9n2gSZvkjFYy1ZVtU\nUnseal Key 2: x", "4nkM2OTzt5xNhaFDcLkV8Rqv/Ia9n2gSZvkjFYy1ZVtU"},
		{"vault unseal hex", "Key 1: 7149c6a2e16b8833f6eb1e76df03e47f6113a3288b3093faf5033d44f0e70fe701\nInitial Root Token: 6662bb4e-3c88-a4c3-4bd3-12fd8a0e1d7b",
			"7149c6a2e16b8833f6eb1e76df03e47f6113a3288b3093faf5033d44f0e70fe701"},
		{"jwt secret nested yaml", "auth:\n  jwt:\n    secret: \"kd8#Hq2!vLm9\"\n    ttl: 3600\n", "kd8#Hq2!vLm9"},
		{"jwt signing key env", "JWT_SIGNING_KEY=Tr4ck-n-Fi3ld\n", "Tr4ck-n-Fi3ld"},
		{"jwt secret js object", "module.exports = { jwt: { secret: 'n0t-s0-s3cret!', expiresIn: '1h' } };", "n0t-s0-s3cret!"},
		{"jwt secret with symbols", `jwt_secret: "q8$_Zr[4]T;w%Lk'9+Xv@e7!Hn&c2^Bm(p5)Gs~Ry3=Jd"`, `q8$_Zr[4]T;w%Lk'9+Xv@e7!Hn&c2^Bm(p5)Gs~Ry3=Jd`},
		{"jwt secret from env", "const config = { jwt: { secret: process.env.JWT_SECRET } };", ""},
		{"jwt sign call", "const t = jwt.sign(payload, secretKey, { expiresIn: '1h' });", ""},
		{"webhook host", "curl -X POST https://hooks.example.com/services/T024BE7LD/B8QJ0N3KF/Q2xLm9Rt4Wv7Yb3Nc6Pd1Kh5", "Q2xLm9Rt4Wv7Yb3Nc6Pd1Kh5"},
		{"services path", "see https://example.com/services/ProfileManager2024Xq/details", ""},
		{"jwt secret flat yaml", "jwt_secret: 'staging-signing-secret'\n", "staging-signing-secret"},
		{"pem concatenated js", pemConcat, pemConcat[strings.Index(pemConcat, "-----BEGIN") : strings.LastIndex(pemConcat, "-----")+5]},
		{"pem concatenated java", pemJava, pemJava[strings.Index(pemJava, "-----BEGIN") : strings.LastIndex(pemJava, "-----")+5]},

		// Authorization schemes other than Bearer and Basic.
		{"authorization token scheme", `curl -H "Authorization: token 9fQ2xLm9Rt4Wv7Yb3Nc6Pd1Kh5Js0Ga" https://api.example.com`, "9fQ2xLm9Rt4Wv7Yb3Nc6Pd1Kh5Js0Ga"},
		{"authorization scheme prose", "Set the Authorization: token header to your personal token.", ""},

		// A value wrapped onto the next line.
		{"value on next line", "const creds = {\n  access_token:\n    'ya29.a0AfH6SMBx3kLm9Rt4Wv7Yb3Nc6Pd1Kh5Js0Ga',\n};", "ya29.a0AfH6SMBx3kLm9Rt4Wv7Yb3Nc6Pd1Kh5Js0Ga"},
		{"yaml nested mapping", "token:\n  name: bot-token-2024\n  ttl: 3600", ""},

		// Credentials stated in prose.
		{"token in prose", "hi, my api token is 8fQ2xLm9Rt4Wv7Yb3Nc6Pd1Kh5 and it stopped working", "8fQ2xLm9Rt4Wv7Yb3Nc6Pd1Kh5"},
		{"password in prose", "The admin password is Wint3r!2024, please reset it", "Wint3r!2024"},
		{"expired token prose", "The token is expired and the password is wrong.", ""},
		{"password is short prose", "the password is hunter2 apparently", ""},

		// Credentials on a command line.
		{"password flag", "Connect-Server -Host db1 -User admin -Password Wint3r!2024 -Force", "Wint3r!2024"},
		{"token flag", "cli deploy --token 9fQ2xLm9Rt4Wv7Yb3Nc6Pd1Kh5 --env prod", "9fQ2xLm9Rt4Wv7Yb3Nc6Pd1Kh5"},
		{"sonar login", "mvn sonar:sonar -Dsonar.login=5f3c2a1b9d8e7f6a0b4c3d2e1f0a9b8c7d6e5f4a", "5f3c2a1b9d8e7f6a0b4c3d2e1f0a9b8c7d6e5f4a"},
		{"password flag from variable", "tool --password \"$PASSWORD\" --password-file /run/secrets/pw", ""},
		{"placeholder here", `password: "your-password-here"`, ""},
		{"placeholder example", `API_SECRET = "example-secret-1234567890"`, ""},
		{"placeholder xxxx", `auth_token = "xxxx-xxxx-1234"`, ""},
		{"password file name", "PASSWORD_FILE=secrets.txt", ""},
		{"jwt secret name", "jwt_secret_name: prod-signing-secret", ""},
		{"jwt public key", `jwt_public_key: "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA"`, ""},
		{"token type camel", `tokenType = "refresh_token_v2"`, ""},
		{"login page prose", "Open the login page and sign in with your usual account.", ""},

		// Control characters splitting a token are folded away.
		{"nul inside aws id", "key AKIAZ7VR\x00SQ4LMB2XK3NP please", "AKIAZ7VR\x00SQ4LMB2XK3NP"},
		{"escape chars inside github token", "ghp_XIxB7KMN\x1b\x07dAr3zqWtQqhE94qglHqOzn1D1stg", "ghp_XIxB7KMN\x1b\x07dAr3zqWtQqhE94qglHqOzn1D1stg"},
		{"escaped nul inside aws id", `{"k": "AKIAZ7VR\u0000SQ4LMB2XK3NP"}`, `AKIAZ7VR\u0000SQ4LMB2XK3NP`},
		{"escaped esc inside github token", `"ghp_XIxB7KMN\x1bdAr3zqWtQqhE94qglHqOzn1D1stg"`, `ghp_XIxB7KMN\x1bdAr3zqWtQqhE94qglHqOzn1D1stg`},
		{"escaped newline is not folded", `"AKIAZ7VR\nSQ4LMB2XK3NP"`, ""},
		{"c1 control inside stripe key", "sk_live_51HqLyjWDa\u0085rjtT1zdp7dcXGuWoGxPTLcWzQ8Zm1wJ", "sk_live_51HqLyjWDa\u0085rjtT1zdp7dcXGuWoGxPTLcWzQ8Zm1wJ"},

		// References, placeholders, identifiers and paths are not secrets.
		{"pgpassword from variable", `export PGPASSWORD="$db_password"`, ""},
		{"postgres demo uri", "psql 'postgresql:///mydb?host=localhost&port=5433&user=user&password=secret'", ""},
		{"env var shell", "DB_PASSWORD=$DB_PASSWORD_FROM_VAULT", ""},
		{"env var braces", `api_key: "${API_KEY}"`, ""},
		{"process env", "const token = process.env.GITHUB_TOKEN_FOR_RELEASES;", ""},
		{"process env bracket", `const secret = process.env["STRIPE_SECRET_KEY"];`, ""},
		{"helm values", "password: {{ .Values.postgresql.auth.password }}", ""},
		{"helm values quoted", `token: "{{ .Values.bot.token | b64enc }}"`, ""},
		{"secret ref k8s", "secretKeyRef:\n  name: db-credentials\n  key: password", ""},
		{"managed policy arn", "PolicyArn: arn:aws:iam::aws:policy/IAMUserChangePassword", ""},
		{"password url", "PASSWORD_RESET_URL=https://accounts.example.com/users/password/reset?step=2", ""},
		{"password path", "password_file: /run/secrets/postgres_password", ""},
		{"password route", `router.post("/api/v1/users/:id/password", resetPassword)`, ""},
		{"identifier value", "passwordField = loginForm.passwordInput", ""},
		{"secret identifier", "client_secret = settings.OAUTH_CLIENT_SECRET_V2", ""},
		{"token type", `"token_type": "Bearer"`, ""},
		{"sri hash", `<script src="app.js" integrity="sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC">`, ""},
		{"hashed asset", `<link href="/static/css/main-5f3c2a1b9d8e7f6a0b4c3d2e1f0a9b8c.css">`, ""},
		{"npm integrity", `"integrity": "sha512-Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0EfAb3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef=="`, ""},
		{"request id", "request failed: req_8fQ2xLm9Rt4Wv7Yb3Nc6Pd1Kh5Js0Ga", ""},
		{"kebab identifiers", "use-the-long-descriptive-component-name-here and snake_case_function_name_v2", ""},
	}
	// The kind reported, where a provider rule should claim the secret.
	kinds := map[string]string{
		"sourcegraph local token": "SOURCEGRAPH_TOKEN", "newrelic insights query key": "NEWRELIC_KEY",
		"sonarqube user token": "SONARQUBE_TOKEN", "vault unseal key from init": "VAULT_UNSEAL_KEY",
		"vault unseal hex": "VAULT_UNSEAL_KEY", "jwt secret nested yaml": "JWT_SECRET", "pem concatenated js": "PRIVATE_KEY",
		"pem concatenated java": "PRIVATE_KEY", "nul inside aws id": "AWS_ACCESS_KEY_ID",
	}
	for name := range kinds {
		if !slices.ContainsFunc(tests, func(tt struct{ name, text, want string }) bool { return tt.name == name }) {
			t.Errorf("kinds names no test %q", name)
		}
	}
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, k := expectSecret(t, s, tt.text, tt.want)
			if kind := kinds[tt.name]; kind != "" && k >= 0 && f.Matches[k].Kind != kind {
				t.Errorf("kind %s, want %s", f.Matches[k].Kind, kind)
			}
		})
	}
}

// TestReferenceNotPassword: a name about a password holding the ARN of
// where it is stored is not a password. (The ARN itself is reported as
// an infrastructure identifier, at score 0.5.)
func TestReferenceNotPassword(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{
		"DB_PASSWORD_ARN: arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db/password-Ab12Cd",
		`password_secret_arn = "arn:aws:ssm:eu-west-1:123456789012:parameter/app/db_password"`,
	} {
		for _, m := range scannertest.Scan(t, s, text).Matches {
			if m.Kind != "AWS_ARN" {
				t.Errorf("%q: reported %s %q", text, m.Kind, text[m.Start:m.End])
			}
		}
	}
}

// expectSecret scans text and checks that want is one of the secrets
// found, or, for want "", that nothing is; it returns the finding and the
// index of want's match (-1 for clean text).
func expectSecret(t *testing.T, s *Scanner, text, want string) (scanner.Finding, int) {
	t.Helper()
	f := scannertest.Scan(t, s, text)
	got := matched(text, f)
	if want == "" {
		if f.Detected {
			t.Fatalf("flagged %q (%s)", got, kindsOf(f))
		}
		return f, -1
	}
	k := slices.Index(got, want)
	if !f.Detected || k < 0 {
		t.Fatalf("got %q (%s), want %q", got, kindsOf(f), want)
	}
	return f, k
}
