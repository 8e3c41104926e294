package auth

import (
	"crypto/sha256"
	"errors"
	"path/filepath"
	"testing"

	"github.com/promptwall/promptwall/store"
)

func TestAuthenticate(t *testing.T) {
	st, err := store.Open(store.Options{Path: filepath.Join(t.TempDir(), "pw.db"), Retention: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org := &store.Org{Name: "acme"}
	off := &store.Org{Name: "off"}
	for _, o := range []*store.Org{org, off} {
		if err := st.CreateOrg(o); err != nil {
			t.Fatal(err)
		}
	}
	newUser := func(o *store.Org, email, role string) (*store.User, string) {
		u := &store.User{OrgID: o.ID, Email: email, Role: role}
		if err := st.CreateUser(u); err != nil {
			t.Fatal(err)
		}
		tok, _, err := st.CreateToken(u.ID, "test")
		if err != nil {
			t.Fatal(err)
		}
		return u, tok
	}
	ada, tokAda := newUser(org, "ada@acme.example", store.RoleAdmin)
	bob, tokBob := newUser(org, "bob@acme.example", store.RoleMember)
	_, tokOff := newUser(off, "eve@off.example", store.RoleOwner)
	if err := st.BlockUser(bob.ID, true); err != nil {
		t.Fatal(err)
	}
	off.Disabled = true
	if err := st.UpdateOrg(off); err != nil {
		t.Fatal(err)
	}
	const bootstrap = "bootstrap-token-of-at-least-32-characters"
	bh := sha256.Sum256([]byte(bootstrap))
	a := &Authenticator{Store: st, BootstrapHash: &bh, BootstrapOrgID: org.ID}

	tests := []struct {
		name    string
		token   string
		want    Principal
		wantErr error
	}{
		{"user token", tokAda, Principal{OrgID: org.ID, UserID: ada.ID, Role: store.RoleAdmin}, nil},
		{"bootstrap token is the org's owner", bootstrap, Principal{OrgID: org.ID, UserID: BootstrapUserID, Role: store.RoleOwner}, nil},
		{"no token", "", Principal{}, ErrInvalidToken},
		{"unknown token", "pw_unknown", Principal{}, ErrInvalidToken},
		{"blocked user", tokBob, Principal{}, ErrInvalidToken},
		{"disabled org", tokOff, Principal{}, ErrInvalidToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := a.Authenticate(tt.token)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("principal %+v, want %+v", got, tt.want)
			}
		})
	}

	// A successful authentication records the token's use.
	tok, err := st.LookupToken(store.HashToken(tokAda))
	if err != nil {
		t.Fatal(err)
	}
	if tok.LastUsedAt.IsZero() {
		t.Error("token use not recorded")
	}

	// A store that fails is not an invalid token: callers answer 500.
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(tokAda); err == nil || errors.Is(err, ErrInvalidToken) {
		t.Errorf("closed store: error %v, want a store failure", err)
	}
}
