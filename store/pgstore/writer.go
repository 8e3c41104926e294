package pgstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

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

// columns is a batch as column arrays, a record written twice in it once.
type columns struct {
	ids, orgs, users, outcomes, projects, providers, endpoints, inputs, refs []string
	ms                                                                       []int64
	preserve                                                                 []bool
	bodies                                                                   [][]byte
	// setRefs and sets are the distinct scanner settings of the batch.
	setRefs, sets []string
}

func columnsOf(batch []*row) *columns {
	// One statement cannot update a row twice: a record written twice in
	// one batch keeps the place of its first write (as a replacement keeps
	// the place of the record it replaces) and the content of its last.
	n := len(batch)
	c := &columns{
		ids: make([]string, 0, n), orgs: make([]string, 0, n), users: make([]string, 0, n), outcomes: make([]string, 0, n),
		projects: make([]string, 0, n), providers: make([]string, 0, n), endpoints: make([]string, 0, n),
		inputs: make([]string, 0, n), refs: make([]string, 0, n),
		ms: make([]int64, 0, n), preserve: make([]bool, 0, n), bodies: make([][]byte, 0, n),
	}
	seenSet := map[string]bool{}
	at := make(map[string]int, n)
	for _, r := range batch {
		if i, ok := at[r.id]; ok {
			c.orgs[i], c.users[i], c.outcomes[i], c.projects[i] = r.org, r.user, r.outcome, r.project
			c.providers[i], c.endpoints[i], c.inputs[i], c.ms[i] = r.provider, r.endpoint, r.input, r.ms
			c.preserve[i], c.bodies[i], c.refs[i] = r.preserve, r.body, r.scannersRef
		} else {
			at[r.id] = len(c.ids)
			c.ids, c.orgs, c.users, c.outcomes = append(c.ids, r.id), append(c.orgs, r.org), append(c.users, r.user), append(c.outcomes, r.outcome)
			c.projects, c.providers, c.endpoints = append(c.projects, r.project), append(c.providers, r.provider), append(c.endpoints, r.endpoint)
			c.inputs, c.ms, c.preserve = append(c.inputs, r.input), append(c.ms, r.ms), append(c.preserve, r.preserve)
			c.bodies, c.refs = append(c.bodies, r.body), append(c.refs, r.scannersRef)
		}
		if r.scannersRef != "" && !seenSet[r.scannersRef] {
			seenSet[r.scannersRef] = true
			c.setRefs, c.sets = append(c.setRefs, r.scannersRef), append(c.sets, r.scanners)
		}
	}
	return c
}

// writeBatch commits a batch in one transaction, in one round trip when it
// can: in sync mode every request waits for its batch's commit, so each
// round trip is latency it pays, and on a loaded machine each is also two
// context switches more. Writers of every instance take turns on an
// advisory lock held until the commit, so seq order is commit order (a
// record never appears behind a cursor already handed out).
func (s *Store) writeBatch(batch []*row) error {
	c := columnsOf(batch)
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	done := false
	defer func() {
		if !done {
			// A failed batch leaves its transaction open or aborted.
			rctx, rcancel := context.WithTimeout(context.Background(), readTimeout)
			defer rcancel()
			_, _ = conn.Exec(rctx, `ROLLBACK`)
		}
	}()
	if !s.opts.noCopy {
		err = s.copyBatch(ctx, conn, c)
		if err == nil {
			done = true
			s.setsStored(c.setRefs)
			return nil
		}
		// COPY cannot update: a batch that replaces a stored record fails
		// on the id's unique index, and goes in with the upsert instead.
		// Replacements are rare, so trying COPY first costs less than
		// looking every id up before each batch.
		if !uniqueViolation(err, idConstraint) {
			return err
		}
		if _, err := conn.Exec(ctx, `ROLLBACK`); err != nil {
			return err
		}
	}
	// The whole transaction is one pipeline: an error skips the rest of
	// it, COMMIT included.
	b := &pgx.Batch{}
	s.queueBegin(b)
	if len(c.setRefs) > 0 {
		b.Queue(insertScannerSets, c.setRefs, c.sets)
	}
	b.Queue(insertRecords, c.ids, c.orgs, c.users, c.outcomes, c.projects, c.providers, c.endpoints, c.ms, c.preserve, c.inputs, c.bodies, c.refs)
	b.Queue(`COMMIT`)
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	done = true
	s.setsStored(c.setRefs)
	return nil
}

// idConstraint is the unique index on promptwall_prompts.id.
const idConstraint = "promptwall_prompts_id_key"

// queueBegin queues what opens every batch's transaction.
func (s *Store) queueBegin(b *pgx.Batch) {
	b.Queue(`BEGIN`)
	if s.q.Durable() {
		// Sync mode acknowledges a record once its commit is on the
		// server's disk: whatever the server's or the database's default,
		// this commit waits for its WAL flush.
		b.Queue(`SET LOCAL synchronous_commit = on`)
	}
	b.Queue(`SELECT pg_advisory_xact_lock($1)`, lockWriter)
}

// copyBatch writes c with COPY inside one simple-protocol query that also
// opens the transaction, takes the lock and commits: the rows follow the
// query without waiting for the server's go-ahead, so the whole
// transaction is one round trip. Scanner settings this store has not yet
// seen stored go first, with the parameters COPY cannot take, in a
// pipeline of their own (a round trip more, once per new settings).
func (s *Store) copyBatch(ctx context.Context, conn *pgxpool.Conn, c *columns) error {
	var sql strings.Builder
	if unknown := s.unknownSets(c); len(unknown.setRefs) > 0 {
		b := &pgx.Batch{}
		s.queueBegin(b)
		b.Queue(insertScannerSets, unknown.setRefs, unknown.sets)
		if err := conn.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
	} else {
		sql.WriteString("BEGIN; ")
		if s.q.Durable() {
			sql.WriteString("SET LOCAL synchronous_commit = on; ")
		}
		fmt.Fprintf(&sql, "SELECT pg_advisory_xact_lock(%d); ", lockWriter)
	}
	sql.WriteString(copyRecords)
	sql.WriteString("; COMMIT")
	s.copyBuf = appendCopyData(s.copyBuf[:0], c)
	_, err := conn.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(s.copyBuf), sql.String())
	if err != nil {
		// On some errors CopyFrom returns before its sending goroutine
		// has stopped reading the buffer: the next batch gets a new one.
		s.copyBuf = nil
	}
	return err
}

// copyRecords fills recordColumns from binary COPY data.
const copyRecords = `COPY promptwall_prompts (id, org_id, user_id, outcome, project_id, provider_id, endpoint_id,
	received_ms, preserve, input, body, scanners_ref) FROM STDIN (FORMAT binary)`

// appendCopyData appends c's records in COPY's binary format: the values
// are already bytes (text, the JSON body) or fixed-width integers, so this
// is a copy, without a type lookup per value.
func appendCopyData(b []byte, c *columns) []byte {
	b = append(b, "PGCOPY\n\377\r\n\000"...)
	b = binary.BigEndian.AppendUint32(b, 0) // flags
	b = binary.BigEndian.AppendUint32(b, 0) // header extension length
	text := func(b []byte, v string) []byte {
		b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
		return append(b, v...)
	}
	for i := range c.ids {
		b = binary.BigEndian.AppendUint16(b, 12)
		b = text(b, c.ids[i])
		b = text(b, c.orgs[i])
		b = text(b, c.users[i])
		b = text(b, c.outcomes[i])
		b = text(b, c.projects[i])
		b = text(b, c.providers[i])
		b = text(b, c.endpoints[i])
		b = binary.BigEndian.AppendUint32(b, 8)
		b = binary.BigEndian.AppendUint64(b, uint64(c.ms[i]))
		b = binary.BigEndian.AppendUint32(b, 1)
		if c.preserve[i] {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		b = text(b, c.inputs[i])
		b = binary.BigEndian.AppendUint32(b, uint32(len(c.bodies[i])))
		b = append(b, c.bodies[i]...)
		b = text(b, c.refs[i])
	}
	return binary.BigEndian.AppendUint16(b, 0xffff) // end of data
}

// maxKnownSets bounds the scanner settings remembered as stored: a gateway
// has a handful (one per scanner configuration), so the bound is only
// reached if something generates them, and forgetting costs a round trip.
const maxKnownSets = 1024

// unknownSets returns the scanner settings of c not known to be stored.
// Settings are never deleted, so once one is committed it stays.
func (s *Store) unknownSets(c *columns) *columns {
	s.setsMu.Lock()
	defer s.setsMu.Unlock()
	out := &columns{}
	for i, ref := range c.setRefs {
		if !s.knownSets[ref] {
			out.setRefs, out.sets = append(out.setRefs, ref), append(out.sets, c.sets[i])
		}
	}
	return out
}

// setsStored remembers committed scanner settings.
func (s *Store) setsStored(refs []string) {
	s.setsMu.Lock()
	defer s.setsMu.Unlock()
	for _, ref := range refs {
		if len(s.knownSets) >= maxKnownSets {
			clear(s.knownSets)
		}
		s.knownSets[ref] = true
	}
}
