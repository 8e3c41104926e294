package store

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestOrgs(t *testing.T) {
	s := openTest(t, Options{})
	acme := &Org{Name: "Acme"}
	if err := s.CreateOrg(acme); err != nil {
		t.Fatal(err)
	}
	if acme.ID == "" || acme.Features != DefaultFeatures() || acme.OwnerRoleID != RoleID(acme.ID, RoleOwner) ||
		acme.AdminRoleID != RoleID(acme.ID, RoleAdmin) || acme.MemberRoleID != RoleID(acme.ID, RoleMember) {
		t.Fatalf("CreateOrg set %+v", acme)
	}
	if acme.OwnerRoleID == acme.AdminRoleID || RoleID("a", RoleOwner) == RoleID("b", RoleOwner) {
		t.Fatal("role ids collide")
	}
	tests := []struct {
		name    string
		op      func() error
		wantErr error
	}{
		{"create without name", func() error { return s.CreateOrg(&Org{}) }, ErrInvalidRecord},
		{"create name taken, other case", func() error { return s.CreateOrg(&Org{Name: " ACME "}) }, ErrConflict},
		{"create id taken", func() error { return s.CreateOrg(&Org{ID: acme.ID, Name: "New"}) }, ErrConflict},
		{"create second", func() error { return s.CreateOrg(&Org{ID: "o2", Name: "Beta"}) }, nil},
		{"negative cap", func() error {
			return s.CreateOrg(&Org{Name: "Neg", Features: Features{BlueTeam: BlueTeam{CustomScanners: CustomScanners{MaxConcurrentCustom: -1}}}})
		}, ErrInvalidRecord},
		{"update unknown", func() error { return s.UpdateOrg(&Org{ID: "nope", Name: "X"}) }, ErrNotFound},
		{"update to taken name", func() error { return s.UpdateOrg(&Org{ID: "o2", Name: "acme"}) }, ErrConflict},
		{"rename frees old name", func() error {
			if err := s.UpdateOrg(&Org{ID: "o2", Name: "Gamma", RequireMFA: true}); err != nil {
				return err
			}
			return s.CreateOrg(&Org{Name: "Beta"})
		}, nil},
		{"put replaces, keeps createdAt", func() error {
			before, _ := s.GetOrg(acme.ID)
			if err := s.PutOrg(&Org{ID: acme.ID, Name: "Acme", Entitlements: "pro"}); err != nil {
				return err
			}
			after, _ := s.GetOrg(acme.ID)
			if after.CreatedAt != before.CreatedAt || after.Entitlements != "pro" {
				return fmt.Errorf("after put %+v", after)
			}
			return nil
		}, nil},
		{"put with taken name", func() error { return s.PutOrg(&Org{ID: "o9", Name: "gamma"}) }, ErrConflict},
		{"by name", func() error {
			o, err := s.GetOrgByName("gAMMA")
			if err == nil && (o.ID != "o2" || !o.RequireMFA) {
				return fmt.Errorf("GetOrgByName = %+v", o)
			}
			return err
		}, nil},
		{"by unknown name", func() error { _, err := s.GetOrgByName("Beta2"); return err }, ErrNotFound},
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

func TestHasOwner(t *testing.T) {
	s := openTest(t, Options{})
	if err := s.PutOrg(&Org{ID: "o1", Name: "Acme"}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		op   func() error
		want bool
	}{
		{"no users", func() error { return nil }, false},
		{"member only", func() error { return s.PutUser(&User{ID: "m", OrgID: "o1", Role: RoleMember}) }, false},
		{"owner", func() error { return s.PutUser(&User{ID: "w", OrgID: "o1", Role: RoleOwner}) }, true},
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
	if err := s.BlockUser("nobody", true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("BlockUser unknown = %v", err)
	}
}

func TestUsers(t *testing.T) {
	s := openTest(t, Options{})
	for _, o := range []*Org{{ID: "o1", Name: "Acme"}, {ID: "o2", Name: "Other"}} {
		if err := s.PutOrg(o); err != nil {
			t.Fatal(err)
		}
	}
	alice := &User{OrgID: "o1", Name: "Alice", Email: "Alice@Example.com", Role: RoleAdmin}
	if err := s.CreateUser(alice); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		op      func() error
		wantErr error
	}{
		{"no email", func() error { return s.CreateUser(&User{OrgID: "o1", Role: RoleMember}) }, ErrInvalidRecord},
		{"bad email", func() error { return s.CreateUser(&User{OrgID: "o1", Email: "a b@c", Role: RoleMember}) }, ErrInvalidRecord},
		{"two @", func() error { return s.CreateUser(&User{OrgID: "o1", Email: "a@b@c", Role: RoleMember}) }, ErrInvalidRecord},
		{"email taken, other case", func() error {
			return s.CreateUser(&User{OrgID: "o1", Email: "alice@EXAMPLE.com", Role: RoleMember})
		}, ErrConflict},
		{"same email other org", func() error {
			return s.CreateUser(&User{OrgID: "o2", Email: "alice@example.com", Role: RoleMember})
		}, nil},
		{"id taken", func() error { return s.CreateUser(&User{ID: alice.ID, OrgID: "o1", Email: "x@y", Role: RoleMember}) }, ErrConflict},
		{"missing org", func() error { return s.CreateUser(&User{OrgID: "nope", Email: "x@y", Role: RoleMember}) }, ErrNotFound},
		{"bad role", func() error { return s.CreateUser(&User{OrgID: "o1", Email: "x@y", Role: "root"}) }, ErrInvalidRecord},
		{"put steals email", func() error {
			return s.PutUser(&User{ID: "u9", OrgID: "o1", Email: "ALICE@example.com", Role: RoleMember})
		}, ErrConflict},
		{"by email", func() error {
			u, err := s.GetUserByEmail("o1", "alice@example.COM")
			if err == nil && u.ID != alice.ID {
				return fmt.Errorf("GetUserByEmail = %+v", u)
			}
			return err
		}, nil},
		{"by email other org", func() error { _, err := s.GetUserByEmail("o3", "alice@example.com"); return err }, ErrNotFound},
		{"change email frees old", func() error {
			u := *alice
			u.Email = "alice@new.example"
			if err := s.PutUser(&u); err != nil {
				return err
			}
			if _, err := s.GetUserByEmail("o1", "alice@example.com"); !errors.Is(err, ErrNotFound) {
				return fmt.Errorf("old e-mail still indexed: %v", err)
			}
			return s.CreateUser(&User{OrgID: "o1", Email: "alice@example.com", Role: RoleMember})
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
	if err != nil || got.CreatedAt != alice.CreatedAt || got.RoleID() != RoleID("o1", RoleAdmin) ||
		!slices.Contains(got.Permissions(), PermUsersRead) {
		t.Fatalf("GetUser = %+v, %v", got, err)
	}
}

func TestTokens(t *testing.T) {
	s := openTest(t, Options{})
	if err := s.PutOrg(&Org{ID: "o1", Name: "Acme"}); err != nil {
		t.Fatal(err)
	}
	u := &User{OrgID: "o1", Email: "a@b", Role: RoleMember}
	if err := s.CreateUser(u); err != nil {
		t.Fatal(err)
	}
	clear, tok, err := s.CreateToken(u.ID, "ci")
	if err != nil {
		t.Fatal(err)
	}
	body, ok := strings.CutPrefix(clear, TokenPrefix)
	if raw, err := base64.RawURLEncoding.DecodeString(body); !ok || err != nil || len(raw) != 32 {
		t.Fatalf("token %q is not pw_ + base64url(32 bytes)", clear)
	}
	clear2, tok2, err := s.CreateToken(u.ID, "second")
	if err != nil || clear2 == clear || tok2.ID == tok.ID {
		t.Fatalf("second token %q %+v %v", clear2, tok2, err)
	}
	got, err := s.LookupToken(HashToken(clear))
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
		if err := s.TouchToken(HashToken(clear), tc.at); err != nil {
			t.Fatal(err)
		}
		got, _ := s.LookupToken(HashToken(clear))
		if !got.LastUsedAt.Time().Equal(tc.want.UTC().Truncate(time.Millisecond)) {
			t.Fatalf("touch %d: LastUsedAt %v, want %v", i, got.LastUsedAt, tc.want)
		}
	}

	tests := []struct {
		name    string
		op      func() error
		wantErr error
	}{
		{"unknown user", func() error { _, _, err := s.CreateToken("nobody", ""); return err }, ErrNotFound},
		{"revoke by id", func() error { return s.RevokeToken(tok.ID) }, nil},
		{"lookup revoked", func() error { _, err := s.LookupToken(HashToken(clear)); return err }, ErrNotFound},
		{"revoke by id again", func() error { return s.RevokeToken(tok.ID) }, ErrNotFound},
		{"touch revoked is no error", func() error { return s.TouchToken(HashToken(clear), now) }, nil},
		{"revoke by value", func() error { return s.RevokeToken(clear2) }, nil},
		{"lookup revoked by value", func() error { _, err := s.LookupToken(HashToken(clear2)); return err }, ErrNotFound},
		{"revoke unknown value", func() error { return s.RevokeToken("pw_nope") }, ErrNotFound},
		{"blocked user gets none", func() error {
			if err := s.BlockUser(u.ID, true); err != nil {
				return err
			}
			_, _, err := s.CreateToken(u.ID, "")
			return err
		}, ErrInvalidRecord},
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

func TestListUsers(t *testing.T) {
	s := openTest(t, Options{})
	for _, o := range []*Org{{ID: "o1", Name: "Acme"}, {ID: "o2", Name: "Other"}} {
		if err := s.PutOrg(o); err != nil {
			t.Fatal(err)
		}
	}
	var all []*User // creation order
	for i := range 23 {
		u := &User{OrgID: "o1", Name: fmt.Sprintf("User %02d", i), Email: fmt.Sprintf("u%02d@%s.example", i, []string{"red", "blue"}[i%2]),
			Role: []string{RoleMember, RoleAdmin, RoleOwner}[i%3], Projects: []string{fmt.Sprint("p", i%4)}}
		if i%5 == 0 {
			u.GroupIDs = []string{"g5"}
		}
		if err := s.CreateUser(u); err != nil {
			t.Fatal(err)
		}
		all = append(all, u)
	}
	if err := s.CreateUser(&User{OrgID: "o2", Name: "User 99", Email: "x@red.example", Role: RoleMember}); err != nil {
		t.Fatal(err)
	}
	pick := func(keep func(i int, u *User) bool) []string {
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
		q    UserQuery
		want []string
	}{
		{"all newest first", UserQuery{OrgID: "o1", Limit: 10}, pick(func(int, *User) bool { return true })},
		{"limit 1", UserQuery{OrgID: "o1", Limit: 1}, pick(func(int, *User) bool { return true })},
		{"search email fold", UserQuery{OrgID: "o1", Search: "BLUE", Limit: 4}, pick(func(i int, _ *User) bool { return i%2 == 1 })},
		{"search name", UserQuery{OrgID: "o1", Search: "user 1", Limit: 3}, pick(func(i int, _ *User) bool { return i >= 10 && i < 20 })},
		{"project", UserQuery{OrgID: "o1", Project: "p1", Limit: 2}, pick(func(i int, _ *User) bool { return i%4 == 1 })},
		{"group", UserQuery{OrgID: "o1", GroupID: "g5", Limit: 2}, pick(func(i int, _ *User) bool { return i%5 == 0 })},
		{"role", UserQuery{OrgID: "o1", RoleID: RoleID("o1", RoleAdmin), Limit: 3}, pick(func(i int, _ *User) bool { return i%3 == 1 })},
		{"role of other org", UserQuery{OrgID: "o1", RoleID: RoleID("o2", RoleAdmin), Limit: 3}, nil},
		{"unknown org", UserQuery{OrgID: "o3", Limit: 3}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			var pages []UserPage
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

	first, err := s.ListUsers(UserQuery{OrgID: "o1", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	flip := func(c string, i int) string {
		b := []byte(c)
		b[i] ^= 1
		return string(b)
	}
	prompts, _ := s.ListPrompts(Query{OrgID: "o1", Limit: 1})
	bad := []struct {
		name string
		q    UserQuery
		want error
	}{
		{"limit 0", UserQuery{OrgID: "o1"}, ErrInvalidLimit},
		{"limit 101", UserQuery{OrgID: "o1", Limit: 101}, ErrInvalidLimit},
		{"garbage", UserQuery{OrgID: "o1", Limit: 5, Cursor: "!!"}, ErrBadCursor},
		{"tampered key", UserQuery{OrgID: "o1", Limit: 5, Cursor: flip(first.Next, 15)}, ErrBadCursor},
		{"tampered mac", UserQuery{OrgID: "o1", Limit: 5, Cursor: flip(first.Next, len(first.Next)-2)}, ErrBadCursor},
		{"other filter", UserQuery{OrgID: "o1", Search: "x", Limit: 5, Cursor: first.Next}, ErrBadCursor},
		{"other org", UserQuery{OrgID: "o2", Limit: 5, Cursor: first.Next}, ErrBadCursor},
		{"record cursor", UserQuery{OrgID: "o1", Limit: 5, Cursor: prompts.Next + "AAAA"}, ErrBadCursor},
	}
	for _, tt := range bad {
		if _, err := s.ListUsers(tt.q); !errors.Is(err, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, err, tt.want)
		}
	}
	// A users cursor does not continue a records list.
	if _, err := s.ListPrompts(Query{OrgID: "o1", Limit: 5, Cursor: first.Next}); !errors.Is(err, ErrBadCursor) {
		t.Fatalf("ListPrompts with a users cursor: %v", err)
	}
}
