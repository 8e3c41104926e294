package store

import (
	"cmp"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The rules every Backend applies the same way, whatever holds the data:
// validation, defaults, version numbering, ordering and pagination. The
// bbolt store calls them, and so must any other engine, so that the API
// cannot tell the engines apart.

// WriteMode says whether a write must create (ErrConflict when the id is
// taken), must replace (ErrNotFound when it is not), or may do either.
type WriteMode int

// Write modes of orgs and users.
const (
	WritePut WriteMode = iota
	WriteCreate
	WriteUpdate
)

// CheckOrg validates o for a write in mode; creating gives an empty ID a
// new UUIDv7. Creating and updating require a name.
func CheckOrg(o *Org, mode WriteMode) error {
	if mode == WriteCreate && o.ID == "" {
		o.ID = NewID()
	}
	return validateOrg(o, mode != WritePut)
}

// MergeOrg fills o from the stored version old (nil when there is none):
// it enforces mode, keeps old's CreatedAt when o's is zero, gives a new org
// with zero Features DefaultFeatures, and sets the role ids.
func MergeOrg(o, old *Org, mode WriteMode) error {
	switch {
	case mode == WriteCreate && old != nil:
		return fmt.Errorf("%w: org %q", ErrConflict, o.ID)
	case mode == WriteUpdate && old == nil:
		return fmt.Errorf("%w: org %q", ErrNotFound, o.ID)
	}
	if old != nil && o.CreatedAt.IsZero() {
		o.CreatedAt = old.CreatedAt
	}
	if old == nil && o.Features == (Features{}) {
		o.Features = DefaultFeatures()
	}
	stamp(&o.CreatedAt)
	setRoleIDs(o)
	return nil
}

func setRoleIDs(o *Org) {
	o.OwnerRoleID, o.AdminRoleID, o.MemberRoleID = RoleID(o.ID, RoleOwner), RoleID(o.ID, RoleAdmin), RoleID(o.ID, RoleMember)
}

// FoldName is the form under which org names and user e-mails are unique:
// trimmed and lower-cased.
func FoldName(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// OrgNameTaken is the error of a write giving o another org's name.
func OrgNameTaken(name string) error {
	return fmt.Errorf("%w: org name %q is taken", ErrConflict, name)
}

// CheckUser validates u for a write in mode; creating gives an empty ID a
// new UUIDv7 and requires an e-mail.
func CheckUser(u *User, mode WriteMode) error {
	if mode == WriteCreate {
		if u.ID == "" {
			u.ID = NewID()
		}
		if u.Email == "" {
			return invalid("e-mail is required")
		}
	}
	return validateUser(u)
}

// MergeUser fills u from the stored version old (nil when there is none):
// it enforces mode and keeps old's CreatedAt when u's is zero.
func MergeUser(u, old *User, mode WriteMode) error {
	switch {
	case mode == WriteCreate && old != nil:
		return fmt.Errorf("%w: user %q", ErrConflict, u.ID)
	case mode == WriteUpdate && old == nil:
		return fmt.Errorf("%w: user %q", ErrNotFound, u.ID)
	}
	if old != nil && u.CreatedAt.IsZero() {
		u.CreatedAt = old.CreatedAt
	}
	stamp(&u.CreatedAt)
	return nil
}

// UserOrgMissing is the error of a user written into an org that does not
// exist.
func UserOrgMissing(u *User) error {
	return fmt.Errorf("%w: org %q of user %q", ErrNotFound, u.OrgID, u.ID)
}

// EmailTaken is the error of a user given the e-mail of another user of
// its org.
func EmailTaken(u *User) error {
	return fmt.Errorf("%w: e-mail %q is taken in org %q", ErrConflict, u.Email, u.OrgID)
}

// CheckToken validates t for PutToken, giving an empty ID a new id and a
// zero CreatedAt now.
func CheckToken(t *Token) error {
	if t.Hash == [32]byte{} {
		return invalid("token hash is required")
	}
	if t.ID == "" {
		t.ID = NewID()
	}
	if err := validateKeyPart("token name", t.Name, false); err != nil {
		return err
	}
	stamp(&t.CreatedAt)
	return nil
}

// TokenOwnerCheck is the rule tying a token to its user: the user exists
// (u is nil otherwise) and belongs to the token's org, so a token never
// grants access across orgs; with issuing set, the user must also not be
// blocked.
func TokenOwnerCheck(t *Token, u *User, issuing bool) error {
	if u == nil {
		return fmt.Errorf("%w: user %q", ErrNotFound, t.UserID)
	}
	if issuing && u.Blocked {
		return invalid("user %q is blocked", u.ID)
	}
	if u.OrgID != t.OrgID {
		return invalid("user %q belongs to org %q, not %q", u.ID, u.OrgID, t.OrgID)
	}
	return nil
}

// TokenIDTaken is the error of a token given the id of another token.
func TokenIDTaken(id string) error { return fmt.Errorf("%w: token id %q", ErrConflict, id) }

// TokenNotFound is ErrNotFound for a token. It never names the hash: that
// is as good as the token for anyone who can replay a lookup.
func TokenNotFound() error { return fmt.Errorf("%w: token", ErrNotFound) }

// NewToken draws a new token for userID: "pw_" and 32 random bytes in
// base64url, returned in clear once; the Token holds its SHA-256.
func NewToken(userID, name string) (string, *Token, error) {
	if err := validateKeyPart("token name", name, false); err != nil {
		return "", nil, err
	}
	raw := make([]byte, tokenBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", nil, fmt.Errorf("store: token: %w", err)
	}
	clear := TokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
	t := &Token{Hash: HashToken(clear), ID: NewID(), Name: name, UserID: userID}
	stamp(&t.CreatedAt)
	return clear, t, nil
}

// TouchDue reports whether TouchToken at `at` rewrites a token last used
// at lastUsed: at most once per minute, because LastUsedAt is for humans
// spotting stale tokens and a write per request would cost every API call
// a commit.
func TouchDue(lastUsed Timestamp, at time.Time) bool {
	return at.Sub(lastUsed.Time()) >= touchInterval
}

// TouchTime is the LastUsedAt that TouchToken stores for `at`.
func TouchTime(at time.Time) Timestamp { return Timestamp(at.UTC().Truncate(time.Millisecond)) }

// CheckProviderVersion validates p for PutProviderVersion and normalises
// EffectiveAt (zero: now) to UTC milliseconds.
func CheckProviderVersion(p *ProviderRecord) error {
	if err := validateKeyPart("provider id", p.ID, true); err != nil {
		return err
	}
	if err := validateKeyPart("provider orgId", p.OrgID, true); err != nil {
		return err
	}
	if p.Name == "" && !p.Deleted {
		return invalid("provider %q has no name", p.ID)
	}
	if p.Public != nil && !json.Valid(p.Public) {
		return invalid("provider %q: public is not JSON", p.ID)
	}
	stamp(&p.EffectiveAt)
	p.EffectiveAt = Timestamp(p.EffectiveAt.Time().UTC().Truncate(time.Millisecond))
	return nil
}

// NextProviderVersion numbers p against the provider's newest stored
// version last (nil when there is none) and reports whether p must be
// stored. A version saying what the newest says is not stored again, nor
// is the deletion of a provider never stored; either way p.Version is the
// version in force. An EffectiveAt before the newest version's is moved up
// to it, so versions stay in time order whatever the clocks did.
func NextProviderVersion(p, last *ProviderRecord) (store bool) {
	if last == nil {
		p.Version = 1
		return !p.Deleted
	}
	if p.sameConfig(last) {
		p.Version, p.EffectiveAt = last.Version, last.EffectiveAt
		return false
	}
	if p.EffectiveAt.Time().Before(last.EffectiveAt.Time()) {
		p.EffectiveAt = last.EffectiveAt
	}
	p.Version = last.Version + 1
	return true
}

// ProviderEntry is a provider's version in force, with the provider's
// creation sequence: providers list in that order, and cursors hold it.
type ProviderEntry struct {
	Seq uint64
	Rec *ProviderRecord
}

// SyncProviderSet is SyncProviders' rule over an engine's transaction:
// every provider of current is put (with put, which numbers versions as
// PutProviderVersion does) effective at `at`, then every provider latest
// lists that current lacks gets a deleted version.
func SyncProviderSet(orgID string, current []*ProviderRecord, at time.Time,
	put func(*ProviderRecord) error, latest func() ([]ProviderEntry, error)) error {
	at = at.UTC().Truncate(time.Millisecond)
	keep := make(map[string]bool, len(current))
	for _, p := range current {
		p.OrgID = orgID
		p.EffectiveAt = Timestamp(at)
		if err := put(p); err != nil {
			return err
		}
		keep[p.ID] = true
	}
	entries, err := latest()
	if err != nil {
		return err
	}
	for _, e := range entries {
		if keep[e.Rec.ID] || e.Rec.Deleted {
			continue
		}
		gone := *e.Rec
		gone.Deleted = true
		gone.EffectiveAt = Timestamp(at)
		if err := put(&gone); err != nil {
			return err
		}
	}
	return nil
}

// PrepareChat validates a new chat and fills its defaults: an empty ID is
// NewID(), zero times are now, a nil access list is empty.
func PrepareChat(c *Chat) error {
	if c.ID == "" {
		c.ID = NewID()
	}
	if err := validateKeyPart("chat id", c.ID, true); err != nil {
		return err
	}
	if err := validateKeyPart("chat orgId", c.OrgID, true); err != nil {
		return err
	}
	stamp(&c.CreatedAt)
	if c.UpdatedAt.IsZero() {
		c.UpdatedAt = c.CreatedAt
	}
	c.normalize()
	return nil
}

// ChatExists is the error of CreateChat given a taken id.
func ChatExists(id string) error { return invalid("chat %q exists", id) }

// UpdateChatWith applies fn to c as UpdateChat does: the fields fn may not
// change are restored and UpdatedAt is set to now.
func UpdateChatWith(c *Chat, fn func(*Chat) error) error {
	orig := *c
	if err := fn(c); err != nil {
		return err
	}
	c.ID, c.OrgID, c.UserID, c.CreatedAt = orig.ID, orig.OrgID, orig.UserID, orig.CreatedAt
	c.UpdatedAt = Timestamp(time.Now().UTC().Truncate(time.Millisecond))
	c.normalize()
	return nil
}

// NormalizeChat gives a chat read back from storage the shape GetChat
// returns.
func NormalizeChat(c *Chat) { c.normalize() }

// CheckPromptID validates the prompt id of AddChatPrompt and
// AddTemplatePrompt.
func CheckPromptID(id string) error { return validateKeyPart("prompt id", id, true) }

// LastPrompts keeps the newest MaxChain of a chat's or template's prompt
// ids, which are oldest first.
func LastPrompts(ids []string) []string {
	if len(ids) > MaxChain {
		return ids[len(ids)-MaxChain:]
	}
	return ids
}

// PreparePromptTemplate validates a new template and fills its defaults:
// an empty ID is NewID(), a zero CreatedAt now.
func PreparePromptTemplate(t *PromptTemplate) error {
	if t.ID == "" {
		t.ID = NewID()
	}
	if err := validateKeyPart("template id", t.ID, true); err != nil {
		return err
	}
	if err := validateKeyPart("template orgId", t.OrgID, true); err != nil {
		return err
	}
	stamp(&t.CreatedAt)
	return nil
}

// PromptTemplateExists is the error of CreatePromptTemplate given a taken
// id.
func PromptTemplateExists(id string) error { return invalid("prompt template %q exists", id) }

// PrepareCampaign validates c for PutCampaign: a zero CreatedAt is now,
// UpdatedAt is always now.
func PrepareCampaign(c *Campaign) error {
	if err := validateKeyPart("campaign id", c.ID, true); err != nil {
		return err
	}
	if err := validateKeyPart("campaign orgId", c.OrgID, true); err != nil {
		return err
	}
	stamp(&c.CreatedAt)
	c.UpdatedAt = Timestamp{}
	stamp(&c.UpdatedAt)
	return nil
}

// SortCampaigns orders campaigns as ListCampaigns returns them: by name,
// then id.
func SortCampaigns(cs []*Campaign) {
	slices.SortFunc(cs, func(a, b *Campaign) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
	})
}

// PrepareCampaignSchedule validates sc for PutCampaignSchedule; a zero
// CreatedAt is now.
func PrepareCampaignSchedule(sc *CampaignSchedule) error {
	if err := validateKeyPart("schedule id", sc.ID, true); err != nil {
		return err
	}
	if err := validateKeyPart("schedule orgId", sc.OrgID, true); err != nil {
		return err
	}
	stamp(&sc.CreatedAt)
	return nil
}

// CheckCampaignRun validates a run header for CreateCampaignRun (which
// also sets a zero CreatedAt to now: creating) and SaveCampaignRun.
func CheckCampaignRun(r *CampaignRun, creating bool) error {
	if err := validateRun(r); err != nil {
		return err
	}
	if creating {
		stamp(&r.CreatedAt)
	}
	return nil
}

// CheckAttackRuns validates attack runs written with run r: each has an id
// and belongs to r.
func CheckAttackRuns(r *CampaignRun, ars []*AttackRun) error {
	for _, ar := range ars {
		if err := validateKeyPart("attack run id", ar.ID, true); err != nil {
			return err
		}
		if ar.CampaignRunID != r.ID {
			return invalid("attack run %q belongs to run %q, not %q", ar.ID, ar.CampaignRunID, r.ID)
		}
	}
	return nil
}

// CampaignRunExists is the error of CreateCampaignRun given a taken id.
func CampaignRunExists(id string) error { return invalid("campaign run %q already exists", id) }

// CampaignRunOfOtherOrg is the error of SaveCampaignRun given a run whose
// stored org is another.
func CampaignRunOfOtherOrg(id, org string) error {
	return invalid("campaign run %q belongs to org %q", id, org)
}

// RunHeader is r without its attack runs, as run headers are stored.
func RunHeader(r *CampaignRun) *CampaignRun {
	h := *r
	h.AttackRuns = nil
	return &h
}

// SortAttackRuns puts attack runs, given in id order, in plan order.
func SortAttackRuns(ars []*AttackRun) {
	slices.SortStableFunc(ars, func(a, b *AttackRun) int { return cmp.Compare(a.Index, b.Index) })
}
