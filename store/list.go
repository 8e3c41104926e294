package store

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"slices"
	"time"
	"unicode"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/zap"
)

// MaxLimit is the largest page ListPrompts returns; a larger limit is an
// error, not silently lowered.
const MaxLimit = 100

// MaxChain bounds Chain, so a corrupt or hostile parent chain cannot make
// one request walk the whole database.
const MaxChain = 1000

// Query selects records for ListPrompts. Every filter narrows; an empty
// slice or zero time means "no filter".
type Query struct {
	// OrgID is required: records of other orgs are never listed.
	OrgID string
	// UserID, when set, lists only that user's records (onlyUser).
	UserID string
	// Outcomes, ProjectIDs, ProviderIDs and EndpointIDs each match any of
	// their values.
	Outcomes    []string
	ProjectIDs  []string
	ProviderIDs []string
	EndpointIDs []string
	// Search is a case-insensitive substring of Input.
	Search string
	// Before and After bound ReceivedAt, both exclusive.
	Before time.Time
	After  time.Time
	// Ascending lists oldest first; the default is newest first.
	Ascending bool
	// Limit is the page size, 1..MaxLimit.
	Limit int
	// Cursor is Page.Next or Page.Prev of an earlier page of the same
	// query.
	Cursor string
}

// Page is one page of ListPrompts. Next continues in the query's order and
// Prev returns the page before; each is "" when there is no such page.
type Page struct {
	Items []*Prompt
	Next  string
	Prev  string
}

// Cursor layout before base64url: version, direction, boundary sequence,
// the first bytes of the filter hash, then a truncated HMAC-SHA256 of all of
// it under the database's key. The boundary is exclusive: a page starts
// just past it.
const (
	cursorVersion  = 1
	dirNext        = 1
	dirPrev        = 2
	cursorFilterSz = 8
	cursorMACSz    = 16
	cursorPayload  = 2 + 8 + cursorFilterSz
	cursorLen      = cursorPayload + cursorMACSz
)

func (s *Store) makeCursor(dir byte, seq uint64, fh []byte) string {
	b := make([]byte, cursorPayload, cursorLen)
	b[0] = cursorVersion
	b[1] = dir
	binary.BigEndian.PutUint64(b[2:], seq)
	copy(b[10:], fh[:cursorFilterSz])
	m := hmac.New(sha256.New, s.cursorKey)
	m.Write(b)
	b = m.Sum(b)[:cursorLen]
	return cursorEncoding.EncodeToString(b)
}

var cursorEncoding = base64.RawURLEncoding.Strict()

func (s *Store) parseCursor(c string, fh []byte) (dir byte, seq uint64, err error) {
	// Strict: otherwise the unused low bits of the last character could
	// be changed and the tampered cursor would still decode.
	b, err := cursorEncoding.DecodeString(c)
	if err != nil || len(b) != cursorLen {
		return 0, 0, fmt.Errorf("%w: malformed", ErrBadCursor)
	}
	m := hmac.New(sha256.New, s.cursorKey)
	m.Write(b[:cursorPayload])
	if !hmac.Equal(m.Sum(nil)[:cursorMACSz], b[cursorPayload:]) {
		return 0, 0, fmt.Errorf("%w: not issued by this database", ErrBadCursor)
	}
	if b[0] != cursorVersion || (b[1] != dirNext && b[1] != dirPrev) {
		return 0, 0, fmt.Errorf("%w: unknown version", ErrBadCursor)
	}
	if !bytes.Equal(b[10:cursorPayload], fh[:cursorFilterSz]) {
		return 0, 0, fmt.Errorf("%w: issued for a query with other filters or order", ErrBadCursor)
	}
	return b[1], binary.BigEndian.Uint64(b[2:]), nil
}

// filterHash identifies everything that decides which records a query
// returns and in which order, but not the page size or the cursor: a cursor
// continues the same query, so any other query must reject it.
func (q *Query) filterHash() []byte {
	f := newFilterHasher()
	f.str(q.OrgID, q.UserID)
	for _, v := range [][]string{q.Outcomes, q.ProjectIDs, q.ProviderIDs, q.EndpointIDs} {
		v = sortedSet(v)
		binary.BigEndian.PutUint64(f.n[:], uint64(len(v)))
		f.h.Write(f.n[:])
		f.str(v...)
	}
	f.str(q.Search)
	f.time(q.Before)
	f.time(q.After)
	f.order(q.Ascending)
	return f.h.Sum(nil)
}

// filterHasher hashes what decides a list query's results, for the
// query's cursors: each string length-prefixed, so that no two different
// sequences of strings hash alike.
type filterHasher struct {
	h hash.Hash
	n [8]byte
}

func newFilterHasher() *filterHasher { return &filterHasher{h: sha256.New()} }

func (f *filterHasher) str(ss ...string) {
	for _, s := range ss {
		binary.BigEndian.PutUint64(f.n[:], uint64(len(s)))
		f.h.Write(f.n[:])
		io.WriteString(f.h, s)
	}
}

// time hashes t to the nanosecond, the zero time as "".
func (f *filterHasher) time(t time.Time) {
	if t.IsZero() {
		f.str("")
		return
	}
	f.str(t.UTC().Format(time.RFC3339Nano))
}

func (f *filterHasher) order(ascending bool) {
	if ascending {
		f.str("asc")
	} else {
		f.str("desc")
	}
}

// sortedSet is v as a set: sorted, without repeats, v itself untouched.
func sortedSet(v []string) []string {
	v = slices.Clone(v)
	slices.Sort(v)
	return slices.Compact(v)
}

// filter is a Query compiled for matching record headers without
// allocating.
type filter struct {
	outcomes, projects, providers, endpoints []string
	search                                   string
	before, after                            time.Time
}

func anyOf(set []string, v []byte) bool {
	if len(set) == 0 {
		return true
	}
	for _, s := range set {
		if string(v) == s {
			return true
		}
	}
	return false
}

func (f *filter) match(h *header) bool {
	if !anyOf(f.outcomes, h.outcome) || !anyOf(f.projects, h.project) ||
		!anyOf(f.providers, h.provider) || !anyOf(f.endpoints, h.endpoint) {
		return false
	}
	if !f.before.IsZero() || !f.after.IsZero() {
		t := time.UnixMilli(h.ms)
		if !f.before.IsZero() && !t.Before(f.before) {
			return false
		}
		if !f.after.IsZero() && !t.After(f.after) {
			return false
		}
	}
	return f.search == "" || containsFold(h.input, f.search)
}

// ListPrompts returns one page of the org's records in commit order, newest
// first unless q.Ascending. Commit order (not id or time order) makes paging
// stable while records arrive: new records only ever appear at the newest
// end, so a client walking pages never sees one twice or misses one.
func (s *Store) ListPrompts(q Query) (Page, error) {
	if q.Limit < 1 || q.Limit > MaxLimit {
		return Page{}, fmt.Errorf("%w: %d is not in 1..%d", ErrInvalidLimit, q.Limit, MaxLimit)
	}
	if q.OrgID == "" {
		return Page{}, errors.New("store: ListPrompts needs an OrgID")
	}
	fh := q.filterHash()
	dir, bound, hasBound := byte(dirNext), uint64(0), false
	if q.Cursor != "" {
		var err error
		if dir, bound, err = s.parseCursor(q.Cursor, fh); err != nil {
			return Page{}, err
		}
		hasBound = true
	}
	f := &filter{
		outcomes: q.Outcomes, projects: q.ProjectIDs, providers: q.ProviderIDs, endpoints: q.EndpointIDs,
		search: q.Search, before: q.Before, after: q.After,
	}
	// Walk the index in the page's own direction: forward in the list
	// order for next, backward for prev (then the page is reversed).
	forward := dir == dirNext
	walkAsc := q.Ascending == forward

	items := make([]*Prompt, 0, q.Limit)
	seqs := make([]uint64, 0, q.Limit)
	var more, behind bool
	err := s.db.View(func(tx *bolt.Tx) error {
		var idx *bolt.Bucket
		if q.UserID != "" {
			idx = tx.Bucket(bUserIdx).Bucket(userIndexName(q.OrgID, q.UserID))
		} else {
			idx = tx.Bucket(bOrgIdx).Bucket(orgIndexName(q.OrgID))
		}
		if idx == nil {
			return nil
		}
		w := walker{c: idx.Cursor(), rb: recordBucketsOf(tx), f: f, log: s.log}
		startMode := startFirst
		if hasBound {
			startMode = startExclusive
		}
		for h, ok := w.start(walkAsc, startMode, bound); ok; h, ok = w.next(walkAsc) {
			if len(items) == q.Limit {
				more = true
				break
			}
			p, err := decodeWithHeader(tx, h)
			if err != nil {
				s.log.Error("store: skipping undecodable record", zap.Uint64("seq", h.seq), zap.Error(err))
				continue
			}
			items = append(items, p)
			seqs = append(seqs, h.seq)
		}
		// Without a cursor the page starts at the very beginning, so
		// nothing lies behind it.
		if hasBound {
			if len(items) > 0 {
				_, behind = w.start(!walkAsc, startExclusive, seqs[0])
			} else {
				_, behind = w.start(!walkAsc, startInclusive, bound)
			}
		}
		return nil
	})
	if err != nil {
		return Page{}, fmt.Errorf("store: list: %w", err)
	}
	return s.promptPage(fh, forward, walkAsc, bound, items, seqs, more, behind), nil
}

// promptPage assembles a ListPrompts page from what a walk found: items
// and their seqs in walk order (walkAsc, in the page's own direction:
// forward for next pages), whether more lay past them, and whether any
// record lay behind the page's boundary (only looked for with a cursor).
func (s *Store) promptPage(fh []byte, forward, walkAsc bool, bound uint64, items []*Prompt, seqs []uint64, more, behind bool) Page {
	if !forward {
		slices.Reverse(items)
		slices.Reverse(seqs)
	}
	hasNext, hasPrev := more, behind
	if !forward {
		hasNext, hasPrev = behind, more
	}
	page := Page{Items: items}
	if len(items) > 0 {
		if hasNext {
			page.Next = s.makeCursor(dirNext, seqs[len(seqs)-1], fh)
		}
		if hasPrev {
			page.Prev = s.makeCursor(dirPrev, seqs[0], fh)
		}
		return page
	}
	// An empty page reached by a cursor (its records expired meanwhile):
	// everything left lies behind the boundary, and the cursor back must
	// include the boundary record itself, so it is moved one step past it.
	if behind {
		backAsc := !walkAsc
		b := bound
		switch {
		case backAsc && b > 0:
			b--
		case !backAsc && b < math.MaxUint64:
			b++
		}
		if forward {
			page.Prev = s.makeCursor(dirPrev, b, fh)
		} else {
			page.Next = s.makeCursor(dirNext, b, fh)
		}
	}
	return page
}

const (
	startFirst = iota
	startExclusive
	startInclusive
)

// walker steps through an index bucket, yielding the headers of matching
// records. Headers alias bbolt memory and die with the transaction.
type walker struct {
	c   *bolt.Cursor
	rb  recordBuckets
	f   *filter
	log *zap.Logger
}

func (w *walker) start(asc bool, mode int, from uint64) (header, bool) {
	var k, v []byte
	switch {
	case mode == startFirst && asc:
		k, v = w.c.First()
	case mode == startFirst:
		k, v = w.c.Last()
	case asc && mode == startExclusive:
		if from == math.MaxUint64 {
			return header{}, false
		}
		k, v = w.c.Seek(seqKey(from + 1))
	case asc:
		k, v = w.c.Seek(seqKey(from))
	default:
		k, v = w.c.Seek(seqKey(from))
		switch {
		case k == nil:
			k, v = w.c.Last()
		case mode == startExclusive || binary.BigEndian.Uint64(k) > from:
			k, v = w.c.Prev()
		}
	}
	return w.matchFrom(asc, k, v)
}

func (w *walker) next(asc bool) (header, bool) {
	var k, v []byte
	if asc {
		k, v = w.c.Next()
	} else {
		k, v = w.c.Prev()
	}
	return w.matchFrom(asc, k, v)
}

func (w *walker) matchFrom(asc bool, k, v []byte) (header, bool) {
	for ; k != nil; k, v = w.step(asc) {
		// An index key is the record's sequence, so a body is read by it
		// directly; records of the earlier layout are found by their id.
		raw := w.rb.records.Get(k)
		if raw == nil {
			ref, ok := w.rb.byID(v)
			if !ok {
				continue
			}
			raw = ref.body
		}
		h, err := parseHeader(raw)
		if err != nil {
			w.log.Error("store: skipping corrupt record", zap.ByteString("id", v), zap.Error(err))
			continue
		}
		if w.f.match(&h) {
			return h, true
		}
	}
	return header{}, false
}

func (w *walker) step(asc bool) ([]byte, []byte) {
	if asc {
		return w.c.Next()
	}
	return w.c.Prev()
}

// GetPrompt returns the record with that id, or ErrNotFound. An id whose
// record is queued but not yet committed is read once it is committed.
func (s *Store) GetPrompt(id string) (*Prompt, error) {
	return ReadYourWrites(s.q, func() (*Prompt, error) { return s.getPrompt(id) })
}

func (s *Store) getPrompt(id string) (*Prompt, error) {
	var p *Prompt
	err := s.db.View(func(tx *bolt.Tx) error {
		ref, ok := recordBucketsOf(tx).byID([]byte(id))
		if !ok {
			return fmt.Errorf("%w: prompt %q", ErrNotFound, id)
		}
		var err error
		p, err = decodePrompt(tx, ref.body)
		return err
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Chain returns the conversation that ends at id: the records from the root
// to id following ParentID, oldest first. It stops early (returning the part
// it has) where a parent has expired, belongs to another org, or the chain
// loops or exceeds MaxChain. ErrNotFound if id itself does not exist; an id
// whose record is queued is read once it is committed.
func (s *Store) Chain(id string) ([]*Prompt, error) {
	return ReadYourWrites(s.q, func() ([]*Prompt, error) { return s.chain(id) })
}

func (s *Store) chain(id string) ([]*Prompt, error) {
	var chain []*Prompt
	err := s.db.View(func(tx *bolt.Tx) error {
		rb := recordBucketsOf(tx)
		var err error
		chain, err = FollowChain(id, func(cur string) (*Prompt, error) {
			ref, ok := rb.byID([]byte(cur))
			if !ok {
				return nil, fmt.Errorf("%w: prompt %q", ErrNotFound, cur)
			}
			return decodePrompt(tx, ref.body)
		})
		return err
	})
	return chain, err
}

// FollowChain is Chain's walk, the same in every engine: from id through
// ParentID with get, stopping where a parent has expired (get returns
// ErrNotFound), belongs to another org, or the chain loops or reaches
// MaxChain. It returns the chain oldest first; a missing id itself is
// get's error.
func FollowChain(id string, get func(id string) (*Prompt, error)) ([]*Prompt, error) {
	var chain []*Prompt
	seen := make(map[string]bool)
	for cur := id; len(chain) < MaxChain && !seen[cur]; {
		p, err := get(cur)
		if errors.Is(err, ErrNotFound) && len(chain) > 0 {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(chain) > 0 && p.OrgID != chain[0].OrgID {
			break
		}
		seen[cur] = true
		chain = append(chain, p)
		if p.ParentID == "" {
			break
		}
		cur = p.ParentID
	}
	slices.Reverse(chain)
	return chain, nil
}

// containsFold reports whether substr occurs in s under Unicode simple case
// folding (the folding of strings.EqualFold), without allocating: s is
// bbolt memory that would otherwise be copied for every record scanned.
func containsFold(s []byte, substr string) bool {
	if substr == "" {
		return true
	}
	if c := substr[0]; c < utf8.RuneSelf && !asciiFoldsWide[c] {
		// Only the ASCII case variants of c can start a match, so jump
		// between them with the vectorised IndexByte.
		lo, up := c, c
		if 'A' <= c && c <= 'Z' {
			lo += 'a' - 'A'
		} else if 'a' <= c && c <= 'z' {
			up -= 'a' - 'A'
		}
		for len(s) >= len(substr) {
			i := bytes.IndexByte(s, lo)
			if lo != up {
				end := len(s)
				if i >= 0 {
					end = i
				}
				if j := bytes.IndexByte(s[:end], up); j >= 0 {
					i = j
				}
			}
			if i < 0 {
				return false
			}
			if hasPrefixFold(s[i:], substr) {
				return true
			}
			s = s[i+1:]
		}
		return false
	}
	for i := 0; i < len(s); {
		if hasPrefixFold(s[i:], substr) {
			return true
		}
		if s[i] < utf8.RuneSelf {
			i++
		} else {
			_, n := utf8.DecodeRune(s[i:])
			i += n
		}
	}
	return false
}

// asciiFoldsWide marks the ASCII bytes that fold to a non-ASCII rune (k to
// the Kelvin sign, s to the long s): a match for them may start on a
// multi-byte rune.
var asciiFoldsWide = func() (t [utf8.RuneSelf]bool) {
	for c := rune(0); c < utf8.RuneSelf; c++ {
		for r := unicode.SimpleFold(c); r != c; r = unicode.SimpleFold(r) {
			if r >= utf8.RuneSelf {
				t[c] = true
			}
		}
	}
	return t
}()

// hasPrefixFold is strings.EqualFold's rune comparison, stopping when t is
// used up.
func hasPrefixFold(s []byte, t string) bool {
	for t != "" {
		if len(s) == 0 {
			return false
		}
		var sr, tr rune
		if s[0] < utf8.RuneSelf {
			sr, s = rune(s[0]), s[1:]
		} else {
			r, n := utf8.DecodeRune(s)
			sr, s = r, s[n:]
		}
		if t[0] < utf8.RuneSelf {
			tr, t = rune(t[0]), t[1:]
		} else {
			r, n := utf8.DecodeRuneInString(t)
			tr, t = r, t[n:]
		}
		if sr == tr {
			continue
		}
		if tr < sr {
			sr, tr = tr, sr
		}
		if tr < utf8.RuneSelf {
			if 'A' <= sr && sr <= 'Z' && tr == sr+'a'-'A' {
				continue
			}
			return false
		}
		r := unicode.SimpleFold(sr)
		for r != sr && r < tr {
			r = unicode.SimpleFold(r)
		}
		if r != tr {
			return false
		}
	}
	return true
}
