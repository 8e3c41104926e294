// Command multiinstance is the load test of two gateway instances sharing
// their provider limits in Redis. It builds ./cmd/caddy, starts two
// instances on loopback with one Caddyfile each (same Redis, same key
// prefix, a mock upstream that counts), sends load through both, and
// checks what a user relies on:
//
//   - a provider limit of 20 requests per second admits 20 +/- 5% per
//     second in total, not 20 per instance;
//   - a concurrency limit of 4 is never exceeded across both (the mock
//     upstream counts the requests it holds at once);
//   - after one instance is killed with SIGKILL while holding slots, the
//     other gets all 4 slots back within the lease time.
//
// It needs PROMPTWALL_TEST_REDIS_ADDR (.ci/services.sh starts Redis) and
// exits non-zero when a check fails. Run: go run ./internal/multiinstance
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	rateLimit  = 20
	slotLimit  = 4
	leaseTTL   = 3 * time.Second
	completion = `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hi."},"finish_reason":"stop"}]}`
	chatBody   = `{"model":"m","messages":[{"role":"user","content":"Summarize our meeting in one line."}]}`
)

func main() {
	duration := flag.Duration("duration", 10*time.Second, "length of the rate phase")
	bin := flag.String("caddy", "", "gateway binary; default: build ./cmd/caddy")
	flag.Parse()
	if err := run(*duration, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "multiinstance: FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("multiinstance: PASS")
}

// upstream is the mock provider: it counts requests held at once and the
// arrivals of each second.
type upstream struct {
	delay    atomic.Int64 // ns
	inFlight atomic.Int64
	peak     atomic.Int64
	mu       sync.Mutex
	arrivals []time.Time
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := u.inFlight.Add(1)
	defer u.inFlight.Add(-1)
	for p := u.peak.Load(); n > p && !u.peak.CompareAndSwap(p, n); p = u.peak.Load() {
	}
	u.mu.Lock()
	u.arrivals = append(u.arrivals, time.Now())
	u.mu.Unlock()
	_, _ = io.Copy(io.Discard, r.Body)
	// A request from a killed instance ends with its connection.
	t := time.NewTimer(time.Duration(u.delay.Load()))
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, completion)
}

func (u *upstream) arrivalsSince(t time.Time) []time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []time.Time
	for _, a := range u.arrivals {
		if !a.Before(t) {
			out = append(out, a)
		}
	}
	return out
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

const caddyfile = `{
	admin off
	http_port %[1]d
	grace_period 1ns
	storage file_system %[2]s
	promptwall {
		storage %[2]s/pw.db
		limits redis {
			addr %[3]s
			prefix %[4]s
			lease_ttl %[5]s
		}
		provider openai {
			type openai
			base_url %[6]s
			secret api_key sk-multiinstance-test
			max_requests_per_second %[7]d
			request_concurrency_limit %[8]d
		}
	}
}

:%[1]d {
	promptwall {
		provider openai
		max_queue_wait 10s
	}
	reverse_proxy %[6]s
}
`

type instance struct {
	port int
	cmd  *exec.Cmd
}

func start(bin, dir string, port int, redisAddr, prefix, upstreamURL string) (*instance, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "Caddyfile")
	text := fmt.Sprintf(caddyfile, port, dir, redisAddr, prefix, leaseTTL, upstreamURL, rateLimit, slotLimit)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "caddy.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "run", "--config", cfg, "--adapter", "caddyfile")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir, "HOME="+dir)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	in := &instance{port: port, cmd: cmd}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			_ = c.Close()
			return in, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	return nil, fmt.Errorf("instance on port %d did not start; log in %s", port, log.Name())
}

func (in *instance) post(ctx context.Context, client *http.Client) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/v1/chat/completions", in.port), strings.NewReader(chatBody))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

func run(duration time.Duration, bin string) error {
	redisAddr := os.Getenv("PROMPTWALL_TEST_REDIS_ADDR")
	if redisAddr == "" {
		return fmt.Errorf("PROMPTWALL_TEST_REDIS_ADDR is unset: start Redis with `bash .ci/services.sh -- go run ./internal/multiinstance`")
	}
	tmp, err := os.MkdirTemp("", "pw-multi")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if bin == "" {
		bin = filepath.Join(tmp, "caddy")
		fmt.Println("building ./cmd/caddy ...")
		build := exec.Command("go", "build", "-o", bin, "./cmd/caddy")
		build.Stdout, build.Stderr = os.Stdout, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build: %w", err)
		}
	}
	up := &upstream{}
	up.delay.Store(int64(50 * time.Millisecond))
	srv := httptest.NewServer(up)
	defer srv.Close()
	id := make([]byte, 6)
	_, _ = rand.Read(id)
	prefix := "pwmulti:" + hex.EncodeToString(id) + ":"

	var insts []*instance
	defer func() {
		for _, in := range insts {
			_ = in.cmd.Process.Kill()
			_, _ = in.cmd.Process.Wait()
		}
	}()
	for i := range 2 {
		port, err := freePort()
		if err != nil {
			return err
		}
		in, err := start(bin, filepath.Join(tmp, fmt.Sprint("i", i)), port, redisAddr, prefix, srv.URL)
		if err != nil {
			return err
		}
		insts = append(insts, in)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

	// Phase 1: load through both for the duration. Requests wait up to
	// 10s in the queue, so admissions follow the shared rate.
	fmt.Printf("rate phase: %s of load through both instances\n", duration)
	begin := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), duration)
	var wg sync.WaitGroup
	var ok, other atomic.Int64
	for w := range 16 {
		in := insts[w%2]
		wg.Go(func() {
			for ctx.Err() == nil {
				code, err := in.post(ctx, client)
				switch {
				case err != nil && ctx.Err() != nil:
				case err == nil && code == http.StatusOK:
					ok.Add(1)
				default:
					other.Add(1)
				}
			}
		})
	}
	wg.Wait()
	cancel()
	// The bucket starts full: the first second may admit a burst of
	// rateLimit on top of the rate. Judge the seconds after it.
	arr := up.arrivalsSince(begin.Add(time.Second))
	var inWindow int
	end := begin.Add(duration)
	for _, a := range arr {
		if a.Before(end) {
			inWindow++
		}
	}
	secs := (duration - time.Second).Seconds()
	perSecond := float64(inWindow) / secs
	fmt.Printf("admitted %.2f/s in total over %.0fs after the first (limit %d/s); peak in flight upstream %d (limit %d); %d refused or failed\n",
		perSecond, secs, rateLimit, up.peak.Load(), slotLimit, other.Load())
	var failures []string
	if perSecond < rateLimit*0.95 || perSecond > rateLimit*1.05 {
		failures = append(failures, fmt.Sprintf("rate %.2f/s outside %d +/- 5%%", perSecond, rateLimit))
	}
	if up.peak.Load() > slotLimit {
		failures = append(failures, fmt.Sprintf("%d requests in flight upstream, limit %d", up.peak.Load(), slotLimit))
	}

	// Phase 2: instance 0 holds every slot with slow answers and is
	// killed; instance 1 must get all the slots back within the lease.
	fmt.Println("crash phase: instance 0 holds every slot and is killed with SIGKILL")
	up.delay.Store(int64(time.Minute))
	up.peak.Store(0)
	hctx, hcancel := context.WithCancel(context.Background())
	defer hcancel()
	for range slotLimit {
		go func() { _, _ = insts[0].post(hctx, client) }()
	}
	for deadline := time.Now().Add(20 * time.Second); up.inFlight.Load() < slotLimit; {
		if time.Now().After(deadline) {
			return fmt.Errorf("instance 0 never held %d slots (%d)", slotLimit, up.inFlight.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := insts[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	_, _ = insts[0].cmd.Process.Wait()
	killed := time.Now()
	up.delay.Store(int64(50 * time.Millisecond))
	var got atomic.Int64
	var wg2 sync.WaitGroup
	for range slotLimit {
		wg2.Go(func() {
			if code, err := insts[1].post(context.Background(), client); err == nil && code == http.StatusOK {
				got.Add(1)
			}
		})
	}
	wg2.Wait()
	back := time.Since(killed)
	fmt.Printf("after the kill, instance 1 was admitted %d of %d requests within %s (lease %s)\n", got.Load(), slotLimit, back.Round(time.Millisecond), leaseTTL)
	if got.Load() != slotLimit {
		failures = append(failures, fmt.Sprintf("only %d of %d slots came back", got.Load(), slotLimit))
	}
	// Every admitted request waited at most the lease time plus the
	// renewal slack for the dead instance's slots.
	if back > leaseTTL+2*time.Second {
		failures = append(failures, fmt.Sprintf("slots came back after %s, lease %s", back, leaseTTL))
	}
	if len(failures) > 0 {
		return fmt.Errorf("%s", strings.Join(failures, "; "))
	}
	return nil
}
