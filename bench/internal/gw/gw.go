// Package gw runs a real Caddy process with the promptwall modules for the
// fault programs under bench/: build, start on loopback with a temporary
// data directory, wait until it listens, kill.
package gw

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"time"
)

// Completion is the mock upstream's answer: a short OpenAI chat completion.
const Completion = `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hello there, how can I help?"},"finish_reason":"stop"}]}`

// Body is the request the programs send.
const Body = `{"model":"m","messages":[{"role":"user","content":"Summarise the meeting notes in three bullet points."}]}`

// Bench is what a fault program's run starts from.
type Bench struct {
	// Dir is a temporary directory for the run; Bin the gateway binary.
	Dir, Bin string
	// Upstream is the mock upstream's host:port; Served counts the
	// requests it answered.
	Upstream string
	Served   *atomic.Int64
}

// Prepare makes a temporary directory named for the program, builds the
// gateway into it unless bin is set, and starts the mock upstream. Close
// removes the directory.
func Prepare(program, bin string) (*Bench, error) {
	dir, err := os.MkdirTemp("", "promptwall-"+program+"-")
	if err != nil {
		return nil, err
	}
	b := &Bench{Dir: dir}
	if b.Bin, err = Build(bin, dir); err == nil {
		b.Upstream, b.Served, err = Upstream()
	}
	if err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// Close removes the run's directory.
func (b *Bench) Close() { os.RemoveAll(b.Dir) }

// Build compiles ./cmd/caddy into dir unless bin is set, and returns the
// binary's path. It must run from the repository root.
func Build(bin, dir string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	bin = filepath.Join(dir, "caddy")
	fmt.Fprintln(os.Stderr, "building ./cmd/caddy ...")
	build := exec.Command("go", "build", "-o", bin, "./cmd/caddy")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building ./cmd/caddy (run from the repository root): %w", err)
	}
	return bin, nil
}

// Upstream serves Completion on a loopback port until the process exits
// and returns its host:port and the count of requests it answered.
func Upstream() (string, *atomic.Int64, error) {
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	served := new(atomic.Int64)
	go http.Serve(up, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, Completion)
	}))
	return up.Addr().String(), served, nil
}

// Process is a running gateway.
type Process struct {
	cmd *exec.Cmd
	// Dir holds its Caddyfile, log and data directories.
	Dir  string
	done chan struct{}
}

// Start writes caddyfile into dir, runs bin on it and waits until addr
// accepts connections.
func Start(bin, dir, caddyfile, addr string) (*Process, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(path, []byte(caddyfile), 0o600); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "caddy.log"))
	if err != nil {
		return nil, err
	}
	p := &Process{cmd: exec.Command(bin, "run", "--config", path, "--adapter", "caddyfile"), Dir: dir, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	if err := p.cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); logf.Close(); close(p.done) }()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case <-p.done:
			return nil, fmt.Errorf("the gateway exited at start; see %s", p.Log())
		default:
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return p, nil
		}
	}
	p.Kill()
	return nil, fmt.Errorf("the gateway did not start; see %s", p.Log())
}

// Log is the path of the process's combined output.
func (p *Process) Log() string { return filepath.Join(p.Dir, "caddy.log") }

// Kill ends the process with SIGKILL and waits for it.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}
