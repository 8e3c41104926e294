// Command reload is the fault-injection run for config reloads under load:
// it drives a real gateway process with concurrent keep-alive clients while
// reloading its config through the admin API's /load every few hundred
// milliseconds, and counts the client errors by kind. It repeats the run
// with the client variants that tell the causes apart:
//
//   - keep-alive: POST on reused connections, as most SDKs send;
//
//   - keep-alive, Idempotency-Key: the same with an Idempotency-Key header,
//     which lets Go's client resend a request the server never read;
//
//   - no keep-alive: one connection per request.
//
//     go run ./bench/reload -d 20s -every 300ms -clients 32
//
// Every process, port and file is temporary and on loopback.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/promptwall/promptwall/bench/internal/gw"
	"github.com/promptwall/promptwall/internal/testsvc"
)

func main() {
	d := flag.Duration("d", 20*time.Second, "length of each variant's run")
	every := flag.Duration("every", 300*time.Millisecond, "time between reloads")
	clients := flag.Int("clients", 32, "concurrent clients")
	mode := flag.String("durability", "sync", "the store's durability mode")
	grace := flag.Duration("grace", 0, "the http app's grace_period (0: Caddy's default)")
	only := flag.String("variant", "", "run only this variant (keepalive, idempotent, close)")
	plain := flag.Bool("plain", false, "proxy without the promptwall handler and app, to tell Caddy's share of the errors from ours")
	check := flag.Bool("check", false, "exit 1 when a failure is the gateway's own: a request forwarded but not answered, a 5xx, a failed reload or a panic")
	migrate := flag.Bool("migrate", false, "set net.ipv4.tcp_migrate_req=1 for the run (root, Linux 5.14+), restoring it after")
	bin := flag.String("bin", "", "caddy binary with promptwall (default: build ./cmd/caddy)")
	flag.Parse()
	err := func() error {
		if *migrate {
			restore, err := setMigrateReq()
			if err != nil {
				return err
			}
			defer restore()
		}
		return run(*d, *every, *clients, *mode, *grace, *only, *plain, *check, *bin)
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "reload:", err)
		os.Exit(1)
	}
}

type variant struct {
	name, label string
	keepAlive   bool
	idempotent  bool
}

var variants = []variant{
	{"keepalive", "keep-alive", true, false},
	{"idempotent", "keep-alive, Idempotency-Key", true, true},
	{"close", "no keep-alive", false, false},
}

func run(d, every time.Duration, clients int, mode string, grace time.Duration, only string, plain, check bool, bin string) error {
	b, err := gw.Prepare("reload", bin)
	if err != nil {
		return err
	}
	defer b.Close()
	tmp, bin, up, served := b.Dir, b.Bin, b.Upstream, b.Served
	what := "promptwall, durability " + mode
	if plain {
		what = "plain reverse_proxy, no promptwall"
	}
	fmt.Printf("reload under load: %d clients, a config reload every %s for %s per variant, %s, grace_period %s, net.ipv4.tcp_migrate_req %s\n\n",
		clients, every, d, what, grace, migrateReq())
	fmt.Println("| client | requests | ok | errors | rate | forwarded - ok | reloads | errors by kind |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	var failed []string
	for _, v := range variants {
		if only != "" && v.name != only {
			continue
		}
		before := served.Load()
		r, err := runVariant(bin, filepath.Join(tmp, v.name), up, mode, grace, plain, v, clients, d, every)
		if err != nil {
			return err
		}
		errs := 0
		for _, n := range r.errors {
			errs += n
		}
		var kinds []string
		for _, k := range slices.Sorted(maps.Keys(r.errors)) {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, r.errors[k]))
		}
		// Requests the upstream answered but the client did not get: a
		// request lost inside the gateway after forwarding shows here.
		lost := served.Load() - before - int64(r.requests-errs)
		fmt.Printf("| %s | %d | %d | %d | %.3f%% | %d | %d (%d failed) | %s |\n", v.label, r.requests, r.requests-errs, errs,
			100*float64(errs)/float64(max(r.requests, 1)), lost, r.reloads, r.reloadFailures, strings.Join(kinds, ", "))
		if r.panics > 0 {
			fmt.Printf("\n%d panics in the gateway's log\n", r.panics)
		}
		fives := 0
		for k, n := range r.errors {
			if strings.HasPrefix(k, "status 5") {
				fives += n
			}
		}
		if check && (lost != 0 || fives != 0 || r.reloadFailures != 0 || r.panics != 0) {
			failed = append(failed, fmt.Sprintf("%s: %d forwarded but not answered, %d 5xx, %d failed reloads, %d panics",
				v.label, lost, fives, r.reloadFailures, r.panics))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("failures of the gateway's own:\n%s", strings.Join(failed, "\n"))
	}
	return nil
}

const config = `{
	admin 127.0.0.1:%d
	auto_https off
	persist_config off
	%s
	log {
		level ERROR
	}
	promptwall {
		storage %s
		durability %s
		endpoint bare {
			scanner banned_substrings {
				mode block
				substrings "reload marker %d"
			}
		}
	}
}

http://127.0.0.1:%d {
	promptwall bare
	reverse_proxy %s
}
`

// plainConfig changes a response header on each reload so that Caddy
// does not skip the unchanged config.
const plainConfig = `{
	admin 127.0.0.1:%d
	auto_https off
	persist_config off
	%s
	log {
		level ERROR
	}
}

http://127.0.0.1:%d {
	header X-Generation %d
	reverse_proxy %s
}
`

// migrateReq reports Linux's net.ipv4.tcp_migrate_req: when 1, closing a
// SO_REUSEPORT listener moves the connections in its accept queue to
// another listener of the port instead of resetting them.
func migrateReq() string {
	b, err := os.ReadFile(migrateReqPath)
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

const migrateReqPath = "/proc/sys/net/ipv4/tcp_migrate_req"

func setMigrateReq() (restore func(), err error) {
	old, err := os.ReadFile(migrateReqPath)
	if err != nil {
		return nil, fmt.Errorf("-migrate needs Linux 5.14 or later: %w", err)
	}
	if err := os.WriteFile(migrateReqPath, []byte("1"), 0o644); err != nil {
		return nil, fmt.Errorf("-migrate needs root: %w", err)
	}
	return func() { _ = os.WriteFile(migrateReqPath, old, 0o644) }, nil
}

type result struct {
	requests, reloads, reloadFailures, panics int
	errors                                    map[string]int
}

func runVariant(bin, dir, upstream, mode string, grace time.Duration, plain bool, v variant, clients int, d, every time.Duration) (result, error) {
	port, err := testsvc.FreePort()
	if err != nil {
		return result{}, err
	}
	adminPort, err := testsvc.FreePort()
	if err != nil {
		return result{}, err
	}
	graceLine := ""
	if grace > 0 {
		graceLine = "grace_period " + grace.String()
	}
	db := filepath.Join(dir, "promptwall.db")
	cfg := func(gen int) string {
		if plain {
			return fmt.Sprintf(plainConfig, adminPort, graceLine, port, gen, upstream)
		}
		return fmt.Sprintf(config, adminPort, graceLine, db, mode, gen, port, upstream)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p, err := gw.Start(bin, dir, cfg(0), addr)
	if err != nil {
		return result{}, err
	}
	defer p.Kill()

	url := "http://" + addr + "/v1/chat/completions"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, DisableKeepAlives: !v.keepAlive},
		Timeout: 30 * time.Second}
	var (
		mu       sync.Mutex
		errs     = map[string]int{}
		requests atomic.Int64
	)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				requests.Add(1)
				if kind := send(client, url, v.idempotent); kind != "" {
					mu.Lock()
					errs[kind]++
					mu.Unlock()
				}
			}
		})
	}
	var r result
	admin := &http.Client{Timeout: 60 * time.Second}
	for gen := 1; ctx.Err() == nil; gen++ {
		time.Sleep(every)
		if err := reload(admin, adminPort, cfg(gen)); err != nil {
			r.reloadFailures++
		}
		r.reloads++
	}
	wg.Wait()
	r.requests, r.errors = int(requests.Load()), errs
	if log, err := os.ReadFile(p.Log()); err == nil {
		r.panics = strings.Count(string(log), "panic")
	}
	return r, nil
}

// send posts one request and returns "" for a fully read 200, else the kind
// of failure.
func send(client *http.Client, url string, idempotent bool) string {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(gw.Body))
	if err != nil {
		return "request: " + err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	if idempotent {
		req.Header.Set("Idempotency-Key", fmt.Sprint(time.Now().UnixNano()))
	}
	resp, err := client.Do(req)
	if err != nil {
		return kind(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return "body " + kind(err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("status %d", resp.StatusCode)
	}
	return ""
}

func kind(err error) string {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "EOF"
	case errors.Is(err, syscall.ECONNRESET):
		return "reset"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, syscall.EPIPE):
		return "broken pipe"
	case errors.Is(err, context.DeadlineExceeded), strings.Contains(err.Error(), "Timeout"):
		return "timeout"
	case strings.Contains(err.Error(), "server closed idle connection"):
		return "closed idle"
	}
	return "other: " + err.Error()
}

// reload posts the Caddyfile to the admin API's /load.
func reload(admin *http.Client, adminPort int, caddyfile string) error {
	req, err := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/load", adminPort), strings.NewReader(caddyfile))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "text/caddyfile")
	resp, err := admin.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	return nil
}
