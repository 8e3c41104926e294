package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Provider buckets. A provider's versions are keyed by org, the provider's
// creation sequence and its version number, so one prefix scan walks an
// org's providers in creation order with each provider's versions
// together, oldest first.
var (
	bProviders   = []byte("providers")    // org\x00 seq(8) version(8) -> ProviderRecord
	bProviderSeq = []byte("provider_seq") // org\x00id -> seq(8)
)

// ProviderAvailability is Provider.availability.
type ProviderAvailability struct {
	Global     bool     `json:"global"`
	ProjectIDs []string `json:"projectIds"`
}

// ProviderRecord is one version of a provider's configuration. The store
// filters on the typed fields and serves Public as it is: the caller puts
// the spec's Provider there with secrets already masked, because nothing
// that reaches the database may hold a secret.
type ProviderRecord struct {
	ID        string `json:"id"`
	OrgID     string `json:"orgId"`
	Name      string `json:"name"`
	ProjectID string `json:"projectId"`
	// Availability says which other projects may use the provider.
	Availability ProviderAvailability `json:"availability"`
	RedTeam      bool                 `json:"redTeam"`
	// Disabled providers are listed but not "enabled" for any project.
	Disabled bool `json:"disabled"`
	// Deleted marks the version that removed the provider from the
	// config: from its EffectiveAt on, the provider is not listed.
	Deleted bool `json:"deleted"`
	// EffectiveAt is when this version took effect; zero means now.
	EffectiveAt Timestamp `json:"effectiveAt"`
	// Version counts the provider's versions from 1; set by the store.
	Version int `json:"version"`
	// Public is the spec's Provider JSON, secrets masked.
	Public json.RawMessage `json:"public"`
}

// accessibleTo reports whether project may use the provider.
func (p *ProviderRecord) accessibleTo(project string) bool {
	return p.Availability.Global || p.ProjectID == project || slices.Contains(p.Availability.ProjectIDs, project)
}

// sameConfig reports whether two versions say the same thing, so that a
// reload that changes nothing adds no version.
func (p *ProviderRecord) sameConfig(o *ProviderRecord) bool {
	return p.Name == o.Name && p.ProjectID == o.ProjectID && p.RedTeam == o.RedTeam &&
		p.Disabled == o.Disabled && p.Deleted == o.Deleted &&
		p.Availability.Global == o.Availability.Global &&
		slices.Equal(p.Availability.ProjectIDs, o.Availability.ProjectIDs) &&
		bytes.Equal(p.Public, o.Public)
}

func providerPrefix(org string) []byte { return []byte(org + "\x00") }

func providerKey(org string, seq uint64, version int) []byte {
	k := providerPrefix(org)
	k = binary.BigEndian.AppendUint64(k, seq)
	return binary.BigEndian.AppendUint64(k, uint64(version))
}

// PutProviderVersion stores p as the provider's newest version, effective
// at p.EffectiveAt (zero: now). A version identical to the newest one is
// not stored again; either way p.Version is set to the version in force.
// An EffectiveAt before the newest version's is moved up to it, so
// versions stay in time order whatever the clocks did.
func (s *Store) PutProviderVersion(p *ProviderRecord) error {
	return s.db.Update(func(tx *bolt.Tx) error { return putProviderVersion(tx, p) })
}

func putProviderVersion(tx *bolt.Tx, p *ProviderRecord) error {
	if err := CheckProviderVersion(p); err != nil {
		return err
	}
	seqs := tx.Bucket(bProviderSeq)
	sk := []byte(p.OrgID + "\x00" + p.ID)
	var seq uint64
	if v := seqs.Get(sk); len(v) == 8 {
		seq = binary.BigEndian.Uint64(v)
	} else {
		var err error
		if seq, err = seqs.NextSequence(); err != nil {
			return err
		}
		if err := seqs.Put(sk, binary.BigEndian.AppendUint64(nil, seq)); err != nil {
			return err
		}
	}
	b := tx.Bucket(bProviders)
	prefix := binary.BigEndian.AppendUint64(providerPrefix(p.OrgID), seq)
	c := b.Cursor()
	var last *ProviderRecord
	// Seek past the provider's versions and step back to its newest.
	var v []byte
	k, _ := c.Seek(binary.BigEndian.AppendUint64(bytes.Clone(prefix), ^uint64(0)))
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	if k != nil && bytes.HasPrefix(k, prefix) {
		last = new(ProviderRecord)
		if err := json.Unmarshal(v, last); err != nil {
			return fmt.Errorf("store: decode provider: %w", err)
		}
	}
	if !NextProviderVersion(p, last) {
		return nil
	}
	return putJSON(b, providerKey(p.OrgID, seq, p.Version), p)
}

// SyncProviders makes the org's stored providers match a configuration
// that took effect at `at`: each of current becomes a new version where it
// changed, and every stored provider missing from current gets a deleted
// version. It is one transaction, so configAt never sees half a reload.
func (s *Store) SyncProviders(orgID string, current []*ProviderRecord, at time.Time) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return SyncProviderSet(orgID, current, at,
			func(p *ProviderRecord) error { return putProviderVersion(tx, p) },
			func() ([]ProviderEntry, error) { return providerVersions(tx, orgID, time.Time{}) })
	})
}

// providerVersions returns, per provider of the org in creation order, the
// version in force at `at` (the newest when at is zero). Providers with no
// version by then are absent; deleted ones are included with Deleted set.
func providerVersions(tx *bolt.Tx, orgID string, at time.Time) ([]ProviderEntry, error) {
	prefix := providerPrefix(orgID)
	c := tx.Bucket(bProviders).Cursor()
	var out []ProviderEntry
	var cur *ProviderEntry
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) != len(prefix)+16 {
			continue
		}
		seq := binary.BigEndian.Uint64(k[len(prefix):])
		if cur != nil && cur.Seq != seq {
			if cur.Rec != nil {
				out = append(out, *cur)
			}
			cur = nil
		}
		if cur == nil {
			cur = &ProviderEntry{Seq: seq}
		}
		rec := new(ProviderRecord)
		if err := json.Unmarshal(v, rec); err != nil {
			return nil, fmt.Errorf("store: decode provider: %w", err)
		}
		if !at.IsZero() && rec.EffectiveAt.Time().After(at) {
			continue
		}
		cur.Rec = rec
	}
	if cur != nil && cur.Rec != nil {
		out = append(out, *cur)
	}
	return out, nil
}

// ProviderQuery selects providers for ListProviders.
// Every set filter narrows.
type ProviderQuery struct {
	// OrgID is required.
	OrgID string
	// AddedToProjectID: providers whose ProjectID is this project (also
	// the deprecated groupId).
	AddedToProjectID string
	// AccessibleToProjectID: providers the project may use: global ones,
	// the project's own, and those listing it in Availability.ProjectIDs.
	AccessibleToProjectID string
	// EnabledForProjectID: providers accessible to the project and not
	// Disabled.
	EnabledForProjectID string
	// AvailableGlobally, when set, keeps providers whose
	// Availability.Global equals it.
	AvailableGlobally *bool
	// ConfigAt lists the versions in force at that time; providers
	// created after it are absent. Zero: the current versions.
	ConfigAt time.Time
	// FilterNames restricts the list to Names (the providers of an
	// endpoint, resolved by the caller); an empty Names then lists none.
	FilterNames bool
	Names       []string
	// RedTeamOnly lists only providers marked for red-team use.
	RedTeamOnly bool
	// Limit is the page size, 1..MaxLimit.
	Limit int
	// Cursor is ProviderPage.Next or Prev of the same query.
	Cursor string
}

// ProviderPage is one page of ListProviders, in provider creation order.
type ProviderPage struct {
	Items []*ProviderRecord
	Next  string
	Prev  string
}

func (q *ProviderQuery) filterHash() []byte {
	f := newFilterHasher()
	// The domain keeps a prompts cursor from ever passing here.
	f.str("providers", q.OrgID, q.AddedToProjectID, q.AccessibleToProjectID, q.EnabledForProjectID)
	switch {
	case q.AvailableGlobally == nil:
		f.str("")
	case *q.AvailableGlobally:
		f.str("global")
	default:
		f.str("local")
	}
	f.time(q.ConfigAt)
	if q.FilterNames {
		names := sortedSet(q.Names)
		f.str(fmt.Sprint(len(names)))
		f.str(names...)
	} else {
		f.str("-")
	}
	if q.RedTeamOnly {
		f.str("redteam")
	} else {
		f.str("")
	}
	return f.h.Sum(nil)
}

func (q *ProviderQuery) match(p *ProviderRecord) bool {
	if p.Deleted {
		return false
	}
	if q.AddedToProjectID != "" && p.ProjectID != q.AddedToProjectID {
		return false
	}
	if q.AccessibleToProjectID != "" && !p.accessibleTo(q.AccessibleToProjectID) {
		return false
	}
	if q.EnabledForProjectID != "" && (p.Disabled || !p.accessibleTo(q.EnabledForProjectID)) {
		return false
	}
	if q.AvailableGlobally != nil && p.Availability.Global != *q.AvailableGlobally {
		return false
	}
	if q.FilterNames && !slices.Contains(q.Names, p.Name) {
		return false
	}
	return !q.RedTeamOnly || p.RedTeam
}

// ListProviders returns one page of the org's providers matching q, in the
// order they were first configured. An org has few providers, so the
// matching set is computed whole and the page cut from it; the cursor
// names the creation sequence of the page's edge.
func (s *Store) ListProviders(q ProviderQuery) (ProviderPage, error) {
	return s.listProviders(q, func(orgID string, at time.Time) (out []ProviderEntry, err error) {
		err = s.db.View(func(tx *bolt.Tx) error {
			out, err = providerVersions(tx, orgID, at)
			return err
		})
		return out, err
	})
}

// ListProviders pages q over the providers read returns: per provider of
// the org in creation order, the version in force at `at` (the newest when
// at is zero), deleted ones included.
func (c Cursors) ListProviders(q ProviderQuery, read func(orgID string, at time.Time) ([]ProviderEntry, error)) (ProviderPage, error) {
	return c.s.listProviders(q, read)
}

func (s *Store) listProviders(q ProviderQuery, read func(orgID string, at time.Time) ([]ProviderEntry, error)) (ProviderPage, error) {
	if q.Limit < 1 || q.Limit > MaxLimit {
		return ProviderPage{}, fmt.Errorf("%w: %d is not in 1..%d", ErrInvalidLimit, q.Limit, MaxLimit)
	}
	if q.OrgID == "" {
		return ProviderPage{}, errors.New("store: ListProviders needs an OrgID")
	}
	fh := q.filterHash()
	dir, bound, hasBound := byte(dirNext), uint64(0), false
	if q.Cursor != "" {
		var err error
		if dir, bound, err = s.parseCursor(q.Cursor, fh); err != nil {
			return ProviderPage{}, err
		}
		hasBound = true
	}
	entries, err := read(q.OrgID, q.ConfigAt)
	if err != nil {
		return ProviderPage{}, fmt.Errorf("store: list providers: %w", err)
	}
	var all []ProviderEntry
	for _, e := range entries {
		if q.match(e.Rec) {
			all = append(all, e)
		}
	}
	// [lo, hi) is the page within all.
	lo, hi := 0, 0
	switch {
	case !hasBound:
		hi = min(q.Limit, len(all))
	case dir == dirNext:
		lo, _ = slices.BinarySearchFunc(all, bound+1, func(e ProviderEntry, t uint64) int { return cmpU64(e.Seq, t) })
		hi = min(lo+q.Limit, len(all))
	default:
		hi, _ = slices.BinarySearchFunc(all, bound, func(e ProviderEntry, t uint64) int { return cmpU64(e.Seq, t) })
		lo = max(0, hi-q.Limit)
	}
	page := ProviderPage{Items: make([]*ProviderRecord, 0, hi-lo)}
	for _, e := range all[lo:hi] {
		page.Items = append(page.Items, e.Rec)
	}
	if lo < hi {
		if hi < len(all) {
			page.Next = s.makeCursor(dirNext, all[hi-1].Seq, fh)
		}
		if lo > 0 {
			page.Prev = s.makeCursor(dirPrev, all[lo].Seq, fh)
		}
	} else if hasBound {
		// An empty page (providers removed meanwhile): offer the way back.
		if dir == dirNext && lo > 0 {
			page.Prev = s.makeCursor(dirPrev, bound+1, fh)
		}
		if dir == dirPrev && hi < len(all) {
			page.Next = s.makeCursor(dirNext, bound-1, fh)
		}
	}
	return page, nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
