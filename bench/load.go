package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const chatPath = "/v1/chat/completions"

// target is what one load phase sends: a URL and a body template.
type target struct {
	url    string
	body   body
	stream bool
	// phase makes every request of the run unique (see tag).
	phase uint64
}

func (t target) request(ctx context.Context, client, n uint64) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url+chatPath,
		bytes.NewReader(t.body.with(tag(t.phase, client, n))))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// closedResult is a fixed-concurrency run.
type closedResult struct {
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	Seconds  float64 `json:"seconds"`
	RPS      float64 `json:"rps"`
	Tool     string  `json:"tool"`
}

// openResult is a fixed-rate run. Latencies are measured from each
// request's scheduled send time, so a gateway that falls behind shows its
// queueing (no coordinated omission).
type openResult struct {
	Rate     float64 `json:"rate"`
	Sent     int     `json:"sent"`
	Errors   int     `json:"errors"`
	Dropped  int     `json:"dropped"`
	Achieved float64 `json:"achieved_rps"`
	P50      float64 `json:"p50_ms"`
	P90      float64 `json:"p90_ms"`
	P99      float64 `json:"p99_ms"`
	Max      float64 `json:"max_ms"`
	TTFBP50  float64 `json:"ttfb_p50_ms,omitempty"`
	TTFBP99  float64 `json:"ttfb_p99_ms,omitempty"`
}

func newClient(conns int) *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			MaxIdleConns:        conns * 4,
			MaxIdleConnsPerHost: conns * 4,
			IdleConnTimeout:     30 * time.Second,
			DisableCompression:  true,
		},
	}
}

// do sends one request and reads the answer to its end. It returns the time
// to the first body byte and an error for anything but a complete 200.
func do(client *http.Client, req *http.Request, stream bool) (ttfb time.Time, err error) {
	resp, err := client.Do(req)
	if err != nil {
		return ttfb, err
	}
	defer resp.Body.Close()
	var buf [4096]byte
	var last []byte
	for {
		n, rerr := resp.Body.Read(buf[:])
		if n > 0 {
			if ttfb.IsZero() {
				ttfb = time.Now()
			}
			// The tail of the body, not of this read: a gateway that
			// holds back an answer's last byte until its record is
			// committed (durability sync) sends it in a read of its own.
			last = append(last, buf[:n]...)
			if len(last) > 32 {
				last = append(last[:0], last[len(last)-32:]...)
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return ttfb, rerr
		}
	}
	if resp.StatusCode != http.StatusOK {
		return ttfb, fmt.Errorf("status %d", resp.StatusCode)
	}
	if stream && !bytes.Contains(last, []byte("[DONE]")) {
		return ttfb, errors.New("stream ended without [DONE]")
	}
	return ttfb, nil
}

// goClosed runs conns clients in a loop for d.
func goClosed(t target, conns int, d time.Duration) closedResult {
	client := newClient(conns)
	defer client.CloseIdleConnections()
	var reqs, errs atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for c := range conns {
		wg.Go(func() {
			for n := uint64(0); ctx.Err() == nil; n++ {
				req, err := t.request(context.Background(), uint64(c), n)
				if err != nil {
					errs.Add(1)
					continue
				}
				if _, err := do(client, req, t.stream); err != nil {
					errs.Add(1)
				} else {
					reqs.Add(1)
				}
			}
		})
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	return closedResult{Requests: reqs.Load(), Errors: errs.Load(), Seconds: secs, RPS: float64(reqs.Load()) / secs, Tool: "go"}
}

// goOpen sends rate requests per second for d, each on its own goroutine,
// at most maxInflight at once (beyond that a request is dropped and
// counted: the level could not sustain the rate).
func goOpen(t target, rate float64, d time.Duration, maxInflight int) openResult {
	n := int(rate * d.Seconds())
	client := newClient(maxInflight)
	defer client.CloseIdleConnections()
	lat := make([]time.Duration, n)
	ttfb := make([]time.Duration, n)
	failed := make([]bool, n)
	sem := make(chan struct{}, maxInflight)
	interval := time.Duration(float64(time.Second) / rate)
	res := openResult{Rate: rate}
	var wg sync.WaitGroup
	pace := newPacer()
	defer pace.stop()
	start := time.Now().Add(10 * time.Millisecond)
	for i := range n {
		at := start.Add(time.Duration(i) * interval)
		pace.until(at)
		select {
		case sem <- struct{}{}:
		default:
			res.Dropped++
			lat[i] = -1
			continue
		}
		wg.Go(func() {
			defer func() { <-sem }()
			req, err := t.request(context.Background(), 1<<20, uint64(i))
			if err == nil {
				var first time.Time
				first, err = do(client, req, t.stream)
				if !first.IsZero() {
					ttfb[i] = first.Sub(at)
				}
			}
			lat[i] = time.Since(at)
			failed[i] = err != nil
		})
	}
	wg.Wait()
	end := time.Now()
	var ok, okTTFB []time.Duration
	for i := range n {
		switch {
		case lat[i] < 0:
		case failed[i]:
			res.Errors++
		default:
			ok = append(ok, lat[i])
			okTTFB = append(okTTFB, ttfb[i])
		}
	}
	res.Sent = n - res.Dropped
	res.Achieved = float64(len(ok)) / end.Sub(start).Seconds()
	res.P50, res.P90, res.P99, res.Max = pct(ok, 0.50), pct(ok, 0.90), pct(ok, 0.99), pct(ok, 1)
	if t.stream {
		res.TTFBP50, res.TTFBP99 = pct(okTTFB, 0.50), pct(okTTFB, 0.99)
	}
	return res
}

// pct is the q-quantile of ds in milliseconds (nearest rank).
func pct(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.999999) - 1
	i = min(max(i, 0), len(s)-1)
	return float64(s[i]) / float64(time.Millisecond)
}

// wrkScript drives wrk with the same unique bodies as the Go clients: each
// wrk thread has its own counter and client number.
const wrkScript = `
local function slurp(p) local f = assert(io.open(p, "rb")); local s = f:read("*a"); f:close(); return s end
local prefix = slurp(%q)
local suffix = slurp(%q)
local words = {%s}
local phase = %d
local nextid = 0
local counter = 0
function setup(thread) thread:set("client", nextid); nextid = nextid + 1 end
local function spell(n)
  local t = {}
  repeat local d = n %% #words; t[#t+1] = words[d+1]; n = math.floor(n / #words) until n == 0
  return table.concat(t, " ")
end
function request()
  local tag = spell(phase) .. " and " .. spell(client) .. " then " .. spell(counter)
  counter = counter + 1
  return wrk.format("POST", %q, {["Content-Type"] = "application/json"}, prefix .. tag .. suffix)
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("BENCHRESULT requests=%%d duration_us=%%d connect=%%d read=%%d write=%%d status=%%d timeout=%%d\n",
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout))
end
`

var wrkResultRE = regexp.MustCompile(`BENCHRESULT requests=(\d+) duration_us=(\d+) connect=(\d+) read=(\d+) write=(\d+) status=(\d+) timeout=(\d+)`)

// wrkClosed runs wrk with conns connections on threads threads for d. Each
// phase has its own number, so its tags never meet another phase's.
func wrkClosed(dir string, t target, threads, conns int, d time.Duration) (closedResult, error) {
	pre, suf := filepath.Join(dir, "prefix.json"), filepath.Join(dir, "suffix.json")
	if err := os.WriteFile(pre, t.body.prefix, 0o600); err != nil {
		return closedResult{}, err
	}
	if err := os.WriteFile(suf, t.body.suffix, 0o600); err != nil {
		return closedResult{}, err
	}
	quoted := make([]string, len(tagWords))
	for i, w := range tagWords {
		quoted[i] = strconv.Quote(w)
	}
	script := filepath.Join(dir, "bench.lua")
	src := fmt.Sprintf(wrkScript, pre, suf, strings.Join(quoted, ","), t.phase, chatPath)
	if err := os.WriteFile(script, []byte(src), 0o600); err != nil {
		return closedResult{}, err
	}
	secs := max(1, int(d.Round(time.Second)/time.Second))
	out, err := exec.Command("wrk", "-t", strconv.Itoa(threads), "-c", strconv.Itoa(conns),
		"-d", strconv.Itoa(secs)+"s", "--timeout", "30s", "-s", script, t.url).CombinedOutput()
	if err != nil {
		return closedResult{}, fmt.Errorf("wrk: %w\n%s", err, out)
	}
	m := wrkResultRE.FindStringSubmatch(string(out))
	if m == nil {
		return closedResult{}, fmt.Errorf("wrk printed no result:\n%s", out)
	}
	v := make([]int64, len(m))
	for i := 1; i < len(m); i++ {
		v[i], _ = strconv.ParseInt(m[i], 10, 64)
	}
	r := closedResult{Seconds: float64(v[2]) / 1e6, Tool: "wrk"}
	r.Errors = v[3] + v[4] + v[5] + v[6] + v[7]
	r.Requests = v[1] - v[6] // non-2xx answers are not throughput
	r.RPS = float64(r.Requests) / r.Seconds
	return r, nil
}
