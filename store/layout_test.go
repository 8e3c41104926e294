package store

import (
	"bytes"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// toLegacyLayout rewrites every record the way databases written before
// bRecords stored them: the body under the id in bPrompts.
func toLegacyLayout(t *testing.T, s *Store) {
	t.Helper()
	err := s.db.Update(func(tx *bolt.Tx) error {
		prompts, records := tx.Bucket(bPrompts), tx.Bucket(bRecords)
		type move struct{ id, seq, body []byte }
		var moves []move
		err := prompts.ForEach(func(id, v []byte) error {
			if len(v) == seqLen {
				moves = append(moves, move{bytes.Clone(id), bytes.Clone(v), bytes.Clone(records.Get(v))})
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, m := range moves {
			if err := prompts.Put(m.id, m.body); err != nil {
				return err
			}
			if err := records.Delete(m.seq); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLegacyLayout: a database written with record bodies under their ids
// (before bodies moved to bRecords) keeps working after an upgrade: reads,
// conversation chains, listing, replacement and retention.
func TestLegacyLayout(t *testing.T) {
	now := time.Now().UTC()
	s := openTest(t, Options{Retention: 24 * time.Hour})
	root := &Prompt{
		PromptFields: PromptFields{OrgID: "o", UserID: "u", Input: "root", ReceivedAt: Timestamp(now.Add(-time.Minute))},
	}
	put(t, s, root)
	child := &Prompt{
		PromptFields: PromptFields{OrgID: "o", UserID: "u", Input: "child", ParentID: root.ID, ReceivedAt: Timestamp(now)},
	}
	put(t, s, child)
	old := &Prompt{
		PromptFields: PromptFields{OrgID: "o", UserID: "u", Input: "expired", ReceivedAt: Timestamp(now.Add(-48 * time.Hour))},
	}
	put(t, s, old)
	syncStore(t, s)
	toLegacyLayout(t, s)
	// A record written after the upgrade sits beside the legacy ones.
	fresh := &Prompt{PromptFields: PromptFields{OrgID: "o", UserID: "u", Input: "fresh", ReceivedAt: Timestamp(now)}}
	put(t, s, fresh)
	syncStore(t, s)

	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"get", func(t *testing.T) {
			for _, p := range []*Prompt{root, child, fresh} {
				got, err := s.GetPrompt(p.ID)
				if err != nil || got.Input != p.Input {
					t.Fatalf("GetPrompt(%s) = %+v, %v", p.Input, got, err)
				}
			}
		}},
		{"chain", func(t *testing.T) {
			chain, err := s.Chain(child.ID)
			if err != nil || !slices.Equal(ids(chain), []string{root.ID, child.ID}) {
				t.Fatalf("Chain = %v, %v", ids(chain), err)
			}
		}},
		{"list by org and by user, search on input", func(t *testing.T) {
			for _, q := range []Query{{OrgID: "o", Limit: 10}, {OrgID: "o", UserID: "u", Limit: 10}} {
				p, err := s.ListPrompts(q)
				if err != nil || !slices.Equal(ids(p.Items), []string{fresh.ID, old.ID, child.ID, root.ID}) {
					t.Fatalf("%+v: %v, %v", q, ids(p.Items), err)
				}
			}
			p, err := s.ListPrompts(Query{OrgID: "o", Limit: 10, Search: "CHILD"})
			if err != nil || !slices.Equal(ids(p.Items), []string{child.ID}) {
				t.Fatalf("search: %v, %v", ids(p.Items), err)
			}
		}},
		{"replace keeps the position and moves the body", func(t *testing.T) {
			r := *root
			r.Input = "root, edited"
			put(t, s, &r)
			syncStore(t, s)
			got, err := s.GetPrompt(root.ID)
			if err != nil || got.Input != r.Input {
				t.Fatalf("after replace: %+v, %v", got, err)
			}
			p, _ := s.ListPrompts(Query{OrgID: "o", Limit: 10, Ascending: true})
			if len(p.Items) == 0 || p.Items[0].ID != root.ID {
				t.Fatalf("replaced record moved: %v", ids(p.Items))
			}
			_ = s.db.View(func(tx *bolt.Tx) error {
				if v := tx.Bucket(bPrompts).Get([]byte(root.ID)); len(v) != seqLen {
					t.Errorf("replaced record still stored under its id (%d bytes)", len(v))
				}
				return nil
			})
		}},
		{"retention deletes a legacy record and its index entries", func(t *testing.T) {
			n, err := s.sweep(now)
			if err != nil || n != 1 {
				t.Fatalf("sweep = %d, %v; want 1", n, err)
			}
			if _, err := s.GetPrompt(old.ID); err == nil {
				t.Fatal("expired legacy record still readable")
			}
			p, _ := s.ListPrompts(Query{OrgID: "o", Limit: 10})
			if slices.Contains(ids(p.Items), old.ID) {
				t.Fatal("expired legacy record still listed")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.check)
	}
}

// TestRetentionDeletesBodies: a swept record leaves no body behind, so the
// file's free pages are reused instead of growing forever.
func TestRetentionDeletesBodies(t *testing.T) {
	now := time.Now().UTC()
	s := openTest(t, Options{Retention: time.Hour})
	for i := range 5 {
		put(t, s, &Prompt{
			PromptFields: PromptFields{OrgID: "o", Input: "x", ReceivedAt: Timestamp(now.Add(-time.Duration(i+2) * time.Hour))},
		})
	}
	keep := &Prompt{PromptFields: PromptFields{OrgID: "o", Input: "kept", ReceivedAt: Timestamp(now)}}
	put(t, s, keep)
	syncStore(t, s)
	if n, err := s.sweep(now); err != nil || n != 5 {
		t.Fatalf("sweep = %d, %v", n, err)
	}
	_ = s.db.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket(bRecords).Stats().KeyN; n != 1 {
			t.Errorf("%d bodies left in bRecords, want 1", n)
		}
		if n := tx.Bucket(bPrompts).Stats().KeyN; n != 1 {
			t.Errorf("%d ids left in bPrompts, want 1", n)
		}
		return nil
	})
}
