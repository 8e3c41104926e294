package caddymodule_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"
)

// metric reads one sample of the admin endpoint's metrics by its full
// name and labels, 0 when absent.
func metric(t *testing.T, client *http.Client, series string) float64 {
	t.Helper()
	resp, err := client.Get("http://" + adminAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	return 0
}

// A flood of refused requests does not grow the store: refusals before
// screening are never recorded, those of the provider's limits only as a
// sample (a burst of 10, then 1 a second); all are counted.
func TestRefusalsRecordedOnlyAsSample(t *testing.T) {
	up := newCountingUpstream(t, 0)
	tester := caddytest.NewTester(t)
	tester.InitServer(providerConfig(filepath.Join(t.TempDir(), "pw.db"), up.Listener.Addr().String(), "max_requests_per_second 0.01", "authenticate"), "caddyfile")
	const flood = 60
	cases := []struct {
		name, key, body, reason string
		status                  int
		// maxRecords bounds the records the flood may add, besides the
		// one request the limit lets through.
		maxRecords func(elapsed time.Duration) int
	}{
		{"no valid token", "pw_not_a_token", chatBody("hello"), "unauthenticated", http.StatusUnauthorized,
			func(time.Duration) int { return 0 }},
		{"malformed bodies", testToken, `{"model":"m","messages":`, "malformed", http.StatusBadRequest,
			func(time.Duration) int { return 0 }},
		{"over the provider's limit", testToken, chatBody("hello"), "provider_limit", http.StatusTooManyRequests,
			func(elapsed time.Duration) int { return 1 + 10 + int(elapsed.Seconds()) + 1 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			series := `promptwall_requests_rejected_total{reason="` + tc.reason + `"}`
			counted := metric(t, tester.Client, series)
			before := scanCount(t, tester)
			start := time.Now()
			refused := 0
			for range flood {
				if resp, _ := postWithKey(t, tester.Client, tc.key, tc.body); resp.StatusCode == tc.status {
					refused++
				}
			}
			elapsed := time.Since(start)
			if refused < flood-1 {
				t.Fatalf("%d of %d requests refused with %d", refused, flood, tc.status)
			}
			if got := metric(t, tester.Client, series) - counted; got != float64(refused) {
				t.Errorf("%s grew by %v for %d refusals", series, got, refused)
			}
			// Let the writer commit whatever was recorded.
			time.Sleep(300 * time.Millisecond)
			added := scanCount(t, tester) - before
			if max := tc.maxRecords(elapsed); added > max {
				t.Errorf("%d refusals in %v added %d records, want at most %d", refused, elapsed.Round(time.Millisecond), added, max)
			}
			if tc.reason == "provider_limit" && added < 2 {
				t.Errorf("no sample of the refusals was recorded (%d records)", added)
			}
		})
	}
}

// scanCount returns how many records the store holds, up to 100.
func scanCount(t *testing.T, tester *caddytest.Tester) int {
	t.Helper()
	resp, body := apiGet(t, tester, "/backend/v1/scans?limit=100&onlyUser=false", testToken)
	var list scanList
	if err := json.Unmarshal(body, &list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scans: %d %s", resp.StatusCode, body)
	}
	return len(list.Scans)
}
