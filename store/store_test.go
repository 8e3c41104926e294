package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func openTest(t testing.TB, opts Options) *Store {
	t.Helper()
	if opts.Path == "" {
		opts.Path = filepath.Join(t.TempDir(), "pw.db")
	}
	if opts.Retention == 0 {
		// Fixtures are dated in the past: the sweeper, starting with the
		// store, would race to delete them. Retention tests set their own.
		opts.Retention = -1
	}
	s, err := Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func syncStore(t testing.TB, s *Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
}

func put(t testing.TB, s *Store, p *Prompt) {
	t.Helper()
	if err := s.Put(context.Background(), p); err != nil {
		t.Fatalf("Put: %v", err)
	}
}

// walk follows Next from the first page and returns the pages' ids.
func walk(t *testing.T, s *Store, q Query) (pages [][]string, last Page) {
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
		pages = append(pages, ids(p.Items))
		if p.Next == "" {
			return pages, p
		}
		q.Cursor = p.Next
	}
}

func ids(ps []*Prompt) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

func TestTimestampJSON(t *testing.T) {
	tests := []struct {
		name string
		in   Timestamp
		want string
	}{
		{"zero", Timestamp{}, `""`},
		{"utc millis", Timestamp(time.Date(2026, 11, 22, 10, 4, 5, 123456789, time.UTC)), `"2026-11-22T10:04:05.123Z"`},
		{"other zone", Timestamp(time.Date(2026, 11, 22, 12, 4, 5, 0, time.FixedZone("x", 2*3600))), `"2026-11-22T10:04:05.000Z"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.in)
			if err != nil || string(got) != tt.want {
				t.Fatalf("Marshal = %s, %v; want %s", got, err, tt.want)
			}
			var back Timestamp
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !back.Time().Equal(tt.in.Time().Truncate(time.Millisecond)) {
				t.Fatalf("round trip %v != %v", back.Time(), tt.in.Time())
			}
		})
	}
	parse := []struct {
		in      string
		wantErr bool
	}{
		{`"2026-11-22T10:04:05Z"`, false},
		{`"2026-11-22T10:04:05.5+01:00"`, false},
		{`null`, false},
		{`"2026-11-22 10:04:05"`, true},
		{`12`, true},
	}
	for _, tt := range parse {
		var ts Timestamp
		if err := json.Unmarshal([]byte(tt.in), &ts); (err != nil) != tt.wantErr {
			t.Errorf("Unmarshal(%s) error = %v, wantErr %v", tt.in, err, tt.wantErr)
		}
	}
}

func TestPromptJSONShape(t *testing.T) {
	p := &Prompt{ID: "x", Result: PromptResult{ScannerResults: []ScannerResult{{}}}}
	p.Result.Normalize()
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"id", "externalMetadata", "fromTemplate", "input", "memory", "orgId", "parentId",
		"preserve", "projectId", "provider", "receivedAt", "result", "type", "userId"} {
		if _, ok := m[f]; !ok {
			t.Errorf("field %s missing from %s", f, raw)
		}
	}
	sr := m["result"].(map[string]any)["scannerResults"].([]any)[0].(map[string]any)
	if matches, ok := sr["data"].(map[string]any)["matches"].([]any); !ok || len(matches) != 0 {
		t.Errorf("data.matches = %v, want []", sr["data"])
	}
	var empty PromptResult
	empty.Normalize()
	raw, _ = json.Marshal(empty)
	if !strings.Contains(string(raw), `"scannerResults":[]`) {
		t.Errorf("normalized nil scannerResults marshals as %s", raw)
	}

	// Whatever the writer was handed, a record reads back normalized.
	s := openTest(t, Options{})
	for _, res := range []PromptResult{{}, {ScannerResults: []ScannerResult{{ScannerID: "a"}}}} {
		id := NewID()
		put(t, s, &Prompt{ID: id, OrgID: "o", Result: res})
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

func TestRoundTrip(t *testing.T) {
	s := openTest(t, Options{})
	in := &Prompt{
		ExternalMetadata: `{"k":1}`, FromTemplate: true, Input: "Hello, wörld", Memory: "m", OrgID: "org1",
		ParentID: "", Preserve: true, ProjectID: "proj", Provider: "OpenAI", Type: TypePrompt, UserID: "u1",
		EndpointID: "ep", ProviderID: "prov", ChatID: "chat", PromptTemplateID: "tpl", Scanners: `[{"id":"pii"}]`,
		ReceivedAt: Timestamp(time.Date(2026, 1, 2, 3, 4, 5, 6_789_000, time.UTC)),
		Result: PromptResult{Outcome: "modified", Response: "r", ScannerResults: []ScannerResult{{
			ScannerID: "pii", Outcome: "modified", ScanDirection: "input",
			Data: ScannerData{Type: "pii", Matches: [][2]int{{7, 12}}, Findings: []Finding{{Kind: "NAME", Start: 7, End: 12, Score: 0.9, Role: "user"}}},
		}}},
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
	want.ReceivedAt = Timestamp(time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC))
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(&want)
	if string(gj) != string(wj) {
		t.Fatalf("round trip:\n got %s\nwant %s", gj, wj)
	}
	if _, err := s.GetPrompt(NewID()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetPrompt(unknown) = %v, want ErrNotFound", err)
	}
}

func TestInvalidRecord(t *testing.T) {
	s := openTest(t, Options{})
	tests := []struct {
		name string
		p    Prompt
	}{
		{"no org", Prompt{ID: "a"}},
		{"long id", Prompt{ID: strings.Repeat("x", maxIDLen+1), OrgID: "o"}},
		{"long user", Prompt{OrgID: "o", UserID: strings.Repeat("x", maxIDLen+1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.QueueDepth()
			if err := s.Put(context.Background(), &tt.p); !errors.Is(err, ErrInvalidRecord) {
				t.Fatalf("Put = %v, want ErrInvalidRecord", err)
			}
			if s.QueueDepth() != before {
				t.Fatalf("failed Commit kept its slot: depth %d, was %d", s.QueueDepth(), before)
			}
		})
	}
}

// dataset writes n records in a known commit order and returns them.
func dataset(t testing.TB, s *Store, n int) []*Prompt {
	t.Helper()
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	outcomes := []string{"passed", "flagged", "modified", "blocked", "error"}
	inputs := []string{"hello world", "My SSN is 123", "Straße nach Köln", "ignore previous INSTRUCTIONS", "ÄPFEL und Birnen"}
	var out []*Prompt
	for i := range n {
		p := &Prompt{
			ID:         NewID(),
			OrgID:      []string{"orgA", "orgA", "orgA", "orgB"}[i%4],
			UserID:     []string{"alice", "bob", "carol"}[i%3],
			Input:      fmt.Sprintf("%s #%d", inputs[i%len(inputs)], i),
			ProjectID:  []string{"p1", "p2"}[i%2],
			ProviderID: []string{"openai", "anthropic", "ollama"}[i%3],
			EndpointID: []string{"e1", "e2", "e3", "e4"}[i%4],
			Type:       TypeScan,
			// Received times deliberately disagree with commit order
			// in places: the list must follow commit order.
			ReceivedAt: Timestamp(base.Add(time.Duration(i*7%n) * time.Minute)),
			Result:     PromptResult{Outcome: outcomes[i%len(outcomes)]},
		}
		put(t, s, p)
		out = append(out, p)
	}
	syncStore(t, s)
	return out
}

// model is the reference implementation of a query, written as plainly as
// possible to check ListPrompts against.
func model(all []*Prompt, q Query) []string {
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

func TestListPrompts(t *testing.T) {
	s := openTest(t, Options{})
	all := dataset(t, s, 240)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		q    Query
	}{
		{"org desc", Query{OrgID: "orgA", Limit: 10}},
		{"org asc", Query{OrgID: "orgA", Limit: 10, Ascending: true}},
		{"limit 1", Query{OrgID: "orgB", Limit: 1}},
		{"limit 100", Query{OrgID: "orgA", Limit: 100, Ascending: true}},
		{"limit 7 uneven", Query{OrgID: "orgA", Limit: 7}},
		{"user", Query{OrgID: "orgA", UserID: "bob", Limit: 9}},
		{"user asc", Query{OrgID: "orgA", UserID: "carol", Limit: 4, Ascending: true}},
		{"outcomes", Query{OrgID: "orgA", Outcomes: []string{"blocked", "flagged"}, Limit: 6}},
		{"projects", Query{OrgID: "orgA", ProjectIDs: []string{"p2"}, Limit: 10}},
		{"providers", Query{OrgID: "orgA", ProviderIDs: []string{"ollama", "openai"}, Limit: 10, Ascending: true}},
		{"endpoints", Query{OrgID: "orgA", EndpointIDs: []string{"e2"}, Limit: 5}},
		{"endpoint of other org", Query{OrgID: "orgA", EndpointIDs: []string{"e4"}, Limit: 5}},
		{"search ascii fold", Query{OrgID: "orgA", Search: "INSTRUCTIONS", Limit: 3}},
		{"search lower", Query{OrgID: "orgA", Search: "my ssn", Limit: 3}},
		{"search unicode fold", Query{OrgID: "orgA", Search: "äpfel", Limit: 3}},
		{"search no hit", Query{OrgID: "orgA", Search: "zzz", Limit: 3}},
		{"before", Query{OrgID: "orgA", Before: base.Add(60 * time.Minute), Limit: 8}},
		{"after", Query{OrgID: "orgA", After: base.Add(200 * time.Minute), Limit: 8, Ascending: true}},
		{"window", Query{OrgID: "orgA", After: base.Add(20 * time.Minute), Before: base.Add(100 * time.Minute), Limit: 8}},
		{"everything", Query{OrgID: "orgA", UserID: "alice", Outcomes: []string{"passed", "modified", "error"},
			ProjectIDs: []string{"p1", "p2"}, Search: "#", Limit: 3}},
		{"unknown org", Query{OrgID: "nobody", Limit: 10}},
		{"unknown user", Query{OrgID: "orgA", UserID: "mallory", Limit: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := model(all, tt.q)
			pages, last := walk(t, s, tt.q)
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
				if !slices.Equal(ids(cur.Items), pages[i]) {
					t.Fatalf("prev page %d = %v, want %v", i, ids(cur.Items), pages[i])
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

func TestListPromptsRejects(t *testing.T) {
	s := openTest(t, Options{})
	dataset(t, s, 30)
	other := openTest(t, Options{})
	dataset(t, other, 30)

	q := Query{OrgID: "orgA", Limit: 5}
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
		q       Query
		wantErr error
	}{
		{"limit 0", Query{OrgID: "orgA", Limit: 0}, ErrInvalidLimit},
		{"limit 101", Query{OrgID: "orgA", Limit: 101}, ErrInvalidLimit},
		{"limit negative", Query{OrgID: "orgA", Limit: -1}, ErrInvalidLimit},
		{"garbage cursor", Query{OrgID: "orgA", Limit: 5, Cursor: "!!!"}, ErrBadCursor},
		{"truncated cursor", Query{OrgID: "orgA", Limit: 5, Cursor: first.Next[:len(first.Next)-3]}, ErrBadCursor},
		{"tampered first byte", Query{OrgID: "orgA", Limit: 5, Cursor: flip(first.Next, 0)}, ErrBadCursor},
		{"tampered seq", Query{OrgID: "orgA", Limit: 5, Cursor: flip(first.Next, 6)}, ErrBadCursor},
		{"tampered mac", Query{OrgID: "orgA", Limit: 5, Cursor: flip(first.Next, len(first.Next)-1)}, ErrBadCursor},
		{"foreign database", Query{OrgID: "orgA", Limit: 5, Cursor: foreign.Next}, ErrBadCursor},
		{"other org", Query{OrgID: "orgB", Limit: 5, Cursor: first.Next}, ErrBadCursor},
		{"other filter", Query{OrgID: "orgA", Limit: 5, Search: "x", Cursor: first.Next}, ErrBadCursor},
		{"other order", Query{OrgID: "orgA", Limit: 5, Ascending: true, Cursor: first.Next}, ErrBadCursor},
		{"other user", Query{OrgID: "orgA", UserID: "bob", Limit: 5, Cursor: first.Next}, ErrBadCursor},
		{"other limit is fine", Query{OrgID: "orgA", Limit: 7, Cursor: first.Next}, nil},
		{"filter values reordered is fine", Query{OrgID: "orgA", Limit: 5, Outcomes: []string{"b", "a"}, Cursor: mustCursor(t, s, Query{OrgID: "orgA", Limit: 1, Outcomes: []string{"a", "b", "a"}})}, nil},
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

// mustCursor returns a valid cursor for q, issued from a record of its own
// so that the query has a page to continue.
func mustCursor(t *testing.T, s *Store, q Query) string {
	t.Helper()
	for range 2 {
		put(t, s, &Prompt{OrgID: q.OrgID, Result: PromptResult{Outcome: "a"}})
	}
	syncStore(t, s)
	p, err := s.ListPrompts(q)
	if err != nil || p.Next == "" {
		t.Fatalf("mustCursor: %v %q", err, p.Next)
	}
	return p.Next
}

func TestConcurrentWritersSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pw.db")
	s, err := Open(Options{Path: path, BatchSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 32, 150
	var wg sync.WaitGroup
	acked := make([][]string, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				p := &Prompt{OrgID: "org", UserID: fmt.Sprint("u", w), Input: fmt.Sprint(w, "-", i)}
				if err := s.Put(context.Background(), p); err != nil {
					t.Errorf("Put: %v", err)
					return
				}
				acked[w] = append(acked[w], p.ID)
			}
		})
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	s = openTest(t, Options{Path: path})
	// Records are encoded in recycled buffers: each must read back as its
	// own, not as a later record that reused its buffer.
	for w, list := range acked {
		for i, id := range list {
			p, err := s.GetPrompt(id)
			if err != nil {
				t.Fatalf("acknowledged record %s lost: %v", id, err)
			}
			if want := fmt.Sprint(w, "-", i); p.Input != want || p.ID != id {
				t.Fatalf("record %s reads back as %s with input %q, want %q", id, p.ID, p.Input, want)
			}
		}
	}
	pages, _ := walk(t, s, Query{OrgID: "org", Limit: 100})
	got := slices.Concat(pages...)
	if len(got) != writers*each {
		t.Fatalf("listed %d records, want %d", len(got), writers*each)
	}
	// Per writer, commit order must follow acknowledgement order.
	pos := make(map[string]int, len(got))
	for i, id := range got {
		pos[id] = -i
	}
	for w, list := range acked {
		for i := 1; i < len(list); i++ {
			if pos[list[i-1]] >= pos[list[i]] {
				t.Fatalf("writer %d: record %d committed before record %d", w, i, i-1)
			}
		}
	}
}

func TestCloseDrains(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pw.db")
	// A long BatchWait keeps records in the queue until Close.
	s, err := Open(Options{Path: path, BatchWait: time.Hour, BatchSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var idsPut []string
	for i := range 300 {
		p := &Prompt{OrgID: "org", Input: fmt.Sprint(i)}
		put(t, s, p)
		idsPut = append(idsPut, p.ID)
	}
	// A reservation still open when Close starts is waited for.
	res, err := s.Reserve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	late := &Prompt{OrgID: "org", Input: "late"}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	time.Sleep(50 * time.Millisecond)
	if _, err := s.Reserve(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Reserve while closing = %v, want ErrClosed", err)
	}
	if err := res.Commit(late); err != nil {
		t.Fatalf("Commit during Close: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Put(context.Background(), &Prompt{OrgID: "org"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Put after Close = %v, want ErrClosed", err)
	}
	s = openTest(t, Options{Path: path})
	for _, id := range append(idsPut, late.ID) {
		if _, err := s.GetPrompt(id); err != nil {
			t.Fatalf("record %s not drained: %v", id, err)
		}
	}
}

func TestCloseGivesUpOnAbandonedReservation(t *testing.T) {
	s, err := Open(Options{Path: filepath.Join(t.TempDir(), "pw.db"), DrainTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Reserve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := res.Commit(&Prompt{OrgID: "org"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Commit after Close = %v, want ErrClosed", err)
	}
}

type countingObserver struct {
	rejected, ok, failed atomic.Int64
	// depth is the last queue depth reported, peak the largest.
	depth, peak atomic.Int64
}

func (o *countingObserver) QueueDepth(d int) {
	o.depth.Store(int64(d))
	if int64(d) > o.peak.Load() {
		o.peak.Store(int64(d))
	}
}
func (o *countingObserver) Rejected() { o.rejected.Add(1) }
func (o *countingObserver) Committed(_ int, _ time.Duration, err error) {
	if err != nil {
		o.failed.Add(1)
	} else {
		o.ok.Add(1)
	}
}

func TestQueueFullWhenWriterStalls(t *testing.T) {
	gate := make(chan struct{})
	obs := &countingObserver{}
	s := openTest(t, Options{
		QueueSize: 8, BatchSize: 4, BatchWait: time.Millisecond, EnqueueWait: 30 * time.Millisecond, Observer: obs,
		beforeCommit: func(int) error { <-gate; return nil },
	})
	var acked []string
	for range 8 {
		p := &Prompt{OrgID: "org"}
		put(t, s, p)
		acked = append(acked, p.ID)
	}
	if d := s.QueueDepth(); d != 8 {
		t.Fatalf("QueueDepth = %d, want 8", d)
	}
	start := time.Now()
	if err := s.Put(context.Background(), &Prompt{OrgID: "org"}); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("Put on full queue = %v, want ErrQueueFull", err)
	}
	if waited := time.Since(start); waited < 25*time.Millisecond {
		t.Fatalf("gave up after %v, before EnqueueWait", waited)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Reserve(ctx); !errors.Is(err, ErrQueueFull) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Reserve with cancelled ctx = %v", err)
	}
	if obs.rejected.Load() != 2 {
		t.Fatalf("Rejected called %d times, want 2", obs.rejected.Load())
	}
	close(gate)
	syncStore(t, s)
	for _, id := range acked {
		if _, err := s.GetPrompt(id); err != nil {
			t.Fatalf("record %s lost: %v", id, err)
		}
	}
	if s.QueueDepth() != 0 {
		t.Fatalf("QueueDepth after drain = %d", s.QueueDepth())
	}
	// The depth a dashboard shows returns to 0 once the backlog is
	// committed, not the depth of the last record queued.
	if obs.peak.Load() < 8 || obs.depth.Load() != 0 {
		t.Fatalf("reported queue depth: peak %d, last %d; want >= 8, then 0", obs.peak.Load(), obs.depth.Load())
	}
}

func TestCommitFailureRetried(t *testing.T) {
	var attempts atomic.Int64
	obs := &countingObserver{}
	s := openTest(t, Options{
		BatchWait: time.Millisecond, Observer: obs,
		beforeCommit: func(int) error {
			if attempts.Add(1) <= 3 {
				return errors.New("no space left on device")
			}
			return nil
		},
	})
	var acked []string
	for i := range 20 {
		p := &Prompt{OrgID: "org", Input: fmt.Sprint("prompt ", i)}
		put(t, s, p)
		acked = append(acked, p.ID)
	}
	syncStore(t, s)
	if obs.failed.Load() != 3 {
		t.Fatalf("observer saw %d failures, want 3", obs.failed.Load())
	}
	for i, id := range acked {
		p, err := s.GetPrompt(id)
		if err != nil {
			t.Fatalf("record %s lost after retries: %v", id, err)
		}
		if want := fmt.Sprint("prompt ", i); p.Input != want {
			t.Fatalf("record %s input %q after retries, want %q", id, p.Input, want)
		}
	}
}

func TestCloseReportsUncommitted(t *testing.T) {
	s, err := Open(Options{
		Path: filepath.Join(t.TempDir(), "pw.db"), BatchWait: time.Millisecond, DrainTimeout: 100 * time.Millisecond,
		beforeCommit: func(int) error { return errors.New("disk gone") },
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		put(t, s, &Prompt{OrgID: "org"})
	}
	err = s.Close()
	if !errors.Is(err, ErrUncommitted) || !strings.Contains(err.Error(), "3 records") {
		t.Fatalf("Close = %v, want ErrUncommitted naming 3 records", err)
	}
	if err := s.Sync(context.Background()); !errors.Is(err, ErrUncommitted) {
		t.Fatalf("Sync after lost records = %v", err)
	}
}

func TestLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pw.db")
	openTest(t, Options{Path: path})
	start := time.Now()
	_, err := Open(Options{Path: path, OpenTimeout: 100 * time.Millisecond})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open = %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "another open Store in this process") {
		t.Fatalf("error does not say what holds the lock: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("OpenTimeout not honoured")
	}
}

func TestRetention(t *testing.T) {
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
	s := openTest(t, Options{Retention: 24 * time.Hour})
	recs := make([]*Prompt, len(tests))
	for i, tt := range tests {
		recs[i] = &Prompt{OrgID: "org", UserID: "u", Preserve: tt.preserve, ReceivedAt: Timestamp(now.Add(-tt.age))}
		put(t, s, recs[i])
	}
	syncStore(t, s)
	n, err := s.sweep(now)
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
	for _, q := range []Query{{OrgID: "org", Limit: 100}, {OrgID: "org", UserID: "u", Limit: 100}} {
		p, err := s.ListPrompts(q)
		if err != nil || len(p.Items) != 3 {
			t.Fatalf("index still lists %d records after sweep (%v)", len(p.Items), err)
		}
	}
}

func TestRetentionSweeperRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pw.db")
	s, err := Open(Options{Path: path, Retention: -1})
	if err != nil {
		t.Fatal(err)
	}
	old := &Prompt{OrgID: "org", ReceivedAt: Timestamp(time.Now().Add(-time.Hour))}
	keep := &Prompt{OrgID: "org", ReceivedAt: Timestamp(time.Now().Add(-time.Hour)), Preserve: true}
	put(t, s, old)
	put(t, s, keep)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, Options{Path: path, Retention: time.Minute, SweepInterval: 10 * time.Millisecond})
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := s.GetPrompt(old.ID); errors.Is(err, ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("sweeper did not delete the expired record")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := s.GetPrompt(keep.ID); err != nil {
		t.Fatalf("preserved record deleted: %v", err)
	}
}

func TestPagingWhileWriting(t *testing.T) {
	for _, asc := range []bool{false, true} {
		t.Run(fmt.Sprint("ascending=", asc), func(t *testing.T) {
			s := openTest(t, Options{BatchWait: time.Millisecond})
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
						if err := s.Put(context.Background(), &Prompt{OrgID: "orgA", UserID: "alice"}); err != nil {
							t.Errorf("Put: %v", err)
							return
						}
					}
				})
			}
			q := Query{OrgID: "orgA", Limit: 7, Ascending: asc}
			seen := make(map[string]bool)
			var order []string
			for page, i := (Page{}), 0; i == 0 || page.Next != ""; i++ {
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

func TestReservation(t *testing.T) {
	s := openTest(t, Options{QueueSize: 4})
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
	if err := r.Commit(&Prompt{OrgID: "o"}); !errors.Is(err, ErrReservationUsed) {
		t.Fatalf("Commit after Cancel = %v", err)
	}
	r, _ = s.Reserve(context.Background())
	if err := r.Commit(&Prompt{OrgID: "o"}); err != nil {
		t.Fatal(err)
	}
	r.Cancel() // no-op after Commit: must not free a second slot
	if err := r.Commit(&Prompt{OrgID: "o"}); !errors.Is(err, ErrReservationUsed) {
		t.Fatalf("second Commit = %v", err)
	}
	syncStore(t, s)
	if s.QueueDepth() != 0 {
		t.Fatalf("depth after Sync = %d", s.QueueDepth())
	}
}

func TestReplaceKeepsPosition(t *testing.T) {
	s := openTest(t, Options{})
	a := &Prompt{OrgID: "o", UserID: "u1", Input: "a"}
	b := &Prompt{OrgID: "o", UserID: "u1", Input: "b"}
	put(t, s, a)
	put(t, s, b)
	a2 := *a
	a2.Input = "a2"
	a2.UserID = "u2"
	a2.Preserve = true
	put(t, s, &a2)
	syncStore(t, s)
	tests := []struct {
		q    Query
		want []string
	}{
		{Query{OrgID: "o", Limit: 10, Ascending: true}, []string{a.ID, b.ID}},
		{Query{OrgID: "o", UserID: "u1", Limit: 10}, []string{b.ID}},
		{Query{OrgID: "o", UserID: "u2", Limit: 10}, []string{a.ID}},
	}
	for _, tt := range tests {
		p, err := s.ListPrompts(tt.q)
		if err != nil || !slices.Equal(ids(p.Items), tt.want) {
			t.Fatalf("%+v: %v %v, want %v", tt.q, ids(p.Items), err, tt.want)
		}
	}
	got, _ := s.GetPrompt(a.ID)
	if got.Input != "a2" {
		t.Fatalf("replacement not stored: %q", got.Input)
	}
	// The replacement is preserved, so its old expiry entry must be gone.
	if n, _ := s.sweep(time.Now().Add(365 * 24 * time.Hour)); n != 1 {
		t.Fatalf("sweep deleted %d records, want only b", n)
	}
}

func TestChain(t *testing.T) {
	s := openTest(t, Options{})
	root := &Prompt{ID: NewID(), OrgID: "o"}
	mid := &Prompt{ID: NewID(), OrgID: "o", ParentID: root.ID}
	leaf := &Prompt{ID: NewID(), OrgID: "o", ParentID: mid.ID}
	orphan := &Prompt{ID: NewID(), OrgID: "o", ParentID: NewID()}
	foreignRoot := &Prompt{ID: NewID(), OrgID: "other"}
	crossOrg := &Prompt{ID: NewID(), OrgID: "o", ParentID: foreignRoot.ID}
	loopA := &Prompt{ID: NewID(), OrgID: "o"}
	loopB := &Prompt{ID: NewID(), OrgID: "o", ParentID: loopA.ID}
	loopA.ParentID = loopB.ID
	for _, p := range []*Prompt{root, mid, leaf, orphan, foreignRoot, crossOrg, loopA, loopB} {
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
		{"unknown", NewID(), nil, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Chain(tt.id)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("Chain = %v, want %v", err, tt.wantErr)
			}
			if !slices.Equal(ids(got), tt.want) {
				t.Fatalf("Chain = %v, want %v", ids(got), tt.want)
			}
		})
	}
}

func TestIdentity(t *testing.T) {
	s := openTest(t, Options{})
	if err := s.PutOrg(&Org{ID: "o1", Name: "Acme"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutOrg(&Org{ID: "o2", Name: "Other"}); err != nil {
		t.Fatal(err)
	}
	o, err := s.GetOrg("o1")
	if err != nil || o.Name != "Acme" || o.CreatedAt.IsZero() {
		t.Fatalf("GetOrg = %+v, %v", o, err)
	}
	hash := [32]byte{1, 2, 3}
	tests := []struct {
		name    string
		op      func() error
		wantErr error
	}{
		{"org without id", func() error { return s.PutOrg(&Org{}) }, ErrInvalidRecord},
		{"user", func() error { return s.PutUser(&User{ID: "u1", OrgID: "o1", Role: RoleMember}) }, nil},
		{"user of missing org", func() error { return s.PutUser(&User{ID: "u2", OrgID: "nope", Role: RoleMember}) }, ErrNotFound},
		{"user with bad role", func() error { return s.PutUser(&User{ID: "u3", OrgID: "o1", Role: "root"}) }, ErrInvalidRecord},
		{"token", func() error { return s.PutToken(&Token{Hash: hash, UserID: "u1", OrgID: "o1"}) }, nil},
		{"token for other org", func() error { return s.PutToken(&Token{Hash: [32]byte{9}, UserID: "u1", OrgID: "o2"}) }, ErrInvalidRecord},
		{"token of missing user", func() error { return s.PutToken(&Token{Hash: [32]byte{8}, UserID: "zz", OrgID: "o1"}) }, ErrNotFound},
		{"token without hash", func() error { return s.PutToken(&Token{UserID: "u1", OrgID: "o1"}) }, ErrInvalidRecord},
		{"lookup", func() error {
			tok, err := s.LookupToken(hash)
			if err == nil && (tok.UserID != "u1" || tok.OrgID != "o1" || tok.Hash != hash) {
				return fmt.Errorf("LookupToken = %+v", tok)
			}
			return err
		}, nil},
		{"lookup unknown", func() error { _, err := s.LookupToken([32]byte{7}); return err }, ErrNotFound},
		{"get unknown user", func() error { _, err := s.GetUser("zz"); return err }, ErrNotFound},
		{"get unknown org", func() error { _, err := s.GetOrg("zz"); return err }, ErrNotFound},
		{"delete", func() error { return s.DeleteToken(hash) }, nil},
		{"lookup deleted", func() error { _, err := s.LookupToken(hash); return err }, ErrNotFound},
		{"delete again", func() error { return s.DeleteToken(hash) }, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.op()
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("got %v, want %v", err, tt.wantErr)
			}
		})
	}
	u, err := s.GetUser("u1")
	if err != nil || u.OrgID != "o1" || u.Role != RoleMember {
		t.Fatalf("GetUser = %+v, %v", u, err)
	}
}

func TestContainsFold(t *testing.T) {
	tests := []struct {
		s, sub string
		want   bool
	}{
		{"Hello World", "world", true},
		{"Hello World", "WORLD", true},
		{"Hello World", "worlds", false},
		{"", "", true},
		{"abc", "", true},
		{"", "a", false},
		{"ÄPFEL", "äpfel", true},
		{"Straße", "STRASSE", false}, // simple folding only, as EqualFold
		{"Kelvin \u212a", "k", true}, // Kelvin sign folds to k
		{"σοφία", "ΣΟΦΊΑ", true},
		{"abcabd", "abd", true},
		{"ab\xffcd", "cd", true},
		{"xxX", "xy", false},
		{"aXbxY", "xy", true},
		{"ſecret", "SECRET", true}, // long s folds to s
		{"KEY", "\u212aey", true},
		{"a-b", "-B", true},
		{"ab", "abc", false},
	}
	for _, tt := range tests {
		if got := containsFold([]byte(tt.s), tt.sub); got != tt.want {
			t.Errorf("containsFold(%q, %q) = %v, want %v", tt.s, tt.sub, got, tt.want)
		}
	}
	allocs := testing.AllocsPerRun(100, func() { containsFold([]byte("Some longer INPUT text here"), "input") })
	if allocs != 0 {
		t.Errorf("containsFold allocates %v times", allocs)
	}
}

// TestPageEmptiedByRetention covers a cursor whose following records expired
// between two requests: the page is empty, has no next, and its prev leads
// back to the page the cursor came from.
func TestPageEmptiedByRetention(t *testing.T) {
	now := time.Now()
	for _, asc := range []bool{false, true} {
		t.Run(fmt.Sprint("ascending=", asc), func(t *testing.T) {
			s := openTest(t, Options{Retention: 24 * time.Hour})
			// Newest-first pages reach the old records last when they
			// were committed first, and ascending ones when committed last.
			var young []string
			addYoung := func() {
				for range 5 {
					p := &Prompt{OrgID: "o", ReceivedAt: Timestamp(now)}
					put(t, s, p)
					young = append(young, p.ID)
				}
			}
			addOld := func() {
				for range 7 {
					put(t, s, &Prompt{OrgID: "o", ReceivedAt: Timestamp(now.Add(-48 * time.Hour))})
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
			q := Query{OrgID: "o", Limit: 5, Ascending: asc}
			first, err := s.ListPrompts(q)
			if err != nil || !slices.Equal(ids(first.Items), young) || first.Next == "" {
				t.Fatalf("first page %v next %q (%v)", ids(first.Items), first.Next, err)
			}
			if n, err := s.sweep(now); err != nil || n != 7 {
				t.Fatalf("sweep = %d, %v", n, err)
			}
			q.Cursor = first.Next
			empty, err := s.ListPrompts(q)
			if err != nil || len(empty.Items) != 0 || empty.Next != "" || empty.Prev == "" {
				t.Fatalf("emptied page: %v next %q prev %q (%v)", ids(empty.Items), empty.Next, empty.Prev, err)
			}
			q.Cursor = empty.Prev
			back, err := s.ListPrompts(q)
			if err != nil || !slices.Equal(ids(back.Items), young) || back.Prev != "" || back.Next != "" {
				t.Fatalf("prev of emptied page: %v next %q prev %q (%v)", ids(back.Items), back.Next, back.Prev, err)
			}
		})
	}
}

// TestWriterBatching: records queued within BatchWait share one commit, a
// full batch commits without waiting out BatchWait, and a partial batch is
// held until BatchWait (here: until Close, which commits it).
func TestWriterBatching(t *testing.T) {
	for _, c := range []struct {
		name       string
		records    int
		wantSynced bool
		wantSizes  []int
	}{
		{"full batch commits at once", 4, true, []int{4}},
		{"two full batches", 8, true, []int{4, 4}},
		{"partial batch waits for BatchWait", 3, false, []int{3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var sizes []int
			s, err := Open(Options{
				Path: filepath.Join(t.TempDir(), "pw.db"), BatchSize: 4, BatchWait: time.Hour, Durability: DurabilityBatched,
				beforeCommit: func(n int) error { mu.Lock(); sizes = append(sizes, n); mu.Unlock(); return nil },
			})
			if err != nil {
				t.Fatal(err)
			}
			for range c.records {
				put(t, s, &Prompt{OrgID: "org"})
			}
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			err = s.Sync(ctx)
			cancel()
			if synced := err == nil; synced != c.wantSynced {
				t.Fatalf("Sync = %v, want synced %v", err, c.wantSynced)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(sizes, c.wantSizes) {
				t.Fatalf("commit sizes %v, want %v", sizes, c.wantSizes)
			}
		})
	}
}
