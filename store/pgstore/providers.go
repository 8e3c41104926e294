package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/promptwall/promptwall/store"
)

// lockProviders is the class of the per-org transaction lock that
// serializes provider version writes: two instances reloading the same
// configuration then number versions one after the other, and the second
// finds nothing changed. (The two-key advisory lock space does not overlap
// the one-key space of the other locks.)
const lockProviders int32 = 0x7077_0001

// PutProviderVersion stores p as the provider's newest version, as
// store.Store.PutProviderVersion.
func (s *Store) PutProviderVersion(p *store.ProviderRecord) error {
	if err := store.CheckProviderVersion(p); err != nil {
		return err
	}
	return s.inTx("put provider", func(ctx context.Context, tx pgx.Tx) error {
		if err := lockOrgProviders(ctx, tx, p.OrgID); err != nil {
			return err
		}
		return putProviderVersion(ctx, tx, p)
	})
}

func lockOrgProviders(ctx context.Context, tx pgx.Tx, orgID string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, lockProviders, orgID)
	return err
}

func putProviderVersion(ctx context.Context, tx pgx.Tx, p *store.ProviderRecord) error {
	if err := store.CheckProviderVersion(p); err != nil {
		return err
	}
	var seq int64
	err := tx.QueryRow(ctx, `WITH ins AS (
			INSERT INTO promptwall_provider_seqs (org_id, id) VALUES ($1, $2)
			ON CONFLICT (org_id, id) DO NOTHING RETURNING seq)
		SELECT seq FROM ins UNION ALL SELECT seq FROM promptwall_provider_seqs WHERE org_id = $1 AND id = $2`,
		p.OrgID, p.ID).Scan(&seq)
	if err != nil {
		return err
	}
	var last *store.ProviderRecord
	ok, err := found(getJSON(tx.QueryRow(ctx, `SELECT body FROM promptwall_provider_versions
		WHERE seq = $1 ORDER BY version DESC LIMIT 1`, seq), &last, "provider", p.ID))
	if err != nil {
		return err
	}
	if !ok {
		last = nil // getJSON may have allocated it
	}
	if !store.NextProviderVersion(p, last) {
		return nil
	}
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO promptwall_provider_versions (seq, version, org_id, effective_ms, body)
		VALUES ($1, $2, $3, $4, $5)`, seq, p.Version, p.OrgID, p.EffectiveAt.Time().UnixMilli(), body)
	return err
}

// SyncProviders makes the org's stored providers match a configuration
// that took effect at `at`, in one transaction, as
// store.Store.SyncProviders.
func (s *Store) SyncProviders(orgID string, current []*store.ProviderRecord, at time.Time) error {
	return s.inTx("sync providers", func(ctx context.Context, tx pgx.Tx) error {
		if err := lockOrgProviders(ctx, tx, orgID); err != nil {
			return err
		}
		return store.SyncProviderSet(orgID, current, at,
			func(p *store.ProviderRecord) error { return putProviderVersion(ctx, tx, p) },
			func() ([]store.ProviderEntry, error) { return providerVersions(ctx, tx, orgID, time.Time{}) })
	})
}

// providerVersions returns, per provider of the org in creation order, the
// version in force at `at` (the newest when at is zero). Providers with no
// version by then are absent; deleted ones are included with Deleted set.
func providerVersions(ctx context.Context, q querier, orgID string, at time.Time) ([]store.ProviderEntry, error) {
	sql, args := `SELECT DISTINCT ON (seq) seq, body FROM promptwall_provider_versions WHERE org_id = $1`, []any{orgID}
	if !at.IsZero() {
		// A version is in force at `at` unless it took effect after it;
		// versions take effect on whole milliseconds.
		sql += ` AND effective_ms <= $2`
		args = append(args, at.UnixMilli())
	}
	rows, err := q.Query(ctx, sql+` ORDER BY seq, version DESC`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.ProviderEntry
	for rows.Next() {
		var (
			seq int64
			raw []byte
		)
		if err := rows.Scan(&seq, &raw); err != nil {
			return nil, err
		}
		rec := new(store.ProviderRecord)
		if err := json.Unmarshal(raw, rec); err != nil {
			return nil, fmt.Errorf("store: decode provider: %w", err)
		}
		out = append(out, store.ProviderEntry{Seq: uint64(seq), Rec: rec})
	}
	return out, rows.Err()
}

// ListProviders returns one page of the org's providers matching q, in the
// order they were first configured, as store.Store.ListProviders.
func (s *Store) ListProviders(q store.ProviderQuery) (store.ProviderPage, error) {
	return s.cursors.ListProviders(q, func(orgID string, at time.Time) ([]store.ProviderEntry, error) {
		ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
		defer cancel()
		entries, err := providerVersions(ctx, s.pool, orgID, at)
		return entries, wrapDB("list providers", err)
	})
}
