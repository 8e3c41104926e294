package identity

import (
	"path/filepath"
	"testing"

	"github.com/promptwall/promptwall/store"
)

func ptr[T any](v T) *T { return &v }

// call runs fn against a store opened on path and closes it, so each call
// sees what the previous one committed.
func call(t *testing.T, path string, fn func(*store.Store)) {
	t.Helper()
	st, err := store.Open(store.Options{Path: path, Retention: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fn(st)
}

func TestApply(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pw.db")
	decl := []Org{{
		Name: "Acme", ApplicationURL: "https://pw.acme.example", Entitlements: "pro",
		Features: &Features{RedTeam: ptr(true), MaxConcurrentCustom: ptr(2)},
		Users: []User{
			{Email: "Boss@acme.example", Name: "Boss", Role: store.RoleOwner},
			{Email: "dev@acme.example", Projects: []string{"p1"}},
		},
	}, {Name: "Beta"}}
	for i := range 2 { // the second run must change nothing
		call(t, path, func(st *store.Store) {
			if err := Apply(st, decl); err != nil {
				t.Fatalf("run %d: %v", i, err)
			}
			orgs, _ := st.ListOrgs()
			if len(orgs) != 2 {
				t.Fatalf("run %d: %d orgs", i, len(orgs))
			}
			acme, err := st.GetOrgByName("acme")
			if err != nil {
				t.Fatal(err)
			}
			want := store.DefaultFeatures()
			want.RedTeam.Enabled = true
			want.BlueTeam.CustomScanners.MaxConcurrentCustom = 2
			if acme.Features != want || acme.ApplicationURL != "https://pw.acme.example" || !acme.HasOwner {
				t.Fatalf("run %d: acme %+v", i, acme)
			}
			page, _ := st.ListUsers(store.UserQuery{OrgID: acme.ID, Limit: 10})
			if len(page.Items) != 2 {
				t.Fatalf("run %d: %d users", i, len(page.Items))
			}
			dev, err := st.GetUserByEmail(acme.ID, "dev@acme.example")
			if err != nil || dev.Role != store.RoleMember || !dev.Verified || len(dev.Projects) != 1 {
				t.Fatalf("run %d: dev %+v %v", i, dev, err)
			}
		})
	}

	// Changing the config updates in place; users and orgs it drops stay;
	// a blocked user stays blocked.
	call(t, path, func(st *store.Store) {
		acme, _ := st.GetOrgByName("Acme")
		boss, _ := st.GetUserByEmail(acme.ID, "boss@acme.example")
		if err := st.BlockUser(boss.ID, true); err != nil {
			t.Fatal(err)
		}
		decl2 := []Org{{Name: "ACME", Features: &Features{BlueTeam: ptr(false)},
			Users: []User{{Email: "boss@ACME.example", Role: store.RoleAdmin}}}}
		if err := Apply(st, decl2); err != nil {
			t.Fatal(err)
		}
		got, _ := st.GetOrg(acme.ID)
		if got.Name != "Acme" || got.Features.BlueTeam.Enabled || !got.Features.RedTeam.Enabled || got.ApplicationURL != "" {
			t.Fatalf("acme after update %+v", got)
		}
		b, _ := st.GetUser(boss.ID)
		if b.Role != store.RoleAdmin || !b.Blocked || b.Name != "Boss" {
			t.Fatalf("boss after update %+v", b)
		}
		if _, err := st.GetOrgByName("Beta"); err != nil {
			t.Fatalf("undeclared org removed: %v", err)
		}
	})

	invalid := []struct {
		name string
		orgs []Org
	}{
		{"no name", []Org{{}}},
		{"twice", []Org{{Name: "a"}, {Name: "A "}}},
		{"bad role", []Org{{Name: "a", Users: []User{{Email: "a@b", Role: "root"}}}}},
		{"no email", []Org{{Name: "a", Users: []User{{Name: "x"}}}}},
		{"user twice", []Org{{Name: "a", Users: []User{{Email: "a@b"}, {Email: "A@b"}}}}},
		{"negative cap", []Org{{Name: "a", Features: &Features{MaxConcurrentVendored: ptr(-1)}}}},
	}
	for _, tt := range invalid {
		if err := Validate(tt.orgs); err == nil {
			t.Errorf("%s: Validate accepted it", tt.name)
		}
	}
}
