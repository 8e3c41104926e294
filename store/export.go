package store

import (
	"fmt"
	"time"
)

// PrepareRecord checks p and fills what Commit fills (an empty ID, a zero
// ReceivedAt, truncated to milliseconds as stored), the same rules for
// every backend. It fails with ErrInvalidRecord.
func PrepareRecord(p *Prompt) error {
	if p.ID == "" {
		p.ID = NewID()
	}
	if p.ReceivedAt.IsZero() {
		p.ReceivedAt = Timestamp(time.Now().UTC())
	}
	p.ReceivedAt = Timestamp(p.ReceivedAt.Time().UTC().Truncate(time.Millisecond))
	if err := validateKeyPart("id", p.ID, true); err != nil {
		return err
	}
	if err := validateKeyPart("orgId", p.OrgID, true); err != nil {
		return err
	}
	return validateKeyPart("userId", p.UserID, false)
}

// AppendPromptJSON appends p as the API and the bbolt store write it.
func AppendPromptJSON(b []byte, p *Prompt) ([]byte, error) {
	b, err := appendPromptJSON(b, p)
	if err != nil {
		return b, fmt.Errorf("%w: %v", ErrInvalidRecord, err)
	}
	return b, nil
}

// Cursors signs and checks ListPrompts cursors under a key, in the form
// *Store issues them: a backend using the same key issues cursors any
// instance accepts, and a cursor from any other database is refused.
type Cursors struct{ s *Store }

// NewCursors returns the cursor codec of key (at least 32 bytes).
func NewCursors(key []byte) (Cursors, error) {
	if len(key) < 32 {
		return Cursors{}, fmt.Errorf("store: a cursor key needs at least 32 bytes, got %d", len(key))
	}
	return Cursors{s: &Store{cursorKey: append([]byte(nil), key...)}}, nil
}

// Make returns the cursor of the page continuing past seq in q's order
// (next) or before it (prev).
func (c Cursors) Make(next bool, seq uint64, q *Query) string {
	dir := byte(dirPrev)
	if next {
		dir = dirNext
	}
	return c.s.makeCursor(dir, seq, q.filterHash())
}

// Parse checks a cursor against q and returns its direction and boundary.
// Errors wrap ErrBadCursor.
func (c Cursors) Parse(cursor string, q *Query) (next bool, seq uint64, err error) {
	dir, seq, err := c.s.parseCursor(cursor, q.filterHash())
	return dir == dirNext, seq, err
}

// Page assembles a ListPrompts page of q as *Store does, from what a walk
// found: items and their seqs in walk order (walkAsc; a walk goes in the
// page's own direction, forward for a next page), whether more matched
// past them, and whether any matching record lay behind the boundary of a
// cursor (bound).
func (c Cursors) Page(q *Query, forward, walkAsc bool, bound uint64, items []*Prompt, seqs []uint64, more, behind bool) Page {
	return c.s.promptPage(q.filterHash(), forward, walkAsc, bound, items, seqs, more, behind)
}

// CheckLimit is ListPrompts' page size rule: 1..MaxLimit, else
// ErrInvalidLimit.
func CheckLimit(limit int) error {
	if limit < 1 || limit > MaxLimit {
		return fmt.Errorf("%w: %d is not in 1..%d", ErrInvalidLimit, limit, MaxLimit)
	}
	return nil
}
