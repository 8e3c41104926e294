package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/promptwall/promptwall/caddymodule"
	"github.com/promptwall/promptwall/internal/testsvc"
	"github.com/promptwall/promptwall/store"
)

// The user and token commands work on the store a config names, not only
// on a bbolt file: with storage postgres they write to the database the
// running gateways share.
func TestCommandsOnPostgres(t *testing.T) {
	dsn := testsvc.PostgresDSN(t)
	ctx := testsvc.Context(t)
	schema := testsvc.Name("pwcli_")
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		_ = conn.Close(context.Background())
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	appJSON, _ := json.Marshal(map[string]any{"storage": map[string]any{
		"engine": "postgres", "dsn": u.String(), "cursor_key": strings.Repeat("k", 32)}})
	if name, err := caddymodule.StorageEngineName(appJSON); err != nil || name != "postgres" {
		t.Fatalf("StorageEngineName = %q, %v", name, err)
	}
	db := Database{Open: func() (store.Backend, error) { return caddymodule.OpenStorage(appJSON) }}
	st, err := db.open()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateOrg(&store.Org{Name: "default"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if err := UserAdd(&out, db, UserAddArgs{Org: "default", Email: "ops@example.com", Role: store.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	if err := TokenCreate(&out, db, "default", "ops@example.com", "laptop"); err != nil {
		t.Fatal(err)
	}
	m := tokenLine.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no token printed:\n%s", out.String())
	}
	// A gateway opening the same database finds the user and the token.
	st, err = db.open()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, err := st.GetOrgByName("default")
	if err != nil {
		t.Fatal(err)
	}
	user, err := st.GetUserByEmail(org.ID, "ops@example.com")
	if err != nil || user.Role != store.RoleAdmin {
		t.Fatalf("user %+v, %v", user, err)
	}
	if toks, err := st.ListTokens(user.ID); err != nil || len(toks) != 1 || toks[0].Name != "laptop" {
		t.Fatalf("tokens %+v, %v", toks, err)
	}
}

func TestStorageEngineName(t *testing.T) {
	tests := []struct{ app, want string }{
		{app: ``, want: "bolt"},
		{app: `{"storage":"/var/lib/pw.db"}`, want: "bolt"},
		{app: `{"storage":{"engine":"bolt","path":"/var/lib/pw.db"}}`, want: "bolt"},
		{app: `{"storage":{"engine":"postgres","dsn":"postgres://db/pw"}}`, want: "postgres"},
	}
	for _, tc := range tests {
		if got, err := caddymodule.StorageEngineName(json.RawMessage(tc.app)); err != nil || got != tc.want {
			t.Errorf("StorageEngineName(%s) = %q, %v; want %q", tc.app, got, err, tc.want)
		}
	}
}
