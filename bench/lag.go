package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/promptwall/promptwall/bench/internal/gw"
)

// The streaming-lag measurement (go run ./bench -lag): what screening a
// streamed answer costs the reader of a chat UI. An upstream streams an
// answer as many small chunks at a fixed interval, as a model does; the
// same answers are read through plain reverse_proxy (L1) and through
// Promptwall's built-in default endpoint (L4), one request at a time,
// interleaved. For each answer it records the time to the first content
// byte and, per chunk, the lag: when the client had the chunk's last byte
// minus when the upstream sent it (upstream and client share this
// process's clock).
var (
	lagMode     = flag.Bool("lag", false, "measure streaming lag through L1 and L4 instead of throughput (see -lag-chunks, -lag-interval, -lag-requests)")
	lagChunks   = flag.Int("lag-chunks", 40, "lag: content chunks per answer (6 bytes each, a word with its leading space)")
	lagInterval = flag.Duration("lag-interval", 25*time.Millisecond, "lag: pause before each content chunk")
	lagRequests = flag.Int("lag-requests", 20, "lag: answers read per level")
)

// lagWords are the answer's words, five letters each so every chunk is
// six bytes with its leading space.
var lagWords = strings.Fields("water herbs early sunny spots mulch beans fresh basil grows thyme roots slugs gravel plant seeds daily shade fruit green")

func lagChunk(i int) string { return " " + lagWords[i%len(lagWords)] }

// lagUpstream streams OpenAI chat chunks and remembers when it sent each
// chunk of each request (by the request's X-Lag-Id).
type lagUpstream struct {
	srv      *http.Server
	ln       net.Listener
	chunks   int
	interval time.Duration
	mu       sync.Mutex
	sent     map[string][]time.Time
}

func startLagUpstream(chunks int, interval time.Duration) (*lagUpstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &lagUpstream{ln: ln, chunks: chunks, interval: interval, sent: map[string][]time.Time{}}
	u.srv = &http.Server{Handler: u, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = u.srv.Serve(ln) }()
	return u, nil
}

func (u *lagUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		_, _ = io.WriteString(w, "lag upstream\n")
		return
	}
	_, _ = io.Copy(io.Discard, r.Body)
	id := r.Header.Get("X-Lag-Id")
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	const head = `data: {"id":"chatcmpl-lag","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-mini","choices":[{"index":0,`
	write := func(s string) bool {
		if _, err := io.WriteString(w, s); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write(head + `"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n") {
		return
	}
	sent := make([]time.Time, u.chunks)
	for i := range u.chunks {
		time.Sleep(u.interval)
		sent[i] = time.Now()
		if !write(fmt.Sprintf(head+`"delta":{"content":%q},"finish_reason":null}]}`+"\n\n", lagChunk(i))) {
			return
		}
	}
	write(head + `"delta":{},"finish_reason":"stop"}]}` + "\n\n" + "data: [DONE]\n\n")
	u.mu.Lock()
	u.sent[id] = sent
	u.mu.Unlock()
}

func (u *lagUpstream) sentTimes(id string) []time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.sent[id]
}

// lagSample is one answer read through one level.
type lagSample struct {
	TTFB time.Duration   // request sent -> first content byte
	Lags []time.Duration // per chunk: client has it - upstream sent it
}

// readLag streams one answer and times its chunks as the client gets them.
func readLag(client *http.Client, url, id string, chunks int) (lagSample, []time.Time, error) {
	body := `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"How do I keep a small herb garden healthy?"}]}`
	req, err := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		return lagSample{}, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Lag-Id", id)
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return lagSample{}, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return lagSample{}, nil, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	got := make([]time.Time, 0, chunks)
	var s lagSample
	text := 0
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadBytes('\n')
		now := time.Now()
		if data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data: ")); ok && data[0] == '{' {
			var ev struct {
				Choices []struct {
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
				Error any `json:"error"`
			}
			if err := json.Unmarshal(data, &ev); err != nil {
				return lagSample{}, nil, err
			}
			if ev.Error != nil {
				return lagSample{}, nil, fmt.Errorf("stream error event: %s", data)
			}
			if len(ev.Choices) > 0 && ev.Choices[0].Delta.Content != "" {
				if text == 0 {
					s.TTFB = now.Sub(start)
				}
				text += len(ev.Choices[0].Delta.Content)
				// Every chunk is six bytes: chunk k is whole once the
				// text reaches 6(k+1) bytes.
				for len(got) < chunks && text >= 6*(len(got)+1) {
					got = append(got, now)
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return lagSample{}, nil, err
		}
	}
	if len(got) != chunks {
		return lagSample{}, nil, fmt.Errorf("got %d of %d chunks", len(got), chunks)
	}
	return s, got, nil
}

type lagSummary struct {
	Level, Title         string
	TTFBMedian, TTFBP90  float64 // ms
	LagMean, LagP90, Max float64 // ms
}

func summarizeLag(l level, samples []lagSample) lagSummary {
	var ttfb, lags []time.Duration
	var sum time.Duration
	for _, s := range samples {
		ttfb = append(ttfb, s.TTFB)
		lags = append(lags, s.Lags...)
		for _, d := range s.Lags {
			sum += d
		}
	}
	slices.Sort(ttfb)
	slices.Sort(lags)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return lagSummary{
		Level: l.Name, Title: l.Title,
		TTFBMedian: pct(ttfb, 0.5), TTFBP90: pct(ttfb, 0.9),
		LagMean: ms(sum / time.Duration(max(1, len(lags)))), LagP90: pct(lags, 0.9), Max: ms(lags[len(lags)-1]),
	}
}

// runLag runs the streaming-lag measurement and prints its table.
func runLag(o options) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	if err := os.Chdir(root); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "promptwall-lag-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin, err := gw.Build(o.caddyBin, tmp)
	if err != nil {
		return err
	}
	up, err := startLagUpstream(*lagChunks, *lagInterval)
	if err != nil {
		return err
	}
	defer up.srv.Close()

	var lvls []level
	gws := map[string]*gateway{}
	for _, l := range levels() {
		if l.Name != "L1" && l.Name != "L4" {
			continue
		}
		g, err := startGateway(bin, tmp, l, up.ln.Addr().String())
		if err != nil {
			return err
		}
		defer g.stop()
		gws[l.Name] = g
		lvls = append(lvls, l)
	}
	client := &http.Client{Timeout: time.Minute}
	samples := map[string][]lagSample{}
	fmt.Fprintf(os.Stderr, "lag: %d requests per level, %d chunks of 6 bytes every %s\n", *lagRequests, *lagChunks, *lagInterval)
	// The first request of each level warms its connections and pools.
	for r := -1; r < *lagRequests; r++ {
		for _, l := range lvls {
			id := fmt.Sprintf("%s-%d", l.Name, r)
			s, got, err := readLag(client, gws[l.Name].url(), id, *lagChunks)
			if err != nil {
				return fmt.Errorf("%s: %w", l.Name, err)
			}
			sent := up.sentTimes(id)
			if len(sent) != len(got) {
				return fmt.Errorf("%s: the upstream has no send times for %s", l.Name, id)
			}
			for i := range got {
				s.Lags = append(s.Lags, got[i].Sub(sent[i]))
			}
			if r >= 0 {
				samples[l.Name] = append(samples[l.Name], s)
			}
		}
	}
	fmt.Printf("Streaming lag: %d answers per level of %d six-byte chunks sent %s apart (%s)\n\n",
		*lagRequests, *lagChunks, *lagInterval, time.Now().UTC().Format(time.RFC3339))
	fmt.Println("| level | time to first content byte, median / p90 | per-chunk lag, mean / p90 / max |")
	fmt.Println("|---|---|---|")
	var sums []lagSummary
	for _, l := range lvls {
		s := summarizeLag(l, samples[l.Name])
		sums = append(sums, s)
		fmt.Printf("| %s %s | %.1f / %.1f ms | %.2f / %.2f / %.1f ms |\n", s.Level, s.Title, s.TTFBMedian, s.TTFBP90, s.LagMean, s.LagP90, s.Max)
	}
	if len(sums) == 2 {
		fmt.Printf("\nL4 - L1: time to first content byte %+.1f ms (median), mean per-chunk lag %+.2f ms\n",
			sums[1].TTFBMedian-sums[0].TTFBMedian, sums[1].LagMean-sums[0].LagMean)
	}
	return nil
}
