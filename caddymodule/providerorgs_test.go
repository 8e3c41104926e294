package caddymodule

import (
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/promptwall/promptwall/provider"
	"github.com/promptwall/promptwall/store"
)

// A declared provider serves the default org, and other orgs only when its
// orgs list names them; each org lists exactly the providers it may use.
func TestProviderOrgs(t *testing.T) {
	st, err := store.Open(store.Options{Path: filepath.Join(t.TempDir(), "pw.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, o := range []*store.Org{{ID: defaultOrgID(), Name: DefaultOrgName}, {ID: "org-acme", Name: "acme"}, {ID: "org-other", Name: "other"}} {
		if err := st.PutOrg(o); err != nil {
			t.Fatal(err)
		}
	}
	a := &App{shared: &sharedState{store: st}, logger: zap.NewNop(), providers: map[string]*configuredProvider{}}
	for _, c := range []provider.Config{
		{Name: "shared", Type: provider.TypeOpenAI, Model: "m", BaseURL: "http://127.0.0.1:1", Orgs: []string{"acme", "missing"}},
		{Name: "private", Type: provider.TypeOpenAI, Model: "m", BaseURL: "http://127.0.0.1:1"},
	} {
		c.Provision()
		a.providers[c.Name] = &configuredProvider{cfg: c}
	}
	if err := a.syncOrgProviders(time.Now()); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		org  string
		uses map[string]bool
	}{
		{defaultOrgID(), map[string]bool{"shared": true, "private": true}},
		{"org-acme", map[string]bool{"shared": true, "private": false}},
		{"org-other", map[string]bool{"shared": false, "private": false}},
	}
	api := appProviders{a}
	for _, tc := range cases {
		for name, want := range tc.uses {
			if _, ok := api.Provider(tc.org, name); ok != want {
				t.Errorf("org %s may use %s: %v, want %v", tc.org, name, ok, want)
			}
		}
		page, err := st.ListProviders(store.ProviderQuery{OrgID: tc.org, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		listed := map[string]bool{}
		for _, it := range page.Items {
			listed[it.Name] = true
		}
		for name, want := range tc.uses {
			if listed[name] != want {
				t.Errorf("org %s lists %s: %v, want %v", tc.org, name, listed[name], want)
			}
		}
	}
}
