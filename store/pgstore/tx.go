package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/promptwall/promptwall/store"
)

// querier is what a pool and a transaction both offer.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// errRetry makes inTx run its function again: a row it meant to insert was
// inserted by another instance meanwhile, and the next attempt sees it.
var errRetry = errors.New("pgstore: concurrent write, retry")

// maxTxAttempts bounds the retries of one write; each retry follows a
// write that another instance committed, so running out means contention
// no caller should wait through.
const maxTxAttempts = 8

// inTx runs fn in a transaction, again when it fails with errRetry or a
// serialization failure or deadlock (both instances' work is then redone on
// fresh data). what names the operation in errors that are not the store's
// own.
func (s *Store) inTx(what string, fn func(ctx context.Context, tx pgx.Tx) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	var err error
	for range maxTxAttempts {
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return fn(ctx, tx) })
		if !errors.Is(err, errRetry) && !isRetryable(err) {
			break
		}
	}
	return wrapDB(what, err)
}

// read runs fn with a context bounded by readTimeout.
func (s *Store) read(what string, fn func(ctx context.Context, q querier) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	return wrapDB(what, fn(ctx, s.pool))
}

func isRetryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// uniqueViolation reports whether err is a unique constraint violation of
// the named constraint.
func uniqueViolation(err error, constraint string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == constraint
}

// storeErrors are the sentinels a store error is passed on with as is;
// anything else is the database's and is named by operation.
var storeErrors = []error{store.ErrNotFound, store.ErrConflict, store.ErrInvalidRecord, store.ErrBadCursor, store.ErrInvalidLimit}

func wrapDB(what string, err error) error {
	if err == nil {
		return nil
	}
	for _, e := range storeErrors {
		if errors.Is(err, e) {
			return err
		}
	}
	if unavailable(err) {
		return fmt.Errorf("%w: %s: %w", store.ErrUnavailable, what, err)
	}
	return fmt.Errorf("store: %s: %w", what, err)
}

// unavailable reports whether err means the server could not be reached
// or could not take the work now (connection failures and timeouts, and
// the SQLSTATE classes of connection exceptions, insufficient resources
// and operator intervention such as a shutdown), rather than that the
// statement itself failed.
func unavailable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "53") || strings.HasPrefix(pe.Code, "57P")
	}
	var (
		ne net.Error
		ce *pgconn.ConnectError
	)
	return errors.As(err, &ne) || errors.As(err, &ce) || pgconn.Timeout(err) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// getJSON decodes the single json column of row into v; ErrNotFound (as
// "<what> <key>") when there is no row.
func getJSON(row pgx.Row, v any, what, key string) error {
	var raw []byte
	if err := row.Scan(&raw); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: %s %q", store.ErrNotFound, what, key)
		}
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("store: decode %s: %w", what, err)
	}
	return nil
}

// found turns getJSON's ErrNotFound into found=false.
func found(err error) (bool, error) {
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// nullIfEmpty maps "" to SQL NULL, for optional unique keys.
func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// collect reads rows of one json column into a slice of new T.
func collect[T any](rows pgx.Rows, what string) ([]*T, error) {
	defer rows.Close()
	var out []*T
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		v := new(T)
		if err := json.Unmarshal(raw, v); err != nil {
			return nil, fmt.Errorf("store: decode %s: %w", what, err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// getByID reads the json body of the row of table with that id into a new
// T; store.ErrNotFound (naming what) when there is none.
func getByID[T any](s *Store, table, what, id string) (*T, error) {
	v := new(T)
	err := s.read("get "+what, func(ctx context.Context, q querier) error {
		return getJSON(q.QueryRow(ctx, `SELECT body FROM `+table+` WHERE id = $1`, id), v, what, id)
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

// putByID creates or replaces the row of table with v's id, org and body.
func putByID(s *Store, table, what, id, orgID string, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.read("put "+what, func(ctx context.Context, q querier) error {
		_, err := q.Exec(ctx, `INSERT INTO `+table+` (id, org_id, body) VALUES ($1, $2, $3)
			ON CONFLICT (id) DO UPDATE SET org_id = EXCLUDED.org_id, body = EXCLUDED.body`, id, orgID, body)
		return err
	})
}
