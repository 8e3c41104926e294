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
	p := &Prompt{PromptFields: PromptFields{ID: "x", Result: PromptResult{ScannerResults: []ScannerResult{{}}}}}
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
		p := &Prompt{PromptFields: PromptFields{OrgID: "org", Input: fmt.Sprint(i)}}
		put(t, s, p)
		idsPut = append(idsPut, p.ID)
	}
	// A reservation still open when Close starts is waited for.
	res, err := s.Reserve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	late := &Prompt{PromptFields: PromptFields{OrgID: "org", Input: "late"}}
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
	if err := s.Put(context.Background(), &Prompt{PromptFields: PromptFields{OrgID: "org"}}); !errors.Is(err, ErrClosed) {
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
	if err := res.Commit(&Prompt{PromptFields: PromptFields{OrgID: "org"}}); !errors.Is(err, ErrClosed) {
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
		p := &Prompt{PromptFields: PromptFields{OrgID: "org"}}
		put(t, s, p)
		acked = append(acked, p.ID)
	}
	if d := s.QueueDepth(); d != 8 {
		t.Fatalf("QueueDepth = %d, want 8", d)
	}
	start := time.Now()
	if err := s.Put(context.Background(), &Prompt{PromptFields: PromptFields{OrgID: "org"}}); !errors.Is(err, ErrQueueFull) {
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
		p := &Prompt{PromptFields: PromptFields{OrgID: "org", Input: fmt.Sprint("prompt ", i)}}
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
		put(t, s, &Prompt{PromptFields: PromptFields{OrgID: "org"}})
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

func TestRetentionSweeperRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pw.db")
	s, err := Open(Options{Path: path, Retention: -1})
	if err != nil {
		t.Fatal(err)
	}
	old := &Prompt{PromptFields: PromptFields{OrgID: "org", ReceivedAt: Timestamp(time.Now().Add(-time.Hour))}}
	keep := &Prompt{
		PromptFields: PromptFields{OrgID: "org", ReceivedAt: Timestamp(time.Now().Add(-time.Hour)), Preserve: true},
	}
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
				put(t, s, &Prompt{PromptFields: PromptFields{OrgID: "org"}})
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
