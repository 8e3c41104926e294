package caddymodule_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddytest"
)

func TestUnscreenableRequestsRefusedOrPassedAsConfigured(t *testing.T) {
	tests := []struct {
		name        string
		passThrough string
		path        string
		contentType string
		body        string
		wantStatus  int
		forwarded   bool
	}{
		{"multipart refused", "", "/v1/audio/transcriptions", "multipart/form-data; boundary=x", "--x--", http.StatusUnsupportedMediaType, false},
		{"unknown format refused", "", "/v1/something", "application/json", `{"foo":"bar"}`, http.StatusBadRequest, false},
		{"multipart passed when configured", "pass_through multipart", "/v1/audio/transcriptions", "multipart/form-data; boundary=x", "--x--", http.StatusOK, true},
		{"unknown format passed when configured", "pass_through unknown_format", "/v1/something", "application/json", `{"foo":"bar"}`, http.StatusOK, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t)
			tester := caddytest.NewTester(t)
			tester.InitServer(gatewayConfig(filepath.Join(t.TempDir(), "pw.db"), up.Listener.Addr().String(), "", tc.passThrough), "caddyfile")
			resp, body := post(t, tester, tc.path, tc.contentType, tc.body)
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.wantStatus, body)
			}
			got := up.received()
			if tc.forwarded != (len(got) == 1) {
				t.Fatalf("forwarded=%v, upstream saw %d requests", tc.forwarded, len(got))
			}
			if !tc.forwarded {
				return
			}
			if string(got[0]) != tc.body {
				t.Errorf("a passed-through body must arrive unchanged: %q", got[0])
			}
			list := waitForScans(t, tester, 1)
			rec := list.Scans[0]
			if rec.Result.Outcome != "passed" || len(rec.Result.ScannerResults) == 0 {
				t.Fatalf("record: %+v", rec.Result)
			}
			for _, sr := range rec.Result.ScannerResults {
				if sr.Outcome != "skipped" {
					t.Errorf("a passed-through request must show its scanners skipped, got %s=%s", sr.ScannerID, sr.Outcome)
				}
			}
		})
	}
}

// An upstream that compresses although the gateway asked for an identity
// answer is decoded and screened, never passed through compressed.
func TestCompressedAnswerIsDecodedAndScreened(t *testing.T) {
	tests := []struct {
		name       string
		answer     string
		wantStatus int
	}{
		{"clean gzip answer", completion, http.StatusOK},
		{"gzip answer with a secret", strings.Replace(completion, "Hi there.", "The key is "+fakeAWSKey, 1), http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var acceptEncoding []string
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				acceptEncoding = append(acceptEncoding, r.Header.Get("Accept-Encoding"))
				var buf bytes.Buffer
				zw := gzip.NewWriter(&buf)
				io.WriteString(zw, tc.answer)
				zw.Close()
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Encoding", "gzip")
				w.Write(buf.Bytes())
			}))
			t.Cleanup(up.Close)
			tester := caddytest.NewTester(t)
			tester.InitServer(gatewayConfig(filepath.Join(t.TempDir(), "pw.db"), up.Listener.Addr().String(), streamingEndpoint, ""), "caddyfile")
			req, _ := http.NewRequest(http.MethodPost, gatewayURL("/v1/chat/completions"), strings.NewReader(chatBody("hello")))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept-Encoding", "br")
			// A raw transport: the test must see exactly what the gateway sends.
			resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.wantStatus, body)
			}
			if tc.wantStatus == http.StatusOK && string(body) != tc.answer {
				t.Errorf("the client must get the decoded, screened answer; got %q (Content-Encoding %q)", body, resp.Header.Get("Content-Encoding"))
			}
			if bytes.Contains(body, []byte(fakeAWSKey)) {
				t.Error("the secret reached the client")
			}
			// The client's codings are not forwarded: the upstream may only
			// use one the gateway decodes (reverse_proxy's transport asks
			// for gzip on its own).
			if len(acceptEncoding) != 1 || (acceptEncoding[0] != "" && acceptEncoding[0] != "gzip") {
				t.Errorf("the client's Accept-Encoding reached the upstream: %q", acceptEncoding)
			}
		})
	}
}
