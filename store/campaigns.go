package store

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// Red-team campaigns. A Campaign is a definition, a
// CampaignSchedule says when it runs by itself, and a CampaignRun is one
// execution with an AttackRun per (attack, provider, target). Attack runs
// carry the conversations and can be large, so they live in their own
// bucket keyed by run id and attack run id: a run's header is rewritten on
// every progress step without copying its results, and a list page reads
// headers only until it has chosen its runs.
var (
	bCampaigns     = []byte("campaigns")          // campaign id -> JSON
	bSchedules     = []byte("campaign_schedules") // schedule id -> JSON
	bCampaignRuns  = []byte("campaign_runs")      // run id -> JSON without attackRuns
	bCampaignRunIx = []byte("idx_campaign_runs")  // org\x00run id -> nil
	bAttackRuns    = []byte("attack_runs")        // run id/attack run id -> JSON
)

// CampaignRun.Status values. Queued runs wait for a
// worker; the last three are final.
const (
	RunQueued    = "queued"
	RunRunning   = "running"
	RunCompleted = "completed"
	RunFailed    = "failed"
	RunCancelled = "cancelled"
)

// AttackRun event names, in the order an attack run goes through them.
const (
	EventQueued    = "queued"
	EventStarted   = "started"
	EventCompleted = "completed"
	EventFailed    = "failed"
)

// RunStatuses lists every CampaignRun.Status, for validating filters.
var RunStatuses = []string{RunQueued, RunRunning, RunCompleted, RunFailed, RunCancelled}

// Campaign is a red-team campaign definition: which attack packs to send,
// through which converters, to which providers.
type Campaign struct {
	ID    string `json:"id"`
	OrgID string `json:"orgId"`
	Name  string `json:"name"`
	// Providers are the ids of the providers attacked.
	Providers []string `json:"providers"`
	// Packs are the names of the attack packs sent.
	Packs []string `json:"packs"`
	// Converters each send every attack once more, converted; the plain
	// attack is always sent.
	Converters []string `json:"converters"`
	// SystemPrompt is planted as the system message of every attack;
	// "{{canary}}" in it is replaced by a secret random per run, which
	// the judge then looks for in the answers.
	SystemPrompt string `json:"systemPrompt"`
	// Schedule is a cron expression ("m h dom mon dow") or an interval
	// ("6h"); "" means the campaign runs only when started.
	Schedule string `json:"schedule"`
	// Targets are "provider" (straight to the provider) and/or
	// "endpoint:<name>" (screened by that endpoint first).
	Targets   []string  `json:"targets"`
	CreatedAt Timestamp `json:"createdAt"`
	UpdatedAt Timestamp `json:"updatedAt"`
}

// CampaignSchedule is when a campaign runs by itself.
type CampaignSchedule struct {
	ID         string `json:"id"`
	OrgID      string `json:"orgId"`
	CampaignID string `json:"campaignId"`
	// Schedule is the campaign's cron expression or interval.
	Schedule  string    `json:"schedule"`
	Enabled   bool      `json:"enabled"`
	NextRunAt Timestamp `json:"nextRunAt"`
	LastRunAt Timestamp `json:"lastRunAt"`
	LastRunID string    `json:"lastRunId"`
	CreatedAt Timestamp `json:"createdAt"`
}

// CampaignRunFields is the spec's CampaignRun but for attackRuns, whose
// items the store keeps with more fields than the spec serves: the API
// serves these fields as they are. Progress is the finished share of the
// attack runs as a fraction in 0..1 (Total is their number, as a decimal
// string); CASIScore is a decimal string 0-100 with two decimals, "" until
// at least one attack was judged.
type CampaignRunFields struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	CampaignID string    `json:"campaignId"`
	ScheduleID string    `json:"scheduleId"`
	CreatedAt  Timestamp `json:"createdAt"`
	CreatedBy  string    `json:"createdBy"`
	StartAt    Timestamp `json:"startAt"`
	Status     string    `json:"status"`
	Progress   float64   `json:"progress"`
	Total      string    `json:"total"`
	CASIScore  string    `json:"CASIScore"`
}

// CampaignRun is the spec's CampaignRun plus Promptwall's extensions. The
// spec's fields are always present, first; the rates are decimal strings
// like CASIScore.
type CampaignRun struct {
	CampaignRunFields
	AttackRuns []*AttackRun `json:"attackRuns"`

	OrgID string `json:"orgId"`
	// CompletedAt is when the run reached a final status.
	CompletedAt Timestamp `json:"completedAt"`
	// Reason explains a failed or cancelled run.
	Reason string `json:"reason"`
	// Providers and Targets the run attacked, in campaign order.
	Providers []string `json:"providers"`
	Targets   []string `json:"targets"`
	// AttackSuccessRate is 100 x vulnerable / judged attempts.
	AttackSuccessRate string `json:"attackSuccessRate"`
	// BlockRate is 100 x attempts blocked by policy / judged attempts.
	BlockRate string `json:"blockRate"`
	// Stats counts the attempts (one per converter per attack run).
	Stats RunStats `json:"stats"`
}

// RunStats counts attempts (results) of a run or an attack run. Judged =
// Vulnerable + Resisted; Blocked attempts are also Resisted; Errors are
// neither. The severity sums are the CASI score's terms.
type RunStats struct {
	Attempts         int `json:"attempts"`
	Vulnerable       int `json:"vulnerable"`
	Resisted         int `json:"resisted"`
	Blocked          int `json:"blocked"`
	Errors           int `json:"errors"`
	SeverityJudged   int `json:"severityJudged"`
	SeverityResisted int `json:"severityResisted"`
}

// Add accumulates o into s.
func (s *RunStats) Add(o RunStats) {
	s.Attempts += o.Attempts
	s.Vulnerable += o.Vulnerable
	s.Resisted += o.Resisted
	s.Blocked += o.Blocked
	s.Errors += o.Errors
	s.SeverityJudged += o.SeverityJudged
	s.SeverityResisted += o.SeverityResisted
}

// AttackRunFields is the spec's AttackRun but for attack, events and
// results, whose items the store keeps with more fields than the spec
// serves: the API serves these fields as they are. Progress is the
// finished share of the attempts in 0..1; Total their number.
type AttackRunFields struct {
	ID         string  `json:"id"`
	ProviderID string  `json:"providerId"`
	Progress   float64 `json:"progress"`
	Total      string  `json:"total"`
	ErrorCount int     `json:"errorCount"`
}

// AttackRun is the spec's AttackRun: one attack sent to one provider
// through one target, once plain and once per converter.
type AttackRun struct {
	AttackRunFields
	Attack  AttackSpec       `json:"attack"`
	Events  []AttackRunEvent `json:"events"`
	Results []AttackResult   `json:"results"`

	CampaignRunID string `json:"campaignRunId"`
	// Index orders the attack runs of a run as they were planned.
	Index int `json:"index"`
	// Target is "provider" or "endpoint:<name>".
	Target    string   `json:"target"`
	CASIScore string   `json:"CASIScore"`
	Stats     RunStats `json:"stats"`
}

// AttackFields is the spec's Attack, exactly its fields.
type AttackFields struct {
	Pack       string   `json:"pack"`
	Severity   int      `json:"severity"`
	Technique  string   `json:"technique"`
	Vector     string   `json:"vector"`
	Converters []string `json:"converters"`
}

// AttackSpec is the spec's Attack, after the attack's id (its name in its
// pack).
type AttackSpec struct {
	ID string `json:"id"`
	AttackFields
}

// AttackEvent is the spec's item of AttackRun.events, exactly its fields.
type AttackEvent struct {
	CreatedAt Timestamp `json:"createdAt"`
	Event     string    `json:"event"`
}

// AttackRunEvent is an entry of AttackRun.events as stored: the spec's
// event and why it happened.
type AttackRunEvent struct {
	AttackEvent
	Reason string `json:"reason,omitempty"`
}

// ChatMessage is one turn of an attack's conversation.
type ChatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// AttackResultFields is the spec's AttackResult plus outcome, the
// extension the API serves with it. Converter is "" for the plain attempt.
type AttackResultFields struct {
	Conversation      []ChatMessage `json:"conversation"`
	ConversationSteps int           `json:"conversationSteps"`
	Converter         string        `json:"converter"`
	Error             string        `json:"error"`
	ErrorSummary      string        `json:"errorSummary"`
	Fingerprint       string        `json:"fingerprint"`
	Intent            string        `json:"intent"`
	IntentCategory    string        `json:"intentCategory"`
	Vulnerable        bool          `json:"vulnerable"`

	// Outcome is vulnerable, resisted, blocked (resisted because the
	// target's policy blocked the attack) or error.
	Outcome string `json:"outcome"`
}

// AttackResult is one attempt (the plain attack, or the attack through one
// converter): the spec's AttackResult and what the API leaves out of it.
type AttackResult struct {
	AttackResultFields
	// Blocked is true when a Promptwall endpoint blocked the attack
	// before it reached the provider.
	Blocked bool `json:"blocked"`
	// Reason is the judge's explanation (which criterion held).
	Reason string `json:"reason"`
}

// MarshalJSON keeps the spec's arrays arrays when nil.
func (r CampaignRun) MarshalJSON() ([]byte, error) {
	type plain CampaignRun
	if r.AttackRuns == nil {
		r.AttackRuns = []*AttackRun{}
	}
	if r.Providers == nil {
		r.Providers = []string{}
	}
	if r.Targets == nil {
		r.Targets = []string{}
	}
	return json.Marshal(plain(r))
}

// MarshalJSON keeps the spec's arrays arrays when nil.
func (a AttackRun) MarshalJSON() ([]byte, error) {
	type plain AttackRun
	if a.Events == nil {
		a.Events = []AttackRunEvent{}
	}
	if a.Results == nil {
		a.Results = []AttackResult{}
	}
	if a.Attack.Converters == nil {
		a.Attack.Converters = []string{}
	}
	return json.Marshal(plain(a))
}

// MarshalJSON keeps conversation an array when nil.
func (r AttackResult) MarshalJSON() ([]byte, error) {
	type plain AttackResult
	if r.Conversation == nil {
		r.Conversation = []ChatMessage{}
	}
	return json.Marshal(plain(r))
}

// MarshalJSON keeps the campaign's lists arrays when nil.
func (c Campaign) MarshalJSON() ([]byte, error) {
	type plain Campaign
	for _, l := range []*[]string{&c.Providers, &c.Packs, &c.Converters, &c.Targets} {
		if *l == nil {
			*l = []string{}
		}
	}
	return json.Marshal(plain(c))
}

// PutCampaign creates or replaces a campaign. A zero CreatedAt is set to
// now; UpdatedAt is always set to now.
func (s *Store) PutCampaign(c *Campaign) error {
	if err := PrepareCampaign(c); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		return putJSON(tx.Bucket(bCampaigns), []byte(c.ID), c)
	})
}

// GetCampaign returns the campaign with that id, or ErrNotFound.
func (s *Store) GetCampaign(id string) (*Campaign, error) {
	c := new(Campaign)
	err := s.db.View(func(tx *bolt.Tx) error {
		return getJSON(tx.Bucket(bCampaigns), []byte(id), c, "campaign")
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// ListCampaigns returns the org's campaigns ordered by name; every org's
// when orgID is "". Campaigns are few (they are declared by operators), so
// this reads them all.
func (s *Store) ListCampaigns(orgID string) ([]*Campaign, error) {
	var out []*Campaign
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bCampaigns).ForEach(func(_, v []byte) error {
			c := new(Campaign)
			if err := json.Unmarshal(v, c); err != nil {
				return fmt.Errorf("store: decode campaign: %w", err)
			}
			if orgID == "" || c.OrgID == orgID {
				out = append(out, c)
			}
			return nil
		})
	})
	SortCampaigns(out)
	return out, err
}

// DeleteCampaign removes a campaign definition; its runs are kept.
// ErrNotFound if it does not exist.
func (s *Store) DeleteCampaign(id string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bCampaigns)
		if b.Get([]byte(id)) == nil {
			return fmt.Errorf("%w: campaign %q", ErrNotFound, id)
		}
		return b.Delete([]byte(id))
	})
}

// PutCampaignSchedule creates or replaces a schedule. A zero CreatedAt is
// set to now.
func (s *Store) PutCampaignSchedule(sc *CampaignSchedule) error {
	if err := PrepareCampaignSchedule(sc); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		return putJSON(tx.Bucket(bSchedules), []byte(sc.ID), sc)
	})
}

// GetCampaignSchedule returns the schedule with that id, or ErrNotFound.
func (s *Store) GetCampaignSchedule(id string) (*CampaignSchedule, error) {
	sc := new(CampaignSchedule)
	err := s.db.View(func(tx *bolt.Tx) error {
		return getJSON(tx.Bucket(bSchedules), []byte(id), sc, "campaign schedule")
	})
	if err != nil {
		return nil, err
	}
	return sc, nil
}

// ListCampaignSchedules returns the org's schedules (every org's when orgID
// is ""), ordered by id.
func (s *Store) ListCampaignSchedules(orgID string) ([]*CampaignSchedule, error) {
	var out []*CampaignSchedule
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bSchedules).ForEach(func(_, v []byte) error {
			sc := new(CampaignSchedule)
			if err := json.Unmarshal(v, sc); err != nil {
				return fmt.Errorf("store: decode campaign schedule: %w", err)
			}
			if orgID == "" || sc.OrgID == orgID {
				out = append(out, sc)
			}
			return nil
		})
	})
	return out, err
}

func runIndexKey(org, run string) []byte { return []byte(org + "\x00" + run) }

func attackRunKey(run, attackRun string) []byte { return []byte(run + "/" + attackRun) }

func validateRun(r *CampaignRun) error {
	if err := validateKeyPart("campaign run id", r.ID, true); err != nil {
		return err
	}
	if err := validateKeyPart("campaign run orgId", r.OrgID, true); err != nil {
		return err
	}
	if !slices.Contains(RunStatuses, r.Status) {
		return invalid("campaign run status %q is not one of %s", r.Status, strings.Join(RunStatuses, ", "))
	}
	return nil
}

// putRunHeader writes r without its attack runs.
func putRunHeader(tx *bolt.Tx, r *CampaignRun) error {
	return putJSON(tx.Bucket(bCampaignRuns), []byte(r.ID), RunHeader(r))
}

func putAttackRuns(tx *bolt.Tx, r *CampaignRun, ars []*AttackRun) error {
	if err := CheckAttackRuns(r, ars); err != nil {
		return err
	}
	b := tx.Bucket(bAttackRuns)
	for _, ar := range ars {
		if err := putJSON(b, attackRunKey(r.ID, ar.ID), ar); err != nil {
			return err
		}
	}
	return nil
}

// CreateCampaignRun stores a new run with its attack runs (r.AttackRuns),
// in one transaction. A zero CreatedAt is set to now.
func (s *Store) CreateCampaignRun(r *CampaignRun) error {
	if err := CheckCampaignRun(r, true); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(bCampaignRuns).Get([]byte(r.ID)) != nil {
			return CampaignRunExists(r.ID)
		}
		if err := putRunHeader(tx, r); err != nil {
			return err
		}
		if err := tx.Bucket(bCampaignRunIx).Put(runIndexKey(r.OrgID, r.ID), nil); err != nil {
			return err
		}
		return putAttackRuns(tx, r, r.AttackRuns)
	})
}

// SaveCampaignRun updates an existing run's header and the given attack
// runs in one transaction, so progress and the results it counts never
// disagree. r.AttackRuns is ignored: pass what changed as ars.
func (s *Store) SaveCampaignRun(r *CampaignRun, ars ...*AttackRun) error {
	if err := validateRun(r); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		var old CampaignRun
		if err := getJSON(tx.Bucket(bCampaignRuns), []byte(r.ID), &old, "campaign run"); err != nil {
			return err
		}
		if old.OrgID != r.OrgID {
			return CampaignRunOfOtherOrg(r.ID, old.OrgID)
		}
		if err := putRunHeader(tx, r); err != nil {
			return err
		}
		return putAttackRuns(tx, r, ars)
	})
}

// GetCampaignRun returns a run with its attack runs in plan order, or
// ErrNotFound. Without results, every attack run's Results is empty: the
// cheap way to watch progress.
func (s *Store) GetCampaignRun(id string, withResults bool) (*CampaignRun, error) {
	var r *CampaignRun
	err := s.db.View(func(tx *bolt.Tx) error {
		r = new(CampaignRun)
		if err := getJSON(tx.Bucket(bCampaignRuns), []byte(id), r, "campaign run"); err != nil {
			return err
		}
		return loadAttackRuns(tx, r, withResults)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

func loadAttackRuns(tx *bolt.Tx, r *CampaignRun, withResults bool) error {
	r.AttackRuns = r.AttackRuns[:0]
	prefix := []byte(r.ID + "/")
	c := tx.Bucket(bAttackRuns).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		ar := new(AttackRun)
		if err := json.Unmarshal(v, ar); err != nil {
			return fmt.Errorf("store: decode attack run %q: %w", k, err)
		}
		if !withResults {
			ar.Results = nil
		}
		r.AttackRuns = append(r.AttackRuns, ar)
	}
	SortAttackRuns(r.AttackRuns)
	return nil
}

// CampaignRunsWithStatus returns the headers (no attack runs) of every
// org's runs in one of the statuses. Recovery after a restart uses it to
// find runs the previous process left unfinished.
func (s *Store) CampaignRunsWithStatus(statuses ...string) ([]*CampaignRun, error) {
	var out []*CampaignRun
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bCampaignRuns).ForEach(func(_, v []byte) error {
			r := new(CampaignRun)
			if err := json.Unmarshal(v, r); err != nil {
				return fmt.Errorf("store: decode campaign run: %w", err)
			}
			if slices.Contains(statuses, r.Status) {
				out = append(out, r)
			}
			return nil
		})
	})
	return out, err
}

// Sort keys of ListCampaignRuns.
const (
	SortByCreatedAt = "created_at"
	SortByName      = "name"
	SortByStartAt   = "start_at"
)

// CampaignRunQuery selects runs for ListCampaignRuns. Every filter narrows.
type CampaignRunQuery struct {
	// OrgID is required: runs of other orgs are never listed.
	OrgID string
	// Search is a case-insensitive substring of the run's name.
	Search string
	// Statuses match any of their values.
	Statuses []string
	// CampaignScheduleID lists only runs started by that schedule.
	CampaignScheduleID string
	// SortBy is SortByCreatedAt (default), SortByName or SortByStartAt;
	// ties are broken by id.
	SortBy string
	// Ascending lists in increasing key order; the default is decreasing
	// (newest first).
	Ascending bool
	// WithResults loads the attack runs' results; without it they are
	// empty.
	WithResults bool
	// Limit is the page size, 1..MaxLimit.
	Limit int
	// Cursor is Next or Prev of an earlier page of the same query.
	Cursor string
}

// CampaignRunPage is one page of ListCampaignRuns; Next and Prev are ""
// when there is no such page.
type CampaignRunPage struct {
	Items []*CampaignRun
	Next  string
	Prev  string
}

func (q *CampaignRunQuery) filterHash() []byte {
	f := newFilterHasher()
	// The domain keeps a prompts cursor from ever continuing a runs query.
	f.str("campaign_runs", q.OrgID, q.Search, strings.Join(sortedSet(q.Statuses), "\x00"),
		q.CampaignScheduleID, cmp.Or(q.SortBy, SortByCreatedAt))
	f.order(q.Ascending)
	return f.h.Sum(nil)
}

// The runs cursor holds its boundary as the sort key of the last (next) or
// first (prev) run of the page, because runs are ordered by mutable or
// non-unique values (name, startAt) where the prompts list has a commit
// sequence. Layout before base64url: version, direction, filter hash
// prefix, key, then a truncated HMAC-SHA256 of all of it.
const runCursorVersion = 2

func (s *Store) makeRunCursor(dir byte, key string, fh []byte) string {
	b := make([]byte, 0, 2+cursorFilterSz+len(key)+cursorMACSz)
	b = append(b, runCursorVersion, dir)
	b = append(b, fh[:cursorFilterSz]...)
	b = append(b, key...)
	m := hmac.New(sha256.New, s.cursorKey)
	m.Write(b)
	b = append(b, m.Sum(nil)[:cursorMACSz]...)
	return cursorEncoding.EncodeToString(b)
}

func (s *Store) parseRunCursor(c string, fh []byte) (dir byte, key string, err error) {
	b, err := cursorEncoding.DecodeString(c)
	if err != nil || len(b) < 2+cursorFilterSz+cursorMACSz {
		return 0, "", fmt.Errorf("%w: malformed", ErrBadCursor)
	}
	payload, mac := b[:len(b)-cursorMACSz], b[len(b)-cursorMACSz:]
	m := hmac.New(sha256.New, s.cursorKey)
	m.Write(payload)
	if !hmac.Equal(m.Sum(nil)[:cursorMACSz], mac) {
		return 0, "", fmt.Errorf("%w: not issued by this database", ErrBadCursor)
	}
	if payload[0] != runCursorVersion || (payload[1] != dirNext && payload[1] != dirPrev) {
		return 0, "", fmt.Errorf("%w: unknown version", ErrBadCursor)
	}
	if !bytes.Equal(payload[2:2+cursorFilterSz], fh[:cursorFilterSz]) {
		return 0, "", fmt.Errorf("%w: issued for a query with other filters or order", ErrBadCursor)
	}
	return payload[1], string(payload[2+cursorFilterSz:]), nil
}

// runSortKey orders runs by the query's key, then id. Timestamps format to
// fixed-width UTC text, so they compare as strings; an unset startAt sorts
// first.
func runSortKey(r *CampaignRun, by string) string {
	switch by {
	case SortByName:
		return strings.ToLower(r.Name) + "\x00" + r.ID
	case SortByStartAt:
		return r.StartAt.String() + "\x00" + r.ID
	}
	return r.CreatedAt.String() + "\x00" + r.ID
}

// ListCampaignRuns returns one page of the org's runs. The org's run
// headers are read and sorted in memory: runs are made by operators and
// schedules, not by traffic, so an org has thousands at most, while an
// index per sort key would have to be rewritten on every progress step.
func (s *Store) ListCampaignRuns(q CampaignRunQuery) (CampaignRunPage, error) {
	var page CampaignRunPage
	err := s.db.View(func(tx *bolt.Tx) error {
		read := func(orgID string) ([]*CampaignRun, error) {
			var out []*CampaignRun
			runs := tx.Bucket(bCampaignRuns)
			prefix := []byte(orgID + "\x00")
			c := tx.Bucket(bCampaignRunIx).Cursor()
			for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
				v := runs.Get(k[len(prefix):])
				if v == nil {
					continue
				}
				r := new(CampaignRun)
				if err := json.Unmarshal(v, r); err != nil {
					return nil, fmt.Errorf("store: decode campaign run %q: %w", k[len(prefix):], err)
				}
				out = append(out, r)
			}
			return out, nil
		}
		load := func(runs []*CampaignRun, withResults bool) error {
			for _, r := range runs {
				if err := loadAttackRuns(tx, r, withResults); err != nil {
					return err
				}
			}
			return nil
		}
		var err error
		page, err = s.listCampaignRuns(q, read, load)
		return err
	})
	return page, err
}

// ListCampaignRuns pages q over the run headers read returns for an org
// (in any order); load then fills the attack runs of the page's runs.
func (c Cursors) ListCampaignRuns(q CampaignRunQuery, read func(orgID string) ([]*CampaignRun, error),
	load func(runs []*CampaignRun, withResults bool) error) (CampaignRunPage, error) {
	return c.s.listCampaignRuns(q, read, load)
}

func (s *Store) listCampaignRuns(q CampaignRunQuery, read func(orgID string) ([]*CampaignRun, error),
	load func(runs []*CampaignRun, withResults bool) error) (CampaignRunPage, error) {
	if q.Limit < 1 || q.Limit > MaxLimit {
		return CampaignRunPage{}, fmt.Errorf("%w: %d is not in 1..%d", ErrInvalidLimit, q.Limit, MaxLimit)
	}
	if q.OrgID == "" {
		return CampaignRunPage{}, errors.New("store: ListCampaignRuns needs an OrgID")
	}
	by := cmp.Or(q.SortBy, SortByCreatedAt)
	switch by {
	case SortByCreatedAt, SortByName, SortByStartAt:
	default:
		return CampaignRunPage{}, fmt.Errorf("store: unknown sort key %q", q.SortBy)
	}
	fh := q.filterHash()
	dir, bound := byte(dirNext), ""
	hasBound := q.Cursor != ""
	if hasBound {
		var err error
		if dir, bound, err = s.parseRunCursor(q.Cursor, fh); err != nil {
			return CampaignRunPage{}, err
		}
	}
	runs, err := read(q.OrgID)
	if err != nil {
		return CampaignRunPage{}, fmt.Errorf("store: list campaign runs: %w", err)
	}
	type entry struct {
		key string
		run *CampaignRun
	}
	var all []entry
	for _, r := range runs {
		if r.OrgID != q.OrgID ||
			(len(q.Statuses) > 0 && !slices.Contains(q.Statuses, r.Status)) ||
			(q.CampaignScheduleID != "" && r.ScheduleID != q.CampaignScheduleID) ||
			(q.Search != "" && !containsFold([]byte(r.Name), q.Search)) {
			continue
		}
		all = append(all, entry{runSortKey(r, by), r})
	}
	// order: the list's order; sign flips it for descending lists.
	sign := 1
	if !q.Ascending {
		sign = -1
	}
	slices.SortFunc(all, func(a, b entry) int { return sign * strings.Compare(a.key, b.key) })
	// first: index of the first entry after the boundary in list order.
	first := func(key string) int {
		i, found := slices.BinarySearchFunc(all, key, func(e entry, k string) int { return sign * strings.Compare(e.key, k) })
		if found {
			i++
		}
		return i
	}
	lo, hi := 0, min(q.Limit, len(all))
	switch {
	case hasBound && dir == dirNext:
		lo = first(bound)
		hi = min(lo+q.Limit, len(all))
	case hasBound:
		// The page before the boundary: the entries strictly
		// before it, the last Limit of them.
		i, _ := slices.BinarySearchFunc(all, bound, func(e entry, k string) int { return sign * strings.Compare(e.key, k) })
		hi = i
		lo = max(0, hi-q.Limit)
	}
	var page CampaignRunPage
	for _, e := range all[lo:hi] {
		page.Items = append(page.Items, e.run)
	}
	if len(page.Items) > 0 {
		if err := load(page.Items, q.WithResults); err != nil {
			return CampaignRunPage{}, fmt.Errorf("store: list campaign runs: %w", err)
		}
	}
	if hi < len(all) && hi > lo {
		page.Next = s.makeRunCursor(dirNext, all[hi-1].key, fh)
	}
	if lo > 0 && hi > lo {
		page.Prev = s.makeRunCursor(dirPrev, all[lo].key, fh)
	}
	// An empty page reached by a cursor (runs can leave a filter as
	// their status changes): offer the way back to what remains.
	if hi == lo && hasBound {
		if lo > 0 && dir == dirNext {
			page.Prev = s.makeRunCursor(dirPrev, bound, fh)
		}
		if hi < len(all) && dir == dirPrev {
			page.Next = s.makeRunCursor(dirNext, bound, fh)
		}
	}
	return page, nil
}
