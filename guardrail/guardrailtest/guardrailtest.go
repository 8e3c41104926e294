// Package guardrailtest reads the caller fixtures in guardrail/testdata:
// one request per file, under a folder named for the shape that serves it,
// with the answer Promptwall gives. The guardrail package replays them
// through its shapes, the gateway through a running server.
package guardrailtest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Fixture is one request a caller sends, built as the caller's own source
// builds it (Source cites repository, file and commit), with the answer
// Promptwall gives under the test pipeline and what the caller makes of it.
type Fixture struct {
	Source  []string        `json:"source"`
	Path    string          `json:"path"`
	Request json.RawMessage `json:"request"`
	// Outcome is the screening's outcome under the test pipeline.
	Outcome string `json:"outcome"`
	// Caller is what the caller does with the answer, read as its source
	// reads it: "pass", "block" or "modify".
	Caller string `json:"caller"`
	// Recorded is the record's outcome when it is not Outcome (a block in
	// monitor-only mode is recorded as a flag).
	Recorded string `json:"recorded,omitempty"`
	// Answer is Promptwall's answer, byte for byte modulo whitespace.
	Answer json.RawMessage `json:"answer"`
}

// File is a fixture and where it lives.
type File struct {
	Fixture
	// Name is the file's path; Shape the folder it lives under.
	Name, Shape string
}

// Load reads every fixture under dir (the guardrail package's testdata).
// The callers' package.json and package-lock.json beside them are not
// fixtures.
func Load(tb testing.TB, dir string) []File {
	tb.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if err != nil || len(names) == 0 {
		tb.Fatalf("no fixtures under %s: %v", dir, err)
	}
	var out []File
	for _, name := range names {
		if strings.HasPrefix(filepath.Base(name), "package") {
			continue
		}
		raw, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		f := File{Name: name, Shape: filepath.Base(filepath.Dir(name))}
		if err := json.Unmarshal(raw, &f.Fixture); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		out = append(out, f)
	}
	return out
}

// Rewrite stores answer as the fixture's answer, in the file's layout.
func (f *File) Rewrite(answer []byte) error {
	f.Answer = answer
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f.Fixture); err != nil {
		return err
	}
	return os.WriteFile(f.Name, out.Bytes(), 0o644)
}

// SameJSON reports whether got and want are the same JSON value; got must
// be JSON, want is false when it is not (a fixture not yet answered).
func SameJSON(tb testing.TB, got, want []byte) bool {
	tb.Helper()
	var x, y any
	if err := json.Unmarshal(got, &x); err != nil {
		tb.Fatalf("answer is not JSON: %v: %s", err, got)
	}
	if err := json.Unmarshal(want, &y); err != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
