package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one file of migrations/, named NNNN_what.sql; versions are
// applied in order, each in its own transaction, and recorded in
// promptwall_schema_migrations.
type migration struct {
	version int
	name    string
	sql     string
}

func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("pgstore: migration file %q is not named NNNN_what.sql", e.Name())
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("pgstore: migration %s: versions must run 1, 2, 3... without gaps", m.name)
		}
	}
	return out, nil
}

// ErrSchemaTooNew: the database was migrated by a newer Promptwall.
var ErrSchemaTooNew = errors.New("pgstore: database schema is newer than this Promptwall")

// migrate applies the migrations not yet applied. A session advisory lock
// serializes instances starting at once: the second waits, then finds
// everything applied.
func migrate(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	ms, err := migrations()
	if err != nil {
		return 0, err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lockMigrate); err != nil {
		return 0, fmt.Errorf("pgstore: migration lock: %w", err)
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lockMigrate) }()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS promptwall_schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return 0, fmt.Errorf("pgstore: migrations table: %w", err)
	}
	var current int
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM promptwall_schema_migrations`).Scan(&current); err != nil {
		return 0, fmt.Errorf("pgstore: schema version: %w", err)
	}
	if current > len(ms) {
		return current, fmt.Errorf("%w: database at version %d, this build knows %d", ErrSchemaTooNew, current, len(ms))
	}
	for _, m := range ms[current:] {
		tx, err := conn.Begin(ctx)
		if err != nil {
			return current, err
		}
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			_ = tx.Rollback(ctx)
			return current, fmt.Errorf("pgstore: migration %s: %w", m.name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO promptwall_schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
			_ = tx.Rollback(ctx)
			return current, fmt.Errorf("pgstore: migration %s: %w", m.name, err)
		}
		if err := tx.Commit(ctx); err != nil {
			return current, fmt.Errorf("pgstore: migration %s: %w", m.name, err)
		}
		current = m.version
	}
	return current, nil
}
