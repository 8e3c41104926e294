package caddymodule_test

import (
	"testing"

	"github.com/promptwall/promptwall/store"
)

// createUserToken adds a member to the default org and returns a token.
func createUserToken(t *testing.T, st store.IdentityStore) string {
	t.Helper()
	orgs, err := st.ListOrgs()
	if err != nil || len(orgs) == 0 {
		t.Fatalf("orgs: %v %v", orgs, err)
	}
	u := &store.User{OrgID: orgs[0].ID, Name: "Ada", Email: "ada@example.org", Role: store.RoleMember}
	if err := st.CreateUser(u); err != nil {
		t.Fatal(err)
	}
	clear, _, err := st.CreateToken(u.ID, "test")
	if err != nil {
		t.Fatal(err)
	}
	return clear
}
