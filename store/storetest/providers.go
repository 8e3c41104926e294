package storetest

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store"
)

// RunProviders runs the provider configuration conformance suite:
// versions, configAt, filters and paging.
func RunProviders(t *testing.T, h Harness) {
	suite{
		{"VersionsAndConfigAt", testProviderVersionsAndConfigAt},
		{"Filters", testProviderFilters},
		{"Paging", testProviderPaging},
	}.run(t, h)
}

func prov(id, name, project string, mod func(*store.ProviderRecord)) *store.ProviderRecord {
	p := &store.ProviderRecord{ID: id, OrgID: "o1", Name: name, ProjectID: project,
		Public: json.RawMessage(`{"id":"` + id + `","name":"` + name + `"}`)}
	if mod != nil {
		mod(p)
	}
	return p
}

func names(page store.ProviderPage) []string {
	var out []string
	for _, p := range page.Items {
		out = append(out, p.Name)
	}
	return out
}

func testProviderVersionsAndConfigAt(t *testing.T, h Harness) {
	s := h.open(t, Options{})
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	// t0: a and b configured. t0+1: b changes. t0+2: c added, a removed.
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.SyncProviders("o1", []*store.ProviderRecord{prov("a", "a", "p1", nil), prov("b", "b", "p1", nil)}, at(0)))
	must(s.SyncProviders("o1", []*store.ProviderRecord{prov("a", "a", "p1", nil), prov("b", "b", "p2", nil)}, at(1)))
	must(s.SyncProviders("o1", []*store.ProviderRecord{prov("b", "b", "p2", nil), prov("c", "c", "p1", nil)}, at(2)))
	// A reload that changes nothing adds no version.
	again := prov("b", "b", "p2", nil)
	must(s.PutProviderVersion(again))
	if again.Version != 2 {
		t.Fatalf("unchanged provider got version %d, want 2", again.Version)
	}
	tests := []struct {
		name string
		at   time.Time
		want []string
		proj map[string]string
	}{
		{"before anything", at(-1), nil, nil},
		{"first config", at(0), []string{"a", "b"}, map[string]string{"b": "p1"}},
		{"between versions", at(1).Add(30 * time.Minute), []string{"a", "b"}, map[string]string{"b": "p2"}},
		{"after removal", at(2), []string{"b", "c"}, nil},
		{"now", time.Time{}, []string{"b", "c"}, nil},
	}
	for _, tt := range tests {
		page, err := s.ListProviders(store.ProviderQuery{OrgID: "o1", ConfigAt: tt.at, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if got := names(page); !slices.Equal(got, tt.want) {
			t.Errorf("%s: providers %v, want %v", tt.name, got, tt.want)
		}
		for _, p := range page.Items {
			if want, ok := tt.proj[p.Name]; ok && p.ProjectID != want {
				t.Errorf("%s: %s has project %s, want %s (wrong version)", tt.name, p.Name, p.ProjectID, want)
			}
		}
	}
	other, err := s.ListProviders(store.ProviderQuery{OrgID: "o2", Limit: 10})
	if err != nil || len(other.Items) != 0 {
		t.Fatalf("other org sees %v (%v)", names(other), err)
	}
}

func testProviderFilters(t *testing.T, h Harness) {
	s := h.open(t, Options{})
	yes, no := true, false
	list := []*store.ProviderRecord{
		prov("1", "global", "p1", func(p *store.ProviderRecord) { p.Availability.Global = true }),
		prov("2", "own", "p2", nil),
		prov("3", "shared", "p1", func(p *store.ProviderRecord) { p.Availability.ProjectIDs = []string{"p2"} }),
		prov("4", "disabled", "p2", func(p *store.ProviderRecord) { p.Disabled = true }),
		prov("5", "redteam", "p3", func(p *store.ProviderRecord) { p.RedTeam = true }),
	}
	if err := s.SyncProviders("o1", list, time.Now()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		q    store.ProviderQuery
		want []string
	}{
		{"all", store.ProviderQuery{}, []string{"global", "own", "shared", "disabled", "redteam"}},
		{"addedTo p2", store.ProviderQuery{AddedToProjectID: "p2"}, []string{"own", "disabled"}},
		{"accessibleTo p2", store.ProviderQuery{AccessibleToProjectID: "p2"}, []string{"global", "own", "shared", "disabled"}},
		{"enabledFor p2", store.ProviderQuery{EnabledForProjectID: "p2"}, []string{"global", "own", "shared"}},
		{"global", store.ProviderQuery{AvailableGlobally: &yes}, []string{"global"}},
		{"not global", store.ProviderQuery{AvailableGlobally: &no}, []string{"own", "shared", "disabled", "redteam"}},
		{"endpoint names", store.ProviderQuery{FilterNames: true, Names: []string{"shared", "redteam", "gone"}}, []string{"shared", "redteam"}},
		{"endpoint without providers", store.ProviderQuery{FilterNames: true}, nil},
		{"red team", store.ProviderQuery{RedTeamOnly: true}, []string{"redteam"}},
	}
	for _, tt := range tests {
		tt.q.OrgID, tt.q.Limit = "o1", 100
		page, err := s.ListProviders(tt.q)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(page); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func testProviderPaging(t *testing.T, h Harness) {
	s := h.open(t, Options{})
	var all []*store.ProviderRecord
	var want []string
	for i := range 7 {
		n := string(rune('a' + i))
		all = append(all, prov(n, n, "p", nil))
		want = append(want, n)
	}
	if err := s.SyncProviders("o1", all, time.Now()); err != nil {
		t.Fatal(err)
	}
	q := store.ProviderQuery{OrgID: "o1", Limit: 3}
	var got []string
	var pages []store.ProviderPage
	for {
		page, err := s.ListProviders(q)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, page)
		got = append(got, names(page)...)
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	if !slices.Equal(got, want) || len(pages) != 3 {
		t.Fatalf("walked %v in %d pages", got, len(pages))
	}
	if pages[0].Prev != "" || pages[1].Prev == "" {
		t.Fatalf("prev cursors: first %q second %q", pages[0].Prev, pages[1].Prev)
	}
	back, err := s.ListProviders(store.ProviderQuery{OrgID: "o1", Limit: 3, Cursor: pages[2].Prev})
	if err != nil || !slices.Equal(names(back), names(pages[1])) {
		t.Fatalf("prev of last page = %v (%v), want %v", names(back), err, names(pages[1]))
	}
	// A cursor of another query, a tampered one and a prompts cursor fail.
	// Change a middle character: every bit of it counts, unlike the last
	// one of unpadded base64, and it must differ from the original.
	tampered := []byte(pages[0].Next)
	mid := len(tampered) / 2
	if tampered[mid] == 'A' {
		tampered[mid] = 'B'
	} else {
		tampered[mid] = 'A'
	}
	for _, c := range []string{string(tampered), "zzz"} {
		if _, err := s.ListProviders(store.ProviderQuery{OrgID: "o1", Limit: 3, Cursor: c}); !errors.Is(err, store.ErrBadCursor) {
			t.Errorf("cursor %q: %v, want store.ErrBadCursor", c, err)
		}
	}
	if _, err := s.ListProviders(store.ProviderQuery{OrgID: "o1", Limit: 3, RedTeamOnly: true, Cursor: pages[0].Next}); !errors.Is(err, store.ErrBadCursor) {
		t.Errorf("cursor reused with other filters: %v", err)
	}
	if _, err := s.ListProviders(store.ProviderQuery{OrgID: "o1", Limit: 0}); !errors.Is(err, store.ErrInvalidLimit) {
		t.Errorf("limit 0: %v", err)
	}
}
