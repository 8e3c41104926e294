package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/promptwall/promptwall/store"
)

// Every write below reads the stored row FOR UPDATE and inserts with ON
// CONFLICT DO NOTHING: two instances applying the same configuration at
// once serialize on the row, or, when neither found it, one inserts and the
// other retries and finds it. Names, e-mails and token ids are unique by
// constraint, so no interleaving can store a duplicate; a write checks
// them first, so that a violation can only come from a write committed
// meanwhile, and is retried to be judged on what that write left.

const selectOrg = `SELECT o.body, EXISTS (SELECT 1 FROM promptwall_users u
	WHERE u.org_id = o.id AND u.role = 'owner' AND NOT u.blocked)
FROM promptwall_orgs o `

func scanOrg(row pgx.Row) (*store.Org, error) {
	var raw []byte
	o := new(store.Org)
	if err := row.Scan(&raw, &o.HasOwner); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, o); err != nil {
		return nil, fmt.Errorf("store: decode org: %w", err)
	}
	// Role ids are derived, whatever an older writer stored.
	o.OwnerRoleID, o.AdminRoleID, o.MemberRoleID = store.RoleID(o.ID, store.RoleOwner),
		store.RoleID(o.ID, store.RoleAdmin), store.RoleID(o.ID, store.RoleMember)
	return o, nil
}

func (s *Store) writeOrg(o *store.Org, mode store.WriteMode) error {
	if err := store.CheckOrg(o, mode); err != nil {
		return err
	}
	return s.inTx("write org", func(ctx context.Context, tx pgx.Tx) error {
		var old *store.Org
		ok, err := found(getJSON(tx.QueryRow(ctx, `SELECT body FROM promptwall_orgs WHERE id = $1 FOR UPDATE`, o.ID), &old, "org", o.ID))
		if err != nil {
			return err
		}
		if !ok {
			old = nil // getJSON may have allocated it
		}
		if err := store.MergeOrg(o, old, mode); err != nil {
			return err
		}
		body, err := json.Marshal(o)
		if err != nil {
			return err
		}
		nameKey := nullIfEmpty(store.FoldName(o.Name))
		if nameKey != nil {
			var owner string
			err := tx.QueryRow(ctx, `SELECT id FROM promptwall_orgs WHERE name_key = $1`, *nameKey).Scan(&owner)
			if err == nil && owner != o.ID {
				return store.OrgNameTaken(o.Name)
			}
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
		}
		if old != nil {
			_, err = tx.Exec(ctx, `UPDATE promptwall_orgs SET name_key = $2, body = $3 WHERE id = $1`, o.ID, nameKey, body)
		} else {
			var tag pgconn.CommandTag
			tag, err = tx.Exec(ctx, `INSERT INTO promptwall_orgs (id, name_key, body) VALUES ($1, $2, $3)
				ON CONFLICT (id) DO NOTHING`, o.ID, nameKey, body)
			if err == nil && tag.RowsAffected() == 0 {
				return errRetry
			}
		}
		if uniqueViolation(err, "promptwall_orgs_name_key_key") {
			return errRetry
		}
		return err
	})
}

// PutOrg creates or replaces an org, as store.Store.PutOrg.
func (s *Store) PutOrg(o *store.Org) error { return s.writeOrg(o, store.WritePut) }

// CreateOrg creates a new org, as store.Store.CreateOrg.
func (s *Store) CreateOrg(o *store.Org) error { return s.writeOrg(o, store.WriteCreate) }

// UpdateOrg replaces an existing org, as store.Store.UpdateOrg.
func (s *Store) UpdateOrg(o *store.Org) error { return s.writeOrg(o, store.WriteUpdate) }

func (s *Store) getOrg(where, key string) (*store.Org, error) {
	var o *store.Org
	err := s.read("get org", func(ctx context.Context, q querier) error {
		var err error
		o, err = scanOrg(q.QueryRow(ctx, selectOrg+where, key))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: org %q", store.ErrNotFound, key)
	}
	return o, err
}

// GetOrg returns the org with that id, or store.ErrNotFound.
func (s *Store) GetOrg(id string) (*store.Org, error) { return s.getOrg("WHERE o.id = $1", id) }

// GetOrgByName returns the org with that name (compared
// case-insensitively), or store.ErrNotFound.
func (s *Store) GetOrgByName(name string) (*store.Org, error) {
	return s.getOrg("WHERE o.name_key = $1", store.FoldName(name))
}

// ListOrgs returns every org, ordered by id.
func (s *Store) ListOrgs() ([]*store.Org, error) {
	var out []*store.Org
	err := s.read("list orgs", func(ctx context.Context, q querier) error {
		rows, err := q.Query(ctx, selectOrg+"ORDER BY o.id")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			o, err := scanOrg(rows)
			if err != nil {
				return err
			}
			out = append(out, o)
		}
		return rows.Err()
	})
	return out, err
}

func (s *Store) writeUser(u *store.User, mode store.WriteMode) error {
	if err := store.CheckUser(u, mode); err != nil {
		return err
	}
	return s.inTx("write user", func(ctx context.Context, tx pgx.Tx) error {
		// The org row is share-locked so that it exists until the user does.
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM promptwall_orgs WHERE id = $1 FOR KEY SHARE`, u.OrgID).Scan(&one); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return store.UserOrgMissing(u)
			}
			return err
		}
		var old *store.User
		ok, err := found(getJSON(tx.QueryRow(ctx, `SELECT body FROM promptwall_users WHERE id = $1 FOR UPDATE`, u.ID), &old, "user", u.ID))
		if err != nil {
			return err
		}
		if !ok {
			old = nil
		}
		if err := store.MergeUser(u, old, mode); err != nil {
			return err
		}
		return s.storeUser(ctx, tx, u, old != nil)
	})
}

func (s *Store) storeUser(ctx context.Context, tx pgx.Tx, u *store.User, exists bool) error {
	body, err := json.Marshal(u)
	if err != nil {
		return err
	}
	emailKey := nullIfEmpty(store.FoldName(u.Email))
	if emailKey != nil {
		var owner string
		err := tx.QueryRow(ctx, `SELECT id FROM promptwall_users WHERE org_id = $1 AND email_key = $2`, u.OrgID, *emailKey).Scan(&owner)
		if err == nil && owner != u.ID {
			return store.EmailTaken(u)
		}
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
	}
	if exists {
		_, err = tx.Exec(ctx, `UPDATE promptwall_users SET org_id = $2, email_key = $3, role = $4, blocked = $5, body = $6
			WHERE id = $1`, u.ID, u.OrgID, emailKey, u.Role, u.Blocked, body)
	} else {
		var tag pgconn.CommandTag
		tag, err = tx.Exec(ctx, `INSERT INTO promptwall_users (id, org_id, email_key, role, blocked, body)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`, u.ID, u.OrgID, emailKey, u.Role, u.Blocked, body)
		if err == nil && tag.RowsAffected() == 0 {
			return errRetry
		}
	}
	if uniqueViolation(err, "promptwall_users_email") {
		return errRetry
	}
	return err
}

// PutUser creates or replaces a user, as store.Store.PutUser.
func (s *Store) PutUser(u *store.User) error { return s.writeUser(u, store.WritePut) }

// CreateUser creates a new user, as store.Store.CreateUser.
func (s *Store) CreateUser(u *store.User) error { return s.writeUser(u, store.WriteCreate) }

// GetUser returns the user with that id, or store.ErrNotFound.
func (s *Store) GetUser(id string) (*store.User, error) {
	return getByID[store.User](s, "promptwall_users", "user", id)
}

// GetUserByEmail returns the user of org with that e-mail (compared
// case-insensitively), or store.ErrNotFound.
func (s *Store) GetUserByEmail(orgID, email string) (*store.User, error) {
	u := new(store.User)
	err := s.read("get user", func(ctx context.Context, q querier) error {
		err := getJSON(q.QueryRow(ctx, `SELECT body FROM promptwall_users WHERE org_id = $1 AND email_key = $2`,
			orgID, store.FoldName(email)), u, "user", email)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%w: user %q in org %q", store.ErrNotFound, email, orgID)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// BlockUser blocks (or unblocks) a user, as store.Store.BlockUser.
func (s *Store) BlockUser(id string, blocked bool) error {
	return s.inTx("block user", func(ctx context.Context, tx pgx.Tx) error {
		u := new(store.User)
		if err := getJSON(tx.QueryRow(ctx, `SELECT body FROM promptwall_users WHERE id = $1 FOR UPDATE`, id), u, "user", id); err != nil {
			return err
		}
		u.Blocked = blocked
		return s.storeUser(ctx, tx, u, true)
	})
}

// userChunk is how many users one query of a users walk reads: the walk
// stops as soon as a page is full, so it reads little more than the page.
const userChunk = 256

// ListUsers returns one page of the org's users, as store.Store.ListUsers.
func (s *Store) ListUsers(q store.UserQuery) (store.UserPage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	return s.cursors.ListUsers(q, func(asc bool, bound []byte, inclusive bool, fn func(*store.User) bool) error {
		order, op := "DESC", "<"
		if asc {
			order, op = "ASC", ">"
		}
		if inclusive {
			op += "="
		}
		for {
			sql, args := `SELECT body FROM promptwall_users WHERE org_id = $1`, []any{q.OrgID}
			if bound != nil {
				sql += ` AND id ` + op + ` $2`
				args = append(args, string(bound))
			}
			rows, err := s.pool.Query(ctx, sql+` ORDER BY id `+order+` LIMIT `+strconv.Itoa(userChunk), args...)
			if err != nil {
				return wrapDB("list users", err)
			}
			users, err := collect[store.User](rows, "user")
			if err != nil {
				return wrapDB("list users", err)
			}
			for _, u := range users {
				if !fn(u) {
					return nil
				}
			}
			if len(users) < userChunk {
				return nil
			}
			bound, op = []byte(users[len(users)-1].ID), strings.TrimSuffix(op, "=")
		}
	})
}

// PutToken stores a token by its hash, as store.Store.PutToken.
func (s *Store) PutToken(t *store.Token) error {
	if err := store.CheckToken(t); err != nil {
		return err
	}
	return s.writeToken(t, false)
}

// CreateToken issues a new token for a user, as store.Store.CreateToken:
// the clear token is returned here and never again.
func (s *Store) CreateToken(userID, name string) (string, *store.Token, error) {
	clear, t, err := store.NewToken(userID, name)
	if err != nil {
		return "", nil, err
	}
	if err := s.writeToken(t, true); err != nil {
		return "", nil, err
	}
	return clear, t, nil
}

func (s *Store) writeToken(t *store.Token, issuing bool) error {
	return s.inTx("write token", func(ctx context.Context, tx pgx.Tx) error {
		var u *store.User
		ok, err := found(getJSON(tx.QueryRow(ctx, `SELECT body FROM promptwall_users WHERE id = $1 FOR KEY SHARE`, t.UserID), &u, "user", t.UserID))
		if err != nil {
			return err
		}
		if !ok {
			u = nil
		}
		if issuing && u != nil {
			t.OrgID = u.OrgID
		}
		if err := store.TokenOwnerCheck(t, u, issuing); err != nil {
			return err
		}
		var owner []byte
		err = tx.QueryRow(ctx, `SELECT hash FROM promptwall_tokens WHERE id = $1`, t.ID).Scan(&owner)
		if err == nil && string(owner) != string(t.Hash[:]) {
			return store.TokenIDTaken(t.ID)
		}
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		body, err := json.Marshal(tokenBody(t))
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO promptwall_tokens (hash, id, user_id, last_used_ms, body) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (hash) DO UPDATE SET id = EXCLUDED.id, user_id = EXCLUDED.user_id,
				last_used_ms = EXCLUDED.last_used_ms, body = EXCLUDED.body`,
			t.Hash[:], t.ID, t.UserID, lastUsedMs(t.LastUsedAt), body)
		if uniqueViolation(err, "promptwall_tokens_id_key") {
			return errRetry
		}
		return err
	})
}

// tokenBody is t as stored: LastUsedAt lives in its own column.
func tokenBody(t *store.Token) *store.Token {
	b := *t
	b.LastUsedAt = store.Timestamp{}
	return &b
}

func lastUsedMs(ts store.Timestamp) *int64 {
	if ts.IsZero() {
		return nil
	}
	ms := ts.Time().UnixMilli()
	return &ms
}

const selectToken = `SELECT hash, last_used_ms, body FROM promptwall_tokens `

func scanToken(row pgx.Row) (*store.Token, error) {
	var (
		hash, raw []byte
		used      *int64
	)
	if err := row.Scan(&hash, &used, &raw); err != nil {
		return nil, err
	}
	t := new(store.Token)
	if err := json.Unmarshal(raw, t); err != nil {
		return nil, fmt.Errorf("store: decode token: %w", err)
	}
	copy(t.Hash[:], hash)
	if used != nil {
		t.LastUsedAt = store.Timestamp(time.UnixMilli(*used).UTC())
	}
	return t, nil
}

// LookupToken returns the token whose SHA-256 is hash, or
// store.ErrNotFound. Callers compare the returned Hash with theirs in
// constant time.
func (s *Store) LookupToken(hash [32]byte) (*store.Token, error) {
	var t *store.Token
	err := s.read("lookup token", func(ctx context.Context, q querier) error {
		var err error
		t, err = scanToken(q.QueryRow(ctx, selectToken+`WHERE hash = $1`, hash[:]))
		if errors.Is(err, pgx.ErrNoRows) {
			return store.TokenNotFound()
		}
		return err
	})
	return t, err
}

// TouchToken records that a token authenticated at `at`, writing at most
// once a minute per token, as store.Store.TouchToken; a revoked token is
// not an error. The condition is in the UPDATE, so instances touching the
// same token at once write it once.
func (s *Store) TouchToken(hash [32]byte, at time.Time) error {
	ts := store.TouchTime(at)
	// TouchDue's rule in milliseconds: stale when at - lastUsed >= 1 min.
	due := at.Add(-time.Minute)
	return s.read("touch token", func(ctx context.Context, q querier) error {
		_, err := q.Exec(ctx, `UPDATE promptwall_tokens SET last_used_ms = $2
			WHERE hash = $1 AND (last_used_ms IS NULL OR last_used_ms * 1000000 <= $3::numeric)`,
			hash[:], ts.Time().UnixMilli(), due.UnixNano())
		return err
	})
}

// ListTokens returns the tokens of a user, ordered by id.
func (s *Store) ListTokens(userID string) ([]*store.Token, error) {
	var out []*store.Token
	err := s.read("list tokens", func(ctx context.Context, q querier) error {
		rows, err := q.Query(ctx, selectToken+`WHERE user_id = $1 ORDER BY id`, userID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			t, err := scanToken(rows)
			if err != nil {
				return err
			}
			out = append(out, t)
		}
		return rows.Err()
	})
	return out, err
}

// RevokeToken deletes a token given its ID or its clear value, as
// store.Store.RevokeToken.
func (s *Store) RevokeToken(idOrToken string) error {
	if strings.HasPrefix(idOrToken, store.TokenPrefix) {
		return s.DeleteToken(store.HashToken(idOrToken))
	}
	return s.read("revoke token", func(ctx context.Context, q querier) error {
		tag, err := q.Exec(ctx, `DELETE FROM promptwall_tokens WHERE id = $1`, idOrToken)
		if err == nil && tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: token %q", store.ErrNotFound, idOrToken)
		}
		return err
	})
}

// DeleteToken revokes a token by hash; store.ErrNotFound if it does not
// exist.
func (s *Store) DeleteToken(hash [32]byte) error {
	return s.read("delete token", func(ctx context.Context, q querier) error {
		tag, err := q.Exec(ctx, `DELETE FROM promptwall_tokens WHERE hash = $1`, hash[:])
		if err == nil && tag.RowsAffected() == 0 {
			return store.TokenNotFound()
		}
		return err
	})
}
