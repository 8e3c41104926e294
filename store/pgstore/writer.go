package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/promptwall/promptwall/store"
)

// writeTimeout bounds one batch statement, so a hung server is a failed
// attempt (retried) rather than a writer stuck forever.
const writeTimeout = 30 * time.Second

// row is one record encoded for the batch insert.
type row struct {
	id, org, user, outcome, project, provider, endpoint, input string
	ms                                                         int64
	preserve                                                   bool
	body                                                       []byte
	scannersRef, scanners                                      string
}

func encodeRow(p *store.Prompt) (*row, error) {
	if err := store.PrepareRecord(p); err != nil {
		return nil, err
	}
	cp := *p
	cp.Input = ""
	r := &row{id: p.ID, org: p.OrgID, user: p.UserID, outcome: p.Result.Outcome, project: p.ProjectID,
		provider: p.ProviderID, endpoint: p.EndpointID, input: p.Input,
		ms: p.ReceivedAt.Time().UnixMilli(), preserve: p.Preserve}
	if cp.Scanners != "" {
		sum := sha256.Sum256([]byte(cp.Scanners))
		r.scannersRef, r.scanners = hex.EncodeToString(sum[:]), cp.Scanners
		cp.Scanners, cp.ScannersRef = "", ""
	}
	body, err := store.AppendPromptJSON(nil, &cp)
	if err != nil {
		return nil, err
	}
	r.body = body
	return r, nil
}

// Reserve takes one slot of queue capacity; see store.Queue.Reserve.
func (s *Store) Reserve(ctx context.Context) (*store.Reservation, error) { return s.q.Reserve(ctx) }

// Put reserves capacity and commits p.
func (s *Store) Put(ctx context.Context, p *store.Prompt) error { return s.q.Put(ctx, p) }

// Sync waits until every record queued before the call is written.
func (s *Store) Sync(ctx context.Context) error { return s.q.Sync(ctx) }

// QueueDepth returns how many records are reserved, queued or being
// written.
func (s *Store) QueueDepth() int { return s.q.QueueDepth() }

// Durability returns the store's durability setting.
func (s *Store) Durability() store.Durability {
	if s.q.Durable() {
		return store.DurabilitySync
	}
	return store.DurabilityBatched
}

// SetDurability changes the durability setting of an open store (a config
// reload), as store.Store.SetDurability does.
func (s *Store) SetDurability(d store.Durability) error {
	if err := d.Validate(); err != nil {
		return err
	}
	s.q.SetDurable(d == store.DurabilitySync)
	return nil
}

// insertRecords writes a whole batch in one statement from column arrays.
// A record whose id exists replaces it and keeps its seq, so its place in
// the list order, as in the bbolt store.
const insertRecords = `
INSERT INTO promptwall_prompts
	(id, org_id, user_id, outcome, project_id, provider_id, endpoint_id, received_ms, preserve, input, body, scanners_ref)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
	$8::bigint[], $9::boolean[], $10::text[], $11::bytea[], $12::text[])
ON CONFLICT (id) DO UPDATE SET
	org_id = EXCLUDED.org_id, user_id = EXCLUDED.user_id, outcome = EXCLUDED.outcome,
	project_id = EXCLUDED.project_id, provider_id = EXCLUDED.provider_id, endpoint_id = EXCLUDED.endpoint_id,
	received_ms = EXCLUDED.received_ms, preserve = EXCLUDED.preserve, input = EXCLUDED.input,
	body = EXCLUDED.body, scanners_ref = EXCLUDED.scanners_ref`

const insertScannerSets = `
INSERT INTO promptwall_scanner_sets (ref, settings)
SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (ref) DO NOTHING`

func (s *Store) writeBatch(batch []*row) error {
	// One statement cannot update a row twice: a record written twice in
	// one batch keeps the place of its first write (as a replacement keeps
	// the place of the record it replaces) and the content of its last.
	n := len(batch)
	ids, orgs, users, outcomes := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	projects, providers, endpoints, inputs := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	ms, preserve, bodies, refs := make([]int64, 0, n), make([]bool, 0, n), make([][]byte, 0, n), make([]string, 0, n)
	setRefs, sets := []string{}, []string{}
	seenSet := map[string]bool{}
	at := make(map[string]int, n)
	for _, r := range batch {
		if i, ok := at[r.id]; ok {
			orgs[i], users[i], outcomes[i], projects[i] = r.org, r.user, r.outcome, r.project
			providers[i], endpoints[i], inputs[i], ms[i] = r.provider, r.endpoint, r.input, r.ms
			preserve[i], bodies[i], refs[i] = r.preserve, r.body, r.scannersRef
		} else {
			at[r.id] = len(ids)
			ids, orgs, users, outcomes = append(ids, r.id), append(orgs, r.org), append(users, r.user), append(outcomes, r.outcome)
			projects, providers, endpoints = append(projects, r.project), append(providers, r.provider), append(endpoints, r.endpoint)
			inputs, ms, preserve = append(inputs, r.input), append(ms, r.ms), append(preserve, r.preserve)
			bodies, refs = append(bodies, r.body), append(refs, r.scannersRef)
		}
		if r.scannersRef != "" && !seenSet[r.scannersRef] {
			seenSet[r.scannersRef] = true
			setRefs, sets = append(setRefs, r.scannersRef), append(sets, r.scanners)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	// One round trip: the lock, the scanner sets, and whether any record
	// of the batch replaces a stored one. Writers of every instance take
	// turns on the lock, so seq order is commit order (a record never
	// appears behind a cursor already handed out), and what the check
	// finds cannot change before this transaction ends.
	pre := &pgx.Batch{}
	if s.q.Durable() {
		// Sync mode acknowledges a record once its commit is on the
		// server's disk: whatever the server's or the database's default,
		// this commit waits for its WAL flush.
		pre.Queue(`SET LOCAL synchronous_commit = on`)
	}
	pre.Queue(`SELECT pg_advisory_xact_lock($1)`, lockWriter)
	if len(setRefs) > 0 {
		pre.Queue(insertScannerSets, setRefs, sets)
	}
	var replaces bool
	pre.Queue(`SELECT EXISTS (SELECT 1 FROM promptwall_prompts WHERE id = ANY($1))`, ids).QueryRow(func(row pgx.Row) error {
		return row.Scan(&replaces)
	})
	if err := tx.SendBatch(ctx, pre).Close(); err != nil {
		return err
	}
	// COPY is the fastest way in, but cannot update: a batch that replaces
	// a record goes in with the multi-row upsert.
	if replaces || s.opts.noCopy {
		_, err = tx.Exec(ctx, insertRecords, ids, orgs, users, outcomes, projects, providers, endpoints, ms, preserve, inputs, bodies, refs)
	} else {
		_, err = tx.CopyFrom(ctx, pgx.Identifier{"promptwall_prompts"}, recordColumns, pgx.CopyFromSlice(len(ids), func(i int) ([]any, error) {
			return []any{ids[i], orgs[i], users[i], outcomes[i], projects[i], providers[i], endpoints[i], ms[i], preserve[i], inputs[i], bodies[i], refs[i]}, nil
		}))
	}
	if err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// recordColumns are the columns COPY fills, in insertRecords' order.
var recordColumns = []string{"id", "org_id", "user_id", "outcome", "project_id", "provider_id", "endpoint_id",
	"received_ms", "preserve", "input", "body", "scanners_ref"}
