package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/promptwall/promptwall/store"
)

// readTimeout bounds one read; the API answers 503 rather than hang.
const readTimeout = 10 * time.Second

const selectRecord = `SELECT p.seq, p.input, p.body, coalesce(s.settings, '')
FROM promptwall_prompts p LEFT JOIN promptwall_scanner_sets s ON s.ref = p.scanners_ref `

func scanRecord(rows pgx.Row) (uint64, *store.Prompt, error) {
	var (
		seq             int64
		input, settings string
		body            []byte
	)
	if err := rows.Scan(&seq, &input, &body, &settings); err != nil {
		return 0, nil, err
	}
	p := new(store.Prompt)
	if err := json.Unmarshal(body, p); err != nil {
		return 0, nil, fmt.Errorf("pgstore: corrupt record %d: %w", seq, err)
	}
	p.Input, p.Scanners, p.ScannersRef = input, settings, ""
	p.Result.Normalize()
	return uint64(seq), p, nil
}

// where builds the filter of q; the sequence bound is added by the caller.
type where struct {
	sql  strings.Builder
	args []any
}

func (w *where) add(cond string, arg any) {
	w.args = append(w.args, arg)
	w.sql.WriteString(" AND ")
	w.sql.WriteString(strings.ReplaceAll(cond, "$?", "$"+strconv.Itoa(len(w.args))))
}

func (s *Store) filterOf(q *store.Query) *where {
	w := &where{}
	w.sql.WriteString("WHERE true")
	w.add("p.org_id = $?", q.OrgID)
	if q.UserID != "" {
		w.add("p.user_id = $?", q.UserID)
	}
	for _, f := range []struct {
		col string
		set []string
	}{{"p.outcome", q.Outcomes}, {"p.project_id", q.ProjectIDs}, {"p.provider_id", q.ProviderIDs}, {"p.endpoint_id", q.EndpointIDs}} {
		if len(f.set) > 0 {
			w.add(f.col+" = ANY($?::text[])", f.set)
		}
	}
	// Bounds compare in nanoseconds: a record's millisecond is before a
	// bound with sub-millisecond digits exactly when the bbolt store says.
	if !q.Before.IsZero() {
		w.add("p.received_ms::numeric * 1000000 < $?::numeric", q.Before.UnixNano())
	}
	if !q.After.IsZero() {
		w.add("p.received_ms::numeric * 1000000 > $?::numeric", q.After.UnixNano())
	}
	if q.Search != "" {
		w.add("strpos(lower(p.input"+s.fold+"), lower($?"+s.fold+")) > 0", q.Search)
	}
	return w
}

// ListPrompts returns one page of the org's records in commit order, as
// store.Store.ListPrompts does, with the same cursors.
func (s *Store) ListPrompts(q store.Query) (store.Page, error) {
	if err := store.CheckLimit(q.Limit); err != nil {
		return store.Page{}, err
	}
	if q.OrgID == "" {
		return store.Page{}, errors.New("store: ListPrompts needs an OrgID")
	}
	forward, bound, hasBound := true, uint64(0), false
	if q.Cursor != "" {
		var err error
		if forward, bound, err = s.cursors.Parse(q.Cursor, &q); err != nil {
			return store.Page{}, err
		}
		hasBound = true
	}
	walkAsc := q.Ascending == forward
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()

	w := s.filterOf(&q)
	if hasBound {
		w.add(seqCmp(walkAsc, false), int64FromSeq(bound))
	}
	order := " ORDER BY p.seq DESC"
	if walkAsc {
		order = " ORDER BY p.seq ASC"
	}
	w.args = append(w.args, q.Limit+1)
	rows, err := s.pool.Query(ctx, selectRecord+w.sql.String()+order+" LIMIT $"+strconv.Itoa(len(w.args)), w.args...)
	if err != nil {
		return store.Page{}, wrapDB("list", err)
	}
	items := make([]*store.Prompt, 0, q.Limit)
	seqs := make([]uint64, 0, q.Limit)
	more := false
	for rows.Next() {
		if len(items) == q.Limit {
			more = true
			break
		}
		seq, p, err := scanRecord(rows)
		if err != nil {
			rows.Close()
			return store.Page{}, wrapDB("list", err)
		}
		items, seqs = append(items, p), append(seqs, seq)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return store.Page{}, wrapDB("list", err)
	}
	behind := false
	if hasBound {
		w := s.filterOf(&q)
		if len(items) > 0 {
			w.add(seqCmp(!walkAsc, false), int64FromSeq(seqs[0]))
		} else {
			w.add(seqCmp(!walkAsc, true), int64FromSeq(bound))
		}
		if err := s.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM promptwall_prompts p "+w.sql.String()+")", w.args...).Scan(&behind); err != nil {
			return store.Page{}, wrapDB("list", err)
		}
	}
	return s.cursors.Page(&q, forward, walkAsc, bound, items, seqs, more, behind), nil
}

// seqCmp is the condition "seq lies past $? walking asc (or desc)".
func seqCmp(asc, inclusive bool) string {
	op := "<"
	if asc {
		op = ">"
	}
	if inclusive {
		op += "="
	}
	return "p.seq " + op + " $?"
}

// int64FromSeq clamps a cursor's sequence into bigserial's range; a
// cursor is signed, so only an extreme boundary of an empty page gets here.
func int64FromSeq(seq uint64) int64 {
	if seq > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(seq)
}

// GetPrompt returns the record with that id, or store.ErrNotFound. An id
// whose record is queued but not yet written is read once it is written.
func (s *Store) GetPrompt(id string) (*store.Prompt, error) {
	get := func() (*store.Prompt, error) {
		ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
		defer cancel()
		return s.getPrompt(ctx, id)
	}
	return store.ReadYourWrites(s.q, get)
}

func (s *Store) getPrompt(ctx context.Context, id string) (*store.Prompt, error) {
	_, p, err := scanRecord(s.pool.QueryRow(ctx, selectRecord+"WHERE p.id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: prompt %q", store.ErrNotFound, id)
	}
	if err != nil {
		return nil, wrapDB("get", err)
	}
	return p, nil
}

// Chain returns the conversation ending at id, oldest first, walked by
// store.FollowChain. An id whose record is queued is read once it is
// written.
func (s *Store) Chain(id string) ([]*store.Prompt, error) {
	return store.ReadYourWrites(s.q, func() ([]*store.Prompt, error) { return s.chain(id) })
}

func (s *Store) chain(id string) ([]*store.Prompt, error) {
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	return store.FollowChain(id, func(cur string) (*store.Prompt, error) { return s.getPrompt(ctx, cur) })
}
