package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/promptwall/promptwall/store"
)

// RunChats runs the chats and prompt templates conformance suite.
func RunChats(t *testing.T, h Harness) {
	suite{
		{"Chats", testChats},
		{"PromptTemplates", testPromptTemplates},
	}.run(t, h)
}

func testChats(t *testing.T, h Harness) {
	s := h.open(t, Options{})
	c := &store.Chat{ChatFields: store.ChatFields{Name: "c", UserID: "alice", Access: store.ChatAccess{Users: []string{"bob"}}}, OrgID: "o1"}
	if err := s.CreateChat(c); err != nil {
		t.Fatal(err)
	}
	if c.ID == "" || c.CreatedAt.IsZero() {
		t.Fatalf("defaults not applied: %+v", c)
	}
	if err := s.CreateChat(&store.Chat{ChatFields: store.ChatFields{ID: c.ID}, OrgID: "o1"}); !errors.Is(err, store.ErrInvalidRecord) {
		t.Fatalf("duplicate id: %v", err)
	}
	var ids []string
	for i := range 3 {
		p := &store.Prompt{
			PromptFields: store.PromptFields{OrgID: "o1", UserID: "alice", Input: string(rune('x' + i))},
			ChatID:       c.ID,
		}
		if err := s.Put(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		if err := s.AddChatPrompt(c.ID, p.ID); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	// An id whose record never arrived is skipped, not an error.
	if err := s.AddChatPrompt(c.ID, store.NewID()); err != nil {
		t.Fatal(err)
	}
	if err := s.AddChatPrompt(store.NewID(), ids[0]); !errors.Is(err, store.ErrNotFound) {
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
	upd, err := s.UpdateChat(c.ID, func(ch *store.Chat) error {
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
	if _, err := s.GetChat(store.NewID()); !errors.Is(err, store.ErrNotFound) {
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

func testPromptTemplates(t *testing.T, h Harness) {
	s := h.open(t, Options{})
	src := &store.Prompt{PromptFields: store.PromptFields{OrgID: "o1", UserID: "alice", Input: "template me"}}
	if err := s.Put(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	tpl := &store.PromptTemplate{PromptTemplateFields: store.PromptTemplateFields{Name: "t", UserID: "alice", PromptID: src.ID}, OrgID: "o1"}
	if err := s.CreatePromptTemplate(tpl); err != nil {
		t.Fatal(err)
	}
	sent := &store.Prompt{
		PromptFields:     store.PromptFields{OrgID: "o1", UserID: "alice", Input: "from template", FromTemplate: true},
		PromptTemplateID: tpl.ID,
	}
	if err := s.Put(context.Background(), sent); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTemplatePrompt(tpl.ID, sent.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTemplatePrompt(store.NewID(), sent.ID); !errors.Is(err, store.ErrNotFound) {
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
