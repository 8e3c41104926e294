// Command bench measures what the Promptwall gateway costs on top of a
// plain Caddy reverse proxy.
//
// It builds the gateway once, starts a mock OpenAI upstream in process and
// one Caddy process per level, and runs every level against the same
// upstream, interleaved (L0..L4, then again, -reps times):
//
//	L0  the mock upstream alone
//	L1  Caddy reverse_proxy
//	L2  promptwall with an endpoint that has no scanners
//	L3  promptwall with the default scanner set on the request
//	L4  promptwall with the built-in default endpoint: the default set on the
//	    request, secrets on the answer
//
// Each level gets, per scenario (2 KB prompt, 16 KB prompt, a 20-turn
// conversation plus a new turn, and a streamed 2 KB request), a closed-loop
// throughput run (wrk when installed, else a Go client) and an open-loop
// fixed-rate latency run, with the Caddy process's CPU time per request and
// resident memory. Every request carries unique words, so the verdict cache
// only hits where real traffic would (a conversation's history).
//
// Usage, from the repository root:
//
//	go run ./bench                 # full run, ~15 minutes
//	go run ./bench -quick          # 3 s phases, one repetition
//	bash bench/run.sh              # installs wrk if missing (as root), then runs
//
// Results go to bench/results/<timestamp>.{md,json}; the Markdown is
// printed.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/promptwall/promptwall/bench/internal/gw"
)

type options struct {
	Duration   time.Duration `json:"duration"`
	Conns      int           `json:"connections"`
	Threads    int           `json:"wrk_threads"`
	Rate       float64       `json:"rate"`
	Reps       int           `json:"repetitions"`
	Scenarios  []string      `json:"scenarios"`
	Levels     []string      `json:"levels"`
	LoadGen    string        `json:"loadgen"`
	ChunkDelay time.Duration `json:"chunk_delay"`
	MaxInfl    int           `json:"max_inflight"`
	QuietWait  time.Duration `json:"quiet_wait"`
	Profile    bool          `json:"profile"`
	ProfileAll bool          `json:"profile_all"`
	ProfileSec int           `json:"profile_seconds"`
	caddyBin   string
	outDir     string
	keep       bool
}

// scenario is one request shape.
type scenario struct {
	Name   string `json:"name"`
	Size   int    `json:"prompt_bytes"`
	Turns  int    `json:"history_turns"`
	Stream bool   `json:"stream"`
	Bytes  int    `json:"request_bytes"`
	body   body
}

func allScenarios() []scenario {
	return []scenario{
		{Name: "2k", Size: 2 << 10},
		{Name: "16k", Size: 16 << 10},
		{Name: "multi", Size: 600, Turns: 20},
		{Name: "2k-stream", Size: 2 << 10, Stream: true},
	}
}

func main() {
	var o options
	var scen, lvls string
	var quick bool
	flag.DurationVar(&o.Duration, "duration", 10*time.Second, "length of each throughput and each latency phase")
	flag.IntVar(&o.Conns, "c", 32, "connections of the closed-loop throughput phase")
	flag.IntVar(&o.Threads, "t", 2, "wrk threads")
	flag.Float64Var(&o.Rate, "rate", 1000, "requests per second of the open-loop latency phase")
	flag.IntVar(&o.Reps, "reps", 2, "repetitions of the interleaved L0..L4 sequence")
	flag.StringVar(&scen, "scenarios", "2k,16k,multi,2k-stream", "scenarios to run")
	flag.StringVar(&lvls, "levels", "L0,L1,L2,L3,L4", "levels to run (L1 is always run: it is the reference)")
	flag.StringVar(&o.LoadGen, "loadgen", "auto", "closed-loop load generator: auto (wrk if installed, installing it as root), wrk, go")
	flag.DurationVar(&o.ChunkDelay, "chunk-delay", 0, "pause between the mock upstream's stream events")
	flag.IntVar(&o.MaxInfl, "max-inflight", 512, "open loop: requests in flight beyond which new ones are dropped and counted")
	flag.DurationVar(&o.QuietWait, "quiet-wait", 10*time.Second, "before each phase, wait up to this long for other work on the machine to drop below half a core (0: do not wait)")
	flag.BoolVar(&o.Profile, "profile", true, "CPU-profile levels that miss a target (via the admin /debug/pprof endpoint)")
	flag.BoolVar(&o.ProfileAll, "profile-all", false, "CPU-profile every gateway level in every scenario, met targets too (for diffing a level against L1: go tool pprof -diff_base)")
	flag.IntVar(&o.ProfileSec, "profile-seconds", 10, "length of each CPU profile")
	flag.StringVar(&o.caddyBin, "caddy", "", "use this gateway binary instead of building ./cmd/caddy")
	flag.StringVar(&o.outDir, "out", "bench/results", "results directory (relative to the repository root)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (Caddyfiles, logs, databases)")
	flag.BoolVar(&quick, "quick", false, "3 s phases, one repetition (a smoke run, not a measurement)")
	flag.Parse()
	if *lagMode {
		if err := runLag(o); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if quick {
		o.Duration, o.Reps, o.ProfileSec = 3*time.Second, 1, 3
	}
	o.Scenarios = strings.Split(scen, ",")
	o.Levels = strings.Split(lvls, ",")
	if !slices.Contains(o.Levels, "L1") {
		o.Levels = append(o.Levels, "L1")
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// sample is one level's measurement in one scenario and repetition.
type sample struct {
	Level    string       `json:"level"`
	Scenario string       `json:"scenario"`
	Rep      int          `json:"rep"`
	Closed   closedResult `json:"closed"`
	Open     openResult   `json:"open"`
	// CPUPerReq is the Caddy process's CPU time per request in the
	// closed-loop phase, in microseconds; CPUPerReqOpen in the open-loop
	// phase. Zero for L0 (the mock runs inside this program).
	CPUPerReq     float64 `json:"cpu_us_per_req"`
	CPUPerReqOpen float64 `json:"cpu_us_per_req_open"`
	RSSMiB        float64 `json:"rss_mib"`
	AnonMiB       float64 `json:"rss_anon_mib"`
	// BgCores is the CPU (in cores) used by other work on the machine
	// during the closed-loop phase: how noisy the measurement was.
	BgCores     float64 `json:"background_cores"`
	BgCoresOpen float64 `json:"background_cores_open"`
	// Backlog is the records the gateway still had queued for its store
	// when the closed-loop load stopped, and DrainSeconds how long the
	// writer then took to commit them: a backlog means the store's single
	// writer fell behind the request rate.
	Backlog      int     `json:"store_backlog"`
	DrainSeconds float64 `json:"store_drain_seconds"`
}

func run(o options) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	if err := os.Chdir(root); err != nil {
		return err
	}
	o.LoadGen = chooseLoadGen(o.LoadGen)
	tmp, err := os.MkdirTemp("", "promptwall-bench-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintln(os.Stderr, "temporary directory:", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}

	bin, err := gw.Build(o.caddyBin, tmp)
	if err != nil {
		return err
	}

	mock, err := startMock(o.ChunkDelay)
	if err != nil {
		return err
	}
	defer mock.close()

	var scens []scenario
	for i, s := range allScenarios() {
		if !slices.Contains(o.Scenarios, s.Name) {
			continue
		}
		if s.body, err = buildBody(uint64(i+1), s.Size, s.Turns, s.Stream); err != nil {
			return err
		}
		s.Bytes = len(s.body.with(tag(0, 0, 0)))
		scens = append(scens, s)
	}
	if len(scens) == 0 {
		return errors.New("no scenario selected")
	}

	gws := map[string]*gateway{}
	var lvls []level
	for _, l := range levels() {
		if !slices.Contains(o.Levels, l.Name) {
			continue
		}
		lvls = append(lvls, l)
		if l.site == "" {
			continue
		}
		g, err := startGateway(bin, tmp, l, mock.addr())
		if err != nil {
			return err
		}
		defer g.stop()
		gws[l.Name] = g
	}
	urlOf := func(l level) string {
		if g := gws[l.Name]; g != nil {
			return g.url()
		}
		return "http://" + mock.addr()
	}

	rep := &report{Options: o, Machine: describeMachine(bin), Started: time.Now().UTC()}
	for _, l := range lvls {
		rep.Levels = append(rep.Levels, levelInfo{Name: l.Name, Title: l.Title})
		if g := gws[l.Name]; g != nil {
			rep.Levels[len(rep.Levels)-1].Caddyfile = g.caddyfile(mock.addr())
		}
	}
	rep.Scenarios = scens

	// Probe: every level answers every scenario with a 200, and which
	// levels screen the answer (a secret planted by the mock).
	for _, l := range lvls {
		for _, s := range scens {
			if err := probe(urlOf(l), s); err != nil {
				return fmt.Errorf("%s %s: %w", l.Name, s.Name, err)
			}
		}
		for _, stream := range []bool{false, true} {
			verdict, err := probeCanary(urlOf(l), stream)
			if err != nil {
				return fmt.Errorf("%s canary: %w", l.Name, err)
			}
			rep.Canary = append(rep.Canary, canaryResult{Level: l.Name, Stream: stream, Verdict: verdict})
			// L4 is the default endpoint as it ships: a secret in the
			// answer must not reach the client, streamed or not.
			if l.Name == "L4" && verdict == verdictUnscreened {
				return fmt.Errorf("L4 let a secret in the answer through (stream %v)", stream)
			}
		}
	}

	// ours is the CPU time of this program, its children and the
	// gateways: what is not ours on the machine is background noise.
	ours := func() time.Duration {
		t := selfCPU()
		for _, g := range gws {
			if st, err := readProc(g.pid()); err == nil {
				t += st.cpu
			}
		}
		return t
	}
	phases := uint64(1)
	nextPhase := func() uint64 { phases++; return phases }

	// Warm up every process (JIT-free Go still has cold caches, pools and
	// connection setup) before the first measurement.
	for _, l := range lvls {
		for _, s := range scens {
			goClosed(target{url: urlOf(l), body: s.body, stream: s.Stream, phase: nextPhase()}, 8, time.Second)
		}
	}

	total := time.Duration(o.Reps*len(scens)*len(lvls)) * (2*o.Duration + time.Second)
	fmt.Fprintf(os.Stderr, "measuring: %d reps x %d scenarios x %d levels, about %s; loadgen %s\n",
		o.Reps, len(scens), len(lvls), total.Round(time.Minute), o.LoadGen)
	for r := 1; r <= o.Reps; r++ {
		for _, s := range scens {
			for _, l := range lvls {
				smp, err := measure(o, tmp, l, gws[l.Name], urlOf(l), s, r, nextPhase, ours)
				if err != nil {
					return err
				}
				fmt.Fprintf(os.Stderr, "rep %d %-9s %s  %8.0f req/s  p50 %6.2f ms  p99 %7.2f ms  cpu %6.0f us/req  rss %5.1f MiB (anon %5.1f)  err %d/%d drop %d  bg %.1f/%.1f cores\n",
					r, s.Name, l.Name, smp.Closed.RPS, smp.Open.P50, smp.Open.P99, smp.CPUPerReq, smp.RSSMiB, smp.AnonMiB,
					smp.Closed.Errors, smp.Open.Errors, smp.Open.Dropped, smp.BgCores, smp.BgCoresOpen)
				rep.Samples = append(rep.Samples, smp)
			}
		}
	}
	rep.summarize()

	stamp := rep.Started.Format("20060102T150405Z")
	outDir := o.outDir
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	// A metrics snapshot of the screening levels, for promtool check
	// metrics and the dashboards.
	for _, name := range []string{"L3", "L4"} {
		if g := gws[name]; g != nil {
			path := filepath.Join(outDir, stamp+"-metrics-"+name+".txt")
			if err := fetch(context.Background(), g.adminURL()+"/metrics", path); err != nil {
				fmt.Fprintln(os.Stderr, "metrics snapshot:", err)
				continue
			}
			rep.MetricsFiles = append(rep.MetricsFiles, path)
		}
	}
	metricsErr := checkMetrics(rep)
	// What to profile: every level and scenario with -profile-all, else
	// the first scenario in which each level misses a target.
	type profileJob struct {
		g *gateway
		s scenario
	}
	var jobs []profileJob
	switch {
	case o.ProfileAll:
		for _, s := range scens {
			for _, l := range lvls {
				if g := gws[l.Name]; g != nil {
					jobs = append(jobs, profileJob{g, s})
				}
			}
		}
	case o.Profile:
		profiled := map[string]bool{}
		for _, t := range rep.Targets {
			g := gws[t.Level]
			if t.Met || g == nil || profiled[t.Level] {
				continue
			}
			profiled[t.Level] = true
			jobs = append(jobs, profileJob{g, scens[slices.IndexFunc(scens, func(s scenario) bool { return s.Name == t.Scenario })]})
		}
	}
	for _, j := range jobs {
		p, err := profileLevel(o, tmp, outDir, stamp, bin, j.g, j.s, nextPhase())
		if err != nil {
			fmt.Fprintln(os.Stderr, "profile:", err)
			continue
		}
		rep.Profiles = append(rep.Profiles, p)
	}
	rep.LoadAfter = loadavg()

	md := rep.markdown()
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(outDir, stamp+".md"), []byte(md), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(outDir, stamp+".json"), js, 0o644); err != nil {
		return err
	}
	fmt.Print(md)
	fmt.Fprintf(os.Stderr, "wrote %s.{md,json}\n", filepath.Join(outDir, stamp))
	return metricsErr
}

// checkMetrics runs `promtool check metrics` on the snapshots when promtool
// is installed: the exposition must stay valid (names, help, types, units).
func checkMetrics(rep *report) error {
	if _, err := exec.LookPath("promtool"); err != nil {
		rep.MetricsCheck = "skipped: promtool not installed (apt-get install prometheus)"
		return nil
	}
	for _, f := range rep.MetricsFiles {
		in, err := os.Open(f)
		if err != nil {
			return err
		}
		cmd := exec.Command("promtool", "check", "metrics")
		cmd.Stdin = in
		out, err := cmd.CombinedOutput()
		in.Close()
		if err != nil {
			rep.MetricsCheck = fmt.Sprintf("promtool check metrics failed on %s:\n%s", f, out)
			return fmt.Errorf("promtool check metrics %s: %w\n%s", f, err, out)
		}
	}
	if len(rep.MetricsFiles) > 0 {
		rep.MetricsCheck = "promtool check metrics: no problems"
	}
	return nil
}

// measure runs one level's closed-loop and open-loop phases.
func measure(o options, tmp string, l level, g *gateway, url string, s scenario, rep int, nextPhase func() uint64, ours func() time.Duration) (sample, error) {
	smp := sample{Level: l.Name, Scenario: s.Name, Rep: rep}
	t := target{url: url, body: s.body, stream: s.Stream}
	if o.QuietWait > 0 {
		waitQuiet(o.QuietWait, ours)
	}
	bg := func() func() float64 {
		b0, o0, t0 := systemBusy(), ours(), time.Now()
		return func() float64 {
			return max(0, float64(systemBusy()-b0-(ours()-o0))/float64(time.Since(t0)))
		}
	}

	var before, mid, after procStats
	var err error
	if g != nil {
		if before, err = readProc(g.pid()); err != nil {
			return smp, err
		}
	}
	t.phase = nextPhase()
	bgClosed := bg()
	if o.LoadGen == "wrk" {
		if smp.Closed, err = wrkClosed(tmp, t, o.Threads, o.Conns, o.Duration); err != nil {
			return smp, err
		}
	} else {
		smp.Closed = goClosed(t, o.Conns, o.Duration)
	}
	smp.BgCores = bgClosed()
	// The store commits the phase's records before the next phase starts:
	// their CPU time counts for the phase that caused it, and a backlog
	// must not slow the next phase down.
	if g != nil && strings.Contains(g.lvl.site, "promptwall") {
		if smp.Backlog, smp.DrainSeconds, err = drainStore(g, time.Minute); err != nil {
			return smp, err
		}
	} else {
		time.Sleep(500 * time.Millisecond)
	}
	if g != nil {
		if mid, err = readProc(g.pid()); err != nil {
			return smp, err
		}
	}
	if o.QuietWait > 0 {
		waitQuiet(o.QuietWait, ours)
	}
	t.phase = nextPhase()
	bgOpen := bg()
	smp.Open = goOpen(t, o.Rate, o.Duration, o.MaxInfl)
	smp.BgCoresOpen = bgOpen()
	if g != nil {
		if after, err = readProc(g.pid()); err != nil {
			return smp, err
		}
		if smp.Closed.Requests > 0 {
			smp.CPUPerReq = float64((mid.cpu - before.cpu).Microseconds()) / float64(smp.Closed.Requests)
		}
		if n := smp.Open.Sent; n > 0 {
			smp.CPUPerReqOpen = float64((after.cpu - mid.cpu).Microseconds()) / float64(n)
		}
		smp.RSSMiB = float64(after.rss) / (1 << 20)
		smp.AnonMiB = float64(after.anon) / (1 << 20)
	}
	time.Sleep(500 * time.Millisecond)
	return smp, nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			strings.Contains(string(b), "module github.com/promptwall/promptwall\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run from inside the promptwall repository")
		}
		dir = parent
	}
}

// chooseLoadGen picks wrk when it is installed, installs it from Debian
// when running as root, and falls back to the built-in Go client.
func chooseLoadGen(want string) string {
	if want == "go" {
		return "go"
	}
	if _, err := exec.LookPath("wrk"); err == nil {
		return "wrk"
	}
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("apt-get"); err == nil {
			fmt.Fprintln(os.Stderr, "wrk not found: apt-get install -y wrk")
			cmd := exec.Command("apt-get", "install", "-y", "-q", "wrk")
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if cmd.Run() == nil {
				return "wrk"
			}
		}
	} else {
		fmt.Fprintln(os.Stderr, "wrk not found; `sudo apt-get install wrk` gives a lighter load generator. Using the built-in Go client.")
	}
	if want == "wrk" {
		fmt.Fprintln(os.Stderr, "wrk unavailable: using the built-in Go client")
	}
	return "go"
}

type machine struct {
	CPU        string `json:"cpu"`
	Cores      int    `json:"cores"`
	GoVersion  string `json:"go_version"`
	Kernel     string `json:"kernel"`
	Caddy      string `json:"caddy_version"`
	LoadBefore string `json:"loadavg_before"`
}

func describeMachine(bin string) machine {
	m := machine{Cores: runtime.NumCPU(), GoVersion: runtime.Version(), LoadBefore: loadavg()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "model name"); ok {
				m.CPU = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if out, err := exec.Command("go", "version").Output(); err == nil {
		m.GoVersion = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command(bin, "version").Output(); err == nil {
		m.Caddy = strings.TrimSpace(string(out))
	}
	return m
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
