package scanner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ErrPanic is recorded when a scanner panics; the pipeline recovers, so one
// faulty detector fails its own verdict (per its fail mode), not the process.
var ErrPanic = errors.New("scanner: panic")

// ContextAware is implemented by scanners that wait on something outside the
// process (a classifier service, a moderation API) and return promptly when
// ctx is done. The pipeline runs them concurrently, each under a context
// with its time budget as deadline, and gives up on one that overstays.
//
// Why opt-in: in-process detectors are CPU-bound and cannot be pre-empted,
// so a deadline would only cost them a context and a timer per call (three
// allocations) and a goroutine would cost more than their whole scan. They
// run inline on the caller's goroutine instead, and their budget is
// enforced by measuring, which costs one clock read per scanned message: a
// scanner found over budget before its next message stops there, and since
// messages were left unscreened its verdict is an error (ErrTimeout) decided
// by its fail mode, keeping any detection it already made. A verdict that is
// complete but late is kept: the time is spent either way, and discarding it
// would turn a GC or scheduling stall into a spurious fail-closed block.
type ContextAware interface {
	HonoursContext() bool
}

// ConversationAware is implemented by scanners whose verdict on a text
// depends on more than that text, its role and direction (they read
// Target.Conversation, such as a prompt-leak check against the system
// prompt). Returning true keeps their Findings out of the verdict cache.
type ConversationAware interface {
	UsesConversation() bool
}

// Observer receives the pipeline's measurements, typically to turn them into
// metrics. Calls may come from several goroutines at once (concurrent
// screenings, context-aware scanners), so implementations must be safe for
// concurrent use. Scanner IDs are bounded (they come from config) and so are
// fit as metric labels.
type Observer interface {
	// CacheHit and CacheMiss are called once per (scanner, message) looked
	// up in the verdict cache; a shared group entry reports each member.
	CacheHit(scanner string)
	CacheMiss(scanner string)
	// ScannerDone is called once per scanner that ran in a screening, with
	// the time it took over all messages.
	ScannerDone(id string, d time.Duration, outcome Outcome)
}

type nopObserver struct{}

func (nopObserver) CacheHit(string)                            {}
func (nopObserver) CacheMiss(string)                           {}
func (nopObserver) ScannerDone(string, time.Duration, Outcome) {}

// Stage is one configured scanner of a pipeline.
type Stage struct {
	Setting Setting
	Scanner Scanner
}

// Options tune a pipeline.
type Options struct {
	// Cache, when not nil, remembers verdicts across screenings.
	Cache *VerdictCache
	// ConfigVersion identifies the config the pipeline was built from
	// (e.g. a hash of the endpoint config); it is part of every cache key,
	// so a config change never reuses an old verdict.
	ConfigVersion string
	// Observer receives measurements; nil means none.
	Observer Observer
	// Now is the clock for timestamps and inline budgets; nil means
	// time.Now. It must be safe for concurrent use.
	Now func() time.Time
}

// asyncGrace is how long past its deadline the pipeline still waits for a
// context-aware scanner to return before abandoning it.
const asyncGrace = 10 * time.Millisecond

// Pipeline is a compiled, immutable set of stages for one endpoint config.
// It is safe for concurrent use; build it once per config and share it.
type Pipeline struct {
	stages []stage
	// plans[dir][pass] lists the stage indexes, in config order, that a
	// screening of that direction and pass (0 blocking, 1 deferred)
	// records. Computed once so screening does no filtering work.
	plans [2][2][]int
	cache *VerdictCache
	obs   Observer
	now   func() time.Time
	// groups[dir][pass] describes the verdicts cached together, see group.
	groups [2][2]group
	// roleDir caches hashes of (direction, role) for the cache key.
	roleDir map[roleDirKey]textKey
}

// group is the set of a plan's stages whose verdicts on one message are
// cached as one entry: the enabled, inline, cacheable ones. One lookup per
// message instead of one per (stage, message) is what keeps a long
// conversation with one new turn close to the cost of that turn: a lookup
// in a large cache is a cache-missing map probe (~100 ns), and a 20-turn
// chat with 8 scanners would otherwise make 160 of them. Context-aware
// stages are cached per stage instead: they run on their own goroutines
// and their lookups are nothing next to a network call.
type group struct {
	key   textKey  // (ConfigVersion, pass, members' IDs and Versions)
	slots []int    // per plan position: index in the entry, or -1
	ids   []string // members' IDs, for the Observer
}

type roleDirKey struct {
	dir  Direction
	role Role
	// followsAnswer: a user message after an answer (Target.FollowsAnswer).
	followsAnswer bool
}

type stage struct {
	Setting
	sc        Scanner
	typ       string
	async     bool
	cacheable bool
	key       textKey // cache key prefix: (ConfigVersion, ID, Version)
}

const (
	passBlocking = 0
	passDeferred = 1
)

func dirIndex(d Direction) int {
	if d == Output {
		return 1
	}
	return 0
}

// NewPipeline validates the stages and compiles them. IDs must be unique;
// settings must pass Setting.Validate.
func NewPipeline(stages []Stage, opts Options) (*Pipeline, error) {
	p := &Pipeline{
		stages: make([]stage, 0, len(stages)),
		cache:  opts.Cache,
		obs:    opts.Observer,
		now:    opts.Now,
	}
	if p.obs == nil {
		p.obs = nopObserver{}
	}
	if p.now == nil {
		p.now = time.Now
	}
	seen := make(map[string]bool, len(stages))
	for i, s := range stages {
		if err := s.Setting.Validate(); err != nil {
			return nil, fmt.Errorf("stage %d: %w", i, err)
		}
		if s.Scanner == nil {
			return nil, fmt.Errorf("stage %d (%q): %w: no scanner", i, s.Setting.ID, ErrUnknownScanner)
		}
		if seen[s.Setting.ID] {
			return nil, fmt.Errorf("stage %d: %w", i, &SettingError{ID: s.Setting.ID, Field: "id", Reason: "duplicate scanner id"})
		}
		seen[s.Setting.ID] = true
		st := stage{Setting: s.Setting.clone(), sc: s.Scanner, typ: s.Scanner.Type(), cacheable: true}
		if st.Timeout == 0 {
			st.Timeout = DefaultTimeout
		}
		if st.Directions == nil {
			st.Directions = []Direction{Input}
		}
		if ca, ok := s.Scanner.(ContextAware); ok {
			st.async = ca.HonoursContext()
		}
		if cv, ok := s.Scanner.(ConversationAware); ok && cv.UsesConversation() {
			st.cacheable = false
		}
		if p.cache != nil {
			st.key = p.cache.prefix(opts.ConfigVersion, "stage", st.ID, st.Version)
		}
		pass := passBlocking
		if !st.Blocking {
			pass = passDeferred
		}
		for _, d := range st.Directions {
			di := dirIndex(d)
			p.plans[di][pass] = append(p.plans[di][pass], len(p.stages))
		}
		p.stages = append(p.stages, st)
	}
	if p.cache != nil {
		for di := range p.plans {
			for pass, plan := range p.plans[di] {
				g := &p.groups[di][pass]
				g.slots = make([]int, len(plan))
				parts := []string{opts.ConfigVersion, "group", strconv.Itoa(pass)}
				for k, si := range plan {
					g.slots[k] = -1
					if st := &p.stages[si]; st.Enabled && !st.async && st.cacheable {
						g.slots[k] = len(g.ids)
						g.ids = append(g.ids, st.ID)
						parts = append(parts, st.ID, st.Version)
					}
				}
				g.key = p.cache.prefix(parts...)
			}
		}
		p.roleDir = make(map[roleDirKey]textKey)
		for _, d := range []Direction{Input, Output} {
			for _, r := range []Role{RoleSystem, RoleUser, RoleAssistant, RoleTool} {
				p.roleDir[roleDirKey{d, r, false}] = p.cache.prefix(string(d), string(r))
			}
			p.roleDir[roleDirKey{d, RoleUser, true}] = p.cache.prefix(string(d), string(RoleUser), "follows an answer")
		}
	}
	return p, nil
}

// Result is the verdict of one screening.
type Result struct {
	// Outcome is the most severe of the scanners' outcomes (Passed when
	// none ran). Error means a fail-open scanner failed and nothing worse
	// happened.
	Outcome Outcome
	// Scanners holds one entry per scanner of the pass and direction, in
	// config order, including disabled and short-circuited ones (Skipped).
	Scanners []ScannerResult
	// FlagMessage is the flag message of the scanner that decided a block
	// (the first blocked one in config order).
	FlagMessage string
	// Edits are the redacted texts when Outcome is Modified: one per
	// message whose text changed.
	Edits []Edit
	// Vault maps the placeholders of Edits back to their values. It is the
	// vault passed to ScreenWith, or a new one when something was redacted.
	Vault *Vault
}

// Edit is a redacted message text to write back before forwarding.
type Edit struct {
	// Message is the index in Conversation.Messages.
	Message int
	// Ref is the message's Ref, the wire format's locator.
	Ref string
	// Text is the redacted text.
	Text string
}

// ScannerResult is one scanner's part in a screening, as the record stores it.
type ScannerResult struct {
	ScannerID string
	Version   string
	// Type is the detector family (data.type).
	Type      string
	Direction Direction
	Outcome   Outcome
	Started   time.Time
	Completed time.Time
	// Findings locate the detections. A detection without spans (a
	// classifier score) is one MessageFinding with an empty Match
	// (Start == End == 0), so the record still says which message
	// triggered; MatchesIn and redaction ignore those.
	Findings []MessageFinding
	// Reason is the first detection's operator-facing reason, or why the
	// scanner was skipped.
	Reason string
	// Err is the failure (error, panic, budget overrun) when there was one.
	Err string
}

// MessageFinding is one detection in one message.
type MessageFinding struct {
	// Message is the index in Conversation.Messages.
	Message int
	Role    Role
	Match
}

// MatchesIn returns the located matches found in a message by the scanners
// of the given types (all types when none are given), sorted by position.
// Mask(text, r.MatchesIn(i, "secret")) is how a record stores a message.
func (r *Result) MatchesIn(message int, types ...string) []Match {
	var out []Match
	for i := range r.Scanners {
		sr := &r.Scanners[i]
		if len(types) > 0 && !slices.Contains(types, sr.Type) {
			continue
		}
		for _, f := range sr.Findings {
			if f.Message == message && f.End > f.Start {
				out = append(out, f.Match)
			}
		}
	}
	slices.SortFunc(out, func(a, b Match) int { return a.Start - b.Start })
	return out
}

// Stages returns the pipeline's stages in config order, with the defaults
// NewPipeline filled in. Tools that must judge every scanner on its own
// (evaluation) rebuild a pipeline from them with other settings, since in
// this one a block skips the scanners after it.
func (p *Pipeline) Stages() []Stage {
	out := make([]Stage, len(p.stages))
	for i := range p.stages {
		out[i] = Stage{Setting: p.stages[i].Setting.clone(), Scanner: p.stages[i].sc}
	}
	return out
}

// Screen runs the blocking scanners enabled for dir over conv, before
// forwarding. For Input every message is screened with its role; for Output
// the assistant messages are (hand in the response's messages). Detections
// become outcomes by mode: block -> Blocked; modify -> Modified with Edits
// (a detection without spans cannot be redacted and is Flagged instead:
// blocking would silently turn a redaction policy into a block policy);
// flag -> Flagged. A failing scanner (error, panic, over budget) is Blocked
// with its flag message under FailClosed and recorded as Error under
// FailOpen. Once a scanner blocks, the rest are Skipped.
func (p *Pipeline) Screen(ctx context.Context, conv *Conversation, dir Direction) *Result {
	return p.run(ctx, conv, dir, passBlocking, nil)
}

// ScreenWith is Screen with the vault of an earlier screening of the same
// exchange (the request's, when screening the response), so that one value
// keeps one placeholder across both. A nil vault is Screen. Restore the
// answer with the vault before screening it: placeholders that the output
// screening itself adds are meant to reach the user as placeholders.
func (p *Pipeline) ScreenWith(ctx context.Context, conv *Conversation, dir Direction, v *Vault) *Result {
	return p.run(ctx, conv, dir, passBlocking, v)
}

// ScreenDeferred runs the non-blocking scanners enabled for dir, after the
// response went out, off the latency path. They can only flag: outcomes are
// Flagged, Passed or Error (a failure cannot block traffic that already
// left, whatever the fail mode).
func (p *Pipeline) ScreenDeferred(ctx context.Context, conv *Conversation, dir Direction) *Result {
	return p.run(ctx, conv, dir, passDeferred, nil)
}

// run is one screening: the per-message state shared by every stage, so that
// each message's Text (and its normalised views) and cache hashes are
// computed once whatever the number of scanners.
type run struct {
	p *Pipeline
	// cache is the pipeline's verdict cache for input screenings and nil
	// for answers: an answer is judged once in the output direction (the
	// next request screens it as an input-side assistant turn, under
	// another key), so storing its verdicts would only cost a write and
	// evict history that will be asked for.
	cache *VerdictCache
	conv  *Conversation
	dir   Direction
	pass  int
	msgs  []msgState
	group *group
	// fresh holds, per missed message (msgState.row) and group slot, the
	// verdicts scanned in this screening, to be cached as one entry once a
	// message has them all.
	fresh   []Finding
	misses  int
	target  Target // reused by inline stages: scanners must not retain it
	stopped atomic.Bool
	cancel  context.CancelFunc
}

type msgState struct {
	text    Text
	key     textKey   // text hash
	roleDir textKey   // (direction, role, follows an answer) hash
	hit     []Finding // the group's cached verdicts, by slot
	row     int       // on a group miss, the message's row in run.fresh
	filled  int       // group verdicts scanned in this screening
	// followsAnswer: a user message after an assistant message.
	followsAnswer bool
}

func (p *Pipeline) run(ctx context.Context, conv *Conversation, dir Direction, pass int, vault *Vault) *Result {
	plan := p.plans[dirIndex(dir)][pass]
	res := &Result{Outcome: Passed, Vault: vault}
	if len(plan) == 0 || conv == nil {
		return res
	}
	res.Scanners = make([]ScannerResult, len(plan))
	r := newRun()
	r.p, r.conv, r.dir, r.pass, r.group = p, conv, dir, pass, &p.groups[dirIndex(dir)][pass]
	if dir == Input {
		r.cache = p.cache
	}

	var asyncIdx []int
	for k, si := range plan {
		if st := &p.stages[si]; st.Enabled && st.async {
			asyncIdx = append(asyncIdx, k)
		}
	}
	if len(asyncIdx) > 0 {
		// Goroutines may outlive this call if a scanner ignores its
		// deadline; give them a private copy of the message list so a
		// caller writing edits back cannot race with them.
		r.conv = &Conversation{Messages: slices.Clone(conv.Messages)}
	}
	if n := len(r.conv.Messages); cap(r.msgs) >= n {
		r.msgs = r.msgs[:n] // zeroed by recycle
	} else {
		r.msgs = make([]msgState, n)
	}
	answered := false
	for i := range r.conv.Messages {
		m := &r.conv.Messages[i]
		ms := &r.msgs[i]
		ms.followsAnswer = m.Role == RoleUser && answered
		answered = answered || m.Role == RoleAssistant
		if !r.inScope(m) {
			continue
		}
		ms.text.Original = m.Text
		if r.cache != nil {
			ms.key = r.cache.hashText(m.Text)
			rd, ok := p.roleDir[roleDirKey{dir, m.Role, ms.followsAnswer}]
			if !ok {
				rd = r.cache.prefix(string(dir), string(m.Role))
			}
			ms.roleDir = rd
			if len(r.group.ids) > 0 {
				key, check := r.groupKey(ms)
				if ms.hit = r.cache.getGroup(key, check, len(r.group.ids)); ms.hit == nil {
					ms.row = r.misses
					r.misses++
				}
				for _, id := range r.group.ids {
					if ms.hit != nil {
						p.obs.CacheHit(id)
					} else {
						p.obs.CacheMiss(id)
					}
				}
			}
		}
	}
	r.target = Target{Direction: dir, Conversation: r.conv}

	// Context-aware scanners start first so their waiting overlaps the
	// inline scanners' work.
	var results chan asyncDone
	var launched, launchedAt time.Time
	var longest time.Duration
	if len(asyncIdx) > 0 {
		actx, cancel := context.WithCancel(ctx)
		r.cancel = cancel
		defer cancel()
		results = make(chan asyncDone, len(asyncIdx))
		launched, launchedAt = time.Now(), p.now()
		for _, k := range asyncIdx {
			st := &p.stages[plan[k]]
			longest = max(longest, st.Timeout)
			go r.runAsync(actx, k, st, results)
		}
	}

	// Inline stages run back to back, so one clock reading ends a stage
	// and starts the next.
	now := p.now()
	for k, si := range plan {
		st := &p.stages[si]
		sr := &res.Scanners[k]
		r.header(sr, st)
		switch {
		case !st.Enabled:
			r.skip(sr, now, "disabled")
		case st.async:
			// Collected below.
		case r.stopped.Load():
			r.skip(sr, now, "not run: an earlier scanner blocked")
		case ctx.Err() != nil:
			sr.Started, sr.Completed = now, now
			r.decide(sr, st, false, false, ctx.Err())
		default:
			now = r.scanStage(ctx, k, st, &r.target, sr, now)
			p.obs.ScannerDone(st.ID, sr.Completed.Sub(sr.Started), sr.Outcome)
		}
	}

	if r.fresh != nil {
		r.storeGroups()
	}
	if len(asyncIdx) > 0 {
		r.collect(res, plan, asyncIdx, results, launchedAt, time.Until(launched.Add(longest+asyncGrace)))
	}

	for k := range res.Scanners {
		sr := &res.Scanners[k]
		if sr.Outcome.Severity() > res.Outcome.Severity() {
			res.Outcome = sr.Outcome
		}
		if sr.Outcome == Blocked && res.FlagMessage == "" {
			res.FlagMessage = p.stages[plan[k]].FlagMessage
		}
	}
	if res.Outcome == Modified {
		r.redact(res, plan)
	}
	if len(asyncIdx) == 0 && !res.found() {
		// Nothing outlives this call that could refer to a view: no
		// scanner goroutine is left, scanners do not retain their Target,
		// and a Result with no findings holds nothing taken from a
		// text (a finding's Kind or Reason never quotes it, but a
		// screening with findings is rare and not worth relying on that).
		for i := range r.msgs {
			r.msgs[i].text.recycle()
		}
		r.recycle()
	}
	return res
}

// runPool holds runs, with their msgs arrays, no screening uses any more:
// with the Folded views' buffers (Text.recycle) they were most of what a
// clean screening allocated, and so most of its garbage collections.
var runPool sync.Pool

// maxPooledMsgs bounds the msgs array of a pooled run: one very long
// conversation does not keep its array alive for the short ones.
const maxPooledMsgs = 256

func newRun() *run {
	if r, _ := runPool.Get().(*run); r != nil {
		return r
	}
	return new(run)
}

// recycle hands r to the next screening. The caller guarantees what
// Text.recycle asks of the views, and that no goroutine still uses r (none
// was started: no stage ran asynchronously). The fields are cleared, the
// messages' texts with them, so a pooled run keeps no prompt alive.
func (r *run) recycle() {
	if cap(r.msgs) > maxPooledMsgs {
		return
	}
	msgs := r.msgs[:cap(r.msgs)]
	clear(msgs)
	*r = run{msgs: msgs[:0]}
	runPool.Put(r)
}

// found says whether any scanner reported a finding.
func (res *Result) found() bool {
	for k := range res.Scanners {
		if len(res.Scanners[k].Findings) > 0 {
			return true
		}
	}
	return false
}

// inScope says whether a message is screened in this direction.
func (r *run) inScope(m *Message) bool {
	return r.dir == Input || m.Role == RoleAssistant
}

func (r *run) header(sr *ScannerResult, st *stage) {
	sr.ScannerID, sr.Version, sr.Type, sr.Direction = st.ID, st.Version, st.typ, r.dir
}

func (r *run) skip(sr *ScannerResult, now time.Time, reason string) {
	sr.Started, sr.Completed = now, now
	sr.Outcome, sr.Reason = Skipped, reason
}

// stop short-circuits the screening: stages not yet started are skipped and
// running context-aware ones are cancelled. Only a blocking pass stops; the
// deferred one records everything.
func (r *run) stop() {
	if r.pass != passBlocking {
		return
	}
	r.stopped.Store(true)
	if r.cancel != nil {
		r.cancel()
	}
}

// scanStage screens every in-scope message with one stage, starting at
// start, fills sr and returns the time it completed.
func (r *run) scanStage(ctx context.Context, k int, st *stage, t *Target, sr *ScannerResult, start time.Time) time.Time {
	p := r.p
	sr.Started = start
	var detected, located bool
	var firstErr error
	spent := false // a scan ran since the budget was last checked
	for i := range r.conv.Messages {
		m := &r.conv.Messages[i]
		if !r.inScope(m) {
			continue
		}
		// The budget stops further work, so it is checked before a
		// message, and only after real scans (a cache hit costs nothing
		// and skips the clock read).
		if spent {
			spent = false
			if p.now().Sub(start) > st.Timeout {
				firstErr = cmp.Or(firstErr, fmt.Errorf("%w (%s)", ErrTimeout, st.Timeout))
				break
			}
			if err := ctx.Err(); err != nil {
				firstErr = cmp.Or(firstErr, err)
				break
			}
		}
		f, scanned, err := r.verdict(ctx, k, st, i, m, t)
		spent = scanned
		switch {
		case err != nil:
			firstErr = cmp.Or(firstErr, err)
		case f.Detected:
			detected = true
			if sr.Reason == "" {
				sr.Reason = f.Reason
			}
			if len(f.Matches) == 0 {
				sr.Findings = append(sr.Findings, MessageFinding{Message: i, Role: m.Role, Match: Match{Score: f.Score}})
			}
			for _, mt := range f.Matches {
				sr.Findings = append(sr.Findings, MessageFinding{Message: i, Role: m.Role, Match: mt})
				if mt.End > mt.Start {
					located = true
				}
			}
		}
		if detected && st.Mode == ModeBlock && r.pass == passBlocking {
			break // the verdict cannot get worse
		}
		if firstErr != nil && st.FailMode == FailClosed && r.pass == passBlocking {
			break // blocked whatever the other messages hold
		}
	}
	sr.Completed = p.now()
	r.decide(sr, st, detected, located, firstErr)
	return sr.Completed
}

// verdict returns the Finding of the stage at plan position k on message i,
// from the cache when it can; scanned says whether the scanner ran.
func (r *run) verdict(ctx context.Context, k int, st *stage, i int, m *Message, t *Target) (f Finding, scanned bool, err error) {
	p := r.p
	ms := &r.msgs[i]
	if r.cache != nil && r.group.slots[k] >= 0 {
		slot := r.group.slots[k]
		if ms.hit != nil {
			return ms.hit[slot], false, nil
		}
		t.Text, t.Role, t.FollowsAnswer = &ms.text, m.Role, ms.followsAnswer
		f, err = safeScan(ctx, st.sc, t)
		t.Text = nil
		if err == nil {
			n := len(r.group.ids)
			if r.fresh == nil {
				r.fresh = make([]Finding, r.misses*n)
			}
			r.fresh[ms.row*n+slot] = f
			ms.filled++
		}
		return f, true, err
	}
	cached := r.cache != nil && st.cacheable
	var key, check uint64
	if cached {
		key = combine(st.key.a, ms.roleDir.a, ms.key.a)
		check = combine(st.key.b, ms.roleDir.b, ms.key.b)
		if f, ok := r.cache.get(key, check); ok {
			p.obs.CacheHit(st.ID)
			return f, false, nil
		}
		p.obs.CacheMiss(st.ID)
	}
	t.Text, t.Role, t.FollowsAnswer = &ms.text, m.Role, ms.followsAnswer
	f, err = safeScan(ctx, st.sc, t)
	t.Text = nil
	if err == nil && cached {
		r.cache.set(key, check, f)
	}
	return f, true, err
}

// groupKey is the cache key and check of a message's group entry.
func (r *run) groupKey(ms *msgState) (key, check uint64) {
	g := r.group
	return combine(g.key.a, ms.roleDir.a, ms.key.a), combine(g.key.b, ms.roleDir.b, ms.key.b)
}

// storeGroups caches the group entry of every message that got a verdict
// from each member. A message a member failed on, or never reached (a
// block ended the screening early), is left out: a partial entry would
// pass off a missing verdict as clean.
func (r *run) storeGroups() {
	n := len(r.group.ids)
	for i := range r.msgs {
		if ms := &r.msgs[i]; ms.hit == nil && ms.filled == n {
			key, check := r.groupKey(ms)
			r.cache.setGroup(key, check, r.fresh[ms.row*n:(ms.row+1)*n])
		}
	}
}

// safeScan calls the scanner, turning a panic into ErrPanic. The panic
// value is quoted only when it is a runtime error: anything else may carry
// the screened text, and Err is stored and logged.
func safeScan(ctx context.Context, sc Scanner, t *Target) (f Finding, err error) {
	defer func() {
		if v := recover(); v != nil {
			f = Finding{}
			if re, ok := v.(runtime.Error); ok {
				err = fmt.Errorf("%w: %v", ErrPanic, re)
			} else {
				err = ErrPanic
			}
		}
	}()
	return sc.Scan(ctx, t)
}

// decide turns what a stage found into its outcome and short-circuits the
// screening when it blocks.
func (r *run) decide(sr *ScannerResult, st *stage, detected, located bool, err error) {
	out := Passed
	if detected {
		switch st.Mode {
		case ModeBlock:
			out = Blocked
		case ModeModify:
			if located {
				out = Modified
			} else {
				out = Flagged // nothing to redact: see Screen
			}
		default:
			out = Flagged
		}
		if r.pass == passDeferred {
			out = Flagged // validated already; belt and braces
		}
	}
	if err != nil {
		sr.Err = err.Error()
		switch {
		case r.pass == passBlocking && r.stopped.Load() && errors.Is(err, context.Canceled):
			// Cancelled because another scanner blocked: not a failure.
			if out == Passed {
				out, sr.Reason = Skipped, "cancelled: an earlier scanner blocked"
				sr.Err = ""
			}
		case st.FailMode == FailClosed && r.pass == passBlocking:
			out = Blocked
		case Error.Severity() > out.Severity():
			out = Error
		}
	}
	sr.Outcome = out
	if out == Blocked {
		r.stop()
	}
}

type asyncDone struct {
	k  int
	sr ScannerResult
}

// runAsync screens with a context-aware stage on its own goroutine, under a
// deadline of its budget.
func (r *run) runAsync(ctx context.Context, k int, st *stage, out chan<- asyncDone) {
	ctx, cancel := context.WithTimeout(ctx, st.Timeout)
	defer cancel()
	var t = Target{Direction: r.dir, Conversation: r.conv}
	var sr ScannerResult
	r.header(&sr, st)
	r.scanStage(ctx, k, st, &t, &sr, r.p.now())
	if sr.Err != "" && ctx.Err() == context.DeadlineExceeded {
		sr.Err = fmt.Errorf("%w (%s)", ErrTimeout, st.Timeout).Error()
	}
	out <- asyncDone{k: k, sr: sr} // buffered: never blocks
}

// collect waits for the context-aware stages until the last deadline (plus
// a grace) and records the ones that overstayed as timed out.
func (r *run) collect(res *Result, plan, asyncIdx []int, results <-chan asyncDone, launchedAt time.Time, wait time.Duration) {
	pending := make(map[int]bool, len(asyncIdx))
	for _, k := range asyncIdx {
		pending[k] = true
	}
	timer := time.NewTimer(max(wait, 0))
	defer timer.Stop()
	for len(pending) > 0 {
		select {
		case d := <-results:
			res.Scanners[d.k] = d.sr
			delete(pending, d.k)
			st := &r.p.stages[plan[d.k]]
			r.p.obs.ScannerDone(st.ID, d.sr.Completed.Sub(d.sr.Started), d.sr.Outcome)
		case <-timer.C:
			for k := range pending {
				st := &r.p.stages[plan[k]]
				sr := &res.Scanners[k]
				r.header(sr, st)
				sr.Started, sr.Completed = launchedAt, r.p.now()
				r.decide(sr, st, false, false, fmt.Errorf("%w (%s): abandoned, the scanner ignored its deadline", ErrTimeout, st.Timeout))
				r.p.obs.ScannerDone(st.ID, sr.Completed.Sub(sr.Started), sr.Outcome)
			}
			return
		}
	}
}

// redact builds the Edits of a Modified screening from the located findings
// of the modify-mode stages that decided Modified.
func (r *run) redact(res *Result, plan []int) {
	if res.Vault == nil {
		res.Vault = new(Vault)
	}
	var spans []Match
	for i := range r.conv.Messages {
		spans = spans[:0]
		for k, si := range plan {
			if r.p.stages[si].Mode != ModeModify || res.Scanners[k].Outcome != Modified {
				continue
			}
			for _, f := range res.Scanners[k].Findings {
				if f.Message == i && f.End > f.Start {
					spans = append(spans, f.Match)
				}
			}
		}
		if len(spans) == 0 {
			continue
		}
		m := &r.conv.Messages[i]
		if text := res.Vault.Redact(m.Text, spans); text != m.Text {
			res.Edits = append(res.Edits, Edit{Message: i, Ref: m.Ref, Text: text})
		}
	}
}
