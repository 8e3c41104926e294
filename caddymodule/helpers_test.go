package caddymodule_test

import (
	"io"
	"net/http"
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

// answerWith sends req with client and fails the test unless the answer's
// status is want; it returns the answer, its body read and closed.
func answerWith(t *testing.T, client *http.Client, req *http.Request, want int) (*http.Response, []byte) {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("status %d, want %d: %.200s", resp.StatusCode, want, b)
	}
	return resp, b
}
