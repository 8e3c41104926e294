package store

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"
)

func prov(id, name, project string, mod func(*ProviderRecord)) *ProviderRecord {
	p := &ProviderRecord{ID: id, OrgID: "o1", Name: name, ProjectID: project,
		Public: json.RawMessage(`{"id":"` + id + `","name":"` + name + `"}`)}
	if mod != nil {
		mod(p)
	}
	return p
}

func names(page ProviderPage) []string {
	var out []string
	for _, p := range page.Items {
		out = append(out, p.Name)
	}
	return out
}

func TestProviderVersionsAndConfigAt(t *testing.T) {
	s := openTest(t, Options{})
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	// t0: a and b configured. t0+1: b changes. t0+2: c added, a removed.
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.SyncProviders("o1", []*ProviderRecord{prov("a", "a", "p1", nil), prov("b", "b", "p1", nil)}, at(0)))
	must(s.SyncProviders("o1", []*ProviderRecord{prov("a", "a", "p1", nil), prov("b", "b", "p2", nil)}, at(1)))
	must(s.SyncProviders("o1", []*ProviderRecord{prov("b", "b", "p2", nil), prov("c", "c", "p1", nil)}, at(2)))
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
		page, err := s.ListProviders(ProviderQuery{OrgID: "o1", ConfigAt: tt.at, Limit: 10})
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
	other, err := s.ListProviders(ProviderQuery{OrgID: "o2", Limit: 10})
	if err != nil || len(other.Items) != 0 {
		t.Fatalf("other org sees %v (%v)", names(other), err)
	}
}

func TestProviderFilters(t *testing.T) {
	s := openTest(t, Options{})
	yes, no := true, false
	list := []*ProviderRecord{
		prov("1", "global", "p1", func(p *ProviderRecord) { p.Availability.Global = true }),
		prov("2", "own", "p2", nil),
		prov("3", "shared", "p1", func(p *ProviderRecord) { p.Availability.ProjectIDs = []string{"p2"} }),
		prov("4", "disabled", "p2", func(p *ProviderRecord) { p.Disabled = true }),
		prov("5", "redteam", "p3", func(p *ProviderRecord) { p.RedTeam = true }),
	}
	if err := s.SyncProviders("o1", list, time.Now()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		q    ProviderQuery
		want []string
	}{
		{"all", ProviderQuery{}, []string{"global", "own", "shared", "disabled", "redteam"}},
		{"addedTo p2", ProviderQuery{AddedToProjectID: "p2"}, []string{"own", "disabled"}},
		{"accessibleTo p2", ProviderQuery{AccessibleToProjectID: "p2"}, []string{"global", "own", "shared", "disabled"}},
		{"enabledFor p2", ProviderQuery{EnabledForProjectID: "p2"}, []string{"global", "own", "shared"}},
		{"global", ProviderQuery{AvailableGlobally: &yes}, []string{"global"}},
		{"not global", ProviderQuery{AvailableGlobally: &no}, []string{"own", "shared", "disabled", "redteam"}},
		{"endpoint names", ProviderQuery{FilterNames: true, Names: []string{"shared", "redteam", "gone"}}, []string{"shared", "redteam"}},
		{"endpoint without providers", ProviderQuery{FilterNames: true}, nil},
		{"red team", ProviderQuery{RedTeamOnly: true}, []string{"redteam"}},
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

func TestProviderPaging(t *testing.T) {
	s := openTest(t, Options{})
	var all []*ProviderRecord
	var want []string
	for i := range 7 {
		n := string(rune('a' + i))
		all = append(all, prov(n, n, "p", nil))
		want = append(want, n)
	}
	if err := s.SyncProviders("o1", all, time.Now()); err != nil {
		t.Fatal(err)
	}
	q := ProviderQuery{OrgID: "o1", Limit: 3}
	var got []string
	var pages []ProviderPage
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
	back, err := s.ListProviders(ProviderQuery{OrgID: "o1", Limit: 3, Cursor: pages[2].Prev})
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
		if _, err := s.ListProviders(ProviderQuery{OrgID: "o1", Limit: 3, Cursor: c}); !errors.Is(err, ErrBadCursor) {
			t.Errorf("cursor %q: %v, want ErrBadCursor", c, err)
		}
	}
	if _, err := s.ListProviders(ProviderQuery{OrgID: "o1", Limit: 3, RedTeamOnly: true, Cursor: pages[0].Next}); !errors.Is(err, ErrBadCursor) {
		t.Errorf("cursor reused with other filters: %v", err)
	}
	if _, err := s.ListProviders(ProviderQuery{OrgID: "o1", Limit: 0}); !errors.Is(err, ErrInvalidLimit) {
		t.Errorf("limit 0: %v", err)
	}
}

func TestChats(t *testing.T) {
	s := openTest(t, Options{})
	c := &Chat{Name: "c", OrgID: "o1", UserID: "alice", Access: ChatAccess{Users: []string{"bob"}}}
	if err := s.CreateChat(c); err != nil {
		t.Fatal(err)
	}
	if c.ID == "" || c.CreatedAt.IsZero() {
		t.Fatalf("defaults not applied: %+v", c)
	}
	if err := s.CreateChat(&Chat{ID: c.ID, OrgID: "o1"}); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("duplicate id: %v", err)
	}
	var ids []string
	for i := range 3 {
		p := &Prompt{OrgID: "o1", UserID: "alice", Input: string(rune('x' + i)), ChatID: c.ID}
		if err := s.Put(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		if err := s.AddChatPrompt(c.ID, p.ID); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	// An id whose record never arrived is skipped, not an error.
	if err := s.AddChatPrompt(c.ID, NewID()); err != nil {
		t.Fatal(err)
	}
	if err := s.AddChatPrompt(NewID(), ids[0]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown chat: %v", err)
	}
	if err := s.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := s.ChatPrompts(c.ID)
	if err != nil {
		t.Fatal(err)
	}
	var gotIDs []string
	for _, p := range got {
		gotIDs = append(gotIDs, p.ID)
	}
	if !slices.Equal(gotIDs, ids) {
		t.Fatalf("chat prompts %v, want %v", gotIDs, ids)
	}
	upd, err := s.UpdateChat(c.ID, func(ch *Chat) error {
		ch.Starred = true
		ch.UserID = "mallory" // must not stick
		return nil
	})
	if err != nil || !upd.Starred || upd.UserID != "alice" || upd.PromptID == "" {
		t.Fatalf("update: %+v %v", upd, err)
	}
	stored, _ := s.GetChat(c.ID)
	if !stored.Starred || stored.UserID != "alice" {
		t.Fatalf("stored after update: %+v", stored)
	}
	if _, err := s.GetChat(NewID()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown chat: %v", err)
	}
	for _, tt := range []struct {
		org, user string
		orgWide   bool
		want      bool
	}{
		{"o1", "alice", false, true},
		{"o1", "bob", false, true},
		{"o1", "carol", false, false},
		{"o1", "carol", true, true},
		{"o2", "alice", true, false},
	} {
		ch := *stored
		ch.Access.Org = tt.orgWide
		if got := ch.Readable(tt.org, tt.user); got != tt.want {
			t.Errorf("Readable(%s, %s, org=%v) = %v, want %v", tt.org, tt.user, tt.orgWide, got, tt.want)
		}
	}
}

func TestPromptTemplates(t *testing.T) {
	s := openTest(t, Options{})
	src := &Prompt{OrgID: "o1", UserID: "alice", Input: "template me"}
	if err := s.Put(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	tpl := &PromptTemplate{Name: "t", OrgID: "o1", UserID: "alice", PromptID: src.ID}
	if err := s.CreatePromptTemplate(tpl); err != nil {
		t.Fatal(err)
	}
	sent := &Prompt{OrgID: "o1", UserID: "alice", Input: "from template", PromptTemplateID: tpl.ID, FromTemplate: true}
	if err := s.Put(context.Background(), sent); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTemplatePrompt(tpl.ID, sent.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTemplatePrompt(NewID(), sent.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown template: %v", err)
	}
	_ = s.Sync(context.Background())
	got, err := s.TemplatePrompts(tpl.ID)
	if err != nil || len(got) != 2 || got[0].ID != src.ID || got[1].ID != sent.ID {
		t.Fatalf("template prompts %v %v", got, err)
	}
	back, err := s.GetPromptTemplate(tpl.ID)
	if err != nil || back.Name != "t" || back.PromptID != src.ID {
		t.Fatalf("get: %+v %v", back, err)
	}
}
