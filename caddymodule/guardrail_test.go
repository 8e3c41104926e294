package caddymodule_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/promptwall/promptwall/caddymodule"
	"github.com/promptwall/promptwall/guardrail/guardrailtest"
)

const (
	guardHTTPPort  = 9490
	guardHTTPSPort = 9491
	adminAddr      = "localhost:2999"
)

// guardrailConfig serves every guardrail shape by path on a plain HTTP
// site, Prompt Security's on an HTTPS site too (Portkey's promptsecurity
// plugin only speaks https://{apiDomain}/api/protect), and the API. The
// endpoint blocks secrets and redacts e-mail addresses, as the fixtures in
// guardrail/testdata expect.
func guardrailConfig(dbPath, certFile, keyFile string) string {
	return fmt.Sprintf(`{
	admin %s
	http_port %d
	https_port %d
	grace_period 1ns
	auto_https disable_redirects
	servers {
		max_header_size 1MB
	}
	promptwall {
		storage %s
		bootstrap_token %s
		endpoint guard {
			scanner secrets {
				mode block
				direction input output
				flag_message "Remove the secret and try again."
			}
			scanner pii {
				mode modify
				entities EMAIL_ADDRESS
				direction input output
			}
		}
	}
}

:%d {
	handle /backend/v1/* {
		promptwall_api
	}
	handle {
		promptwall_guardrail {
			endpoint guard
		}
	}
}

https://127.0.0.1:%d {
	tls %s %s
	promptwall_guardrail prompt_security {
		endpoint guard
	}
}
`, adminAddr, guardHTTPPort, guardHTTPSPort, dbPath, testToken, guardHTTPPort, guardHTTPSPort, certFile, keyFile)
}

// selfSignedCert writes a certificate for 127.0.0.1 and its key as PEM.
func selfSignedCert(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "promptwall test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

type guardServer struct {
	tester    *caddytest.Tester
	userToken string
	certFile  string
}

func startGuardrail(t *testing.T) *guardServer {
	t.Helper()
	dir := t.TempDir()
	certFile, keyFile := selfSignedCert(t, dir)
	tester := caddytest.NewTester(t)
	tester.InitServer(guardrailConfig(filepath.Join(dir, "pw.db"), certFile, keyFile), "caddyfile")
	app, err := caddy.ActiveContext().App("promptwall")
	if err != nil {
		t.Fatal(err)
	}
	return &guardServer{tester: tester, userToken: createUserToken(t, app.(*caddymodule.App).Store()), certFile: certFile}
}

func (s *guardServer) do(t *testing.T, method, url string, header map[string]string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := s.tester.Client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func guardURL(path string) string { return fmt.Sprintf("http://127.0.0.1:%d%s", guardHTTPPort, path) }

// credentialHeader is where each caller sends its guardrail key.
func credentialHeader(shape, token string) map[string]string {
	h := map[string]string{"Content-Type": "application/json"}
	switch shape {
	case "prompt_security":
		h["APP-ID"] = token
	default:
		h["Authorization"] = "Bearer " + token
	}
	return h
}

const fixtureRecordID = "019a0000-0000-7000-8000-000000000001"

// TestGuardrailFixtures replays every caller fixture against the running
// gateway: the answer is the fixture's (with this record's id), and the
// check is a scan record of the token's user, with the caller's metadata,
// the secret masked, and counted in the metrics.
func TestGuardrailFixtures(t *testing.T) {
	s := startGuardrail(t)
	replayed := 0
	for _, fx := range guardrailtest.Load(t, "../guardrail/testdata") {
		shape := fx.Shape
		t.Run(shape+"/"+filepath.Base(fx.Name), func(t *testing.T) {
			resp, answer := s.do(t, http.MethodPost, guardURL(fx.Path), credentialHeader(shape, s.userToken), fx.Request)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, answer)
			}
			id := resp.Header.Get("X-Promptwall-Prompt-Id")
			if id == "" {
				t.Fatal("no X-Promptwall-Prompt-Id")
			}
			got := bytes.ReplaceAll(answer, []byte(id), []byte(fixtureRecordID))
			if !guardrailtest.SameJSON(t, got, fx.Answer) {
				t.Errorf("answer\n%s\nwant\n%s", got, fx.Answer)
			}
			rec := s.record(t, id)
			recorded := fx.Outcome
			if fx.Recorded != "" {
				recorded = fx.Recorded
			}
			if rec.Type != "scan" || rec.Result.Outcome != recorded || rec.UserID == "" || rec.UserID == "bootstrap" {
				t.Errorf("record type %q outcome %q user %q", rec.Type, rec.Result.Outcome, rec.UserID)
			}
			var md map[string]any
			if err := json.Unmarshal([]byte(rec.ExternalMetadata), &md); err != nil || md["caller"] != shape {
				t.Errorf("externalMetadata %q", rec.ExternalMetadata)
			}
			stored, _ := json.Marshal(rec)
			if bytes.Contains(stored, []byte(fakeAWSKey)) {
				t.Errorf("the record holds the secret in clear: %s", stored)
			}
		})
		replayed++
	}
	if replayed < 12 {
		t.Fatalf("replayed %d fixtures", replayed)
	}
	// Every check is counted, by shape.
	resp, metrics := s.do(t, http.MethodGet, "http://"+adminAddr+"/metrics", nil, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("metrics: %d", resp.StatusCode)
	}
	for _, shape := range []string{"prompt_security", "litellm", "portkey", "bedrock"} {
		want := fmt.Sprintf(`promptwall_requests_screened_total{direction="input",endpoint="guard",outcome="blocked",project="",provider="guardrail/%s"}`, shape)
		if !bytes.Contains(metrics, []byte(want)) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

type scanRecord struct {
	ID               string `json:"id"`
	Type             string `json:"type"`
	UserID           string `json:"userId"`
	Input            string `json:"input"`
	ExternalMetadata string `json:"externalMetadata"`
	Result           struct {
		Outcome  string `json:"outcome"`
		Response string `json:"response"`
	} `json:"result"`
}

// record reads a record through the API, waiting for the store's writer to
// commit it.
func (s *guardServer) record(t *testing.T, id string) scanRecord {
	t.Helper()
	for range 200 {
		resp, b := s.do(t, http.MethodGet, guardURL("/backend/v1/prompts/"+id), map[string]string{"Authorization": "Bearer " + testToken}, nil)
		if resp.StatusCode == http.StatusOK {
			// The answer is the conversation up to the prompt; a scan
			// is a conversation of one.
			var page struct {
				Memory []scanRecord `json:"memory"`
			}
			if err := json.Unmarshal(b, &page); err != nil || len(page.Memory) != 1 {
				t.Fatalf("GET prompt %s: %s (%v)", id, b, err)
			}
			return page.Memory[0]
		}
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("GET prompt %s: %d %s", id, resp.StatusCode, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("record %s never committed", id)
	return scanRecord{}
}

// TestGuardrailRefusals checks every request the handler does not screen:
// each gets the status a caller can act on and the API's error shape.
func TestGuardrailRefusals(t *testing.T) {
	s := startGuardrail(t)
	valid := []byte(`{"input_type": "request", "texts": ["hello"]}`)
	auth := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + s.userToken}
	tests := []struct {
		name, method, path string
		header             map[string]string
		body               []byte
		status             int
		code               string
	}{
		{"no token", "POST", "/beta/litellm_basic_guardrail_api", map[string]string{"Content-Type": "application/json"}, valid, 401, "unauthorized"},
		{"unknown token", "POST", "/beta/litellm_basic_guardrail_api", map[string]string{"Content-Type": "application/json", "APP-ID": "pw_not_a_token"}, valid, 401, "unauthorized"},
		{"basic scheme", "POST", "/beta/litellm_basic_guardrail_api", map[string]string{"Content-Type": "application/json", "Authorization": "Basic " + s.userToken}, valid, 401, "unauthorized"},
		{"no shape at path", "POST", "/v1/chat/completions", auth, valid, 404, "not_found"},
		{"GET", "GET", "/api/protect", auth, nil, 405, "method_not_allowed"},
		{"text body", "POST", "/beta/litellm_basic_guardrail_api", map[string]string{"Content-Type": "text/plain", "Authorization": "Bearer " + s.userToken}, valid, 415, "unsupported_media_type"},
		{"too large", "POST", "/beta/litellm_basic_guardrail_api", auth, []byte(`{"input_type": "request", "texts": ["` + strings.Repeat("a", 5<<20) + `"]}`), 413, "request_too_large"},
		{"malformed", "POST", "/api/protect", auth, []byte(`{"prompt": 1}`), 400, "invalid_parameter"},
		{"not JSON", "POST", "/guardrail/g/version/1/apply", auth, []byte(`{"source"`), 400, "invalid_json"},
		{"headers over 64KB", "POST", "/api/protect", map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + s.userToken, "X-Long": strings.Repeat("a", 64<<10)}, valid, 431, "request_header_too_large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := s.do(t, tc.method, guardURL(tc.path), tc.header, tc.body)
			var e struct {
				Error struct{ Code, Message string }
			}
			if resp.StatusCode != tc.status || json.Unmarshal(b, &e) != nil || e.Error.Code != tc.code || e.Error.Message == "" {
				t.Fatalf("got %d %s, want %d %s", resp.StatusCode, b, tc.status, tc.code)
			}
			if tc.status == 401 && resp.Header.Get("WWW-Authenticate") != "Bearer" {
				t.Errorf("401 without the Bearer challenge")
			}
		})
	}
}

// TestAdminAPI checks that the API answers on Caddy's admin listener with
// the same data and the same bearer-token rule as on a site.
func TestAdminAPI(t *testing.T) {
	s := startGuardrail(t)
	resp, answer := s.do(t, http.MethodPost, guardURL("/beta/litellm_basic_guardrail_api"),
		credentialHeader("litellm", s.userToken), []byte(`{"input_type": "request", "texts": ["hello there"]}`))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("check: %d %s", resp.StatusCode, answer)
	}
	id := resp.Header.Get("X-Promptwall-Prompt-Id")
	s.record(t, id)
	admin := "http://" + adminAddr
	tests := []struct {
		name   string
		token  string
		status int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"wrong token", "pw_wrong", http.StatusUnauthorized},
		{"bootstrap token", testToken, http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{}
			if tc.token != "" {
				h["Authorization"] = "Bearer " + tc.token
			}
			resp, b := s.do(t, http.MethodGet, admin+"/backend/v1/scans?onlyUser=false", h, nil)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			if tc.status == http.StatusOK && !bytes.Contains(b, []byte(id)) {
				t.Errorf("the admin API's scans lack %s: %s", id, b)
			}
		})
	}
	// The admin listener serves the same records as the site.
	_, site := s.do(t, http.MethodGet, guardURL("/backend/v1/prompts/"+id), map[string]string{"Authorization": "Bearer " + testToken}, nil)
	_, adm := s.do(t, http.MethodGet, admin+"/backend/v1/prompts/"+id, map[string]string{"Authorization": "Bearer " + testToken}, nil)
	if !guardrailtest.SameJSON(t, site, adm) {
		t.Errorf("site and admin listener disagree:\n%s\n%s", site, adm)
	}
}
