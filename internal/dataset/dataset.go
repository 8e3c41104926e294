// Package dataset finds and reads the public labelled data that sits beside
// the repository in CI (../shared/data). Tests that need it skip with a
// message where it is absent, as in a user's clone.
package dataset

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/promptwall/promptwall/internal/jsonl"
)

// EnvDir overrides where the data is looked for.
const EnvDir = "PROMPTWALL_DATA_DIR"

// Dir returns the data directory, or "" when it cannot be found.
func Dir() string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			candidate := filepath.Join(filepath.Dir(d), "shared", "data")
			if st, err := os.Stat(candidate); err == nil && st.IsDir() {
				return candidate
			}
			return ""
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// Require returns the path of a data file (relative to the data directory,
// e.g. "injection/dev.jsonl"), skipping the test when it is absent.
func Require(tb testing.TB, rel string) string {
	tb.Helper()
	dir := Dir()
	if dir == "" {
		tb.Skipf("labelled data not found (expected ../shared/data beside the repository, or $%s): skipping", EnvDir)
	}
	p := filepath.Join(dir, rel)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("labelled data file %s not found: skipping", p)
	}
	return p
}

// ReadJSONL decodes every line of a JSON Lines file into a new T.
func ReadJSONL[T any](path string) ([]T, error) { return jsonl.Read[T](path) }
