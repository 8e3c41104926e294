// Command crash is the fault-injection run for record durability: for each
// durability mode it drives a real gateway process with concurrent
// clients, kills it with SIGKILL mid-load, reopens the database and counts
// the answered requests whose record is missing; then it measures the
// latency each mode costs at fixed request rates (-runs 0 or -pairs 0 skip
// either part).
//
//	go run ./bench/crash -runs 3 -load 3s -rates 200,1000 -pairs 3 -latency 10s
//
// A request counts as answered when its whole 200 body was read. Every
// process, port and file is temporary and on loopback.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/promptwall/promptwall/bench/internal/gw"
	"github.com/promptwall/promptwall/internal/testsvc"
	"github.com/promptwall/promptwall/store"
)

func main() {
	runs := flag.Int("runs", 3, "kill -9 runs per durability mode")
	load := flag.Duration("load", 3*time.Second, "load before each kill")
	clients := flag.Int("clients", 32, "concurrent clients during the kill runs")
	rateList := flag.String("rates", "200,1000", "request rates of the latency phase (requests/s, comma-separated)")
	pairs := flag.Int("pairs", 3, "latency runs per mode and rate, alternating batched and sync (0: none)")
	latency := flag.Duration("latency", 10*time.Second, "length of each latency run")
	bin := flag.String("bin", "", "caddy binary with promptwall (default: build ./cmd/caddy)")
	flag.Parse()
	var rates []float64
	for f := range strings.SplitSeq(*rateList, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || r <= 0 {
			fmt.Fprintf(os.Stderr, "crash: -rates: %q is not a positive number\n", f)
			os.Exit(2)
		}
		rates = append(rates, r)
	}
	if err := run(*runs, *load, *clients, rates, *pairs, *latency, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "crash:", err)
		os.Exit(1)
	}
}

func run(runs int, load time.Duration, clients int, rates []float64, pairs int, latency time.Duration, bin string) error {
	b, err := gw.Prepare("crash", bin)
	if err != nil {
		return err
	}
	defer b.Close()
	tmp, bin, up := b.Dir, b.Bin, b.Upstream
	if runs > 0 {
		fmt.Printf("kill -9 under load: %d clients, SIGKILL after %s, %d runs per mode\n\n", clients, load, runs)
		fmt.Println("| mode | run | answered | stored | missing |")
		fmt.Println("|---|---|---|---|---|")
		for _, mode := range []string{"batched", "sync"} {
			for i := 1; i <= runs; i++ {
				answered, missing, err := killRun(bin, filepath.Join(tmp, fmt.Sprint(mode, i)), up, mode, clients, load)
				if err != nil {
					return err
				}
				fmt.Printf("| %s | %d | %d | %d | %d |\n", mode, i, answered, answered-missing, missing)
			}
		}
	}
	if pairs == 0 {
		return nil
	}
	// The machine may be shared: the modes alternate (A/B/A/B) so that a
	// change in its load falls on both.
	fmt.Printf("\nlatency, open loop for %s per run, modes alternating, %d pairs per rate (loopback, mock upstream, endpoint without scanners)\n\n", latency, pairs)
	fmt.Println("| rate | pair | mode | sent | ok | achieved req/s | p50 ms | p99 ms |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, rate := range rates {
		p50 := map[string][]float64{}
		for i := 1; i <= pairs; i++ {
			for _, mode := range []string{"batched", "sync"} {
				r, err := latencyRun(bin, filepath.Join(tmp, fmt.Sprintf("lat-%.0f-%s-%d", rate, mode, i)), up, mode, rate, latency)
				if err != nil {
					return err
				}
				sat := ""
				if r.achieved < 0.95*rate {
					sat = " (saturated)"
				}
				fmt.Printf("| %.0f | %d | %s | %d | %d | %.0f%s | %.2f | %.2f |\n", rate, i, mode, r.sent, r.ok, r.achieved, sat, r.p50, r.p99)
				p50[mode] = append(p50[mode], r.p50)
			}
		}
		fmt.Printf("| %.0f | median | sync/batched p50 | | | | %.1fx | |\n", rate, median(p50["sync"])/median(p50["batched"]))
	}
	return nil
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

type gateway struct {
	*gw.Process
	url string
	db  string
}

func start(bin, dir, upstream, mode string) (*gateway, error) {
	port, err := testsvc.FreePort()
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
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p, err := gw.Start(bin, dir, cfg, addr)
	if err != nil {
		return nil, err
	}
	return &gateway{Process: p, url: "http://" + addr + "/v1/chat/completions", db: db}, nil
}

// post sends one request and returns the record id of a fully read 200.
func post(client *http.Client, url string) (string, error) {
	resp, err := client.Post(url, "application/json", strings.NewReader(gw.Body))
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
	g.Kill()
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
	// achieved is the rate at which requests were sent.
	achieved float64
	p50, p99 float64
}

// latencyRun sends rate requests a second on schedule (open loop, at most
// 512 in flight) and reports the latency of the successful ones.
func latencyRun(bin, dir, upstream, mode string, rate float64, d time.Duration) (latencyResult, error) {
	g, err := start(bin, dir, upstream, mode)
	if err != nil {
		return latencyResult{}, err
	}
	defer g.Kill()
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
	elapsed := time.Since(startAt)
	wg.Wait()
	slices.Sort(lat)
	r := latencyResult{sent: sent, ok: len(lat), achieved: float64(sent) / elapsed.Seconds()}
	if len(lat) > 0 {
		r.p50 = float64(lat[len(lat)/2]) / 1e6
		r.p99 = float64(lat[len(lat)*99/100]) / 1e6
	}
	return r, nil
}
