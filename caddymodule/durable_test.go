package caddymodule

import (
	"context"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/promptwall/promptwall/store"
)

// In sync mode everything but the last byte reaches the client before the
// record is committed; the last byte follows once it is durable.
func TestCommitGateHoldsLastByte(t *testing.T) {
	cases := []struct {
		name   string
		writes []string
	}{
		{"one write", []string{`{"ok":true}`}},
		{"many writes", []string{"data: a\n\n", "", "data: b\n\n", "data: [DONE]\n\n"}},
		{"single bytes", []string{"a", "b", "c"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, err := store.Open(store.Options{Path: filepath.Join(t.TempDir(), "pw.db"), Durability: store.DurabilitySync})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			rec := httptest.NewRecorder()
			g := &commitGate{ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: rec}}
			want := strings.Join(tc.writes, "")
			for i, w := range tc.writes {
				if i == len(tc.writes)-1 {
					// The last write goes through ReadFrom, as a proxy's
					// copy does.
					if _, err := g.ReadFrom(strings.NewReader(w)); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if _, err := g.Write([]byte(w)); err != nil {
					t.Fatal(err)
				}
			}
			if got := rec.Body.String(); got != want[:len(want)-1] {
				t.Fatalf("before the commit the client got %q, want all but the last byte of %q", got, want)
			}
			res, err := st.Reserve(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			p := &store.Prompt{PromptFields: store.PromptFields{OrgID: "org", Input: "x"}}
			if err := res.Commit(p); err != nil {
				t.Fatal(err)
			}
			g.release(context.Background(), res, zap.NewNop())
			if got := rec.Body.String(); got != want {
				t.Fatalf("after the commit the client got %q, want %q", got, want)
			}
			if _, err := st.GetPrompt(p.ID); err != nil {
				t.Fatalf("released before the record was stored: %v", err)
			}
		})
	}
}

var _ io.ReaderFrom = (*commitGate)(nil)
