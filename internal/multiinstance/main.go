// Command multiinstance is the load test of two gateway instances sharing
// PostgreSQL (storage postgres, durability sync) and Redis (limits redis).
// It builds ./cmd/caddy, starts two instances on loopback with one
// Caddyfile each (same database, same Redis prefix, same cursor key, a mock
// upstream that counts), sends load through both, and checks what a user
// relies on:
//
//   - a provider limit of 20 requests per second admits 20 +/- 5% per
//     second in total, not 20 per instance;
//   - a concurrency limit of 4 is never exceeded across both (the mock
//     upstream counts the requests it holds at once);
//   - every record acknowledged by either instance is listed by the API of
//     the other, exactly once, and the pages agree whichever instance
//     serves them: each cursor is taken from one instance and used on the
//     other, newest first and oldest first give the same order reversed;
//   - Redis stopped: requests are refused with 503 limiter_unavailable
//     (fail_mode closed) and admitted again once Redis is back;
//   - PostgreSQL stopped: the gateway answers 503 store_unavailable and the
//     API 503 unavailable, nothing else fails, every answer acknowledged
//     meanwhile is stored, and both recover once PostgreSQL is back,
//     without a restart;
//   - one instance killed with SIGKILL under load: no acknowledged record
//     is lost;
//   - after an instance is killed while holding every concurrency slot,
//     the other gets all 4 slots back within the lease time.
//
// It needs PROMPTWALL_TEST_REDIS_ADDR, PROMPTWALL_TEST_PG_DSN,
// PROMPTWALL_TEST_PG_CTL and PROMPTWALL_TEST_PG_DATA (.ci/services.sh
// starts both servers and exports them), creates and drops a database of
// its own, and exits non-zero when a check fails. Run:
//
//	bash .ci/services.sh -- go run ./internal/multiinstance
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/promptwall/promptwall/internal/testsvc"
)

const (
	rateLimit  = 20
	slotLimit  = 4
	leaseTTL   = 3 * time.Second
	token      = "multiinstance-bootstrap-token-0123456789abcdef"
	cursorKey  = "multiinstance-cursor-key-0123456789abcdef"
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

const caddyfile = `{
	admin off
	http_port %[1]d
	grace_period 1ns
	storage file_system %[2]s
	promptwall {
		storage postgres {
			dsn {env.PW_MULTI_DSN}
			cursor_key {env.PW_MULTI_CURSOR_KEY}
		}
		durability sync
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
	route /backend/v1/* {
		promptwall_api
	}
	promptwall {
		provider openai
		max_queue_wait 10s
	}
	reverse_proxy %[6]s
}
`

// cluster is what every instance shares.
type cluster struct {
	bin, dsn, redisAddr, prefix, upstreamURL string
}

type instance struct {
	port int
	dir  string
	cmd  *exec.Cmd
}

func (c *cluster) start(dir string, port int) (*instance, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "Caddyfile")
	text := fmt.Sprintf(caddyfile, port, dir, c.redisAddr, c.prefix, leaseTTL, c.upstreamURL, rateLimit, slotLimit)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		return nil, err
	}
	log, err := os.OpenFile(filepath.Join(dir, "caddy.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(c.bin, "run", "--config", cfg, "--adapter", "caddyfile")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir, "HOME="+dir,
		"PW_MULTI_DSN="+c.dsn, "PW_MULTI_CURSOR_KEY="+cursorKey, "PROMPTWALL_BOOTSTRAP_TOKEN="+token)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	in := &instance{port: port, dir: dir, cmd: cmd}
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

func (in *instance) kill() {
	_ = in.cmd.Process.Signal(syscall.SIGKILL)
	_, _ = in.cmd.Process.Wait()
}

// answer is one gateway exchange as the client saw it.
type answer struct {
	code int
	// id is the record's id (X-Promptwall-Prompt-Id).
	id string
	// errCode is error.code of an error answer.
	errCode string
	// complete: the whole body arrived. With durability sync the gateway
	// holds an answer's last byte until its record is committed, so a
	// complete 200 is an acknowledged record.
	complete bool
}

func (in *instance) post(ctx context.Context, client *http.Client) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/v1/chat/completions", in.port), strings.NewReader(chatBody))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	a := answer{code: resp.StatusCode, id: resp.Header.Get("X-Promptwall-Prompt-Id"), complete: err == nil}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		a.errCode = e.Error.Code
	} else if a.complete && !json.Valid(body) {
		a.complete = false
	}
	return a, nil
}

// acked keeps the ids of acknowledged records.
type acked struct {
	mu  sync.Mutex
	ids []string
}

func (a *acked) add(ans answer) {
	if ans.code == http.StatusOK && ans.complete && ans.id != "" {
		a.mu.Lock()
		a.ids = append(a.ids, ans.id)
		a.mu.Unlock()
	}
}

func (a *acked) all() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.ids)
}

// apiGet calls the API of in with the bootstrap token.
func (in *instance) apiGet(client *http.Client, path string, out any) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d%s", in.port, path), nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", err
	}
	if resp.StatusCode == http.StatusOK && out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return 0, "", err
		}
	}
	return resp.StatusCode, string(body), nil
}

// walk lists every record of the default org, 100 a page, each page from
// the instance that did not serve the previous one, with its cursor.
func walk(insts []*instance, client *http.Client, ascending bool) ([]string, error) {
	var ids []string
	cursor := ""
	for page := 0; ; page++ {
		q := url.Values{"onlyUser": {"false"}, "limit": {"100"}}
		if ascending {
			q.Set("ascending", "true")
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var list struct {
			Next  string `json:"next"`
			Scans []struct {
				ID string `json:"id"`
			} `json:"scans"`
		}
		in := insts[page%len(insts)]
		code, body, err := in.apiGet(client, "/backend/v1/scans?"+q.Encode(), &list)
		if err != nil {
			return nil, err
		}
		if code != http.StatusOK {
			return nil, fmt.Errorf("page %d from instance on port %d (cursor from the other): %d %s", page, in.port, code, body)
		}
		for _, s := range list.Scans {
			ids = append(ids, s.ID)
		}
		if list.Next == "" || len(list.Scans) == 0 {
			return ids, nil
		}
		cursor = list.Next
	}
}

// checkListed walks the records through both instances and checks that
// every id in want is listed once, and that both directions agree.
func checkListed(insts []*instance, client *http.Client, want []string) error {
	desc, err := walk(insts, client, false)
	if err != nil {
		return err
	}
	asc, err := walk([]*instance{insts[1], insts[0]}, client, true)
	if err != nil {
		return err
	}
	seen := make(map[string]int, len(desc))
	for _, id := range desc {
		seen[id]++
		if seen[id] > 1 {
			return fmt.Errorf("record %s listed twice", id)
		}
	}
	var missing []string
	for _, id := range want {
		if seen[id] == 0 {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%d of %d acknowledged records are not listed, e.g. %s", len(missing), len(want), missing[0])
	}
	slices.Reverse(asc)
	if !slices.Equal(asc, desc) {
		return fmt.Errorf("oldest-first listing (%d records) is not the newest-first listing (%d) reversed", len(asc), len(desc))
	}
	return nil
}

// load sends requests through insts from workers goroutines until ctx
// ends; onAnswer sees every answer.
func load(ctx context.Context, insts []*instance, client *http.Client, workers int, onAnswer func(answer)) {
	var wg sync.WaitGroup
	for w := range workers {
		in := insts[w%len(insts)]
		wg.Go(func() {
			for ctx.Err() == nil {
				a, err := in.post(context.Background(), client)
				if err != nil {
					// The instance is gone (killed); its clients stop.
					time.Sleep(50 * time.Millisecond)
					continue
				}
				onAnswer(a)
			}
		})
	}
	wg.Wait()
}

func run(duration time.Duration, bin string) error {
	env := map[string]string{}
	for _, k := range []string{"PROMPTWALL_TEST_REDIS_ADDR", "PROMPTWALL_TEST_PG_DSN", "PROMPTWALL_TEST_PG_CTL", "PROMPTWALL_TEST_PG_DATA"} {
		if env[k] = os.Getenv(k); env[k] == "" {
			return fmt.Errorf("%s is unset: start PostgreSQL and Redis with `bash .ci/services.sh -- go run ./internal/multiinstance`", k)
		}
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
	id := make([]byte, 6)
	_, _ = rand.Read(id)
	suffix := hex.EncodeToString(id)
	pg := &postgres{ctl: env["PROMPTWALL_TEST_PG_CTL"], data: env["PROMPTWALL_TEST_PG_DATA"], dsn: env["PROMPTWALL_TEST_PG_DSN"]}
	dsn, drop, err := testsvc.CreateDatabase(pg.dsn, "pw_multi_"+suffix)
	if err != nil {
		return err
	}
	defer drop()
	up := &upstream{}
	up.delay.Store(int64(50 * time.Millisecond))
	srv := httptest.NewServer(up)
	defer srv.Close()
	cl := &cluster{bin: bin, dsn: dsn, redisAddr: env["PROMPTWALL_TEST_REDIS_ADDR"], prefix: "pwmulti:" + suffix + ":", upstreamURL: srv.URL}

	var insts []*instance
	defer func() {
		for _, in := range insts {
			in.kill()
		}
	}()
	for i := range 2 {
		port, err := testsvc.FreePort()
		if err != nil {
			return err
		}
		in, err := cl.start(filepath.Join(tmp, fmt.Sprint("i", i)), port)
		if err != nil {
			return err
		}
		insts = append(insts, in)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var acks acked
	var failures []string
	fail := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		fmt.Println("  FAIL:", msg)
		failures = append(failures, msg)
	}

	// Phase 1: load through both for the duration. Requests wait up to
	// 10s in the queue, so admissions follow the shared rate.
	fmt.Printf("rate phase: %s of load through both instances\n", duration)
	begin := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), duration)
	var other atomic.Int64
	load(ctx, insts, client, 16, func(a answer) {
		acks.add(a)
		if a.code != http.StatusOK {
			other.Add(1)
		}
	})
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
	if perSecond < rateLimit*0.95 || perSecond > rateLimit*1.05 {
		fail("rate %.2f/s outside %d +/- 5%%", perSecond, rateLimit)
	}
	if up.peak.Load() > slotLimit {
		fail("%d requests in flight upstream, limit %d", up.peak.Load(), slotLimit)
	}

	// Phase 2: the records of both, through either API.
	fmt.Printf("records phase: %d acknowledged records listed through both APIs, cursors crossing instances\n", len(acks.all()))
	if err := checkListed(insts, client, acks.all()); err != nil {
		fail("records: %v", err)
	}

	// Phase 3: Redis stopped, then back.
	fmt.Println("redis phase: Redis stopped for 2s (fail_mode closed), then restarted")
	if err := redisOutage(cl.redisAddr, insts, client, fail); err != nil {
		return err
	}

	// Phase 4: PostgreSQL stopped, then back.
	fmt.Println("postgres phase: PostgreSQL stopped for 3s under load, then restarted")
	if err := pgOutage(pg, insts, client, &acks, fail); err != nil {
		return err
	}

	// Phase 5: instance 1 killed under load; what either acknowledged is
	// stored. It is then started again for the last phase.
	fmt.Println("kill phase: instance 1 killed with SIGKILL under load (durability sync)")
	before := len(acks.all())
	ctx, cancel = context.WithTimeout(context.Background(), 3*time.Second)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		insts[1].kill()
	}()
	load(ctx, insts, client, 8, acks.add)
	cancel()
	fmt.Printf("  %d records acknowledged during the kill phase\n", len(acks.all())-before)
	if err := checkListed([]*instance{insts[0], insts[0]}, client, acks.all()); err != nil {
		fail("after the kill: %v", err)
	}
	restarted, err := cl.start(insts[1].dir, insts[1].port)
	if err != nil {
		return err
	}
	insts[1] = restarted
	if err := checkListed(insts, client, acks.all()); err != nil {
		fail("after the restart: %v", err)
	}

	// Phase 6: instance 0 holds every slot with slow answers and is
	// killed; instance 1 must get all the slots back within the lease.
	fmt.Println("lease phase: instance 0 holds every slot and is killed with SIGKILL")
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
	insts[0].kill()
	killed := time.Now()
	up.delay.Store(int64(50 * time.Millisecond))
	var got atomic.Int64
	var wg2 sync.WaitGroup
	var mu sync.Mutex
	var refused []string
	for range slotLimit {
		wg2.Go(func() {
			a, err := insts[1].post(context.Background(), client)
			if err == nil && a.code == http.StatusOK {
				got.Add(1)
				return
			}
			mu.Lock()
			refused = append(refused, fmt.Sprint(a.code, " ", a.errCode, " ", err))
			mu.Unlock()
		})
	}
	wg2.Wait()
	if len(refused) > 0 {
		fmt.Printf("  not admitted: %v\n", refused)
	}
	back := time.Since(killed)
	fmt.Printf("after the kill, instance 1 was admitted %d of %d requests within %s (lease %s)\n", got.Load(), slotLimit, back.Round(time.Millisecond), leaseTTL)
	if got.Load() != slotLimit {
		fail("only %d of %d slots came back", got.Load(), slotLimit)
	}
	// Every admitted request waited at most the lease time plus the
	// renewal slack for the dead instance's slots.
	if back > leaseTTL+2*time.Second {
		fail("slots came back after %s, lease %s", back, leaseTTL)
	}
	if len(failures) > 0 {
		return errors.New(strings.Join(failures, "; "))
	}
	return nil
}

// redisOutage stops Redis, checks that both instances refuse with 503
// limiter_unavailable, restarts it and checks that requests pass again.
func redisOutage(addr string, insts []*instance, client *http.Client, fail func(string, ...any)) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	dir := os.Getenv("PROMPTWALL_TEST_REDIS_DIR")
	// redis-cli reports the connection its SHUTDOWN closed as an error;
	// the answers below show whether Redis is down.
	_ = exec.Command("redis-cli", "-h", host, "-p", port, "shutdown", "nosave").Run()
	codes := map[string]int{}
	deadline := time.Now().Add(2 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		a, err := insts[i%2].post(context.Background(), client)
		if err != nil {
			return err
		}
		codes[fmt.Sprint(a.code, " ", a.errCode)]++
	}
	fmt.Printf("  answers while Redis was down: %v\n", codes)
	for k := range codes {
		if k != "503 limiter_unavailable" {
			fail("while Redis was down an answer was %q, want 503 limiter_unavailable", k)
		}
	}
	args := []string{"--port", port, "--bind", host, "--save", "", "--appendonly", "no", "--daemonize", "yes"}
	if dir != "" {
		args = append(args, "--dir", dir, "--pidfile", filepath.Join(dir, "redis.pid"), "--logfile", filepath.Join(dir, "redis.log"))
	}
	if out, err := exec.Command("redis-server", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("restarting redis: %v %s", err, out)
	}
	restarted := time.Now()
	if _, ok := awaitAdmitted(insts, client, restarted.Add(10*time.Second)); !ok {
		fail("no request admitted within 10s of Redis's return")
		return nil
	}
	fmt.Printf("  admitted again %s after Redis restarted\n", time.Since(restarted).Round(time.Millisecond))
	return nil
}

// awaitAdmitted sends to the instances in turn until one answers 200 or
// the deadline passes: how a service's return is noticed.
func awaitAdmitted(insts []*instance, client *http.Client, deadline time.Time) (answer, bool) {
	for i := 0; ; i++ {
		a, err := insts[i%2].post(context.Background(), client)
		if err == nil && a.code == http.StatusOK {
			return a, true
		}
		if time.Now().After(deadline) {
			return answer{}, false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// pgOutage stops PostgreSQL under load, checks the answers of the gateway
// and the API, restarts it, and checks recovery and that the records
// acknowledged meanwhile are stored.
func pgOutage(pg *postgres, insts []*instance, client *http.Client, acks *acked, fail func(string, ...any)) error {
	if err := pg.stop(); err != nil {
		return err
	}
	// A request every 50ms, each on its own: those admitted before an
	// instance notices the outage wait for their records (their answers'
	// last byte is held), so a closed loop of clients would stall on them.
	var mu sync.Mutex
	codes := map[string]int{}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var sent sync.WaitGroup
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			in := insts[i%2]
			sent.Go(func() {
				a, err := in.post(context.Background(), client)
				key := fmt.Sprint(a.code, " ", a.errCode)
				if err != nil {
					key = err.Error()
				}
				acks.add(a)
				mu.Lock()
				codes[key]++
				mu.Unlock()
			})
		}
	}()
	time.Sleep(2 * time.Second)
	code, body, err := insts[1].apiGet(client, "/backend/v1/scans?onlyUser=false", nil)
	if err != nil {
		return err
	}
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"unavailable"`) {
		fail("the API while PostgreSQL was down: %d %s, want 503 unavailable", code, body)
	}
	<-ctx.Done()
	if err := pg.start(); err != nil {
		return err
	}
	restarted := time.Now()
	// Requests admitted before the outage was noticed wait for their
	// records: they finish now.
	time.Sleep(100 * time.Millisecond)
	sent.Wait()
	fmt.Printf("  answers while PostgreSQL was down: %v\n", codes)
	if codes["503 store_unavailable"] == 0 {
		fail("no 503 store_unavailable while PostgreSQL was down")
	}
	for k := range codes {
		if k != "503 store_unavailable" && k != "200 " {
			fail("while PostgreSQL was down an answer was %q, want 503 store_unavailable (or 200 once stored)", k)
		}
	}
	a, ok := awaitAdmitted(insts, client, restarted.Add(15*time.Second))
	if !ok {
		fail("no request admitted within 15s of PostgreSQL's return")
		return nil
	}
	acks.add(a)
	fmt.Printf("  gateway recovered %s after PostgreSQL restarted\n", time.Since(restarted).Round(time.Millisecond))
	if err := checkListed(insts, client, acks.all()); err != nil {
		fail("after PostgreSQL returned: %v", err)
	}
	return nil
}

// postgres is the test server started by .ci/services.sh.
type postgres struct {
	ctl, data, dsn string
}

// pgCtl runs pg_ctl as the data directory's owner: PostgreSQL refuses to
// run as root, and .ci/services.sh makes "postgres" the owner under root.
func (p *postgres) pgCtl(args ...string) error {
	args = append([]string{"-D", p.data}, args...)
	cmd := exec.Command(p.ctl, args...)
	if os.Geteuid() == 0 {
		quoted := make([]string, 0, len(args)+1)
		for _, a := range append([]string{p.ctl}, args...) {
			quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
		}
		cmd = exec.Command("su", "postgres", "-s", "/bin/sh", "-c", strings.Join(quoted, " "))
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl %s: %v %s", args[len(args)-1], err, out)
	}
	return nil
}

func (p *postgres) stop() error { return p.pgCtl("-m", "fast", "-w", "stop") }

// start starts the server again with the options .ci/services.sh gave it.
func (p *postgres) start() error {
	u, err := url.Parse(p.dsn)
	if err != nil {
		return err
	}
	opts := fmt.Sprintf("-p %s -c listen_addresses=127.0.0.1 -k %s -c fsync=off -c max_connections=200", u.Port(), filepath.Dir(p.data))
	return p.pgCtl("-w", "-t", "60", "-l", filepath.Join(filepath.Dir(p.data), "server.log"), "-o", opts, "start")
}
