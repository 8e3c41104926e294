// Command crash is the fault-injection run for record durability: for each
// durability mode it drives a real gateway process with concurrent
// clients, kills it with SIGKILL mid-load, reopens the database and counts
// the answered requests whose record is missing; then it measures the
// latency each mode costs at a fixed request rate.
//
//	go run ./bench/crash -runs 3 -load 3s -rate 1000 -latency 10s
//
// A request counts as answered when its whole 200 body was read. Every
// process, port and file is temporary and on loopback.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/promptwall/promptwall/store"
)

func main() {
	runs := flag.Int("runs", 3, "kill -9 runs per durability mode")
	load := flag.Duration("load", 3*time.Second, "load before each kill")
	clients := flag.Int("clients", 32, "concurrent clients during the kill runs")
	rate := flag.Float64("rate", 1000, "request rate of the latency phase (requests/s)")
	latency := flag.Duration("latency", 10*time.Second, "length of each mode's latency phase")
	bin := flag.String("bin", "", "caddy binary with promptwall (default: build ./cmd/caddy)")
	flag.Parse()
	if err := run(*runs, *load, *clients, *rate, *latency, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "crash:", err)
		os.Exit(1)
	}
}

const completion = `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hello there, how can I help?"},"finish_reason":"stop"}]}`

const body = `{"model":"m","messages":[{"role":"user","content":"Summarise the meeting notes in three bullet points."}]}`

func run(runs int, load time.Duration, clients int, rate float64, latency time.Duration, bin string) error {
	tmp, err := os.MkdirTemp("", "promptwall-crash-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if bin == "" {
		bin = filepath.Join(tmp, "caddy")
		build := exec.Command("go", "build", "-o", bin, "./cmd/caddy")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building ./cmd/caddy (run from the repository root): %w", err)
		}
	}
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go http.Serve(up, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, completion)
	}))
	fmt.Printf("kill -9 under load: %d clients, SIGKILL after %s, %d runs per mode\n\n", clients, load, runs)
	fmt.Println("| mode | run | answered | stored | missing |")
	fmt.Println("|---|---|---|---|---|")
	for _, mode := range []string{"batched", "sync"} {
		for i := 1; i <= runs; i++ {
			answered, missing, err := killRun(bin, filepath.Join(tmp, fmt.Sprint(mode, i)), up.Addr().String(), mode, clients, load)
			if err != nil {
				return err
			}
			fmt.Printf("| %s | %d | %d | %d | %d |\n", mode, i, answered, answered-missing, missing)
		}
	}
	fmt.Printf("\nlatency at %.0f req/s open loop for %s (loopback, mock upstream, endpoint without scanners)\n\n", rate, latency)
	fmt.Println("| mode | sent | ok | p50 ms | p99 ms |")
	fmt.Println("|---|---|---|---|---|")
	for _, mode := range []string{"batched", "sync"} {
		r, err := latencyRun(bin, filepath.Join(tmp, "lat-"+mode), up.Addr().String(), mode, rate, latency)
		if err != nil {
			return err
		}
		fmt.Printf("| %s | %d | %d | %.2f | %.2f |\n", mode, r.sent, r.ok, r.p50, r.p99)
	}
	return nil
}

type gateway struct {
	cmd  *exec.Cmd
	url  string
	db   string
	done chan struct{}
}

func start(bin, dir, upstream, mode string) (*gateway, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	db := filepath.Join(dir, "promptwall.db")
	cfg := fmt.Sprintf(`{
	admin off
	auto_https off
	persist_config off
	log {
		level ERROR
	}
	promptwall {
		storage %s
		durability %s
		endpoint bare {
		}
	}
}

http://127.0.0.1:%d {
	promptwall bare
	reverse_proxy %s
}
`, db, mode, port, upstream)
	path := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "caddy.log"))
	if err != nil {
		return nil, err
	}
	g := &gateway{cmd: exec.Command(bin, "run", "--config", path, "--adapter", "caddyfile"),
		url: fmt.Sprintf("http://127.0.0.1:%d/v1/chat/completions", port), db: db, done: make(chan struct{})}
	g.cmd.Stdout, g.cmd.Stderr = logf, logf
	g.cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	if err := g.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = g.cmd.Wait(); logf.Close(); close(g.done) }()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return g, nil
		}
	}
	g.kill()
	return nil, fmt.Errorf("the gateway did not start; see %s", filepath.Join(dir, "caddy.log"))
}

func (g *gateway) kill() {
	_ = g.cmd.Process.Kill() // SIGKILL
	<-g.done
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// post sends one request and returns the record id of a fully read 200.
func post(client *http.Client, url string) (string, error) {
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %d", resp.StatusCode)
	}
	return resp.Header.Get("X-Promptwall-Prompt-Id"), nil
}

func killRun(bin, dir, upstream, mode string, clients int, load time.Duration) (answered, missing int, err error) {
	g, err := start(bin, dir, upstream, mode)
	if err != nil {
		return 0, 0, err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}, Timeout: 10 * time.Second}
	var mu sync.Mutex
	var ids []string
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for !stop.Load() {
				if id, err := post(client, g.url); err == nil && id != "" {
					mu.Lock()
					ids = append(ids, id)
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(load)
	g.kill()
	stop.Store(true)
	wg.Wait()
	st, err := store.Open(store.Options{Path: g.db, Retention: -1})
	if err != nil {
		return 0, 0, err
	}
	defer st.Close()
	for _, id := range ids {
		if _, err := st.GetPrompt(id); err != nil {
			missing++
		}
	}
	return len(ids), missing, nil
}

type latencyResult struct {
	sent, ok int
	p50, p99 float64
}

// latencyRun sends rate requests a second on schedule (open loop, at most
// 512 in flight) and reports the latency of the successful ones.
func latencyRun(bin, dir, upstream, mode string, rate float64, d time.Duration) (latencyResult, error) {
	g, err := start(bin, dir, upstream, mode)
	if err != nil {
		return latencyResult{}, err
	}
	defer g.kill()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512}, Timeout: 10 * time.Second}
	// Warm up connections and caches.
	for range 200 {
		_, _ = post(client, g.url)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	sem := make(chan struct{}, 512)
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	interval := time.Duration(float64(time.Second) / rate)
	startAt := time.Now()
	sent := 0
	for i := 0; ctx.Err() == nil; i++ {
		next := startAt.Add(time.Duration(i) * interval)
		if w := time.Until(next); w > 0 {
			time.Sleep(w)
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		sent++
		wg.Go(func() {
			defer func() { <-sem }()
			t0 := time.Now()
			if _, err := post(client, g.url); err == nil {
				mu.Lock()
				lat = append(lat, time.Since(t0))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(lat)
	r := latencyResult{sent: sent, ok: len(lat)}
	if len(lat) > 0 {
		r.p50 = float64(lat[len(lat)/2]) / 1e6
		r.p99 = float64(lat[len(lat)*99/100]) / 1e6
	}
	return r, nil
}
