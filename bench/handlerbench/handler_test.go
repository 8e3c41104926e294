// Package handlerbench_test measures the promptwall handler's cost per
// request, allocations included, through a real Caddy config loaded in
// process: each sub-benchmark posts to its own server on 127.0.0.1, where
// a static_response stands in for reverse_proxy so that only Caddy's
// routing and the handler are measured. Compare each sub-benchmark with
// "respond" (the same route without promptwall): the client's share of
// allocs/op is the same in all of them.
//
//	go test -run '^$' -bench . -benchmem ./bench/handlerbench/
package handlerbench_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/promptwall/promptwall"
)

const answer = `{"id":"chatcmpl-bench","object":"chat.completion","created":1767225600,"model":"gpt-4o-mini",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"Water the herbs in the morning and mix compost into the raised bed each spring."},"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":512,"completion_tokens":20,"total_tokens":532}}`

// prompt is about 2 KB of benign text; every request prepends unique words
// so the verdict cache never answers for the scanners.
var prompt = strings.Repeat("I am planning a vegetable garden on a small balcony that gets sun in the morning and shade after lunch. "+
	"Which herbs grow well in containers, and how often should they be watered during a dry summer? "+
	"The soil in the raised bed feels heavy and stays wet for days after it rains. ", 7)

// servers are the routes under test, in the order they are reported.
var servers = []struct {
	name     string
	handlers []map[string]any
}{
	{"respond", nil},
	{"no_scanners", []map[string]any{{"handler": "promptwall", "endpoint": "bare"}}},
	{"default_set", []map[string]any{{"handler": "promptwall"}}},
	{"secrets_in_out", []map[string]any{{"handler": "promptwall", "endpoint": "io"}}},
}

// start loads a config with one server per route and returns their URLs.
func start(tb testing.TB) map[string]string {
	tb.Helper()
	dir := tb.TempDir()
	urls := map[string]string{}
	srvs := map[string]any{}
	for _, s := range servers {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		handlers := append(append([]map[string]any{}, s.handlers...), map[string]any{
			"handler": "static_response",
			"headers": map[string][]string{"Content-Type": {"application/json"}},
			"body":    answer,
		})
		srvs[s.name] = map[string]any{
			"listen":          []string{addr},
			"routes":          []any{map[string]any{"handle": handlers}},
			"automatic_https": map[string]any{"disable": true},
		}
		urls[s.name] = "http://" + addr + "/v1/chat/completions"
	}
	cfg := map[string]any{
		"admin":   map[string]any{"disabled": true},
		"storage": map[string]any{"module": "file_system", "root": filepath.Join(dir, "caddy")},
		"logging": map[string]any{"logs": map[string]any{"default": map[string]any{"level": "ERROR"}}},
		"apps": map[string]any{
			"http": map[string]any{"servers": srvs},
			"promptwall": map[string]any{
				"storage": filepath.Join(dir, "promptwall.db"),
				"endpoints": []any{
					map[string]any{"name": "bare"},
					map[string]any{"name": "io", "scanners": []any{map[string]any{
						"detector":   map[string]any{"scanner": "secrets"},
						"directions": []string{"input", "output"},
					}}},
				},
			},
		},
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := caddy.Load(raw, true); err != nil {
		tb.Fatalf("loading config: %v", err)
	}
	tb.Cleanup(func() { _ = caddy.Stop() })
	return urls
}

var words = strings.Fields("amber birch cedar daisy elm fern grove hazel iris juniper kale laurel maple nettle oak pine")

// body renders request n: unique words, then the prompt.
func body(n int) []byte {
	var tag strings.Builder
	for {
		tag.WriteString(words[n%len(words)])
		tag.WriteByte(' ')
		if n /= len(words); n == 0 {
			break
		}
	}
	msg := map[string]any{
		"model":    "gpt-4o-mini",
		"messages": []map[string]string{{"role": "user", "content": "Note " + tag.String() + ". " + prompt}},
	}
	b, _ := json.Marshal(msg)
	return b
}

func post(client *http.Client, url string, b []byte) error {
	resp, err := client.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(got, []byte("chat.completion")) {
		return fmt.Errorf("status %d: %s", resp.StatusCode, got)
	}
	return nil
}

// TestRoutesAnswer keeps the benchmark's config loadable: every route
// answers a benign request with the completion.
func TestRoutesAnswer(t *testing.T) {
	urls := start(t)
	client := &http.Client{}
	defer client.CloseIdleConnections()
	for _, s := range servers {
		if err := post(client, urls[s.name], body(1)); err != nil {
			t.Errorf("%s: %v", s.name, err)
		}
	}
}

func BenchmarkHandler(b *testing.B) {
	urls := start(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}}
	defer client.CloseIdleConnections()
	n := 0
	for _, s := range servers {
		b.Run(s.name, func(b *testing.B) {
			// Bodies are built before the timer: the client's JSON
			// encoding is not the handler's cost.
			bodies := make([][]byte, b.N)
			for i := range bodies {
				n++
				bodies[i] = body(n)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(bodies[0])))
			b.ResetTimer()
			for i := range b.N {
				if err := post(client, urls[s.name], bodies[i]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
