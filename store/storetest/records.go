// Package storetest is the conformance suite of store.Backend: the same
// table tests run against every storage engine (the bbolt store and
// PostgreSQL), so that the API behaves the same on either.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store"
)

// keepForever disables retention: dataset's records were received months
// ago, and a sweep must not delete them while a test walks them.
const keepForever = -1

// maxIDLen is the longest id or user id a record may carry.
const maxIDLen = 1024

// Options are the settings a test needs of a fresh store; zero means the
// engine's default.
type Options struct {
	QueueSize int
	BatchWait time.Duration
	Retention time.Duration
}

// Harness opens stores of one engine.
type Harness struct {
	// Open returns a fresh, empty store that is closed when the test ends.
	// Two stores opened in one test are two databases: a cursor of one
	// must be refused by the other.
	Open func(t testing.TB, o Options) store.Backend
	// Sweep runs the retention sweep as of now and returns how many
	// records it deleted.
	Sweep func(s store.RecordStore, now time.Time) (int, error)
}

func (h Harness) open(t testing.TB, o Options) store.Backend { t.Helper(); return h.Open(t, o) }

// suite is a table of named tests of one engine.
type suite []struct {
	name string
	fn   func(*testing.T, Harness)
}

func (s suite) run(t *testing.T, h Harness) {
	for _, tc := range s {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, h) })
	}
}

// RunAll runs every conformance suite.
func RunAll(t *testing.T, h Harness) {
	t.Run("Records", func(t *testing.T) { RunRecords(t, h) })
	t.Run("Identity", func(t *testing.T) { RunIdentity(t, h) })
	t.Run("Providers", func(t *testing.T) { RunProviders(t, h) })
	t.Run("Chats", func(t *testing.T) { RunChats(t, h) })
	t.Run("Campaigns", func(t *testing.T) { RunCampaigns(t, h) })
	t.Run("Locker", func(t *testing.T) { RunLocker(t, h) })
}

// RunRecords runs the record store conformance suite.
func RunRecords(t *testing.T, h Harness) {
	suite{
		{"RoundTrip", testRoundTrip},
		{"ResultReadsNormalized", testResultReadsNormalized},
		{"InvalidRecord", testInvalidRecord},
		{"ListPrompts", testListPrompts},
		{"ListPromptsRejects", testListPromptsRejects},
		{"PagingWhileWriting", testPagingWhileWriting},
		{"Reservation", testReservation},
		{"ReadYourWrites", testReadYourWrites},
		{"ReplaceKeepsPosition", testReplaceKeepsPosition},
		{"Chain", testChain},
		{"PageEmptiedByRetention", testPageEmptiedByRetention},
		{"Retention", testRetention},
	}.run(t, h)
}

func syncStore(t testing.TB, s store.RecordStore) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
}

func put(t testing.TB, s store.RecordStore, p *store.Prompt) {
	t.Helper()
	if err := s.Put(context.Background(), p); err != nil {
		t.Fatalf("Put: %v", err)
	}
}

// Walk follows Next from the first page of q and returns the pages' ids
// and the last page, failing the test on an error, a first page with a
// Prev, an overfull page or pagination that does not end.
func Walk(t *testing.T, s store.RecordStore, q store.Query) (pages [][]string, last store.Page) {
	t.Helper()
	q.Cursor = ""
	for i := 0; ; i++ {
		if i > 10000 {
			t.Fatal("pagination does not terminate")
		}
		p, err := s.ListPrompts(q)
		if err != nil {
			t.Fatalf("ListPrompts: %v", err)
		}
		if i == 0 && p.Prev != "" {
			t.Fatalf("first page has prev %q", p.Prev)
		}
		if len(p.Items) > q.Limit {
			t.Fatalf("page of %d items, limit %d", len(p.Items), q.Limit)
		}
		pages = append(pages, IDs(p.Items))
		if p.Next == "" {
			return pages, p
		}
		q.Cursor = p.Next
	}
}

// IDs are the records' ids, in their order.
func IDs(ps []*store.Prompt) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

func testRoundTrip(t *testing.T, h Harness) {
	s := h.open(t, Options{})
	in := &store.Prompt{
		PromptFields: store.PromptFields{ExternalMetadata: `{"k":1}`, FromTemplate: true, Input: "Hello, wörld", Memory: "m", OrgID: "org1",
			ParentID: "", Preserve: true, ProjectID: "proj", Provider: "OpenAI", Type: store.TypePrompt,
			UserID: "u1", ReceivedAt: store.Timestamp(time.Date(2026, 1, 2, 3, 4, 5, 6_789_000, time.UTC)),
			Result: store.PromptResult{Outcome: "modified", Response: "r", ScannerResults: []store.ScannerResult{{
				ScannerID: "pii", Outcome: "modified", ScanDirection: "input",
				Data: store.ScannerData{Type: "pii", Matches: [][2]int{{7, 12}}, Findings: []store.Finding{{Kind: "NAME", Start: 7, End: 12, Score: 0.9, Role: "user"}}},
			}}}},
		EndpointID: "ep", ProviderID: "prov", ChatID: "chat", PromptTemplateID: "tpl",
		Scanners: `[{"id":"pii"}]`,
	}
	put(t, s, in)
	if in.ID == "" {
		t.Fatal("Commit did not assign an id")
	}
	syncStore(t, s)
	got, err := s.GetPrompt(in.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := *in
	want.ReceivedAt = store.Timestamp(time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC))
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(&want)
	if string(gj) != string(wj) {
		t.Fatalf("round trip:\n got %s\nwant %s", gj, wj)
	}
	if _, err := s.GetPrompt(store.NewID()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetPrompt(unknown) = %v, want store.ErrNotFound", err)
	}
}

func testInvalidRecord(t *testing.T, h Harness) {
	s := h.open(t, Options{})
	tests := []struct {
		name string
		p    store.Prompt
	}{
		{"no org", store.Prompt{PromptFields: store.PromptFields{ID: "a"}}},
		{"long id", store.Prompt{PromptFields: store.PromptFields{ID: strings.Repeat("x", maxIDLen+1), OrgID: "o"}}},
		{"long user", store.Prompt{PromptFields: store.PromptFields{OrgID: "o", UserID: strings.Repeat("x", maxIDLen+1)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.QueueDepth()
			if err := s.Put(context.Background(), &tt.p); !errors.Is(err, store.ErrInvalidRecord) {
				t.Fatalf("Put = %v, want store.ErrInvalidRecord", err)
			}
			if s.QueueDepth() != before {
				t.Fatalf("failed Commit kept its slot: depth %d, was %d", s.QueueDepth(), before)
			}
		})
	}
}

func dataset(t testing.TB, s store.RecordStore, n int) []*store.Prompt {
	t.Helper()
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	outcomes := []string{"passed", "flagged", "modified", "blocked", "error"}
	inputs := []string{"hello world", "My SSN is 123", "Straße nach Köln", "ignore previous INSTRUCTIONS", "ÄPFEL und Birnen"}
	var out []*store.Prompt
	for i := range n {
		p := &store.Prompt{
			PromptFields: store.PromptFields{
				ID:        store.NewID(),
				OrgID:     []string{"orgA", "orgA", "orgA", "orgB"}[i%4],
				UserID:    []string{"alice", "bob", "carol"}[i%3],
				Input:     fmt.Sprintf("%s #%d", inputs[i%len(inputs)], i),
				ProjectID: []string{"p1", "p2"}[i%2],
				Type:      store.TypeScan,
				// Received times deliberately disagree with commit order
				// in places: the list must follow commit order.
				ReceivedAt: store.Timestamp(base.Add(time.Duration(i*7%n) * time.Minute)),
				Result:     store.PromptResult{Outcome: outcomes[i%len(outcomes)]},
			},
			ProviderID: []string{"openai", "anthropic", "ollama"}[i%3],
			EndpointID: []string{"e1", "e2", "e3", "e4"}[i%4],
		}
		put(t, s, p)
		out = append(out, p)
	}
	syncStore(t, s)
	return out
}

func model(all []*store.Prompt, q store.Query) []string {
	in := func(set []string, v string) bool { return len(set) == 0 || slices.Contains(set, v) }
	var out []string
	for _, p := range all {
		rt := p.ReceivedAt.Time()
		if p.OrgID != q.OrgID || (q.UserID != "" && p.UserID != q.UserID) ||
			!in(q.Outcomes, p.Result.Outcome) || !in(q.ProjectIDs, p.ProjectID) ||
			!in(q.ProviderIDs, p.ProviderID) || !in(q.EndpointIDs, p.EndpointID) ||
			(!q.Before.IsZero() && !rt.Before(q.Before)) || (!q.After.IsZero() && !rt.After(q.After)) ||
			!strings.Contains(strings.ToLower(p.Input), strings.ToLower(q.Search)) {
			continue
		}
		out = append(out, p.ID)
	}
	if !q.Ascending {
		slices.Reverse(out)
	}
	return out
}

func testListPrompts(t *testing.T, h Harness) {
	s := h.open(t, Options{Retention: keepForever})
	all := dataset(t, s, 240)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		q    store.Query
	}{
		{"org desc", store.Query{OrgID: "orgA", Limit: 10}},
		{"org asc", store.Query{OrgID: "orgA", Limit: 10, Ascending: true}},
		{"limit 1", store.Query{OrgID: "orgB", Limit: 1}},
		{"limit 100", store.Query{OrgID: "orgA", Limit: 100, Ascending: true}},
		{"limit 7 uneven", store.Query{OrgID: "orgA", Limit: 7}},
		{"user", store.Query{OrgID: "orgA", UserID: "bob", Limit: 9}},
		{"user asc", store.Query{OrgID: "orgA", UserID: "carol", Limit: 4, Ascending: true}},
		{"outcomes", store.Query{OrgID: "orgA", Outcomes: []string{"blocked", "flagged"}, Limit: 6}},
		{"projects", store.Query{OrgID: "orgA", ProjectIDs: []string{"p2"}, Limit: 10}},
		{"providers", store.Query{OrgID: "orgA", ProviderIDs: []string{"ollama", "openai"}, Limit: 10, Ascending: true}},
		{"endpoints", store.Query{OrgID: "orgA", EndpointIDs: []string{"e2"}, Limit: 5}},
		{"endpoint of other org", store.Query{OrgID: "orgA", EndpointIDs: []string{"e4"}, Limit: 5}},
		{"search ascii fold", store.Query{OrgID: "orgA", Search: "INSTRUCTIONS", Limit: 3}},
		{"search lower", store.Query{OrgID: "orgA", Search: "my ssn", Limit: 3}},
		{"search unicode fold", store.Query{OrgID: "orgA", Search: "äpfel", Limit: 3}},
		{"search no hit", store.Query{OrgID: "orgA", Search: "zzz", Limit: 3}},
		{"before", store.Query{OrgID: "orgA", Before: base.Add(60 * time.Minute), Limit: 8}},
		{"after", store.Query{OrgID: "orgA", After: base.Add(200 * time.Minute), Limit: 8, Ascending: true}},
		{"window", store.Query{OrgID: "orgA", After: base.Add(20 * time.Minute), Before: base.Add(100 * time.Minute), Limit: 8}},
		{"everything", store.Query{OrgID: "orgA", UserID: "alice", Outcomes: []string{"passed", "modified", "error"},
			ProjectIDs: []string{"p1", "p2"}, Search: "#", Limit: 3}},
		{"unknown org", store.Query{OrgID: "nobody", Limit: 10}},
		{"unknown user", store.Query{OrgID: "orgA", UserID: "mallory", Limit: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := model(all, tt.q)
			pages, last := Walk(t, s, tt.q)
			got := slices.Concat(pages...)
			if !slices.Equal(got, want) {
				t.Fatalf("walking next: got %d ids, want %d\n got %v\nwant %v", len(got), len(want), got, want)
			}
			for i, pg := range pages[:len(pages)-1] {
				if len(pg) != tt.q.Limit {
					t.Fatalf("page %d has %d items, want a full page of %d", i, len(pg), tt.q.Limit)
				}
			}
			// Walking prev from the last page must give the same pages
			// back, in reverse, and end with prev "".
			q := tt.q
			cur := last
			for i := len(pages) - 2; i >= 0; i-- {
				if cur.Prev == "" {
					t.Fatalf("page %d has no prev", i+1)
				}
				q.Cursor = cur.Prev
				var err error
				if cur, err = s.ListPrompts(q); err != nil {
					t.Fatalf("prev: %v", err)
				}
				if !slices.Equal(IDs(cur.Items), pages[i]) {
					t.Fatalf("prev page %d = %v, want %v", i, IDs(cur.Items), pages[i])
				}
				if cur.Next == "" {
					t.Fatalf("prev page %d has no next", i)
				}
			}
			if cur.Prev != "" {
				t.Fatalf("first page reached by prev still has prev")
			}
		})
	}
}

func testListPromptsRejects(t *testing.T, h Harness) {
	s := h.open(t, Options{Retention: keepForever})
	dataset(t, s, 30)
	other := h.open(t, Options{Retention: keepForever})
	dataset(t, other, 30)

	q := store.Query{OrgID: "orgA", Limit: 5}
	first, err := s.ListPrompts(q)
	if err != nil || first.Next == "" {
		t.Fatalf("first page: %v, next %q", err, first.Next)
	}
	foreign, err := other.ListPrompts(q)
	if err != nil || foreign.Next == "" {
		t.Fatalf("foreign page: %v", err)
	}
	flip := func(c string, i int) string {
		b := []byte(c)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	tests := []struct {
		name    string
		q       store.Query
		wantErr error
	}{
		{"limit 0", store.Query{OrgID: "orgA", Limit: 0}, store.ErrInvalidLimit},
		{"limit 101", store.Query{OrgID: "orgA", Limit: 101}, store.ErrInvalidLimit},
		{"limit negative", store.Query{OrgID: "orgA", Limit: -1}, store.ErrInvalidLimit},
		{"garbage cursor", store.Query{OrgID: "orgA", Limit: 5, Cursor: "!!!"}, store.ErrBadCursor},
		{"truncated cursor", store.Query{OrgID: "orgA", Limit: 5, Cursor: first.Next[:len(first.Next)-3]}, store.ErrBadCursor},
		{"tampered first byte", store.Query{OrgID: "orgA", Limit: 5, Cursor: flip(first.Next, 0)}, store.ErrBadCursor},
		{"tampered seq", store.Query{OrgID: "orgA", Limit: 5, Cursor: flip(first.Next, 6)}, store.ErrBadCursor},
		{"tampered mac", store.Query{OrgID: "orgA", Limit: 5, Cursor: flip(first.Next, len(first.Next)-1)}, store.ErrBadCursor},
		{"foreign database", store.Query{OrgID: "orgA", Limit: 5, Cursor: foreign.Next}, store.ErrBadCursor},
		{"other org", store.Query{OrgID: "orgB", Limit: 5, Cursor: first.Next}, store.ErrBadCursor},
		{"other filter", store.Query{OrgID: "orgA", Limit: 5, Search: "x", Cursor: first.Next}, store.ErrBadCursor},
		{"other order", store.Query{OrgID: "orgA", Limit: 5, Ascending: true, Cursor: first.Next}, store.ErrBadCursor},
		{"other user", store.Query{OrgID: "orgA", UserID: "bob", Limit: 5, Cursor: first.Next}, store.ErrBadCursor},
		{"other limit is fine", store.Query{OrgID: "orgA", Limit: 7, Cursor: first.Next}, nil},
		{"filter values reordered is fine", store.Query{OrgID: "orgA", Limit: 5, Outcomes: []string{"b", "a"}, Cursor: mustCursor(t, s, store.Query{OrgID: "orgA", Limit: 1, Outcomes: []string{"a", "b", "a"}})}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.ListPrompts(tt.q)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("ListPrompts = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func mustCursor(t *testing.T, s store.RecordStore, q store.Query) string {
	t.Helper()
	for range 2 {
		put(t, s, &store.Prompt{PromptFields: store.PromptFields{OrgID: q.OrgID, Result: store.PromptResult{Outcome: "a"}}})
	}
	syncStore(t, s)
	p, err := s.ListPrompts(q)
	if err != nil || p.Next == "" {
		t.Fatalf("mustCursor: %v %q", err, p.Next)
	}
	return p.Next
}

func testPagingWhileWriting(t *testing.T, h Harness) {
	for _, asc := range []bool{false, true} {
		t.Run(fmt.Sprint("ascending=", asc), func(t *testing.T) {
			s := h.open(t, Options{BatchWait: time.Millisecond, Retention: keepForever})
			before := dataset(t, s, 200)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						if err := s.Put(context.Background(), &store.Prompt{PromptFields: store.PromptFields{OrgID: "orgA", UserID: "alice"}}); err != nil {
							t.Errorf("Put: %v", err)
							return
						}
					}
				})
			}
			q := store.Query{OrgID: "orgA", Limit: 7, Ascending: asc}
			seen := make(map[string]bool)
			var order []string
			for page, i := (store.Page{}), 0; i == 0 || page.Next != ""; i++ {
				q.Cursor = page.Next
				var err error
				if page, err = s.ListPrompts(q); err != nil {
					t.Fatal(err)
				}
				for _, p := range page.Items {
					if seen[p.ID] {
						t.Fatalf("record %s seen twice", p.ID)
					}
					seen[p.ID] = true
					order = append(order, p.ID)
				}
				// Ascending never ends while writers run; stop it
				// once it passed every record written before.
				if asc && len(order) > 400 {
					break
				}
			}
			close(stop)
			wg.Wait()
			var want []string
			for _, p := range before {
				if p.OrgID == "orgA" {
					want = append(want, p.ID)
				}
			}
			if !asc {
				slices.Reverse(want)
				// New records appear only ahead of the first page; the
				// walk then covers every older record in order.
				order = order[len(order)-len(want):]
			} else {
				order = order[:len(want)]
			}
			if !slices.Equal(order, want) {
				t.Fatalf("walk skipped or reordered pre-existing records")
			}
		})
	}
}

func testReservation(t *testing.T, h Harness) {
	s := h.open(t, Options{QueueSize: 4})
	r, err := s.Reserve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.QueueDepth() != 1 {
		t.Fatalf("depth after Reserve = %d", s.QueueDepth())
	}
	r.Cancel()
	r.Cancel()
	if s.QueueDepth() != 0 {
		t.Fatalf("depth after Cancel = %d", s.QueueDepth())
	}
	if err := r.Commit(&store.Prompt{PromptFields: store.PromptFields{OrgID: "o"}}); !errors.Is(err, store.ErrReservationUsed) {
		t.Fatalf("Commit after Cancel = %v", err)
	}
	r, _ = s.Reserve(context.Background())
	if err := r.Commit(&store.Prompt{PromptFields: store.PromptFields{OrgID: "o"}}); err != nil {
		t.Fatal(err)
	}
	r.Cancel() // no-op after Commit: must not free a second slot
	if err := r.Commit(&store.Prompt{PromptFields: store.PromptFields{OrgID: "o"}}); !errors.Is(err, store.ErrReservationUsed) {
		t.Fatalf("second Commit = %v", err)
	}
	syncStore(t, s)
	if s.QueueDepth() != 0 {
		t.Fatalf("depth after Sync = %d", s.QueueDepth())
	}
}

func testReplaceKeepsPosition(t *testing.T, h Harness) {
	s := h.open(t, Options{})
	a := &store.Prompt{PromptFields: store.PromptFields{OrgID: "o", UserID: "u1", Input: "a"}}
	b := &store.Prompt{PromptFields: store.PromptFields{OrgID: "o", UserID: "u1", Input: "b"}}
	put(t, s, a)
	put(t, s, b)
	a2 := *a
	a2.Input = "a2"
	a2.UserID = "u2"
	a2.Preserve = true
	put(t, s, &a2)
	syncStore(t, s)
	tests := []struct {
		q    store.Query
		want []string
	}{
		{store.Query{OrgID: "o", Limit: 10, Ascending: true}, []string{a.ID, b.ID}},
		{store.Query{OrgID: "o", UserID: "u1", Limit: 10}, []string{b.ID}},
		{store.Query{OrgID: "o", UserID: "u2", Limit: 10}, []string{a.ID}},
	}
	for _, tt := range tests {
		p, err := s.ListPrompts(tt.q)
		if err != nil || !slices.Equal(IDs(p.Items), tt.want) {
			t.Fatalf("%+v: %v %v, want %v", tt.q, IDs(p.Items), err, tt.want)
		}
	}
	got, _ := s.GetPrompt(a.ID)
	if got.Input != "a2" {
		t.Fatalf("replacement not stored: %q", got.Input)
	}
	// The replacement is preserved, so its old expiry entry must be gone.
	if n, _ := h.Sweep(s, time.Now().Add(365*24*time.Hour)); n != 1 {
		t.Fatalf("sweep deleted %d records, want only b", n)
	}
}

func testChain(t *testing.T, h Harness) {
	s := h.open(t, Options{})
	root := &store.Prompt{PromptFields: store.PromptFields{ID: store.NewID(), OrgID: "o"}}
	mid := &store.Prompt{PromptFields: store.PromptFields{ID: store.NewID(), OrgID: "o", ParentID: root.ID}}
	leaf := &store.Prompt{PromptFields: store.PromptFields{ID: store.NewID(), OrgID: "o", ParentID: mid.ID}}
	orphan := &store.Prompt{PromptFields: store.PromptFields{ID: store.NewID(), OrgID: "o", ParentID: store.NewID()}}
	foreignRoot := &store.Prompt{PromptFields: store.PromptFields{ID: store.NewID(), OrgID: "other"}}
	crossOrg := &store.Prompt{PromptFields: store.PromptFields{ID: store.NewID(), OrgID: "o", ParentID: foreignRoot.ID}}
	loopA := &store.Prompt{PromptFields: store.PromptFields{ID: store.NewID(), OrgID: "o"}}
	loopB := &store.Prompt{PromptFields: store.PromptFields{ID: store.NewID(), OrgID: "o", ParentID: loopA.ID}}
	loopA.ParentID = loopB.ID
	for _, p := range []*store.Prompt{root, mid, leaf, orphan, foreignRoot, crossOrg, loopA, loopB} {
		put(t, s, p)
	}
	syncStore(t, s)
	tests := []struct {
		name    string
		id      string
		want    []string
		wantErr error
	}{
		{"leaf", leaf.ID, []string{root.ID, mid.ID, leaf.ID}, nil},
		{"root", root.ID, []string{root.ID}, nil},
		{"expired parent", orphan.ID, []string{orphan.ID}, nil},
		{"other org parent", crossOrg.ID, []string{crossOrg.ID}, nil},
		{"loop", loopB.ID, []string{loopA.ID, loopB.ID}, nil},
		{"unknown", store.NewID(), nil, store.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Chain(tt.id)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("Chain = %v, want %v", err, tt.wantErr)
			}
			if !slices.Equal(IDs(got), tt.want) {
				t.Fatalf("Chain = %v, want %v", IDs(got), tt.want)
			}
		})
	}
}

func testPageEmptiedByRetention(t *testing.T, h Harness) {
	now := time.Now()
	for _, asc := range []bool{false, true} {
		t.Run(fmt.Sprint("ascending=", asc), func(t *testing.T) {
			s := h.open(t, Options{Retention: 24 * time.Hour})
			// Newest-first pages reach the old records last when they
			// were committed first, and ascending ones when committed last.
			var young []string
			addYoung := func() {
				for range 5 {
					p := &store.Prompt{PromptFields: store.PromptFields{OrgID: "o", ReceivedAt: store.Timestamp(now)}}
					put(t, s, p)
					young = append(young, p.ID)
				}
			}
			addOld := func() {
				for range 7 {
					put(t, s, &store.Prompt{PromptFields: store.PromptFields{OrgID: "o", ReceivedAt: store.Timestamp(now.Add(-48 * time.Hour))}})
				}
			}
			if asc {
				addYoung()
				addOld()
			} else {
				addOld()
				addYoung()
				slices.Reverse(young)
			}
			syncStore(t, s)
			q := store.Query{OrgID: "o", Limit: 5, Ascending: asc}
			first, err := s.ListPrompts(q)
			if err != nil || !slices.Equal(IDs(first.Items), young) || first.Next == "" {
				t.Fatalf("first page %v next %q (%v)", IDs(first.Items), first.Next, err)
			}
			if n, err := h.Sweep(s, now); err != nil || n != 7 {
				t.Fatalf("sweep = %d, %v", n, err)
			}
			q.Cursor = first.Next
			empty, err := s.ListPrompts(q)
			if err != nil || len(empty.Items) != 0 || empty.Next != "" || empty.Prev == "" {
				t.Fatalf("emptied page: %v next %q prev %q (%v)", IDs(empty.Items), empty.Next, empty.Prev, err)
			}
			q.Cursor = empty.Prev
			back, err := s.ListPrompts(q)
			if err != nil || !slices.Equal(IDs(back.Items), young) || back.Prev != "" || back.Next != "" {
				t.Fatalf("prev of emptied page: %v next %q prev %q (%v)", IDs(back.Items), back.Next, back.Prev, err)
			}
		})
	}
}

// testRetention: a sweep deletes exactly the records received before the
// retention period that are not preserved, from every index.
func testRetention(t *testing.T, h Harness) {
	now := time.Now().UTC()
	tests := []struct {
		name     string
		age      time.Duration
		preserve bool
		kept     bool
	}{
		{"old", 48 * time.Hour, false, false},
		{"old preserved", 48 * time.Hour, true, true},
		{"just expired", 24*time.Hour + time.Second, false, false},
		{"young", 23 * time.Hour, false, true},
		{"young preserved", time.Hour, true, true},
	}
	s := h.open(t, Options{Retention: 24 * time.Hour})
	recs := make([]*store.Prompt, len(tests))
	for i, tt := range tests {
		recs[i] = &store.Prompt{
			PromptFields: store.PromptFields{OrgID: "org", UserID: "u", Preserve: tt.preserve, ReceivedAt: store.Timestamp(now.Add(-tt.age))},
		}
		put(t, s, recs[i])
	}
	syncStore(t, s)
	n, err := h.Sweep(s, now)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("sweep deleted %d, want 2", n)
	}
	for i, tt := range tests {
		_, err := s.GetPrompt(recs[i].ID)
		if kept := err == nil; kept != tt.kept {
			t.Errorf("%s: kept = %v, want %v (%v)", tt.name, kept, tt.kept, err)
		}
	}
	for _, q := range []store.Query{{OrgID: "org", Limit: 100}, {OrgID: "org", UserID: "u", Limit: 100}} {
		p, err := s.ListPrompts(q)
		if err != nil || len(p.Items) != 3 {
			t.Fatalf("index still lists %d records after sweep (%v)", len(p.Items), err)
		}
	}
}

// testResultReadsNormalized: whatever the writer was handed, a record reads
// back with its result normalized (arrays, never null).
func testResultReadsNormalized(t *testing.T, h Harness) {
	s := h.open(t, Options{})
	for _, res := range []store.PromptResult{{}, {ScannerResults: []store.ScannerResult{{ScannerID: "a"}}}} {
		id := store.NewID()
		put(t, s, &store.Prompt{PromptFields: store.PromptFields{ID: id, OrgID: "o", Result: res}})
		syncStore(t, s)
		got, err := s.GetPrompt(id)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(got.Result)
		if strings.Contains(string(raw), "null") {
			t.Errorf("stored result reads back with null: %s", raw)
		}
	}
}

// testReadYourWrites: a committed record can be waited for through its
// reservation, and is read by id (alone or as a chain) right after Put,
// without a Sync, even while its batch waits out a long BatchWait.
func testReadYourWrites(t *testing.T, h Harness) {
	s := h.open(t, Options{BatchWait: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := s.Reserve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waited := &store.Prompt{PromptFields: store.PromptFields{OrgID: "o", Input: "waited"}}
	if err := r.Commit(waited); err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(ctx); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if err := r.WaitCommitted(ctx); err != nil {
		t.Fatalf("WaitCommitted: %v", err)
	}
	if _, err := s.GetPrompt(waited.ID); err != nil {
		t.Fatalf("GetPrompt after WaitCommitted: %v", err)
	}
	parent := &store.Prompt{PromptFields: store.PromptFields{OrgID: "o", Input: "parent"}}
	put(t, s, parent)
	child := &store.Prompt{PromptFields: store.PromptFields{OrgID: "o", Input: "child", ParentID: parent.ID}}
	put(t, s, child)
	if got, err := s.GetPrompt(child.ID); err != nil || got.Input != "child" {
		t.Fatalf("GetPrompt right after Put = %+v, %v", got, err)
	}
	chain, err := s.Chain(child.ID)
	if err != nil || len(chain) != 2 || chain[0].ID != parent.ID {
		t.Fatalf("Chain right after Put = %v, %v", IDs(chain), err)
	}
	// A reservation cancelled without a record has nothing to wait for.
	r, err = s.Reserve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.Cancel()
	if err := r.WaitCommitted(ctx); err != nil {
		t.Fatalf("WaitCommitted after Cancel: %v", err)
	}
}
