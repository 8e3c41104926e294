package caddymodule

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// unmarshalCase parses input into a fresh T, the way a table test of a
// Caddyfile parser does: with wantErr set it checks the error contains it
// and returns nil; otherwise it fails on any error and returns the parsed
// value for the caller's own checks.
func unmarshalCase[T any, P interface {
	*T
	caddyfile.Unmarshaler
}](t *testing.T, input, wantErr string) *T {
	t.Helper()
	v := P(new(T))
	err := v.UnmarshalCaddyfile(caddyfile.NewTestDispenser(input))
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("want error containing %q, got %v", wantErr, err)
		}
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}
