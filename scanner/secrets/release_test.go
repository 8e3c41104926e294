package secrets

import (
	"testing"

	"github.com/promptwall/promptwall/scanner/internal/scannertest"
)

// TestHoldCoversEverySecretPrefix streams each text byte by byte: no part
// of a secret may be released before the secret is recognised.
func TestHoldCoversEverySecretPrefix(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{
		"aws id in prose":               "my key is " + awsID + ", can you check it?",
		"aws secret assignment":         "aws_secret_access_key: \"" + awsSecret + "\" done",
		"github token json":             `{"token": "` + ghp + `"} ok`,
		"openai key":                    "export OPENAI_API_KEY=" + openai + " and more",
		"anthropic key":                 "client = Anthropic(api_key='" + anthropic + "') then",
		"slack bot":                     "SLACK_TOKEN=" + slackBot + " fine",
		"jwt bearer":                    "Authorization: Bearer " + jwt + " end",
		"private key":                   "here is my key:\n" + pem + "\nthanks",
		"postgres uri":                  "DATABASE_URL=postgres://app:Xk9qLm2vR@db.internal:5432/stock ok",
		"password assignment":           `config: db_password = "Tr0ub4dor&3" ok`,
		"password in prose":             "The password for user 'admin' is 'hunter22' so log in",
		"generic secret":                "client_secret: 9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c then",
		"basic auth header":             "authorization: basic dXNlcjpwYXNzd29yZDEyMw== next",
		"generic key":                   `the signing key = "q8Zr2mXk9PbT4vLw7NcYa1Bd" then`,
		"webhook url":                   "post to https://hooks.example.com/services/T0123/B0456/aB3dE5fG7hJ9kL1mN3pQ8rS now",
		"jwt signing secret":            `jwt: { secret: "Zk4mQ9vR2xT7bN1cW8yL" } ok`,
		"command-line password":         "run: psexec \\\\host -u admin -p Wint3r!2024 cmd",
		"token near its word":           "vault operator unseal Zq8Lm2Xv9Rt4Wb7Yc3Nd6Pf1Kh5Js0Ga then",
		"chosen secret in yaml":         "JWT:\n  Secret: 'blue#harbor'\n  exp: 5m",
		"secret compared by equals":     `if (hook.Secret.Equals("shibboleth")) { ok }`,
		"base64 json key":               `c = AcmeClient("eyJrIjoiUnE3TG0yWHY5VHQ0V2I3WWMzTmQ2UGYxS2g1SnMwR2EiLCJuIjoiY2kifQ==", host=h)`,
		"connection call":               "c = DriverManager.getConnection(\"jdbc:mysql://db/app\",\n  \"svc\", \"Wint3r!2024\");",
		"command-line letters password": `system("psexec \\\\host -u admin -p braquemart cmd")`,
		"xml element":                   "<server><username>svc</username><password>Wint3r!2024</password></server> ok",
		"xml name and value attributes": `<property name="password" value="Wint3r!2024"/> ok`,
		"session cookie":                "curl -H 'Cookie: theme=dark; sid=Zq8Lm2Xv9Rt4Wb7Yc3Nd6Pf1Kh5Js0Ga' https://acme.test",
		"login call":                    `smtp.login("ops@acme.test", "Wint3r!2024") ok`,
		"securestring":                  `ConvertTo-SecureString "Wint3r!2024" -AsPlainText -Force`,
		"upper-case cli flags":          "sqlcmd -S db1 -U sa -P Wint3r!2024 -Q go",
		"crypt hash":                    "root:$6$rounds=5000$saltsalt$Zq8Lm2Xv9Rt4Wb7Yc3Nd6Pf1Kh5Js0GaZq8Lm2Xv9Rt4Wb7Yc3Nd6Pf1Kh5Js0GaZq8Lm2Xv9Rt4Wb7Yc3Nd:19000",
	}
	for name, text := range texts {
		t.Run(name, func(t *testing.T) { scannertest.HoldPrefixes(t, s, text, nil) })
	}
}

func TestHoldReleasesProse(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, text string
		want       int
	}{
		{"a plain word leaves at once", "The capital of France is Par", 28},
		{"text ending in a space", "The capital of France is ", 25},
		{"a keyword inside a word names no key", "The capital ", 12},
		{"nor does a short one", "a rapid compass ", 16},
		{"a keyword's beginning waits", "use the key AK", 12},
		{"a keyword's beginning waits, any case", "export Sk", 7},
		{"a word with a digit waits", "the value w0001", 10},
		{"a sentence's end waits for what follows the dot", "It is Paris.", 6},
		{"token-shaped word", "use the key AKIA", 12},
		{"password in prose that settles", "choose a strong password for every account you", 46},
		{"password waiting for what follows", "choose a strong password", 16},
		{"a key in prose settles", "the key point is", 16},
		{"a URL that ended", "see https://example.com/docs for", 32},
		{"assignment waiting for its value", "set password = ", 4},
		{"uri authority open", "connect to postgres://app:Xk9", 11},
		{"uri authority ended", "connect to postgres://db.example.com/app now", 44},
		{"a user flag that settled", "ssh -u admin host and then some more words", 42},
		{"a user flag waiting for its password", "acmeexec -u admin -p", 9},
		{"a connection call waiting for its password", `c = getConnection("jdbc:mysql://db/app", "svc", `, 19},
		{"a connection call that settled", `c = getConnection("jdbc:mysql://db/app", dsn) and then some`, 59},
		{"an equals call waiting for its value", `if (secret.equals("open sesame`, 4},
		{"a cookie header that ended", "Cookie: theme=dark\nand then some words", 38},
		{"an xml element that ended", "<password></password> and then some", 35},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := scannertest.Hold(s, tt.text, nil); got != tt.want {
				t.Errorf("Hold(%q) = %d (%q released), want %d", tt.text, got, tt.text[:got], tt.want)
			}
		})
	}
}
