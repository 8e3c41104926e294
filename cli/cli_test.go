package cli

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/api"
	"github.com/promptwall/promptwall/store"
)

func newDB(t *testing.T, orgs ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pw.db")
	st, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range orgs {
		if err := st.CreateOrg(&store.Org{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// call runs fn against a store opened on path, for assertions between
// commands (each command opens and closes the file itself).
func call(t *testing.T, path string, fn func(*store.Store)) {
	t.Helper()
	st, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fn(st)
}

// apiStatus opens the store, serves one GET /backend/v1/scans request
// with token through the admin handler, and returns the status.
func apiStatus(t *testing.T, path, token string) int {
	t.Helper()
	var code int
	call(t, path, func(st *store.Store) {
		h, err := api.New(api.Config{Store: st})
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodGet, "/backend/v1/scans", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		code = w.Code
	})
	return code
}

var tokenLine = regexp.MustCompile(`(?m)^token:\s+(pw_[A-Za-z0-9_-]{43})$`)
var tokenIDLine = regexp.MustCompile(`(?m)^token id:\s+(\S+)$`)

func TestUserAndTokenLifecycle(t *testing.T) {
	path := newDB(t, "default")
	var out bytes.Buffer
	if err := UserAdd(&out, Database{Path: path}, UserAddArgs{Org: "default", Email: "ops@example.com", Name: "Ops", Role: store.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	if err := UserAdd(&out, Database{Path: path}, UserAddArgs{Org: "DEFAULT", Email: "dev@example.com"}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := UserList(&out, Database{Path: path}, "default"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// Header, then newest first.
	if len(lines) != 3 || !strings.Contains(lines[1], "dev@example.com") || !strings.Contains(lines[1], "member") ||
		!strings.Contains(lines[2], "ops@example.com") || !strings.Contains(lines[2], "admin") {
		t.Fatalf("user list:\n%s", out.String())
	}

	out.Reset()
	if err := TokenCreate(&out, Database{Path: path}, "default", "ops@example.com", "laptop"); err != nil {
		t.Fatal(err)
	}
	m, idm := tokenLine.FindStringSubmatch(out.String()), tokenIDLine.FindStringSubmatch(out.String())
	if m == nil || idm == nil {
		t.Fatalf("token create printed:\n%s", out.String())
	}
	token, tokenID := m[1], idm[1]
	if strings.Count(out.String(), token) != 1 {
		t.Fatal("the token is printed more than once")
	}
	if got := apiStatus(t, path, token); got != http.StatusOK {
		t.Fatalf("new token: status %d", got)
	}

	steps := []struct {
		name   string
		run    func() error
		status int
	}{
		{"block", func() error { return UserBlock(&out, Database{Path: path}, "default", "ops@example.com", true) }, http.StatusUnauthorized},
		{"unblock", func() error { return UserBlock(&out, Database{Path: path}, "default", "ops@example.com", false) }, http.StatusOK},
		{"revoke", func() error { return TokenRevoke(&out, Database{Path: path}, tokenID) }, http.StatusUnauthorized},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := apiStatus(t, path, token); got != s.status {
			t.Fatalf("after %s: status %d, want %d", s.name, got, s.status)
		}
	}

	// A second token, revoked by its value.
	out.Reset()
	if err := TokenCreate(&out, Database{Path: path}, "default", "dev@example.com", ""); err != nil {
		t.Fatal(err)
	}
	token2 := tokenLine.FindStringSubmatch(out.String())[1]
	if err := TokenRevoke(&out, Database{Path: path}, token2); err != nil {
		t.Fatal(err)
	}
	if got := apiStatus(t, path, token2); got != http.StatusUnauthorized {
		t.Fatalf("token revoked by value: status %d", got)
	}

	errs := []struct {
		name string
		run  func() error
		want string
	}{
		{"unknown org", func() error { return UserAdd(&out, Database{Path: path}, UserAddArgs{Org: "nope", Email: "a@b"}) }, "no organization"},
		{"duplicate email", func() error {
			return UserAdd(&out, Database{Path: path}, UserAddArgs{Org: "default", Email: "OPS@example.com"})
		}, "already exists"},
		{"bad role", func() error {
			return UserAdd(&out, Database{Path: path}, UserAddArgs{Org: "default", Email: "x@y", Role: "root"})
		}, "role"},
		{"unknown user", func() error { return UserBlock(&out, Database{Path: path}, "default", "who@example.com", true) }, "no user"},
		{"token for unknown user", func() error { return TokenCreate(&out, Database{Path: path}, "default", "who@example.com", "") }, "no user"},
		{"revoke twice", func() error { return TokenRevoke(&out, Database{Path: path}, tokenID) }, "no such token"},
	}
	for _, e := range errs {
		if err := e.run(); err == nil || !strings.Contains(err.Error(), e.want) {
			t.Errorf("%s: error %v, want one containing %q", e.name, err, e.want)
		}
	}
}

func TestLockedDatabase(t *testing.T) {
	path := newDB(t, "default")
	held, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	err = UserList(&bytes.Buffer{}, Database{Path: path}, "default")
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), "stop it") || !strings.Contains(err.Error(), "/backend/v1") {
		t.Fatalf("error %v, want ErrLocked explaining what to do", err)
	}
}
