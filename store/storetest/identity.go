package storetest

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store"
)

// RunIdentity runs the identity conformance suite: orgs, users, roles and
// tokens.
func RunIdentity(t *testing.T, h Harness) {
	suite{
		{"Identity", testIdentity},
		{"Orgs", testOrgs},
		{"HasOwner", testHasOwner},
		{"Users", testUsers},
		{"Tokens", testTokens},
		{"ListUsers", testListUsers},
	}.run(t, h)
}

func testOrgs(t *testing.T, h Harness) {
	s := h.open(t, Options{})
	acme := &store.Org{Name: "Acme"}
	if err := s.CreateOrg(acme); err != nil {
		t.Fatal(err)
	}
	if acme.ID == "" || acme.Features != store.DefaultFeatures() || acme.OwnerRoleID != store.RoleID(acme.ID, store.RoleOwner) ||
		acme.AdminRoleID != store.RoleID(acme.ID, store.RoleAdmin) || acme.MemberRoleID != store.RoleID(acme.ID, store.RoleMember) {
		t.Fatalf("CreateOrg set %+v", acme)
	}
	if acme.OwnerRoleID == acme.AdminRoleID || store.RoleID("a", store.RoleOwner) == store.RoleID("b", store.RoleOwner) {
		t.Fatal("role ids collide")
	}
	tests := []struct {
		name    string
		op      func() error
		wantErr error
	}{
		{"create without name", func() error { return s.CreateOrg(&store.Org{}) }, store.ErrInvalidRecord},
		{"create name taken, other case", func() error { return s.CreateOrg(&store.Org{Name: " ACME "}) }, store.ErrConflict},
		{"create id taken", func() error { return s.CreateOrg(&store.Org{ID: acme.ID, Name: "New"}) }, store.ErrConflict},
		{"create second", func() error { return s.CreateOrg(&store.Org{ID: "o2", Name: "Beta"}) }, nil},
		{"negative cap", func() error {
			return s.CreateOrg(&store.Org{Name: "Neg", Features: store.Features{BlueTeam: store.BlueTeam{CustomScanners: store.CustomScanners{MaxConcurrentCustom: -1}}}})
		}, store.ErrInvalidRecord},
		{"update unknown", func() error { return s.UpdateOrg(&store.Org{ID: "nope", Name: "X"}) }, store.ErrNotFound},
		{"update to taken name", func() error { return s.UpdateOrg(&store.Org{ID: "o2", Name: "acme"}) }, store.ErrConflict},
		{"rename frees old name", func() error {
			if err := s.UpdateOrg(&store.Org{ID: "o2", Name: "Gamma", RequireMFA: true}); err != nil {
				return err
			}
			return s.CreateOrg(&store.Org{Name: "Beta"})
		}, nil},
		{"put replaces, keeps createdAt", func() error {
			before, _ := s.GetOrg(acme.ID)
			if err := s.PutOrg(&store.Org{ID: acme.ID, Name: "Acme", Entitlements: "pro"}); err != nil {
				return err
			}
			after, _ := s.GetOrg(acme.ID)
			if after.CreatedAt != before.CreatedAt || after.Entitlements != "pro" {
				return fmt.Errorf("after put %+v", after)
			}
			return nil
		}, nil},
		{"put with taken name", func() error { return s.PutOrg(&store.Org{ID: "o9", Name: "gamma"}) }, store.ErrConflict},
		{"by name", func() error {
			o, err := s.GetOrgByName("gAMMA")
			if err == nil && (o.ID != "o2" || !o.RequireMFA) {
				return fmt.Errorf("GetOrgByName = %+v", o)
			}
			return err
		}, nil},
		{"by unknown name", func() error { _, err := s.GetOrgByName("Beta2"); return err }, store.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.op(); !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("got %v, want %v", err, tt.wantErr)
			}
		})
	}
	orgs, err := s.ListOrgs()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range orgs {
		names = append(names, o.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"Acme", "Beta", "Gamma"}) {
		t.Fatalf("ListOrgs names %v", names)
	}
}

func testHasOwner(t *testing.T, h Harness) {
	s := h.open(t, Options{})
	if err := s.PutOrg(&store.Org{ID: "o1", Name: "Acme"}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		op   func() error
		want bool
	}{
		{"no users", func() error { return nil }, false},
		{"member only", func() error { return s.PutUser(&store.User{ID: "m", OrgID: "o1", Role: store.RoleMember}) }, false},
		{"owner", func() error { return s.PutUser(&store.User{ID: "w", OrgID: "o1", Role: store.RoleOwner}) }, true},
		{"owner blocked", func() error { return s.BlockUser("w", true) }, false},
		{"owner unblocked", func() error { return s.BlockUser("w", false) }, true},
	}
	for _, st := range steps {
		if err := st.op(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		o, err := s.GetOrg("o1")
		if err != nil || o.HasOwner != st.want {
			t.Fatalf("%s: HasOwner = %v (%v), want %v", st.name, o.HasOwner, err, st.want)
		}
	}
	if err := s.BlockUser("nobody", true); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("BlockUser unknown = %v", err)
	}
}

func testUsers(t *testing.T, h Harness) {
	s := h.open(t, Options{})
	for _, o := range []*store.Org{{ID: "o1", Name: "Acme"}, {ID: "o2", Name: "Other"}} {
		if err := s.PutOrg(o); err != nil {
			t.Fatal(err)
		}
	}
	alice := &store.User{OrgID: "o1", Name: "Alice", Email: "Alice@Example.com", Role: store.RoleAdmin}
	if err := s.CreateUser(alice); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		op      func() error
		wantErr error
	}{
		{"no email", func() error { return s.CreateUser(&store.User{OrgID: "o1", Role: store.RoleMember}) }, store.ErrInvalidRecord},
		{"bad email", func() error { return s.CreateUser(&store.User{OrgID: "o1", Email: "a b@c", Role: store.RoleMember}) }, store.ErrInvalidRecord},
		{"two @", func() error { return s.CreateUser(&store.User{OrgID: "o1", Email: "a@b@c", Role: store.RoleMember}) }, store.ErrInvalidRecord},
		{"email taken, other case", func() error {
			return s.CreateUser(&store.User{OrgID: "o1", Email: "alice@EXAMPLE.com", Role: store.RoleMember})
		}, store.ErrConflict},
		{"same email other org", func() error {
			return s.CreateUser(&store.User{OrgID: "o2", Email: "alice@example.com", Role: store.RoleMember})
		}, nil},
		{"id taken", func() error {
			return s.CreateUser(&store.User{ID: alice.ID, OrgID: "o1", Email: "x@y", Role: store.RoleMember})
		}, store.ErrConflict},
		{"missing org", func() error { return s.CreateUser(&store.User{OrgID: "nope", Email: "x@y", Role: store.RoleMember}) }, store.ErrNotFound},
		{"bad role", func() error { return s.CreateUser(&store.User{OrgID: "o1", Email: "x@y", Role: "root"}) }, store.ErrInvalidRecord},
		{"put steals email", func() error {
			return s.PutUser(&store.User{ID: "u9", OrgID: "o1", Email: "ALICE@example.com", Role: store.RoleMember})
		}, store.ErrConflict},
		{"by email", func() error {
			u, err := s.GetUserByEmail("o1", "alice@example.COM")
			if err == nil && u.ID != alice.ID {
				return fmt.Errorf("GetUserByEmail = %+v", u)
			}
			return err
		}, nil},
		{"by email other org", func() error { _, err := s.GetUserByEmail("o3", "alice@example.com"); return err }, store.ErrNotFound},
		{"change email frees old", func() error {
			u := *alice
			u.Email = "alice@new.example"
			if err := s.PutUser(&u); err != nil {
				return err
			}
			if _, err := s.GetUserByEmail("o1", "alice@example.com"); !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("old e-mail still indexed: %v", err)
			}
			return s.CreateUser(&store.User{OrgID: "o1", Email: "alice@example.com", Role: store.RoleMember})
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.op(); !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("got %v, want %v", err, tt.wantErr)
			}
		})
	}
	got, err := s.GetUser(alice.ID)
	if err != nil || got.CreatedAt != alice.CreatedAt || got.RoleID() != store.RoleID("o1", store.RoleAdmin) ||
		!slices.Contains(got.Permissions(), store.PermUsersRead) {
		t.Fatalf("GetUser = %+v, %v", got, err)
	}
}

func testTokens(t *testing.T, h Harness) {
	s := h.open(t, Options{})
	if err := s.PutOrg(&store.Org{ID: "o1", Name: "Acme"}); err != nil {
		t.Fatal(err)
	}
	u := &store.User{OrgID: "o1", Email: "a@b", Role: store.RoleMember}
	if err := s.CreateUser(u); err != nil {
		t.Fatal(err)
	}
	clear, tok, err := s.CreateToken(u.ID, "ci")
	if err != nil {
		t.Fatal(err)
	}
	body, ok := strings.CutPrefix(clear, store.TokenPrefix)
	if raw, err := base64.RawURLEncoding.DecodeString(body); !ok || err != nil || len(raw) != 32 {
		t.Fatalf("token %q is not pw_ + base64url(32 bytes)", clear)
	}
	clear2, tok2, err := s.CreateToken(u.ID, "second")
	if err != nil || clear2 == clear || tok2.ID == tok.ID {
		t.Fatalf("second token %q %+v %v", clear2, tok2, err)
	}
	got, err := s.LookupToken(store.HashToken(clear))
	if err != nil || got.ID != tok.ID || got.Name != "ci" || got.UserID != u.ID || got.OrgID != "o1" || !got.LastUsedAt.IsZero() {
		t.Fatalf("LookupToken = %+v, %v", got, err)
	}
	list, err := s.ListTokens(u.ID)
	if err != nil || len(list) != 2 {
		t.Fatalf("ListTokens = %v, %v", list, err)
	}

	now := time.Now()
	touches := []struct {
		at   time.Time
		want time.Time
	}{
		{now, now},
		{now.Add(30 * time.Second), now}, // within a minute: no write
		{now.Add(2 * time.Minute), now.Add(2 * time.Minute)},
	}
	for i, tc := range touches {
		if err := s.TouchToken(store.HashToken(clear), tc.at); err != nil {
			t.Fatal(err)
		}
		got, _ := s.LookupToken(store.HashToken(clear))
		if !got.LastUsedAt.Time().Equal(tc.want.UTC().Truncate(time.Millisecond)) {
			t.Fatalf("touch %d: LastUsedAt %v, want %v", i, got.LastUsedAt, tc.want)
		}
	}

	tests := []struct {
		name    string
		op      func() error
		wantErr error
	}{
		{"unknown user", func() error { _, _, err := s.CreateToken("nobody", ""); return err }, store.ErrNotFound},
		{"revoke by id", func() error { return s.RevokeToken(tok.ID) }, nil},
		{"lookup revoked", func() error { _, err := s.LookupToken(store.HashToken(clear)); return err }, store.ErrNotFound},
		{"revoke by id again", func() error { return s.RevokeToken(tok.ID) }, store.ErrNotFound},
		{"touch revoked is no error", func() error { return s.TouchToken(store.HashToken(clear), now) }, nil},
		{"revoke by value", func() error { return s.RevokeToken(clear2) }, nil},
		{"lookup revoked by value", func() error { _, err := s.LookupToken(store.HashToken(clear2)); return err }, store.ErrNotFound},
		{"revoke unknown value", func() error { return s.RevokeToken("pw_nope") }, store.ErrNotFound},
		{"blocked user gets none", func() error {
			if err := s.BlockUser(u.ID, true); err != nil {
				return err
			}
			_, _, err := s.CreateToken(u.ID, "")
			return err
		}, store.ErrInvalidRecord},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.op(); !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("got %v, want %v", err, tt.wantErr)
			}
		})
	}
	if list, _ := s.ListTokens(u.ID); len(list) != 0 {
		t.Fatalf("tokens left after revocation: %v", list)
	}
}

func testListUsers(t *testing.T, h Harness) {
	s := h.open(t, Options{})
	for _, o := range []*store.Org{{ID: "o1", Name: "Acme"}, {ID: "o2", Name: "Other"}} {
		if err := s.PutOrg(o); err != nil {
			t.Fatal(err)
		}
	}
	var all []*store.User // creation order
	for i := range 23 {
		u := &store.User{OrgID: "o1", Name: fmt.Sprintf("store.User %02d", i), Email: fmt.Sprintf("u%02d@%s.example", i, []string{"red", "blue"}[i%2]),
			Role: []string{store.RoleMember, store.RoleAdmin, store.RoleOwner}[i%3], Projects: []string{fmt.Sprint("p", i%4)}}
		if i%5 == 0 {
			u.GroupIDs = []string{"g5"}
		}
		if err := s.CreateUser(u); err != nil {
			t.Fatal(err)
		}
		all = append(all, u)
	}
	if err := s.CreateUser(&store.User{OrgID: "o2", Name: "store.User 99", Email: "x@red.example", Role: store.RoleMember}); err != nil {
		t.Fatal(err)
	}
	pick := func(keep func(i int, u *store.User) bool) []string {
		var out []string
		for i := len(all) - 1; i >= 0; i-- {
			if keep(i, all[i]) {
				out = append(out, all[i].ID)
			}
		}
		return out
	}
	tests := []struct {
		name string
		q    store.UserQuery
		want []string
	}{
		{"all newest first", store.UserQuery{OrgID: "o1", Limit: 10}, pick(func(int, *store.User) bool { return true })},
		{"limit 1", store.UserQuery{OrgID: "o1", Limit: 1}, pick(func(int, *store.User) bool { return true })},
		{"search email fold", store.UserQuery{OrgID: "o1", Search: "BLUE", Limit: 4}, pick(func(i int, _ *store.User) bool { return i%2 == 1 })},
		{"search name", store.UserQuery{OrgID: "o1", Search: "user 1", Limit: 3}, pick(func(i int, _ *store.User) bool { return i >= 10 && i < 20 })},
		{"project", store.UserQuery{OrgID: "o1", Project: "p1", Limit: 2}, pick(func(i int, _ *store.User) bool { return i%4 == 1 })},
		{"group", store.UserQuery{OrgID: "o1", GroupID: "g5", Limit: 2}, pick(func(i int, _ *store.User) bool { return i%5 == 0 })},
		{"role", store.UserQuery{OrgID: "o1", RoleID: store.RoleID("o1", store.RoleAdmin), Limit: 3}, pick(func(i int, _ *store.User) bool { return i%3 == 1 })},
		{"role of other org", store.UserQuery{OrgID: "o1", RoleID: store.RoleID("o2", store.RoleAdmin), Limit: 3}, nil},
		{"unknown org", store.UserQuery{OrgID: "o3", Limit: 3}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			var pages []store.UserPage
			q := tt.q
			for i := 0; ; i++ {
				if i > 50 {
					t.Fatal("paging does not end")
				}
				p, err := s.ListUsers(q)
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 && p.Prev != "" {
					t.Fatal("first page has prev")
				}
				if p.Next != "" && len(p.Items) != q.Limit {
					t.Fatalf("page %d has %d items", i, len(p.Items))
				}
				for _, u := range p.Items {
					got = append(got, u.ID)
				}
				pages = append(pages, p)
				if p.Next == "" {
					break
				}
				q.Cursor = p.Next
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %v\nwant %v", got, tt.want)
			}
			for i := len(pages) - 1; i > 0; i-- {
				q.Cursor = pages[i].Prev
				p, err := s.ListUsers(q)
				if err != nil {
					t.Fatal(err)
				}
				if len(p.Items) != len(pages[i-1].Items) || p.Items[0].ID != pages[i-1].Items[0].ID {
					t.Fatalf("prev of page %d differs", i)
				}
				if (p.Prev == "") != (i-1 == 0) {
					t.Fatalf("prev of page %d: prev cursor %q", i, p.Prev)
				}
			}
		})
	}

	first, err := s.ListUsers(store.UserQuery{OrgID: "o1", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	flip := func(c string, i int) string {
		b := []byte(c)
		b[i] ^= 1
		return string(b)
	}
	prompts, _ := s.ListPrompts(store.Query{OrgID: "o1", Limit: 1})
	bad := []struct {
		name string
		q    store.UserQuery
		want error
	}{
		{"limit 0", store.UserQuery{OrgID: "o1"}, store.ErrInvalidLimit},
		{"limit 101", store.UserQuery{OrgID: "o1", Limit: 101}, store.ErrInvalidLimit},
		{"garbage", store.UserQuery{OrgID: "o1", Limit: 5, Cursor: "!!"}, store.ErrBadCursor},
		{"tampered key", store.UserQuery{OrgID: "o1", Limit: 5, Cursor: flip(first.Next, 15)}, store.ErrBadCursor},
		{"tampered mac", store.UserQuery{OrgID: "o1", Limit: 5, Cursor: flip(first.Next, len(first.Next)-2)}, store.ErrBadCursor},
		{"other filter", store.UserQuery{OrgID: "o1", Search: "x", Limit: 5, Cursor: first.Next}, store.ErrBadCursor},
		{"other org", store.UserQuery{OrgID: "o2", Limit: 5, Cursor: first.Next}, store.ErrBadCursor},
		{"record cursor", store.UserQuery{OrgID: "o1", Limit: 5, Cursor: prompts.Next + "AAAA"}, store.ErrBadCursor},
	}
	for _, tt := range bad {
		if _, err := s.ListUsers(tt.q); !errors.Is(err, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, err, tt.want)
		}
	}
	// A users cursor does not continue a records list.
	if _, err := s.ListPrompts(store.Query{OrgID: "o1", Limit: 5, Cursor: first.Next}); !errors.Is(err, store.ErrBadCursor) {
		t.Fatalf("ListPrompts with a users cursor: %v", err)
	}
}

func testIdentity(t *testing.T, h Harness) {
	s := h.open(t, Options{})
	if err := s.PutOrg(&store.Org{ID: "o1", Name: "Acme"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutOrg(&store.Org{ID: "o2", Name: "Other"}); err != nil {
		t.Fatal(err)
	}
	o, err := s.GetOrg("o1")
	if err != nil || o.Name != "Acme" || o.CreatedAt.IsZero() {
		t.Fatalf("GetOrg = %+v, %v", o, err)
	}
	hash := [32]byte{1, 2, 3}
	tests := []struct {
		name    string
		op      func() error
		wantErr error
	}{
		{"org without id", func() error { return s.PutOrg(&store.Org{}) }, store.ErrInvalidRecord},
		{"user", func() error { return s.PutUser(&store.User{ID: "u1", OrgID: "o1", Role: store.RoleMember}) }, nil},
		{"user of missing org", func() error { return s.PutUser(&store.User{ID: "u2", OrgID: "nope", Role: store.RoleMember}) }, store.ErrNotFound},
		{"user with bad role", func() error { return s.PutUser(&store.User{ID: "u3", OrgID: "o1", Role: "root"}) }, store.ErrInvalidRecord},
		{"token", func() error { return s.PutToken(&store.Token{Hash: hash, UserID: "u1", OrgID: "o1"}) }, nil},
		{"token for other org", func() error { return s.PutToken(&store.Token{Hash: [32]byte{9}, UserID: "u1", OrgID: "o2"}) }, store.ErrInvalidRecord},
		{"token of missing user", func() error { return s.PutToken(&store.Token{Hash: [32]byte{8}, UserID: "zz", OrgID: "o1"}) }, store.ErrNotFound},
		{"token without hash", func() error { return s.PutToken(&store.Token{UserID: "u1", OrgID: "o1"}) }, store.ErrInvalidRecord},
		{"lookup", func() error {
			tok, err := s.LookupToken(hash)
			if err == nil && (tok.UserID != "u1" || tok.OrgID != "o1" || tok.Hash != hash) {
				return fmt.Errorf("LookupToken = %+v", tok)
			}
			return err
		}, nil},
		{"lookup unknown", func() error { _, err := s.LookupToken([32]byte{7}); return err }, store.ErrNotFound},
		{"get unknown user", func() error { _, err := s.GetUser("zz"); return err }, store.ErrNotFound},
		{"get unknown org", func() error { _, err := s.GetOrg("zz"); return err }, store.ErrNotFound},
		{"delete", func() error { return s.DeleteToken(hash) }, nil},
		{"lookup deleted", func() error { _, err := s.LookupToken(hash); return err }, store.ErrNotFound},
		{"delete again", func() error { return s.DeleteToken(hash) }, store.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.op()
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("got %v, want %v", err, tt.wantErr)
			}
		})
	}
	u, err := s.GetUser("u1")
	if err != nil || u.OrgID != "o1" || u.Role != store.RoleMember {
		t.Fatalf("GetUser = %+v, %v", u, err)
	}
}
