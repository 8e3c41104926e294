package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptwall/promptwall/scanner"
)

func target(text string) *scanner.Target {
	return &scanner.Target{Text: scanner.NewText(text), Direction: scanner.Input, Role: scanner.RoleUser}
}

func TestScan(t *testing.T) {
	const text = "héllo bad words here"
	tests := []struct {
		name    string
		handler http.HandlerFunc
		timeout Duration
		want    scanner.Finding
		err     error // nil: success
	}{
		{"clean", reply(200, `{"detected": false}`), 0, scanner.Finding{}, nil},
		{"detected with matches", reply(200, `{"detected": true, "score": 0.9, "reason": "toxic", "matches": [{"start": 7, "end": 16, "kind": "TOXIC"}, {"start": 0, "end": 6}]}`), 0,
			scanner.Finding{Detected: true, Score: 0.9, Reason: "toxic", Matches: []scanner.Match{{Start: 7, End: 16, Kind: "TOXIC", Score: 0.9}, {Start: 0, End: 6, Kind: "MY_CLASSIFIER", Score: 0.9}}}, nil},
		{"detected without score", reply(200, `{"detected": true}`), 0, scanner.Finding{Detected: true, Score: 1}, nil},
		{"server error", reply(500, `oops`), 0, scanner.Finding{}, ErrStatus},
		{"malformed json", reply(200, `{"detected": tru`), 0, scanner.Finding{}, ErrInvalidResponse},
		{"oversize body", reply(200, `{"reason": "`+strings.Repeat("x", MaxResponseBytes)+`"}`), 0, scanner.Finding{}, ErrResponseTooLarge},
		{"offset past end", reply(200, `{"detected": true, "matches": [{"start": 0, "end": 99}]}`), 0, scanner.Finding{}, ErrInvalidResponse},
		{"negative offset", reply(200, `{"detected": true, "matches": [{"start": -1, "end": 3}]}`), 0, scanner.Finding{}, ErrInvalidResponse},
		{"empty span", reply(200, `{"detected": true, "matches": [{"start": 3, "end": 3}]}`), 0, scanner.Finding{}, ErrInvalidResponse},
		{"splits a rune", reply(200, `{"detected": true, "matches": [{"start": 2, "end": 4}]}`), 0, scanner.Finding{}, ErrInvalidResponse},
		{"missing end", reply(200, `{"detected": true, "matches": [{"start": 2}]}`), 0, scanner.Finding{}, ErrInvalidResponse},
		{"bad kind", reply(200, `{"detected": true, "matches": [{"start": 0, "end": 1, "kind": "a b"}]}`), 0, scanner.Finding{}, ErrInvalidResponse},
		{"score out of range", reply(200, `{"detected": true, "score": 3}`), 0, scanner.Finding{}, ErrInvalidResponse},
		{"matches but not detected", reply(200, `{"detected": false, "matches": [{"start": 0, "end": 1}]}`), 0, scanner.Finding{}, ErrInvalidResponse},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
		}, Duration(50 * time.Millisecond), scanner.Finding{}, scanner.ErrTimeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			s, err := New(Config{Type: "my_classifier", URL: srv.URL, Timeout: tc.timeout}, Options{Client: srv.Client()})
			if err != nil {
				t.Fatal(err)
			}
			f, err := s.Scan(context.Background(), target(text))
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !equal(f, tc.want) {
				t.Fatalf("got %+v, want %+v", f, tc.want)
			}
		})
	}
}

func reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func equal(a, b scanner.Finding) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func TestRequest(t *testing.T) {
	var got request
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(400)
			return
		}
		json.NewDecoder(r.Body).Decode(&got)
		io.WriteString(w, `{"detected": false}`)
	}))
	defer srv.Close()
	s, err := New(Config{URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer k"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Scan(context.Background(), &scanner.Target{Text: scanner.NewText("hi"), Direction: scanner.Output, Role: scanner.RoleAssistant}); err != nil {
		t.Fatal(err)
	}
	if got != (request{Text: "hi", Direction: "output", Role: "assistant"}) || auth != "Bearer k" {
		t.Fatalf("request %+v, auth %q", got, auth)
	}
	if s.Type() != DefaultType {
		t.Fatalf("Type() = %q", s.Type())
	}
}

// TestConcurrencyCap runs more scans than the cap allows and checks, at the
// server, that no more than the cap were ever in flight; the vendored cap
// applies to a vendored classifier.
func TestConcurrencyCap(t *testing.T) {
	for _, vendored := range []bool{false, true} {
		var inFlight, peak atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(20 * time.Millisecond)
			io.WriteString(w, `{"detected": false}`)
		}))
		custom, vend := NewLimiter(2), NewLimiter(3)
		s, err := New(Config{URL: srv.URL, Timeout: Duration(10 * time.Second), Vendored: vendored}, Options{Client: srv.Client(), Custom: custom, Vendored: vend})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 12 {
			wg.Go(func() {
				if _, err := s.Scan(context.Background(), target("x")); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		srv.Close()
		want := int32(custom.Cap())
		if vendored {
			want = int32(vend.Cap())
		}
		if p := peak.Load(); p > want || p < 2 {
			t.Errorf("vendored=%v: peak in flight %d, cap %d", vendored, p, want)
		}
	}
}

func TestLimiterDeadline(t *testing.T) {
	l := NewLimiter(1)
	if !l.TryAcquire() {
		t.Fatal("first TryAcquire failed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := l.Acquire(ctx)
	if !errors.Is(err, ErrConcurrencyLimit) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) < 15*time.Millisecond {
		t.Fatal("Acquire did not wait for the deadline")
	}
	l.Release()
	if err := l.Acquire(context.Background()); err != nil {
		t.Fatalf("after Release: %v", err)
	}
	var none *Limiter
	if err := none.Acquire(ctx); err != nil || none.Cap() != 0 {
		t.Fatal("nil limiter must not limit")
	}
	none.Release()
}

func TestDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{`"2s"`, 2 * time.Second, true},
		{`"750ms"`, 750 * time.Millisecond, true},
		{`1500`, 1500 * time.Millisecond, true},
		{`"soon"`, 0, false},
		{`1.5`, 0, false},
	}
	for _, tc := range tests {
		var d Duration
		err := json.Unmarshal([]byte(tc.in), &d)
		if (err == nil) != tc.ok || tc.ok && time.Duration(d) != tc.want {
			t.Errorf("%s: got %v, %v", tc.in, time.Duration(d), err)
		}
	}
	var cfg Config
	if err := json.Unmarshal([]byte(`{"url":"https://x.example","timeout":"3s","vendored":true}`), &cfg); err != nil || time.Duration(cfg.Timeout) != 3*time.Second {
		t.Fatalf("config: %+v, %v", cfg, err)
	}
	if b, _ := json.Marshal(Duration(2 * time.Second)); string(b) != `"2s"` {
		t.Fatalf("marshal: %s", b)
	}
}

func TestNewValidates(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{URL: "ftp://x"},
		{URL: "/relative"},
		{URL: "https://x", Type: "Bad Type"},
		{URL: "https://x", Timeout: Duration(-time.Second)},
		{URL: "https://x", Headers: map[string]string{"X-A": "a\r\nb"}},
	} {
		if _, err := New(cfg, Options{}); !errors.Is(err, ErrConfig) {
			t.Errorf("New(%+v) = %v, want ErrConfig", cfg, err)
		}
	}
}

func BenchmarkScan(b *testing.B) {
	srv := httptest.NewServer(reply(200, `{"detected": false}`))
	defer srv.Close()
	s, _ := New(Config{URL: srv.URL}, Options{Client: srv.Client()})
	tgt := target(strings.Repeat("Please summarise the attached quarterly report for the board. ", 40)[:2048])
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Scan(context.Background(), tgt); err != nil {
			b.Fatal(err)
		}
	}
}
