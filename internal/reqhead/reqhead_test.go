package reqhead

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
)

func TestBytesMatchesTheWire(t *testing.T) {
	for _, raw := range []string{
		"GET /v1/models HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"POST /v1/chat/completions?x=1&y=2 HTTP/1.1\r\nHost: gw:8080\r\nAuthorization: Bearer abc\r\nContent-Type: application/json\r\nX-A: 1\r\nX-A: 2\r\nContent-Length: 0\r\n\r\n",
	} {
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
		if err != nil {
			t.Fatal(err)
		}
		if got := Bytes(r); got != len(raw) {
			t.Errorf("Bytes(%q) = %d, want %d", raw, got, len(raw))
		}
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name       string
		query, hdr int
		refused    bool
	}{
		{"small", 10, 10, false},
		{"query at the limit", MaxBytes - 200, 0, false},
		{"query over the limit", MaxBytes, 0, true},
		{"header over the limit", 0, MaxBytes, true},
		{"query and header together over", MaxBytes / 2, MaxBytes / 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := http.NewRequest(http.MethodGet, "http://gw/v1/models?q="+strings.Repeat("a", tc.query), nil)
			if err != nil {
				t.Fatal(err)
			}
			r.RequestURI = r.URL.RequestURI()
			r.Header.Set("X-Long", strings.Repeat("b", tc.hdr))
			msg := Check(r)
			if (msg != "") != tc.refused {
				t.Fatalf("Check with a %d-byte head = %q, want refused %v", Bytes(r), msg, tc.refused)
			}
			if tc.refused && !strings.Contains(msg, "limit is 65536") {
				t.Errorf("message %q does not state the limit", msg)
			}
		})
	}
}
