package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/promptwall/promptwall/internal/testsvc"
	"github.com/promptwall/promptwall/scanner/defaults"
)

// level is one configuration under test.
type level struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	// site is the Caddyfile site body; "" for L0 (the mock alone).
	site string
	// global is the promptwall global option block, if any.
	global string
}

// levels are the five configurations, from the bare upstream to request
// and response screening: L3 is the
// default scanner set on the request only, L4 adds answer screening. L4 is
// the built-in default endpoint exactly as it ships (secrets also screen
// answers); L3 spells the same four scanners out with their default
// settings and the request direction only.
func levels() []level {
	return []level{
		{Name: "L0", Title: "mock upstream alone"},
		{Name: "L1", Title: "Caddy reverse_proxy", site: "reverse_proxy {upstream}"},
		{Name: "L2", Title: "promptwall, endpoint with no scanners",
			global: "endpoint bare {\n\t\t}", site: "promptwall bare\n\treverse_proxy {upstream}"},
		{Name: "L3", Title: "promptwall, default scanner set on the request",
			global: requestOnlyDefaults(), site: "promptwall request\n\treverse_proxy {upstream}"},
		{Name: "L4", Title: "promptwall, built-in default endpoint (request and answer)",
			site: "promptwall\n\treverse_proxy {upstream}"},
	}
}

// requestOnlyDefaults is an endpoint "request" with the built-in default
// scanners in their default modes, screening requests only. It is built
// from the default set itself, so L3 follows it when it changes.
func requestOnlyDefaults() string {
	var b strings.Builder
	b.WriteString("endpoint request {\n")
	for _, e := range defaults.Entries() {
		fmt.Fprintf(&b, "\t\t\tscanner %s {\n\t\t\t\tmode %s\n\t\t\t\tdirection input\n\t\t\t}\n", e.Module, e.Setting.Mode)
	}
	b.WriteString("\t\t}")
	return b.String()
}

// gateway is one running Caddy process.
type gateway struct {
	lvl       level
	dir       string
	port      int
	adminPort int
	cmd       *exec.Cmd
	done      chan error
	logPath   string
}

func (g *gateway) url() string { return fmt.Sprintf("http://127.0.0.1:%d", g.port) }

func (g *gateway) adminURL() string { return fmt.Sprintf("http://127.0.0.1:%d", g.adminPort) }

func (g *gateway) pid() int { return g.cmd.Process.Pid }

// caddyfile renders the level's config: its own listen and admin ports on
// 127.0.0.1, storage and database in its own temp directory, warnings-only
// logs.
func (g *gateway) caddyfile(upstream string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{\n\tadmin 127.0.0.1:%d\n\tauto_https off\n\tpersist_config off\n\tskip_install_trust\n", g.adminPort)
	fmt.Fprintf(&b, "\tstorage file_system %s\n", filepath.Join(g.dir, "caddy"))
	b.WriteString("\tlog {\n\t\tlevel WARN\n\t}\n")
	if strings.Contains(g.lvl.site, "promptwall") {
		fmt.Fprintf(&b, "\tpromptwall {\n\t\tstorage %s\n", filepath.Join(g.dir, "promptwall.db"))
		if g.lvl.global != "" {
			fmt.Fprintf(&b, "\t\t%s\n", g.lvl.global)
		}
		b.WriteString("\t}\n")
	}
	b.WriteString("}\n\n")
	fmt.Fprintf(&b, "http://127.0.0.1:%d {\n\t%s\n}\n", g.port, strings.ReplaceAll(g.lvl.site, "{upstream}", upstream))
	return b.String()
}

// startGateway writes the level's Caddyfile and runs the binary on it.
func startGateway(bin, tmp string, lvl level, upstream string) (*gateway, error) {
	g := &gateway{lvl: lvl, dir: filepath.Join(tmp, lvl.Name), done: make(chan error, 1)}
	if err := os.MkdirAll(g.dir, 0o700); err != nil {
		return nil, err
	}
	var err error
	if g.port, err = testsvc.FreePort(); err != nil {
		return nil, err
	}
	if g.adminPort, err = testsvc.FreePort(); err != nil {
		return nil, err
	}
	cfg := filepath.Join(g.dir, "Caddyfile")
	if err := os.WriteFile(cfg, []byte(g.caddyfile(upstream)), 0o600); err != nil {
		return nil, err
	}
	g.logPath = filepath.Join(g.dir, "caddy.log")
	logf, err := os.Create(g.logPath)
	if err != nil {
		return nil, err
	}
	g.cmd = exec.Command(bin, "run", "--config", cfg, "--adapter", "caddyfile")
	g.cmd.Stdout, g.cmd.Stderr = logf, logf
	g.cmd.Env = append(os.Environ(),
		"XDG_DATA_HOME="+filepath.Join(g.dir, "data"),
		"XDG_CONFIG_HOME="+filepath.Join(g.dir, "config"),
		"PROMPTWALL_BOOTSTRAP_TOKEN=bench-token-not-a-secret-0123456789abcdef")
	if err := g.cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() { g.done <- g.cmd.Wait(); logf.Close() }()
	if err := g.waitReady(30 * time.Second); err != nil {
		g.stop()
		log, _ := os.ReadFile(g.logPath)
		return nil, fmt.Errorf("%s did not start: %w\n%s", lvl.Name, err, tail(string(log), 2000))
	}
	return g, nil
}

func (g *gateway) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	client := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case err := <-g.done:
			return fmt.Errorf("caddy exited: %v", err)
		default:
		}
		resp, err := client.Get(g.url() + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("timed out")
}

// stop ends the process it started (SIGINT for a clean store close, then
// SIGKILL after 10 s).
func (g *gateway) stop() {
	if g.cmd == nil || g.cmd.Process == nil {
		return
	}
	_ = g.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-g.done:
	case <-time.After(10 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.done
	}
}

// procStats reads a process's CPU time (user+system) and resident memory.
type procStats struct {
	cpu time.Duration
	rss int64 // bytes
	// anon is the anonymous part of rss (heap, stacks): rss also counts
	// the pages of the bbolt file mapped in, which grow with the records.
	anon int64
}

var clockTicks = func() int64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 100
}()

// systemBusy is the machine's busy CPU time (all cores) from /proc/stat.
func systemBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	var busy int64
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		if i == 3 || i == 4 || i >= 8 { // idle, iowait; guest time is already in user
			continue
		}
		busy += n
	}
	return time.Duration(busy * int64(time.Second) / clockTicks)
}

// selfCPU is this program's CPU time plus that of its waited-for children
// (wrk).
func selfCPU() time.Duration {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	var t int64
	for _, i := range []int{11, 12, 13, 14} { // utime stime cutime cstime
		n, _ := strconv.ParseInt(f[i], 10, 64)
		t += n
	}
	return time.Duration(t * int64(time.Second) / clockTicks)
}

// waitQuiet waits up to limit for the machine's other work (compilers,
// tests: anything but this program, wrk and the gateways) to use less than
// half a core, sampling a second at a time, and returns the cores the other
// work used in the last sample.
func waitQuiet(limit time.Duration, ours func() time.Duration) float64 {
	deadline := time.Now().Add(limit)
	for {
		b0, o0, t0 := systemBusy(), ours(), time.Now()
		time.Sleep(time.Second)
		bg := float64(systemBusy()-b0-(ours()-o0)) / float64(time.Since(t0))
		if bg < 0.5 || time.Now().After(deadline) {
			return max(bg, 0)
		}
	}
}

func readProc(pid int) (procStats, error) {
	var s procStats
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	// Fields after the command name, which may contain spaces: state is
	// field 3, utime 14, stime 15.
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+2:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return s, fmt.Errorf("short /proc/%d/stat", pid)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	s.cpu = time.Duration((ut + st) * int64(time.Second) / clockTicks)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		for key, dst := range map[string]*int64{"VmRSS:": &s.rss, "RssAnon:": &s.anon} {
			if v, ok := strings.CutPrefix(line, key); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				*dst = kb << 10
			}
		}
	}
	return s, nil
}

// fetch GETs a URL into a file (admin /metrics, /debug/pprof/profile).
func fetch(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.ReadFrom(resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// storeQueueDepth reads the gateway's record queue depth from its metrics.
func storeQueueDepth(g *gateway) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.adminURL()+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "promptwall_store_queue_depth "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int(f), err
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("no promptwall_store_queue_depth in the gateway's metrics")
}

// drainStore waits until the gateway's record queue is empty, at most
// limit, and returns the depth it found first and how long the drain took.
func drainStore(g *gateway, limit time.Duration) (backlog int, seconds float64, err error) {
	start := time.Now()
	for first := true; ; first = false {
		depth, err := storeQueueDepth(g)
		if err != nil {
			return backlog, 0, err
		}
		if first {
			backlog = depth
		}
		if depth == 0 {
			seconds = time.Since(start).Seconds()
			// A short settle, as before: the last commit's CPU lands.
			time.Sleep(200 * time.Millisecond)
			return backlog, seconds, nil
		}
		if time.Since(start) > limit {
			return backlog, 0, fmt.Errorf("%s: %d records still queued for the store after %s", g.lvl.Name, depth, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
