package store

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// UserQuery selects users for ListUsers. Every filter narrows.
type UserQuery struct {
	// OrgID is required: users of other orgs are never listed.
	OrgID string
	// Search is a case-insensitive substring of the name or the e-mail.
	Search string
	// Project keeps users whose Projects include it.
	Project string
	// GroupID keeps users whose GroupIDs include it.
	GroupID string
	// RoleID keeps users whose role has that id.
	RoleID string
	// Limit is the page size, 1..MaxLimit.
	Limit int
	// Cursor is UserPage.Next or Prev of an earlier page of the same query.
	Cursor string
}

// UserPage is one page of ListUsers.
type UserPage struct {
	Items []*User
	Next  string
	Prev  string
}

func (q *UserQuery) filterHash() []byte {
	f := newFilterHasher()
	// The domain keeps a users cursor from continuing any other list.
	f.str("users", q.OrgID, q.Search, q.Project, q.GroupID, q.RoleID)
	return f.h.Sum(nil)
}

func (q *UserQuery) match(u *User) bool {
	if q.Project != "" && !slices.Contains(u.Projects, q.Project) {
		return false
	}
	if q.GroupID != "" && !slices.Contains(u.GroupIDs, q.GroupID) {
		return false
	}
	if q.RoleID != "" && u.RoleID() != q.RoleID {
		return false
	}
	return q.Search == "" || containsFold([]byte(u.Name), q.Search) || containsFold([]byte(u.Email), q.Search)
}

// Key cursors page through lists ordered by a key (not by commit
// sequence). Layout before base64url: version 2, flags (direction, and
// whether the boundary key itself belongs to the page), filter hash prefix,
// the boundary key, then a truncated HMAC-SHA256 of all of it. Version 2
// and the filter hash's domain keep them apart from record cursors.
const (
	keyCursorVersion = 2
	keyCursorIncl    = 0x10
	keyCursorHead    = 2 + cursorFilterSz
)

func (s *Store) makeKeyCursor(dir byte, inclusive bool, key, fh []byte) string {
	flags := dir
	if inclusive {
		flags |= keyCursorIncl
	}
	b := make([]byte, 0, keyCursorHead+len(key)+cursorMACSz)
	b = append(b, keyCursorVersion, flags)
	b = append(b, fh[:cursorFilterSz]...)
	b = append(b, key...)
	m := hmac.New(sha256.New, s.cursorKey)
	m.Write(b)
	b = m.Sum(b)[:len(b)+cursorMACSz]
	return cursorEncoding.EncodeToString(b)
}

func (s *Store) parseKeyCursor(c string, fh []byte) (dir byte, inclusive bool, key []byte, err error) {
	b, err := cursorEncoding.DecodeString(c)
	if err != nil || len(b) < keyCursorHead+cursorMACSz || len(b) > keyCursorHead+maxIDLen+cursorMACSz {
		return 0, false, nil, fmt.Errorf("%w: malformed", ErrBadCursor)
	}
	body, mac := b[:len(b)-cursorMACSz], b[len(b)-cursorMACSz:]
	m := hmac.New(sha256.New, s.cursorKey)
	m.Write(body)
	if !hmac.Equal(m.Sum(nil)[:cursorMACSz], mac) {
		return 0, false, nil, fmt.Errorf("%w: not issued by this database", ErrBadCursor)
	}
	dir = body[1] &^ keyCursorIncl
	if body[0] != keyCursorVersion || (dir != dirNext && dir != dirPrev) {
		return 0, false, nil, fmt.Errorf("%w: unknown version", ErrBadCursor)
	}
	if !bytes.Equal(body[2:keyCursorHead], fh[:cursorFilterSz]) {
		return 0, false, nil, fmt.Errorf("%w: issued for a query with other filters", ErrBadCursor)
	}
	return dir, body[1]&keyCursorIncl != 0, slices.Clone(body[keyCursorHead:]), nil
}

// walkPrefix calls fn for the keys under prefix in order (asc) or reverse,
// starting at bound (with or without it) or at the end when bound is nil,
// until fn returns false. fn gets the key without the prefix.
func walkPrefix(b *bolt.Bucket, prefix []byte, asc bool, bound []byte, inclusive bool, fn func(k []byte) bool) {
	c := b.Cursor()
	var k []byte
	target := append(slices.Clone(prefix), bound...)
	switch {
	case asc && bound == nil:
		k, _ = c.Seek(prefix)
	case asc:
		k, _ = c.Seek(target)
		if k != nil && !inclusive && bytes.Equal(k, target) {
			k, _ = c.Next()
		}
	default:
		if bound == nil {
			// Just past the prefix: the prefix with its last byte
			// incremented (prefixes end in NUL, so no carry).
			target = slices.Clone(prefix)
			target[len(target)-1]++
			inclusive = false
		}
		k, _ = c.Seek(target)
		switch {
		case k == nil:
			k, _ = c.Last()
		case !(inclusive && bytes.Equal(k, target)):
			k, _ = c.Prev()
		}
	}
	for ; k != nil && bytes.HasPrefix(k, prefix); k = step(c, asc) {
		if !fn(k[len(prefix):]) {
			return
		}
	}
}

func step(c *bolt.Cursor, asc bool) []byte {
	var k []byte
	if asc {
		k, _ = c.Next()
	} else {
		k, _ = c.Prev()
	}
	return k
}

// UserWalk calls fn with the users of one org in id order (ascending when
// asc, else descending), starting just past bound (at it when inclusive),
// or at the first (last) user when bound is nil, until fn returns false.
type UserWalk func(asc bool, bound []byte, inclusive bool, fn func(*User) bool) error

// ListUsers returns one page of the org's users ordered by id, highest
// first: newest first for the UUIDv7 ids CreateUser assigns. Next and Prev
// are "" when there is no such page.
func (s *Store) ListUsers(q UserQuery) (UserPage, error) {
	var page UserPage
	err := s.db.View(func(tx *bolt.Tx) error {
		orgUsers, users := tx.Bucket(bOrgUsers), tx.Bucket(bUsers)
		prefix := []byte(q.OrgID + "\x00")
		var err error
		page, err = s.listUsers(q, func(asc bool, bound []byte, inclusive bool, fn func(*User) bool) error {
			var derr error
			walkPrefix(orgUsers, prefix, asc, bound, inclusive, func(id []byte) bool {
				u := new(User)
				if err := getJSON(users, id, u, "user"); err != nil {
					if !isNotFound(err) {
						derr = err
						return false
					}
					return true
				}
				return fn(u)
			})
			return derr
		})
		return err
	})
	return page, err
}

// ListUsers pages q over the users walk yields, as the bbolt store does.
func (c Cursors) ListUsers(q UserQuery, walk UserWalk) (UserPage, error) {
	return c.s.listUsers(q, walk)
}

func (s *Store) listUsers(q UserQuery, walk UserWalk) (UserPage, error) {
	if q.Limit < 1 || q.Limit > MaxLimit {
		return UserPage{}, fmt.Errorf("%w: %d is not in 1..%d", ErrInvalidLimit, q.Limit, MaxLimit)
	}
	if q.OrgID == "" {
		return UserPage{}, errors.New("store: ListUsers needs an OrgID")
	}
	fh := q.filterHash()
	dir, incl, bound := byte(dirNext), false, []byte(nil)
	if q.Cursor != "" {
		var err error
		if dir, incl, bound, err = s.parseKeyCursor(q.Cursor, fh); err != nil {
			return UserPage{}, err
		}
	}
	forward := dir == dirNext
	walkAsc := !forward // the list is descending

	var items []*User
	var more, behind bool
	err := walk(walkAsc, bound, incl, func(u *User) bool {
		if !q.match(u) {
			return true
		}
		if len(items) == q.Limit {
			more = true
			return false
		}
		items = append(items, u)
		return true
	})
	if err == nil && bound != nil {
		// Is anything left on the other side of this page?
		from, fromIncl := bound, !incl
		if len(items) > 0 {
			from, fromIncl = []byte(items[0].ID), false
		}
		err = walk(!walkAsc, from, fromIncl, func(u *User) bool {
			behind = q.match(u)
			return !behind
		})
	}
	if err != nil {
		return UserPage{}, fmt.Errorf("store: list users: %w", err)
	}
	if !forward {
		slices.Reverse(items)
	}
	hasNext, hasPrev := more, behind
	if !forward {
		hasNext, hasPrev = behind, more
	}
	page := UserPage{Items: items}
	if len(items) > 0 {
		if hasNext {
			page.Next = s.makeKeyCursor(dirNext, false, []byte(items[len(items)-1].ID), fh)
		}
		if hasPrev {
			page.Prev = s.makeKeyCursor(dirPrev, false, []byte(items[0].ID), fh)
		}
		return page, nil
	}
	// An empty page reached by a cursor (its users were removed or no
	// longer match): what is left lies behind the boundary, which is
	// itself included if this page excluded it.
	if behind {
		if forward {
			page.Prev = s.makeKeyCursor(dirPrev, !incl, bound, fh)
		} else {
			page.Next = s.makeKeyCursor(dirNext, !incl, bound, fh)
		}
	}
	return page, nil
}
