package scanner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// testScanner detects a substring. Its knobs make it fail in every way a
// real detector can.
type testScanner struct {
	typ       string
	needle    string
	kind      string
	noSpans   bool          // detect without locating
	err       error         // fail with this error
	panicV    any           // panic with this value
	sleep     time.Duration // take this long
	ctxAware  bool          // HonoursContext
	ignoreCtx bool          // sleep through cancellation anyway
	convAware bool          // UsesConversation

	calls atomic.Int64
	mu    sync.Mutex
	roles []Role
}

func (s *testScanner) Type() string {
	if s.typ == "" {
		return "regex"
	}
	return s.typ
}

func (s *testScanner) HonoursContext() bool   { return s.ctxAware }
func (s *testScanner) UsesConversation() bool { return s.convAware }

func (s *testScanner) Scan(ctx context.Context, t *Target) (Finding, error) {
	s.calls.Add(1)
	s.mu.Lock()
	s.roles = append(s.roles, t.Role)
	s.mu.Unlock()
	if s.panicV != nil {
		panic(s.panicV)
	}
	if s.sleep > 0 {
		if s.ignoreCtx {
			time.Sleep(s.sleep)
		} else {
			select {
			case <-time.After(s.sleep):
			case <-ctx.Done():
				return Finding{}, ctx.Err()
			}
		}
	}
	if s.err != nil {
		return Finding{}, s.err
	}
	if s.needle == "" {
		return Finding{}, nil
	}
	text := t.Text.Canonical().S
	var f Finding
	for off := 0; ; {
		i := strings.Index(text[off:], s.needle)
		if i < 0 {
			break
		}
		f.Detected = true
		if !s.noSpans {
			start, end := t.Text.Canonical().Span(off+i, off+i+len(s.needle))
			f.Matches = append(f.Matches, Match{Start: start, End: end, Kind: s.kind, Score: 1})
		}
		off += i + len(s.needle)
	}
	if f.Detected {
		f.Score, f.Reason = 1, "found "+s.kind
	}
	return f, nil
}

// stg is a blocking stage. Its budget is generous so that tests not about
// budgets cannot flake on a loaded machine; budget tests set their own.
func stg(id string, mode Mode, sc Scanner) Stage {
	return Stage{Setting: Setting{ID: id, Enabled: true, Mode: mode, Blocking: true, FlagMessage: "blocked by " + id, Timeout: time.Minute}, Scanner: sc}
}

func mustPipeline(t testing.TB, stages []Stage, opts Options) *Pipeline {
	t.Helper()
	p, err := NewPipeline(stages, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func userConv(texts ...string) *Conversation {
	c := &Conversation{}
	for i, s := range texts {
		c.Messages = append(c.Messages, Message{Role: RoleUser, Text: s, Ref: fmt.Sprintf("messages.%d.content", i)})
	}
	return c
}

// TestScreenModes covers every mode x blocking x fail mode against every
// kind of scanner behaviour.
func TestScreenModes(t *testing.T) {
	behaviours := map[string]func() *testScanner{
		"detect":  func() *testScanner { return &testScanner{needle: "bad", kind: "BAD"} },
		"nospans": func() *testScanner { return &testScanner{needle: "bad", kind: "BAD", noSpans: true} },
		"clean":   func() *testScanner { return &testScanner{needle: "absent"} },
		"error":   func() *testScanner { return &testScanner{err: errors.New("upstream down")} },
	}
	// want[blocking][mode][behaviour]; errors are decided by fail mode below.
	want := map[bool]map[Mode]map[string]Outcome{
		true: {
			ModeBlock:  {"detect": Blocked, "nospans": Blocked, "clean": Passed},
			ModeModify: {"detect": Modified, "nospans": Flagged, "clean": Passed},
			ModeFlag:   {"detect": Flagged, "nospans": Flagged, "clean": Passed},
		},
		false: {
			ModeFlag: {"detect": Flagged, "nospans": Flagged, "clean": Passed},
		},
	}
	for _, blocking := range []bool{true, false} {
		for _, mode := range []Mode{ModeBlock, ModeModify, ModeFlag} {
			for _, fm := range []FailMode{FailClosed, FailOpen} {
				for beh, mk := range behaviours {
					name := fmt.Sprintf("blocking=%v/%s/%s/%s", blocking, mode, fm, beh)
					t.Run(name, func(t *testing.T) {
						s := stg("s", mode, mk())
						s.Setting.Blocking, s.Setting.FailMode = blocking, fm
						p, err := NewPipeline([]Stage{s}, Options{})
						if want[blocking][mode] == nil {
							if !errors.Is(err, ErrInvalidSetting) {
								t.Fatalf("NewPipeline err = %v, want ErrInvalidSetting", err)
							}
							return
						}
						if err != nil {
							t.Fatal(err)
						}
						exp := want[blocking][mode][beh]
						if beh == "error" {
							exp = Error
							if fm == FailClosed && blocking {
								exp = Blocked
							}
						}
						conv := userConv("hello", "a bad thing, bad")
						res := p.Screen(context.Background(), conv, Input)
						if !blocking {
							if len(res.Scanners) != 0 {
								t.Fatalf("Screen ran a non-blocking scanner: %+v", res.Scanners)
							}
							res = p.ScreenDeferred(context.Background(), conv, Input)
						} else if d := p.ScreenDeferred(context.Background(), conv, Input); len(d.Scanners) != 0 {
							t.Fatalf("ScreenDeferred ran a blocking scanner: %+v", d.Scanners)
						}
						if len(res.Scanners) != 1 {
							t.Fatalf("got %d scanner results", len(res.Scanners))
						}
						sr := res.Scanners[0]
						if sr.Outcome != exp || res.Outcome != exp {
							t.Fatalf("outcome %s / record %s, want %s (err %q)", sr.Outcome, res.Outcome, exp, sr.Err)
						}
						if (exp == Blocked) != (res.FlagMessage == "blocked by s") {
							t.Fatalf("flag message %q for outcome %s", res.FlagMessage, exp)
						}
						if (beh == "error") != (sr.Err != "") {
							t.Fatalf("Err = %q", sr.Err)
						}
						if exp == Modified {
							if len(res.Edits) != 1 || res.Edits[0].Text != "a [BAD_1] thing, [BAD_1]" || res.Edits[0].Message != 1 || res.Edits[0].Ref != "messages.1.content" {
								t.Fatalf("edits = %+v", res.Edits)
							}
						} else if len(res.Edits) != 0 {
							t.Fatalf("edits without Modified: %+v", res.Edits)
						}
						if sr.ScannerID != "s" || sr.Type != "regex" || sr.Direction != Input || sr.Started.IsZero() || sr.Completed.Before(sr.Started) {
							t.Fatalf("header = %+v", sr)
						}
					})
				}
			}
		}
	}
}

func TestScreenFindings(t *testing.T) {
	p := mustPipeline(t, []Stage{
		stg("loc", ModeFlag, &testScanner{needle: "bad", kind: "BAD"}),
		stg("cls", ModeFlag, &testScanner{needle: "bad", noSpans: true}),
	}, Options{})
	res := p.Screen(context.Background(), userConv("ok", "x bad"), Input)
	want := []MessageFinding{{Message: 1, Role: RoleUser, Match: Match{Start: 2, End: 5, Kind: "BAD", Score: 1}}}
	if got := res.Scanners[0].Findings; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("located findings = %+v", got)
	}
	// A detection without spans still names its message, with an empty match.
	if got := res.Scanners[1].Findings; len(got) != 1 || got[0].Message != 1 || got[0].End != 0 || got[0].Score != 1 {
		t.Fatalf("span-less findings = %+v", got)
	}
	if got := res.MatchesIn(1); len(got) != 1 || got[0].Kind != "BAD" {
		t.Fatalf("MatchesIn = %+v", got)
	}
	if got := res.MatchesIn(1, "secret"); len(got) != 0 {
		t.Fatalf("MatchesIn(secret) = %+v", got)
	}
	if res.Scanners[0].Reason != "found BAD" {
		t.Fatalf("reason = %q", res.Scanners[0].Reason)
	}
}

func TestScreenPanic(t *testing.T) {
	tests := []struct {
		name   string
		v      any
		fm     FailMode
		want   Outcome
		errHas string
		errNot string
	}{
		{"runtime error quoted, closed", runtimeErr(), FailClosed, Blocked, "index out of range", ""},
		{"runtime error, open", runtimeErr(), FailOpen, Error, "panic", ""},
		{"value not quoted", "leaked prompt text", FailOpen, Error, "panic", "leaked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := stg("p", ModeBlock, &testScanner{panicV: tt.v})
			s.Setting.FailMode = tt.fm
			p := mustPipeline(t, []Stage{s}, Options{})
			res := p.Screen(context.Background(), userConv("hi"), Input)
			sr := res.Scanners[0]
			if sr.Outcome != tt.want || res.Outcome != tt.want {
				t.Fatalf("outcome %s, want %s", sr.Outcome, tt.want)
			}
			if !strings.Contains(sr.Err, tt.errHas) || (tt.errNot != "" && strings.Contains(sr.Err, tt.errNot)) {
				t.Fatalf("Err = %q", sr.Err)
			}
		})
	}
}

// runtimeErr captures a real runtime.Error panic value.
func runtimeErr() (v any) {
	defer func() { v = recover() }()
	var s []int
	_ = s[len(s)+1]
	return nil
}

// stepClock advances by step on every reading, to drive inline budgets
// deterministically.
type stepClock struct {
	n    atomic.Int64
	step time.Duration
}

func (c *stepClock) now() time.Time {
	return time.Unix(0, 0).Add(time.Duration(c.n.Add(1)) * c.step)
}

func TestScreenBudget(t *testing.T) {
	tests := []struct {
		name       string
		sc         *testScanner
		mode       Mode
		fm         FailMode
		clock      *stepClock
		want       Outcome
		errHas     string
		maxCalls   int64
		maxWall    time.Duration
		oneMessage bool
		findings   int
		budget     time.Duration // default 30ms
	}{
		{name: "ctx-aware over budget, closed", sc: &testScanner{ctxAware: true, sleep: 5 * time.Second},
			mode: ModeBlock, fm: FailClosed, want: Blocked, errHas: "time budget", maxWall: time.Second},
		{name: "ctx-aware over budget, open", sc: &testScanner{ctxAware: true, sleep: 5 * time.Second},
			mode: ModeBlock, fm: FailOpen, want: Error, errHas: "time budget", maxWall: time.Second},
		{name: "ctx-aware within budget", sc: &testScanner{ctxAware: true, sleep: time.Millisecond, needle: "bad"},
			mode: ModeBlock, fm: FailClosed, want: Blocked, errHas: "", budget: time.Minute},
		{name: "ignores its deadline: abandoned", sc: &testScanner{ctxAware: true, ignoreCtx: true, sleep: 2 * time.Second},
			mode: ModeFlag, fm: FailOpen, want: Error, errHas: "abandoned", maxWall: time.Second},
		{name: "inline overrun stops after first message, open", sc: &testScanner{needle: "zzz"}, clock: &stepClock{step: time.Second},
			mode: ModeFlag, fm: FailOpen, want: Error, errHas: "time budget", maxCalls: 1},
		{name: "inline overrun, closed", sc: &testScanner{needle: "zzz"}, clock: &stepClock{step: time.Second},
			mode: ModeFlag, fm: FailClosed, want: Blocked, errHas: "time budget", maxCalls: 1},
		{name: "inline late but complete verdict stands", sc: &testScanner{needle: "zzz"}, clock: &stepClock{step: time.Second},
			mode: ModeFlag, fm: FailClosed, want: Passed, errHas: "", maxCalls: 1, oneMessage: true},
		{name: "inline overrun keeps its detection", sc: &testScanner{needle: "bad"}, clock: &stepClock{step: time.Second},
			mode: ModeFlag, fm: FailOpen, want: Error, errHas: "time budget", maxCalls: 1, findings: 1},
		{name: "block detection ends the stage before the budget", sc: &testScanner{needle: "bad"}, clock: &stepClock{step: time.Second},
			mode: ModeBlock, fm: FailOpen, want: Blocked, errHas: "", maxCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := stg("slow", tt.mode, tt.sc)
			s.Setting.FailMode, s.Setting.Timeout = tt.fm, cmp.Or(tt.budget, 30*time.Millisecond)
			opts := Options{}
			if tt.clock != nil {
				opts.Now = tt.clock.now
			}
			p := mustPipeline(t, []Stage{s}, opts)
			start := time.Now()
			conv := userConv("bad 1", "bad 2", "bad 3")
			if tt.oneMessage {
				conv.Messages = conv.Messages[:1]
			}
			res := p.Screen(context.Background(), conv, Input)
			if wall := time.Since(start); tt.maxWall > 0 && wall > tt.maxWall {
				t.Fatalf("took %s", wall)
			}
			sr := res.Scanners[0]
			if sr.Outcome != tt.want {
				t.Fatalf("outcome %s, want %s (Err %q)", sr.Outcome, tt.want, sr.Err)
			}
			if !strings.Contains(sr.Err, tt.errHas) || (tt.errHas == "") != (sr.Err == "") {
				t.Fatalf("Err = %q, want it to mention %q", sr.Err, tt.errHas)
			}
			if tt.findings > 0 && len(sr.Findings) != tt.findings {
				t.Fatalf("findings %+v, want %d", sr.Findings, tt.findings)
			}
			if tt.maxCalls > 0 && tt.sc.calls.Load() > tt.maxCalls {
				t.Fatalf("scanned %d messages after the budget ran out", tt.sc.calls.Load())
			}
		})
	}
}

func TestScreenSkipsAndShortCircuits(t *testing.T) {
	disabled := &testScanner{needle: "x"}
	first := &testScanner{needle: "bad"}
	later := &testScanner{needle: "bad"}
	slowNet := &testScanner{ctxAware: true, sleep: 5 * time.Second}
	ds := stg("off", ModeBlock, disabled)
	ds.Setting.Enabled = false
	net := stg("net", ModeFlag, slowNet)
	net.Setting.Timeout = 5 * time.Second
	p := mustPipeline(t, []Stage{ds, net, stg("first", ModeBlock, first), stg("later", ModeFlag, later)}, Options{})
	start := time.Now()
	res := p.Screen(context.Background(), userConv("bad"), Input)
	if wall := time.Since(start); wall > time.Second {
		t.Fatalf("short-circuit did not cancel the network scanner: %s", wall)
	}
	want := []struct {
		id  string
		out Outcome
	}{{"off", Skipped}, {"net", Skipped}, {"first", Blocked}, {"later", Skipped}}
	for i, w := range want {
		if sr := res.Scanners[i]; sr.ScannerID != w.id || sr.Outcome != w.out || sr.Err != "" {
			t.Errorf("scanner %d = %s %s (err %q), want %s %s", i, sr.ScannerID, sr.Outcome, sr.Err, w.id, w.out)
		}
	}
	if disabled.calls.Load() != 0 || later.calls.Load() != 0 {
		t.Fatalf("skipped scanners ran: disabled %d, later %d", disabled.calls.Load(), later.calls.Load())
	}
	if res.Outcome != Blocked || res.FlagMessage != "blocked by first" {
		t.Fatalf("record %s %q", res.Outcome, res.FlagMessage)
	}
}

func TestScreenDirections(t *testing.T) {
	in := &testScanner{needle: "q"}
	out := &testScanner{needle: "q"}
	both := &testScanner{needle: "q"}
	so := stg("out", ModeFlag, out)
	so.Setting.Directions = []Direction{Output}
	sb := stg("both", ModeFlag, both)
	sb.Setting.Directions = []Direction{Input, Output}
	p := mustPipeline(t, []Stage{stg("in", ModeFlag, in), so, sb}, Options{})
	conv := &Conversation{Messages: []Message{
		{Role: RoleSystem, Text: "sys"}, {Role: RoleUser, Text: "u"}, {Role: RoleAssistant, Text: "a"}, {Role: RoleTool, Text: "t"},
	}}
	tests := []struct {
		dir       Direction
		ids       []string
		bothRoles []Role
	}{
		{Input, []string{"in", "both"}, []Role{RoleSystem, RoleUser, RoleAssistant, RoleTool}},
		{Output, []string{"out", "both"}, []Role{RoleAssistant}},
	}
	for _, tt := range tests {
		t.Run(string(tt.dir), func(t *testing.T) {
			both.roles = nil
			res := p.Screen(context.Background(), conv, tt.dir)
			var ids []string
			for _, sr := range res.Scanners {
				ids = append(ids, sr.ScannerID)
				if sr.Direction != tt.dir {
					t.Fatalf("direction %s recorded for %s", sr.Direction, tt.dir)
				}
			}
			if fmt.Sprint(ids) != fmt.Sprint(tt.ids) {
				t.Fatalf("scanners %v, want %v", ids, tt.ids)
			}
			if fmt.Sprint(both.roles) != fmt.Sprint(tt.bothRoles) {
				t.Fatalf("screened roles %v, want %v", both.roles, tt.bothRoles)
			}
		})
	}
}

func TestNewPipelineValidation(t *testing.T) {
	sc := &testScanner{}
	nb := stg("nb", ModeModify, sc)
	nb.Setting.Blocking = false
	bad := stg("bad", "redact", sc)
	tests := []struct {
		name   string
		stages []Stage
		want   error
	}{
		{"duplicate id", []Stage{stg("a", ModeFlag, sc), stg("a", ModeBlock, sc)}, ErrInvalidSetting},
		{"unknown mode", []Stage{bad}, ErrInvalidSetting},
		{"non-blocking modify", []Stage{nb}, ErrInvalidSetting},
		{"nil scanner", []Stage{stg("n", ModeFlag, nil)}, ErrUnknownScanner},
		{"duplicate direction", []Stage{{Setting: Setting{ID: "d", Mode: ModeFlag, Blocking: true, Directions: []Direction{Input, Input}}, Scanner: sc}}, ErrInvalidSetting},
		{"empty directions", []Stage{{Setting: Setting{ID: "d", Mode: ModeFlag, Blocking: true, Directions: []Direction{}}, Scanner: sc}}, ErrInvalidSetting},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewPipeline(tt.stages, Options{}); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestSeverityOrder(t *testing.T) {
	order := []Outcome{Skipped, Passed, Flagged, Error, Modified, Blocked}
	for i := 1; i < len(order); i++ {
		if order[i-1].Severity() >= order[i].Severity() {
			t.Fatalf("%s should rank below %s", order[i-1], order[i])
		}
	}
	// The record takes the worst: flag + fail-open error + modify = modified.
	fo := stg("err", ModeBlock, &testScanner{err: errors.New("x")})
	fo.Setting.FailMode = FailOpen
	p := mustPipeline(t, []Stage{
		stg("flag", ModeFlag, &testScanner{needle: "a"}), fo, stg("mod", ModeModify, &testScanner{needle: "a", kind: "A"}),
	}, Options{})
	res := p.Screen(context.Background(), userConv("a"), Input)
	if res.Outcome != Modified || len(res.Edits) != 1 || res.Edits[0].Text != "[A_1]" {
		t.Fatalf("record %s, edits %+v", res.Outcome, res.Edits)
	}
}

func TestRedactionAcrossExchange(t *testing.T) {
	p := mustPipeline(t, []Stage{
		{Setting: Setting{ID: "email", Enabled: true, Mode: ModeModify, Blocking: true, Directions: []Direction{Input, Output}},
			Scanner: &testScanner{needle: "ann@x.io", kind: "EMAIL_ADDRESS"}},
		{Setting: Setting{ID: "name", Enabled: true, Mode: ModeModify, Blocking: true, Directions: []Direction{Input, Output}},
			Scanner: &testScanner{needle: "ann", kind: "PERSON"}},
	}, Options{})
	req := userConv("I am ann@x.io", "hello", "mail ann@x.io")
	res := p.Screen(context.Background(), req, Input)
	// "ann" inside the address overlaps the longer EMAIL match and merges
	// into it; the same address gets the same placeholder in both messages.
	want := []Edit{
		{Message: 0, Ref: "messages.0.content", Text: "I am [EMAIL_ADDRESS_1]"},
		{Message: 2, Ref: "messages.2.content", Text: "mail [EMAIL_ADDRESS_1]"},
	}
	if res.Outcome != Modified || fmt.Sprint(res.Edits) != fmt.Sprint(want) {
		t.Fatalf("outcome %s edits %+v", res.Outcome, res.Edits)
	}
	answer := "Noted [EMAIL_ADDRESS_1], ann."
	if got := res.Vault.Restore(answer); got != "Noted ann@x.io, ann." {
		t.Fatalf("restore = %q", got)
	}
	// The response, screened with the request's vault, numbers alike.
	resp := &Conversation{Messages: []Message{{Role: RoleAssistant, Text: "ann@x.io and ann"}}}
	out := p.ScreenWith(context.Background(), resp, Output, res.Vault)
	if len(out.Edits) != 1 || out.Edits[0].Text != "[EMAIL_ADDRESS_1] and [PERSON_1]" || out.Vault != res.Vault {
		t.Fatalf("response edits %+v", out.Edits)
	}
}

// countObserver counts the pipeline's reports.
type countObserver struct {
	mu                 sync.Mutex
	hits, misses, done map[string]int
}

func newCountObserver() *countObserver {
	return &countObserver{hits: map[string]int{}, misses: map[string]int{}, done: map[string]int{}}
}
func (o *countObserver) CacheHit(s string)  { o.mu.Lock(); o.hits[s]++; o.mu.Unlock() }
func (o *countObserver) CacheMiss(s string) { o.mu.Lock(); o.misses[s]++; o.mu.Unlock() }
func (o *countObserver) ScannerDone(id string, _ time.Duration, _ Outcome) {
	o.mu.Lock()
	o.done[id]++
	o.mu.Unlock()
}

func TestVerdictCache(t *testing.T) {
	cache, err := NewVerdictCache(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	tests := []struct {
		name        string
		sc          *testScanner
		failOpen    bool
		answer      bool // screen an answer (output direction) instead
		wantRescans bool // the second identical screening calls Scan again
	}{
		{name: "clean verdict cached", sc: &testScanner{needle: "zzz"}},
		{name: "detection cached", sc: &testScanner{needle: "bad", kind: "BAD"}},
		{name: "context-aware cached per stage", sc: &testScanner{needle: "bad", ctxAware: true}},
		{name: "errors not cached", sc: &testScanner{err: errors.New("x")}, failOpen: true, wantRescans: true},
		{name: "conversation-aware not cached", sc: &testScanner{needle: "bad", convAware: true}, wantRescans: true},
		{name: "answers not cached", sc: &testScanner{needle: "bad"}, answer: true, wantRescans: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := newCountObserver()
			s := stg("c", ModeFlag, tt.sc)
			if tt.failOpen {
				s.Setting.FailMode = FailOpen
			}
			if tt.answer {
				s.Setting.Directions = []Direction{Output}
			}
			p := mustPipeline(t, []Stage{s}, Options{Cache: cache, ConfigVersion: tt.name, Observer: obs})
			conv, dir := userConv("a bad turn", "second turn"), Input
			if tt.answer {
				conv.Messages = append(conv.Messages, Message{Role: RoleAssistant, Text: "a bad answer", Ref: "choices.0.message.content"})
				dir = Output
			}
			first := p.Screen(context.Background(), conv, dir)
			calls := tt.sc.calls.Load()
			second := p.Screen(context.Background(), conv, dir)
			rescans := tt.sc.calls.Load() - calls
			if tt.wantRescans != (rescans > 0) {
				t.Fatalf("second screening called Scan %d times", rescans)
			}
			if first.Outcome != second.Outcome || fmt.Sprint(first.Scanners[0].Findings) != fmt.Sprint(second.Scanners[0].Findings) {
				t.Fatalf("cached verdict differs: %+v vs %+v", first.Scanners[0], second.Scanners[0])
			}
			if !tt.wantRescans && (obs.hits["c"] != 2 || obs.misses["c"] != 2 || obs.done["c"] != 2) {
				t.Fatalf("observer: hits %v misses %v done %v", obs.hits, obs.misses, obs.done)
			}
		})
	}
}

// TestVerdictCachePartialGroup checks that a message some scanner never
// reached (a block ended the screening) is not cached as if it were clean.
func TestVerdictCachePartialGroup(t *testing.T) {
	cache, err := NewVerdictCache(0)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	a := &testScanner{needle: "x"}
	b := &testScanner{needle: "bad"}
	p := mustPipeline(t, []Stage{stg("a", ModeFlag, a), stg("b", ModeBlock, b)}, Options{Cache: cache})
	if res := p.Screen(context.Background(), userConv("bad", "fine"), Input); res.Outcome != Blocked {
		t.Fatalf("outcome %s", res.Outcome)
	}
	if a.calls.Load() != 2 || b.calls.Load() != 1 {
		t.Fatalf("calls a=%d b=%d, want 2 and 1", a.calls.Load(), b.calls.Load())
	}
	// "fine" was screened by a only: it must be screened again.
	p.Screen(context.Background(), userConv("fine"), Input)
	if b.calls.Load() != 2 {
		t.Fatal("b's missing verdict on a message was taken from the cache")
	}
	// "bad" got both verdicts and is cached.
	p.Screen(context.Background(), userConv("bad"), Input)
	if a.calls.Load() != 3 || b.calls.Load() != 2 {
		t.Fatalf("calls a=%d b=%d after a cached screening", a.calls.Load(), b.calls.Load())
	}
}

func TestScreenCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		fm   FailMode
		want Outcome
	}{{FailClosed, Blocked}, {FailOpen, Error}} {
		sc := &testScanner{needle: "x"}
		s := stg("s", ModeFlag, sc)
		s.Setting.FailMode = tt.fm
		res := mustPipeline(t, []Stage{s}, Options{}).Screen(ctx, userConv("x"), Input)
		if res.Outcome != tt.want || sc.calls.Load() != 0 || !strings.Contains(res.Scanners[0].Err, "canceled") {
			t.Fatalf("%s: outcome %s, calls %d, err %q", tt.fm, res.Outcome, sc.calls.Load(), res.Scanners[0].Err)
		}
	}
}

func TestVerdictCacheKey(t *testing.T) {
	cache, err := NewVerdictCache(0)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	sc := &testScanner{needle: "bad"}
	build := func(cfg, version string, dirs ...Direction) *Pipeline {
		s := stg("k", ModeFlag, sc)
		s.Setting.Version, s.Setting.Directions = version, dirs
		return mustPipeline(t, []Stage{s}, Options{Cache: cache, ConfigVersion: cfg})
	}
	base := build("cfg1", "1", Input, Output)
	conv := &Conversation{Messages: []Message{{Role: RoleAssistant, Text: "bad"}}}
	base.Screen(context.Background(), conv, Input)
	tests := []struct {
		name     string
		p        *Pipeline
		conv     *Conversation
		dir      Direction
		wantScan bool
	}{
		{"same everything hits", base, conv, Input, false},
		{"other config version", build("cfg2", "1", Input), conv, Input, true},
		{"other scanner version", build("cfg1", "2", Input), conv, Input, true},
		{"other direction", base, conv, Output, true},
		{"other role", base, &Conversation{Messages: []Message{{Role: RoleUser, Text: "bad"}}}, Input, true},
		{"other text", base, &Conversation{Messages: []Message{{Role: RoleAssistant, Text: "bad!"}}}, Input, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := sc.calls.Load()
			tt.p.Screen(context.Background(), tt.conv, tt.dir)
			if scanned := sc.calls.Load() > before; scanned != tt.wantScan {
				t.Fatalf("scanned = %v, want %v", scanned, tt.wantScan)
			}
		})
	}
}

func TestConcurrentScreens(t *testing.T) {
	cache, err := NewVerdictCache(0)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	net := stg("net", ModeFlag, &testScanner{ctxAware: true, needle: "bad", sleep: time.Millisecond})
	p := mustPipeline(t, []Stage{stg("mod", ModeModify, &testScanner{needle: "bad", kind: "BAD"}), net}, Options{Cache: cache, Observer: newCountObserver()})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			for i := 0; i < 50; i++ {
				res := p.Screen(context.Background(), userConv("x bad", fmt.Sprint(i%5)), Input)
				if res.Outcome != Modified || res.Scanners[1].Outcome != Flagged {
					t.Errorf("outcome %s / %s: %+v", res.Outcome, res.Scanners[1].Outcome, res.Scanners)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkPipeline measures what the pipeline adds around cheap scanners on
// a 2 KB prompt, and what the verdict cache saves on a long conversation.
func BenchmarkPipeline(b *testing.B) {
	prompt := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 46)[:2048]
	stages := func(n int) []Stage {
		out := make([]Stage, n)
		for i := range out {
			out[i] = stg(fmt.Sprintf("s%d", i), ModeBlock, &testScanner{needle: fmt.Sprintf("needle-%d", i)})
		}
		return out
	}
	for _, n := range []int{1, 5} {
		// The same scanners called directly on one Text: the difference
		// to stages=n is what the pipeline adds.
		b.Run(fmt.Sprintf("direct=%d/2KB", n), func(b *testing.B) {
			st := stages(n)
			b.ReportAllocs()
			b.SetBytes(int64(len(prompt)))
			for b.Loop() {
				tg := &Target{Text: NewText(prompt), Direction: Input, Role: RoleUser}
				for _, s := range st {
					if f, _ := s.Scanner.Scan(context.Background(), tg); f.Detected {
						b.Fatal("detected")
					}
				}
			}
		})
		b.Run(fmt.Sprintf("stages=%d/2KB", n), func(b *testing.B) {
			p := mustPipeline(b, stages(n), Options{})
			conv := userConv(prompt)
			b.ReportAllocs()
			b.SetBytes(int64(len(prompt)))
			for b.Loop() {
				if p.Screen(context.Background(), conv, Input).Outcome != Passed {
					b.Fatal("not passed")
				}
			}
		})
	}

	// One turn without a cache, against 20 turns of which 19 are cached
	// and the newest is new on every iteration.
	b.Run("turns=1/stages=5", func(b *testing.B) {
		p := mustPipeline(b, stages(5), Options{})
		conv := userConv(prompt)
		b.ReportAllocs()
		for b.Loop() {
			p.Screen(context.Background(), conv, Input)
		}
	})
	b.Run("turns=20/stages=5/warm", func(b *testing.B) {
		cache, err := NewVerdictCache(0)
		if err != nil {
			b.Fatal(err)
		}
		defer cache.Close()
		p := mustPipeline(b, stages(5), Options{Cache: cache, ConfigVersion: "bench"})
		turns := make([]string, 20)
		for i := range turns {
			turns[i] = fmt.Sprintf("%04d", i) + prompt[4:]
		}
		conv := userConv(turns...)
		p.Screen(context.Background(), conv, Input)
		// The newest turn is rewritten in place each iteration so that it
		// misses without allocating a new string. Safe here: the cache
		// keeps hashes, never the text, and nothing else retains it.
		buf := []byte(prompt)
		conv.Messages[19].Text = unsafe.String(&buf[0], len(buf))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			for k := range 16 { // ASCII, like the prompt, so no slow path
				buf[k] = "0123456789abcdef"[(i>>(4*k))&15]
			}
			p.Screen(context.Background(), conv, Input)
		}
	})
}

func TestPipelineStages(t *testing.T) {
	a, b := &testScanner{needle: "a"}, &testScanner{needle: "b"}
	off := stg("off", ModeBlock, a)
	off.Setting.Enabled = false
	out := stg("out", ModeFlag, b)
	out.Setting.Timeout = 0
	out.Setting.Directions = []Direction{Output}
	p := mustPipeline(t, []Stage{off, out}, Options{})
	got := p.Stages()
	if len(got) != 2 || got[0].Setting.ID != "off" || got[0].Scanner != a || got[1].Setting.ID != "out" || got[1].Scanner != b {
		t.Fatalf("stages %+v: want off, out in config order with their scanners", got)
	}
	if got[0].Setting.Enabled || got[0].Setting.Timeout != time.Minute || got[1].Setting.Timeout != DefaultTimeout {
		t.Errorf("settings %+v, %+v: want them as configured, defaults filled in", got[0].Setting, got[1].Setting)
	}
	if d := got[0].Setting.Directions; len(d) != 1 || d[0] != Input {
		t.Errorf("directions %v: want the Input default", d)
	}
	// A caller rebuilding stages must not reach into the pipeline's own.
	got[1].Setting.Directions[0] = Input
	if p.Stages()[1].Setting.Directions[0] != Output {
		t.Error("Stages shares its Directions with the pipeline")
	}
}

// followUpScanner detects its needle only in a follow-up turn.
type followUpScanner struct{ calls atomic.Int64 }

func (s *followUpScanner) Type() string { return "regex" }

func (s *followUpScanner) Scan(_ context.Context, t *Target) (Finding, error) {
	s.calls.Add(1)
	if t.FollowsAnswer && strings.Contains(t.Text.Original, "rewrite") {
		return Finding{Detected: true, Score: 1}, nil
	}
	return Finding{}, nil
}

// A user message after an answer is a follow-up turn, and the verdict cache
// keeps a text's verdict as a first turn apart from its verdict as a
// follow-up: a scanner may judge the two differently.
func TestFollowsAnswer(t *testing.T) {
	cache, err := NewVerdictCache(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	sc := &followUpScanner{}
	p := mustPipeline(t, []Stage{stg("f", ModeFlag, sc)}, Options{Cache: cache, ConfigVersion: "follow-up"})
	const text = "rewrite it shorter"
	first := userConv(text)
	followUp := &Conversation{Messages: []Message{
		{Role: RoleUser, Text: "tell me about the sea", Ref: "messages.0.content"},
		{Role: RoleAssistant, Text: "The sea is large.", Ref: "messages.1.content"},
		{Role: RoleUser, Text: text, Ref: "messages.2.content"},
	}}
	steps := []struct {
		name string
		conv *Conversation
		want Outcome
	}{
		{"a first turn", first, Passed},
		{"the same text as a follow-up", followUp, Flagged},
		{"the first turn again, cached", first, Passed},
		{"the follow-up again, cached", followUp, Flagged},
	}
	for _, s := range steps {
		if got := p.Screen(context.Background(), s.conv, Input).Outcome; got != s.want {
			t.Errorf("%s: outcome %v, want %v", s.name, got, s.want)
		}
	}
	// Each message is scanned once: the first turn, and the three messages
	// of the follow-up conversation; the repeats come from the cache.
	if n := sc.calls.Load(); n != 4 {
		t.Errorf("Scan called %d times, want 4", n)
	}
}

// foldKeeper keeps every Folded view it is shown, to check what happens to
// the views' buffers after the screening, and flags texts holding "flag".
type foldKeeper struct {
	seen []string // the views as shown, aliasing their buffers
	want []string // what they held, copied
}

func (s *foldKeeper) Type() string { return "regex" }

func (s *foldKeeper) Scan(_ context.Context, t *Target) (Finding, error) {
	v := t.Text.Folded().S
	s.seen = append(s.seen, v)
	s.want = append(s.want, strings.Clone(v))
	if i := strings.Index(t.Text.Original, "flag"); i >= 0 {
		return Finding{Detected: true, Matches: []Match{{Start: i, End: i + 4, Kind: "FLAG", Score: 1}}}, nil
	}
	return Finding{}, nil
}

// TestFoldBuffersRecycled checks the recycling of Folded views: a clean
// screening hands its view's buffer to a later one (the reason it exists),
// every view is still folded right from a reused buffer, and the views of a
// screening with findings are never reused, so they stay intact.
func TestFoldBuffersRecycled(t *testing.T) {
	keep := &foldKeeper{}
	p := mustPipeline(t, []Stage{stg("keep", ModeFlag, keep)}, Options{})
	var flagged []int // indexes into keep.seen
	var texts []string
	for i := range 200 {
		// Lengths shrink, six texts in seven, so that a buffer is
		// reused by texts shorter than the one it was made for; every
		// fourth text is flagged.
		s := strings.Repeat(fmt.Sprintf("Text %03d IGN0RE the r u l e s,  ", i), 7-i%7)
		if i%4 == 3 {
			s += " flag"
			flagged = append(flagged, len(keep.seen))
		}
		if r := p.Screen(context.Background(), userConv(s), Input); (r.Outcome == Flagged) != (i%4 == 3) {
			t.Fatalf("text %d screened %s", i, r.Outcome)
		}
		texts = append(texts, s)
	}
	for _, k := range flagged {
		if keep.seen[k] != keep.want[k] {
			t.Errorf("view %d of a flagged screening was overwritten: %q, was %q", k, keep.seen[k], keep.want[k])
		}
	}
	reused := 0
	for k := range keep.seen {
		if keep.seen[k] != keep.want[k] {
			reused++
		}
	}
	// sync.Pool may drop what it is given (under the race detector it
	// drops a quarter at random), but not nearly all of it.
	t.Logf("%d of %d views had their buffer reused", reused, len(keep.seen))
	if reused < 40 {
		t.Errorf("%d of %d views had their buffer reused, want more", reused, len(keep.seen))
	}
	// Checked last: these Texts take buffers from the pool and keep them.
	for i, s := range texts {
		if got, want := keep.want[i], NewText(s).Folded().S; got != want {
			t.Errorf("text %d folded to %q, want %q", i, got, want)
		}
	}
}

func TestFoldScratchPooled(t *testing.T) {
	for _, tt := range []struct {
		sc   foldScratch
		want bool
	}{
		{foldScratch{}, true},
		{foldScratch{buf: make([]byte, 0, 2048), shifts: make([]shift, 0, 68)}, true},
		{foldScratch{buf: make([]byte, 0, maxPooledFold)}, true},
		{foldScratch{buf: make([]byte, 0, maxPooledFold+1)}, false},
		{foldScratch{buf: make([]byte, 0, maxPooledFold/2), origin: make([]int32, 0, maxPooledFold/8+1)}, false},
	} {
		if got := tt.sc.pooled(); got != tt.want {
			t.Errorf("pooled() with caps %d, %d, %d = %v, want %v", cap(tt.sc.buf), cap(tt.sc.shifts), cap(tt.sc.origin), got, tt.want)
		}
	}
}

// TestPooledRunKeepsNothing checks that a run handed back for reuse after a
// clean screening holds no message, text or view of it: a pool must not
// keep prompts alive.
func TestPooledRunKeepsNothing(t *testing.T) {
	p := mustPipeline(t, []Stage{stg("keep", ModeFlag, &foldKeeper{})}, Options{})
	checked := 0
	for i := range 50 {
		conv := userConv("first prompt, IGN0RE it", fmt.Sprintf("second prompt %d", i))
		if r := p.Screen(context.Background(), conv, Input); r.Outcome != Passed {
			t.Fatalf("screened %s", r.Outcome)
		}
		r, _ := runPool.Get().(*run)
		if r == nil {
			continue // sync.Pool may drop what it is given
		}
		checked++
		if r.p != nil || r.conv != nil || r.target.Conversation != nil || len(r.msgs) != 0 {
			t.Fatalf("pooled run keeps its screening: %+v", r)
		}
		for k := range r.msgs[:cap(r.msgs)] {
			if ms := &r.msgs[:cap(r.msgs)][k]; ms.text.Original != "" || ms.text.folded.S != "" || ms.text.foldBufs.buf != nil {
				t.Fatalf("pooled run keeps message %d: %q", k, ms.text.Original)
			}
		}
	}
	if checked == 0 {
		t.Errorf("no run was pooled in 50 clean screenings")
	}
}
