// Package testsvc hands tests the external servers they need (PostgreSQL,
// Redis), as started by .ci/services.sh. A test calls PostgresDSN or
// RedisAddr first: without the server, it is skipped with a message saying
// how to start one, except under CI (CI=true), where a missing server is a
// failure, so that CI never passes by skipping.
package testsvc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// Environment variables exported by .ci/services.sh.
const (
	EnvPostgresDSN = "PROMPTWALL_TEST_PG_DSN"
	EnvRedisAddr   = "PROMPTWALL_TEST_REDIS_ADDR"
)

const howTo = "start throwaway servers with `bash .ci/services.sh -- go test ./...` " +
	"(installs Debian's postgresql and redis-server when run as root)"

// InCI reports whether the tests run under CI, where nothing may be skipped.
func InCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v == "true" || v == "1"
}

func need(t testing.TB, env, what string) string {
	t.Helper()
	v := os.Getenv(env)
	if v != "" {
		return v
	}
	if InCI() {
		t.Fatalf("%s is unset under CI=true: %s is required here; .ci/run starts it", env, what)
	}
	t.Skipf("%s unset: skipping the %s tests; %s", env, what, howTo)
	return ""
}

// PostgresDSN returns the test server's DSN, or skips (fails under CI).
func PostgresDSN(t testing.TB) string { return need(t, EnvPostgresDSN, "PostgreSQL") }

// RedisAddr returns the test server's host:port, or skips (fails under CI).
func RedisAddr(t testing.TB) string { return need(t, EnvRedisAddr, "Redis") }

// Name returns a random lower-case identifier starting with prefix, for a
// schema or key prefix no other test (or test run) shares.
func Name(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// Context returns a context ending with the test.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}
