package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

type report struct {
	Options      options        `json:"options"`
	Machine      machine        `json:"machine"`
	Started      time.Time      `json:"started"`
	LoadAfter    string         `json:"loadavg_after"`
	Levels       []levelInfo    `json:"levels"`
	Scenarios    []scenario     `json:"scenarios"`
	Canary       []canaryResult `json:"answer_screening"`
	Samples      []sample       `json:"samples"`
	Rows         []row          `json:"summary"`
	Targets      []targetCheck  `json:"targets"`
	Profiles     []profile      `json:"profiles,omitempty"`
	MetricsFiles []string       `json:"metrics_snapshots,omitempty"`
	MetricsCheck string         `json:"metrics_check,omitempty"`
}

type levelInfo struct {
	Name      string `json:"name"`
	Title     string `json:"title"`
	Caddyfile string `json:"caddyfile,omitempty"`
}

// canaryResult tells what a level did with an answer carrying a secret.
type canaryResult struct {
	Level   string `json:"level"`
	Stream  bool   `json:"stream"`
	Verdict string `json:"verdict"`
}

// row is one level in one scenario, the median over repetitions. Ratios
// and differences are taken against L1 of the same repetition, then the
// median is taken, so slow drift of the machine's load cancels out.
type row struct {
	Level    string  `json:"level"`
	Scenario string  `json:"scenario"`
	Reps     int     `json:"reps"`
	RPS      float64 `json:"rps"`
	RPSRatio float64 `json:"rps_ratio_to_l1"`
	// RPSRatioMin and RPSRatioMax are the spread over repetitions.
	RPSRatioMin float64 `json:"rps_ratio_min"`
	RPSRatioMax float64 `json:"rps_ratio_max"`
	P50         float64 `json:"p50_ms"`
	P99         float64 `json:"p99_ms"`
	AddP50      float64 `json:"added_p50_ms"`
	AddP99      float64 `json:"added_p99_ms"`
	Achieved    float64 `json:"achieved_rps"`
	TTFBP50     float64 `json:"ttfb_p50_ms,omitempty"`
	TTFBP99     float64 `json:"ttfb_p99_ms,omitempty"`
	CPU         float64 `json:"cpu_us_per_req"`
	CPURatio    float64 `json:"cpu_ratio_to_l1"`
	RSS         float64 `json:"rss_mib"`
	Anon        float64 `json:"rss_anon_mib"`
	Errors      int64   `json:"errors"`
	Dropped     int     `json:"dropped"`
	// BgCores is the median CPU other work on the machine used during the
	// level's phases, in cores.
	BgCores float64 `json:"background_cores"`
	// Backlog and DrainSeconds are the largest store backlog left by a
	// throughput phase and its drain time, over repetitions.
	Backlog      int     `json:"store_backlog"`
	DrainSeconds float64 `json:"store_drain_seconds"`
}

type targetCheck struct {
	What     string  `json:"what"`
	Level    string  `json:"level"`
	Scenario string  `json:"scenario"`
	Value    float64 `json:"value"`
	Limit    float64 `json:"limit"`
	AtLeast  bool    `json:"at_least"`
	Met      bool    `json:"met"`
	Present  bool    `json:"measured"`
}

type profile struct {
	Level    string `json:"level"`
	Scenario string `json:"scenario"`
	File     string `json:"file"`
	// RPS is the load's throughput while profiled: a profile's seconds
	// divided by it are CPU per request, comparable across levels.
	RPS float64 `json:"rps"`
	Top string  `json:"top"`
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (r *report) sample(level, scen string, rep int) *sample {
	for i := range r.Samples {
		s := &r.Samples[i]
		if s.Level == level && s.Scenario == scen && s.Rep == rep {
			return s
		}
	}
	return nil
}

func (r *report) summarize() {
	for _, sc := range r.Scenarios {
		for _, l := range r.Levels {
			rw := row{Level: l.Name, Scenario: sc.Name}
			var rps, ratio, p50, p99, add50, add99, ach, t50, t99, cpu, cpuR, rss, anon, bg []float64
			for rep := 1; rep <= r.Options.Reps; rep++ {
				s := r.sample(l.Name, sc.Name, rep)
				base := r.sample("L1", sc.Name, rep)
				if s == nil || base == nil {
					continue
				}
				rw.Reps++
				rps = append(rps, s.Closed.RPS)
				p50 = append(p50, s.Open.P50)
				p99 = append(p99, s.Open.P99)
				ach = append(ach, s.Open.Achieved)
				t50 = append(t50, s.Open.TTFBP50)
				t99 = append(t99, s.Open.TTFBP99)
				cpu = append(cpu, s.CPUPerReq)
				rss = append(rss, s.RSSMiB)
				anon = append(anon, s.AnonMiB)
				bg = append(bg, s.BgCores, s.BgCoresOpen)
				rw.Errors += s.Closed.Errors + int64(s.Open.Errors)
				rw.Dropped += s.Open.Dropped
				rw.Backlog = max(rw.Backlog, s.Backlog)
				rw.DrainSeconds = max(rw.DrainSeconds, s.DrainSeconds)
				if base.Closed.RPS > 0 {
					ratio = append(ratio, s.Closed.RPS/base.Closed.RPS)
				}
				add50 = append(add50, s.Open.P50-base.Open.P50)
				add99 = append(add99, s.Open.P99-base.Open.P99)
				if base.CPUPerReq > 0 && s.CPUPerReq > 0 {
					cpuR = append(cpuR, s.CPUPerReq/base.CPUPerReq)
				}
			}
			rw.RPS, rw.RPSRatio = median(rps), median(ratio)
			if len(ratio) > 0 {
				rw.RPSRatioMin, rw.RPSRatioMax = slices.Min(ratio), slices.Max(ratio)
			}
			rw.P50, rw.P99, rw.AddP50, rw.AddP99 = median(p50), median(p99), median(add50), median(add99)
			rw.Achieved, rw.TTFBP50, rw.TTFBP99 = median(ach), median(t50), median(t99)
			rw.CPU, rw.CPURatio, rw.RSS, rw.Anon, rw.BgCores = median(cpu), median(cpuR), median(rss), median(anon), median(bg)
			r.Rows = append(r.Rows, rw)
		}
	}
	streamScen := "2k-stream"
	if r.row("L4", streamScen) == nil {
		streamScen = "2k"
	}
	checks := []targetCheck{
		{What: "throughput ratio to L1", Level: "L2", Scenario: "2k", Limit: 0.90, AtLeast: true},
		{What: "throughput ratio to L1", Level: "L3", Scenario: "2k", Limit: 0.80, AtLeast: true},
		{What: "throughput ratio to L1", Level: "L4", Scenario: streamScen, Limit: 0.75, AtLeast: true},
		{What: "added p99 at fixed rate, ms", Level: "L3", Scenario: "2k", Limit: 1.0},
	}
	for _, c := range checks {
		rw := r.row(c.Level, c.Scenario)
		if rw == nil || rw.Reps == 0 {
			r.Targets = append(r.Targets, c)
			continue
		}
		c.Present = true
		if c.AtLeast {
			c.Value = rw.RPSRatio
			c.Met = c.Value >= c.Limit
		} else {
			c.Value = rw.AddP99
			c.Met = c.Value <= c.Limit
		}
		r.Targets = append(r.Targets, c)
	}
}

func (r *report) row(level, scen string) *row {
	for i := range r.Rows {
		if r.Rows[i].Level == level && r.Rows[i].Scenario == scen {
			return &r.Rows[i]
		}
	}
	return nil
}

func (r *report) markdown() string {
	var b strings.Builder
	o := r.Options
	m := r.Machine
	fmt.Fprintf(&b, "# Promptwall gateway benchmark, %s\n\n", r.Started.Format(time.RFC3339))
	fmt.Fprintf(&b, "Machine: %s, %d cores, %s, kernel %s, load average %s before and %s after.  \n",
		m.CPU, m.Cores, m.GoVersion, m.Kernel, m.LoadBefore, r.LoadAfter)
	fmt.Fprintf(&b, "Gateway: %s.  \n", firstLine(m.Caddy))
	fmt.Fprintf(&b, "Throughput: closed loop, %d connections, %s per phase, load generator `%s`. "+
		"Latency: open loop at %.0f req/s for %s, measured from each request's scheduled send time. "+
		"%d repetitions of L0..L4 interleaved; the table shows medians, ratios and differences are to L1 of the same repetition. "+
		"CPU is the Caddy process's user+system time per request in the throughput phase; RSS is VmRSS after the level's phases, anon its anonymous part (RSS also counts the mapped pages of the record database, which grows with every request). "+
		"The load generator and the mock upstream share the machine's cores with the gateway; \"other load\" is the CPU that "+
		"everything else on the machine used meanwhile: where it is high, throughput and latency are noisy and CPU per request "+
		"is the steadier measure.\n\n",
		o.Conns, o.Duration, o.LoadGen, o.Rate, o.Duration, o.Reps)
	b.WriteString("| level | configuration |\n|---|---|\n")
	for _, l := range r.Levels {
		fmt.Fprintf(&b, "| %s | %s |\n", l.Name, l.Title)
	}
	b.WriteString("\n")
	for _, sc := range r.Scenarios {
		kind := "non-streamed"
		if sc.Stream {
			kind = "streamed (SSE)"
		}
		shape := fmt.Sprintf("one user turn of %d KB", sc.Size>>10)
		if sc.Turns > 0 {
			shape = fmt.Sprintf("%d-turn history plus a new user turn", sc.Turns)
		}
		fmt.Fprintf(&b, "## %s: %s, %s, request %.1f KB\n\n", sc.Name, shape, kind, float64(sc.Bytes)/1024)
		b.WriteString("| level | req/s | × L1 | p50 ms | p99 ms | +p50 ms | +p99 ms | achieved req/s |")
		if sc.Stream {
			b.WriteString(" TTFB p50/p99 ms |")
		}
		b.WriteString(" CPU µs/req | CPU × L1 | RSS (anon) MiB | errors | other load, cores |\n|---|---|---|---|---|---|---|---|")
		if sc.Stream {
			b.WriteString("---|")
		}
		b.WriteString("---|---|---|---|---|\n")
		for _, rw := range r.Rows {
			if rw.Scenario != sc.Name {
				continue
			}
			spread := ""
			if rw.Reps > 1 {
				spread = fmt.Sprintf(" (%.2f–%.2f)", rw.RPSRatioMin, rw.RPSRatioMax)
			}
			short := ""
			if rw.Achieved < 0.95*o.Rate {
				short = " (rate not sustained)"
			}
			fmt.Fprintf(&b, "| %s | %.0f | %.2f%s | %.2f | %.2f | %+.2f | %+.2f | %.0f%s |",
				rw.Level, rw.RPS, rw.RPSRatio, spread, rw.P50, rw.P99, rw.AddP50, rw.AddP99, rw.Achieved, short)
			if sc.Stream {
				fmt.Fprintf(&b, " %.2f / %.2f |", rw.TTFBP50, rw.TTFBP99)
			}
			if rw.Level == "L0" {
				b.WriteString(" – | – | – |")
			} else {
				fmt.Fprintf(&b, " %.0f | %.2f | %.0f (%.0f) |", rw.CPU, rw.CPURatio, rw.RSS, rw.Anon)
			}
			errs := fmt.Sprint(rw.Errors)
			if rw.Dropped > 0 {
				errs += fmt.Sprintf(", %d dropped", rw.Dropped)
			}
			fmt.Fprintf(&b, " %s | %.2f |\n", errs, rw.BgCores)
		}
		b.WriteString("\n")
		// A writer that fell behind shows as a backlog the store needed
		// more than a moment to commit after the load stopped.
		for _, rw := range r.Rows {
			if rw.Scenario == sc.Name && rw.DrainSeconds >= 0.5 {
				fmt.Fprintf(&b, "%s: the store's writer fell behind; %d records were still queued when the throughput load stopped, committed in %.1f s (their CPU is in CPU µs/req).\n\n",
					rw.Level, rw.Backlog, rw.DrainSeconds)
			}
		}
	}
	b.WriteString("## Targets\n\n| target | level | scenario | limit | measured | |\n|---|---|---|---|---|---|\n")
	for _, t := range r.Targets {
		op, verdict := "≤", "not measured"
		if t.AtLeast {
			op = "≥"
		}
		if t.Present {
			verdict = "**missed**"
			if t.Met {
				verdict = "met"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s %.2f | %.2f | %s |\n", t.What, t.Level, t.Scenario, op, t.Limit, t.Value, verdict)
	}
	b.WriteString("\n## Answer screening\n\nThe mock planted a secret in the answer; what each level let through:\n\n")
	b.WriteString("| level | non-streamed answer | streamed answer |\n|---|---|---|\n")
	for _, l := range r.Levels {
		var plain, stream string
		for _, c := range r.Canary {
			if c.Level == l.Name {
				if c.Stream {
					stream = c.Verdict
				} else {
					plain = c.Verdict
				}
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", l.Name, plain, stream)
	}
	for _, p := range r.Profiles {
		fmt.Fprintf(&b, "\n## CPU profile of %s (%s) under closed-loop load, %.0f req/s\n\n`%s`\n\n```\n%s```\n", p.Level, p.Scenario, p.RPS, p.File, p.Top)
	}
	if len(r.MetricsFiles) > 0 {
		b.WriteString("\nMetrics snapshots: ")
		for i, f := range r.MetricsFiles {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "`%s`", f)
		}
		fmt.Fprintf(&b, " (%s)\n", r.MetricsCheck)
	}
	return b.String()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// probe checks that a level answers a scenario's request with a complete
// 200 before any load is sent.
func probe(url string, s scenario) error {
	client := newClient(1)
	defer client.CloseIdleConnections()
	t := target{url: url, body: s.body, stream: s.Stream}
	req, err := t.request(context.Background(), 0, 0)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %s", resp.StatusCode, tail(string(b), 500))
	}
	if out := resp.Header.Get("X-Promptwall-Outcome"); out == "blocked" {
		return fmt.Errorf("benign request blocked: %s", b)
	}
	if s.Stream && !bytes.Contains(b, []byte("[DONE]")) {
		return fmt.Errorf("stream without [DONE]: %s", tail(string(b), 500))
	}
	return nil
}

// verdictUnscreened is probeCanary's verdict when the secret reached the
// client.
const verdictUnscreened = "passed unscreened"

// probeCanary asks the mock for an answer with a secret and reports what
// reached the client.
func probeCanary(url string, stream bool) (string, error) {
	body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"How do I deploy the service?"}]}`
	if stream {
		body = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"How do I deploy the service?"}],"stream":true}`
	}
	req, err := http.NewRequest(http.MethodPost, url+chatPath, strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(canaryHeader, "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	const key = "AKIAZ7VRSQ4LMXWB2PEH"
	switch {
	case resp.Header.Get("X-Promptwall-Outcome") == "blocked" || resp.StatusCode >= 400:
		return fmt.Sprintf("blocked (%d)", resp.StatusCode), nil
	case bytes.Contains(b, []byte(`"code":"content_blocked"`)) || bytes.Contains(b, []byte("content_blocked")):
		return "blocked in stream", nil
	case bytes.Contains(b, []byte(key)):
		return verdictUnscreened, nil
	default:
		return "redacted", nil
	}
}

// profileLevel CPU-profiles a level's Caddy process through its admin
// endpoint while the closed-loop load runs, and keeps the top of the
// profile.
func profileLevel(o options, tmp, outDir, stamp, bin string, g *gateway, s scenario, phase uint64) (profile, error) {
	p := profile{Level: g.lvl.Name, Scenario: s.Name,
		File: filepath.Join(outDir, fmt.Sprintf("%s-%s-%s.pprof", stamp, g.lvl.Name, s.Name))}
	fmt.Fprintf(os.Stderr, "profiling %s (%s) for %d s\n", g.lvl.Name, s.Name, o.ProfileSec)
	t := target{url: g.url(), body: s.body, stream: s.Stream, phase: phase}
	loadFor := time.Duration(o.ProfileSec+2) * time.Second
	done := make(chan error, 1)
	go func() {
		if o.LoadGen == "wrk" {
			res, err := wrkClosed(tmp, t, o.Threads, o.Conns, loadFor)
			p.RPS = res.RPS
			done <- err
			return
		}
		p.RPS = goClosed(t, o.Conns, loadFor).RPS
		done <- nil
	}()
	time.Sleep(time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(o.ProfileSec+20)*time.Second)
	defer cancel()
	ferr := fetch(ctx, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", g.adminURL(), o.ProfileSec), p.File)
	if err := <-done; err != nil {
		return p, err
	}
	if ferr != nil {
		return p, ferr
	}
	var top strings.Builder
	for _, args := range [][]string{
		{"-top", "-nodecount=25"},
		{"-top", "-cum", "-nodecount=30"},
		// Promptwall's own functions only; their flat time includes the
		// hidden callees (reverse_proxy, syscalls, the runtime).
		{"-top", "-cum", "-show=github.com/promptwall", "-nodecount=30"},
	} {
		out, err := exec.Command("go", append(append([]string{"tool", "pprof"}, args...), bin, p.File)...).CombinedOutput()
		if err != nil {
			return p, fmt.Errorf("go tool pprof: %w\n%s", err, out)
		}
		top.Write(out)
		top.WriteString("\n")
	}
	p.Top = top.String()
	return p, nil
}
