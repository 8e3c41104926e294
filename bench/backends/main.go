// Command backends measures what sharing costs the gateway: its CPU time
// per request with the embedded engines (a bbolt file, limits in process)
// against the shared ones (PostgreSQL, limits in Redis), in the same run,
// alternating, with the same load, durability sync and the same provider
// limits (set high enough never to refuse, so every request takes and
// returns a slot and a rate token).
//
//	bash .ci/services.sh -- go run ./bench/backends -duration 10s -rounds 2
//
// The gateway's CPU is its process's user+system time from /proc; the
// database's and Redis's own CPU is not counted. Linux only. Every
// process, port and file is temporary and on loopback.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/promptwall/promptwall/internal/cputime"
	"github.com/promptwall/promptwall/internal/testsvc"
)

const (
	completion = `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hi."},"finish_reason":"stop"}]}`
	chatBody   = `{"model":"m","messages":[{"role":"user","content":"Summarize our meeting in one line, please."}]}`
	cursorKey  = "bench-backends-cursor-key-0123456789abcdef"
)

func main() {
	duration := flag.Duration("duration", 10*time.Second, "measured load per engine and round")
	conns := flag.Int("c", 16, "concurrent clients")
	rounds := flag.Int("rounds", 2, "rounds of both engines, alternating")
	bin := flag.String("caddy", "", "gateway binary; default: build ./cmd/caddy")
	flag.Parse()
	if err := run(*duration, *conns, *rounds, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "backends:", err)
		os.Exit(1)
	}
}

// engine is one storage + limits configuration.
type engine struct {
	name   string
	global string
}

func run(duration time.Duration, conns, rounds int, bin string) error {
	dsn, redisAddr := os.Getenv("PROMPTWALL_TEST_PG_DSN"), os.Getenv("PROMPTWALL_TEST_REDIS_ADDR")
	if dsn == "" || redisAddr == "" {
		return fmt.Errorf("PROMPTWALL_TEST_PG_DSN and PROMPTWALL_TEST_REDIS_ADDR are required: run under `bash .ci/services.sh -- go run ./bench/backends`")
	}
	tmp, err := os.MkdirTemp("", "pw-backends")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if bin == "" {
		bin = filepath.Join(tmp, "caddy")
		build := exec.Command("go", "build", "-o", bin, "./cmd/caddy")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build: %w", err)
		}
	}
	id := make([]byte, 6)
	_, _ = rand.Read(id)
	suffix := hex.EncodeToString(id)
	dbDSN, drop, err := testsvc.CreateDatabase(dsn, "pw_bench_"+suffix)
	if err != nil {
		return err
	}
	defer drop()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, completion)
	}))
	defer up.Close()

	engines := []engine{
		{name: "bbolt + local limits", global: "storage {dir}/pw.db"},
		{name: "PostgreSQL + Redis", global: fmt.Sprintf("storage postgres {\n\t\t\tdsn %s\n\t\t\tcursor_key %s\n\t\t}\n\t\tlimits redis {\n\t\t\taddr %s\n\t\t\tprefix pwbench:%s:\n\t\t}",
			dbDSN, cursorKey, redisAddr, suffix)},
	}
	type total struct {
		reqs int64
		cpu  time.Duration
	}
	totals := make([]total, len(engines))
	fmt.Printf("%d rounds, %s per engine, %d clients, durability sync\n", rounds, duration, conns)
	for round := range rounds {
		for i, e := range engines {
			reqs, cpu, err := measure(bin, filepath.Join(tmp, fmt.Sprintf("r%d-e%d", round, i)), e, up.URL, duration, conns)
			if err != nil {
				return fmt.Errorf("%s: %w", e.name, err)
			}
			totals[i].reqs += reqs
			totals[i].cpu += cpu
			fmt.Printf("round %d  %-22s %7.0f req/s  %6.0f µs CPU/req\n", round+1, e.name,
				float64(reqs)/duration.Seconds(), float64(cpu.Microseconds())/float64(reqs))
		}
	}
	base := float64(totals[0].cpu.Microseconds()) / float64(totals[0].reqs)
	for i, e := range engines {
		per := float64(totals[i].cpu.Microseconds()) / float64(totals[i].reqs)
		fmt.Printf("all rounds  %-22s %7.0f req/s  %6.0f µs CPU/req  × %.2f of %s\n", e.name,
			float64(totals[i].reqs)/(duration.Seconds()*float64(rounds)), per, per/base, engines[0].name)
	}
	return nil
}

// measure starts a gateway with e, warms it up, and returns the requests
// answered 200 and the gateway's CPU time over duration.
func measure(bin, dir string, e engine, upstream string, duration time.Duration, conns int) (int64, time.Duration, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, 0, err
	}
	port, err := testsvc.FreePort()
	if err != nil {
		return 0, 0, err
	}
	cfg := fmt.Sprintf(`{
	admin off
	http_port %[1]d
	storage file_system %[2]s
	promptwall {
		%[3]s
		durability sync
		provider openai {
			type openai
			base_url %[4]s
			secret api_key sk-bench
			max_requests_per_second 1000000
			request_concurrency_limit 10000
		}
	}
}

:%[1]d {
	promptwall {
		provider openai
	}
	reverse_proxy %[4]s
}
`, port, dir, strings.ReplaceAll(e.global, "{dir}", dir), upstream)
	path := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return 0, 0, err
	}
	log, err := os.Create(filepath.Join(dir, "caddy.log"))
	if err != nil {
		return 0, 0, err
	}
	defer log.Close()
	cmd := exec.Command(bin, "run", "--config", path, "--adapter", "caddyfile")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir, "HOME="+dir)
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
	}()
	addr := fmt.Sprintf("http://127.0.0.1:%d/v1/chat/completions", port)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: conns}}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if code, _ := post(client, addr); code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("gateway did not answer 200; log in %s", log.Name())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := drive(client, addr, conns, time.Second); err != nil {
		return 0, 0, err
	}
	before, ok := cputime.PID(cmd.Process.Pid)
	if !ok {
		return 0, 0, fmt.Errorf("the gateway's CPU time is unreadable in /proc/%d/stat", cmd.Process.Pid)
	}
	reqs, err := drive(client, addr, conns, duration)
	if err != nil {
		return 0, 0, err
	}
	after, ok := cputime.PID(cmd.Process.Pid)
	if !ok {
		return 0, 0, fmt.Errorf("the gateway's CPU time is unreadable in /proc/%d/stat", cmd.Process.Pid)
	}
	return reqs, after - before, nil
}

// drive sends requests from conns clients for d and counts the 200s; any
// other answer is an error (the limits are set never to refuse).
func drive(client *http.Client, addr string, conns int, d time.Duration) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var ok atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for ctx.Err() == nil {
				code, err := post(client, addr)
				if err == nil && code != http.StatusOK {
					err = fmt.Errorf("gateway answered %d", code)
				}
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return 0, err
	}
	return ok.Load(), nil
}

func post(client *http.Client, addr string) (int, error) {
	req, err := http.NewRequest(http.MethodPost, addr, strings.NewReader(chatBody))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}
