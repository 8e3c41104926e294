package caddymodule_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/promptwall/promptwall/internal/testdisk"
)

// A gateway whose disk fills up, in sync durability: the answer is held
// back while the record cannot be written and the failed writes are
// counted; once space returns the client gets the whole answer and the
// record is readable.
func TestGatewayFullDisk(t *testing.T) {
	dir := testdisk.Small(t, 4<<20)
	up := newUpstream(t)
	tester := caddytest.NewTester(t)
	tester.InitServer(gatewayConfig(filepath.Join(dir, "pw.db"), up.Listener.Addr().String(), "durability sync", ""), "caddyfile")
	if resp, b := post(t, tester, "/v1/chat/completions", "application/json", chatBody("before the disk filled")); resp.StatusCode != http.StatusOK {
		t.Fatalf("before the disk filled: %d %s", resp.StatusCode, b)
	}
	before := metric(t, tester.Client, "promptwall_store_write_errors_total")
	ballast := testdisk.Fill(t, dir)

	type answer struct {
		status int
		id     string
		body   []byte
		err    error
	}
	done := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, gatewayURL("/v1/chat/completions"), strings.NewReader(chatBody(strings.Repeat("A long question. ", 4000))))
		req.Header.Set("Content-Type", "application/json")
		resp, err := tester.Client.Do(req)
		if err != nil {
			done <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		done <- answer{resp.StatusCode, resp.Header.Get("X-Promptwall-Prompt-Id"), b, err}
	}()

	// The metric counts the failing writes while the disk is full.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for metric(t, tester.Client, "promptwall_store_write_errors_total") < before+2 {
		select {
		case a := <-done:
			t.Fatalf("answered while the disk was full: %d %s (%v)", a.status, a.body, a.err)
		case <-ctx.Done():
			t.Fatal("promptwall_store_write_errors_total did not count the full disk")
		case <-time.After(20 * time.Millisecond):
		}
	}
	select {
	case a := <-done:
		t.Fatalf("answered while the disk was full: %d %s (%v)", a.status, a.body, a.err)
	default:
	}

	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if a.err != nil || a.status != http.StatusOK || !bytes.Contains(a.body, []byte("chat.completion")) || a.id == "" {
		t.Fatalf("after space returned: %d %q id %q (%v)", a.status, a.body, a.id, a.err)
	}
	resp, b := apiGet(t, tester, "/backend/v1/prompts/"+a.id, testToken)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the acknowledged record %s: %d %s", a.id, resp.StatusCode, b)
	}
}
