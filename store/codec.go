package store

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A stored prompt is a small binary header followed by the JSON of the rest.
// The header carries what ListPrompts filters on (and what index maintenance
// needs), so that a page scan never decodes JSON of records it rejects and
// never allocates for them. Input lives only in the header (the JSON holds
// it empty) so it is not stored twice.
//
//	[0]      format version
//	[1:9]    commit sequence, big endian (filled by the writer)
//	[9:17]   receivedAt, Unix milliseconds, big endian two's complement
//	[17]     flags (bit 0: preserve)
//	then uvarint-length-prefixed: orgID, userID, outcome, projectID,
//	providerID, endpointID, input
//	then the JSON of the Prompt with Input empty
const (
	formatVersion = 1
	offSeq        = 1
	offTime       = 9
	offFlags      = 17
	fixedHeader   = 18

	flagPreserve = 1 << 0
)

// maxIDLen bounds ids used in keys and bucket names: bbolt rejects keys over
// 32 KiB inside the commit, and a record it rejects would otherwise stall the
// writer's batch forever.
const maxIDLen = 1024

// record is a prompt encoded in the caller's goroutine, so that the single
// writer only copies bytes into bbolt.
type record struct {
	id       string
	key      []byte // id, as the key of the prompts bucket
	orgID    string
	userID   string
	ms       int64
	preserve bool
	value    []byte
	// scannerSet is the record's scanner settings JSON and its key: every
	// record of an endpoint shares one copy, stored once by the writer.
	scannerSetKey []byte
	scannerSet    []byte
	// buf is the pooled buffer value and key live in; see release.
	buf *[]byte
}

// header is a view of a stored value. Its slices alias the value, which may
// be bbolt-owned memory: a header must not outlive its transaction.
type header struct {
	seq      uint64
	ms       int64
	preserve bool
	org      []byte
	user     []byte
	outcome  []byte
	project  []byte
	provider []byte
	endpoint []byte
	input    []byte
	body     []byte
}

var errCorrupt = errors.New("store: corrupt record")

func validateKeyPart(name, v string, required bool) error {
	if required && v == "" {
		return fmt.Errorf("%w: %s is required", ErrInvalidRecord, name)
	}
	if len(v) > maxIDLen {
		return fmt.Errorf("%w: %s is %d bytes, at most %d allowed", ErrInvalidRecord, name, len(v), maxIDLen)
	}
	return nil
}

// encodePrompt validates p and encodes it. It normalises ReceivedAt to UTC
// milliseconds so that the header and the JSON agree on the time.
func encodePrompt(p *Prompt) (*record, error) {
	if err := validateKeyPart("id", p.ID, true); err != nil {
		return nil, err
	}
	if err := validateKeyPart("orgId", p.OrgID, true); err != nil {
		return nil, err
	}
	if err := validateKeyPart("userId", p.UserID, false); err != nil {
		return nil, err
	}
	received := time.Time(p.ReceivedAt).UTC().Truncate(time.Millisecond)
	cp := *p
	cp.Input = ""
	cp.ReceivedAt = Timestamp(received)
	var set *scannerSet
	if cp.Scanners != "" {
		set = scannerSetOf(cp.Scanners)
		cp.ScannersRef = set.ref
		cp.Scanners = ""
	}
	buf := encodeBufs.Get().(*[]byte)
	v := append((*buf)[:0], make([]byte, fixedHeader)...)
	v[0] = formatVersion
	ms := received.UnixMilli()
	binary.BigEndian.PutUint64(v[offTime:], uint64(ms))
	if p.Preserve {
		v[offFlags] = flagPreserve
	}
	for _, s := range [...]string{p.OrgID, p.UserID, p.Result.Outcome, p.ProjectID, p.ProviderID, p.EndpointID, p.Input} {
		v = binary.AppendUvarint(v, uint64(len(s)))
		v = append(v, s...)
	}
	v, err := appendPromptJSON(v, &cp)
	if err != nil {
		*buf = v
		recycleEncodeBuf(buf)
		return nil, fmt.Errorf("%w: %v", ErrInvalidRecord, err)
	}
	// The value waits in the queue in the pooled buffer, with the key
	// after it; the writer recycles the buffer once its batch committed.
	n := len(v)
	v = append(v, p.ID...)
	*buf = v
	rec := &record{id: p.ID, orgID: p.OrgID, userID: p.UserID, ms: ms, preserve: p.Preserve,
		value: v[:n:n], key: v[n:], buf: buf}
	if set != nil {
		rec.scannerSetKey, rec.scannerSet = set.key, set.value
	}
	return rec, nil
}

// encodeBufs holds the buffers records are encoded in. A record keeps its
// buffer from Commit until its batch is committed: bbolt keeps a value's
// slice, not a copy, until the transaction ends, so the buffer is free only
// then. Recycling it spares an allocation of the record's size per request.
var encodeBufs = sync.Pool{New: func() any { return new([]byte) }}

// recycleEncodeBuf returns buf to the pool unless it grew unusually large.
func recycleEncodeBuf(buf *[]byte) {
	if cap(*buf) <= maxPooledEncodeBuf {
		encodeBufs.Put(buf)
	}
}

// release hands the record's buffer back once nothing refers to its
// value or key any more (its batch committed). The record must not be
// used afterwards.
func (r *record) release() {
	if r.buf != nil {
		b := r.buf
		r.buf, r.value, r.key = nil, nil, nil
		recycleEncodeBuf(b)
	}
}

// maxPooledEncodeBuf keeps the buffer of an unusually large record out of
// the pool, so that one huge prompt does not pin its size in every slot.
const maxPooledEncodeBuf = 256 << 10

// scannerSet is the stored form of one scanner settings JSON: its key in
// the scanner-sets bucket (the hex of the first 16 bytes of its SHA-256)
// and its value. Both are shared by every record that carries the
// settings and only read by the writer.
type scannerSet struct {
	settings   string
	ref        string
	key, value []byte
}

// recentSets are the scanner settings encoded last, newest first. Every
// record of an endpoint carries the same settings, so hashing and copying
// them once per record would be wasted work.
var recentSets atomic.Pointer[[]*scannerSet]

const maxRecentSets = 16

func scannerSetOf(settings string) *scannerSet {
	old := recentSets.Load()
	if old != nil {
		for _, set := range *old {
			if set.settings == settings {
				return set
			}
		}
	}
	sum := sha256.Sum256([]byte(settings))
	ref := hex.EncodeToString(sum[:16])
	set := &scannerSet{settings: settings, ref: ref, key: []byte(ref), value: []byte(settings)}
	next := []*scannerSet{set}
	if old != nil {
		next = append(next, (*old)[:min(len(*old), maxRecentSets-1)]...)
	}
	// Concurrent misses may each store their own list; losing an entry
	// only costs a later hash.
	recentSets.Store(&next)
	return set
}

// Record bodies are keyed by commit sequence, not by id. Ids are UUIDv7
// taken when a request arrives, but a record is committed when its answer
// ends, and upstream latencies vary from milliseconds to minutes: keyed by
// id, nearly every commit landed inside the tree, and bbolt rewrote a whole
// multi-page leaf for each (measured: 86 instead of 28 µs of writer CPU per
// record, 2.4 instead of 0.8 page writes). Keyed by sequence, bodies are
// appended; only the small id -> sequence entries land out of order.
//
// Databases written before this layout hold the body itself under the id.
// A body is never seqLen bytes long (its fixed header alone is longer), so
// the value's length tells the two apart and both are read.
const seqLen = 8

// recordRef is where a record's body is: ptr is its sequence key in
// bRecords, nil for a body stored under its id (the earlier layout).
type recordRef struct {
	ptr  []byte
	body []byte
}

// recordBuckets are the two buckets a record lives in, looked up once per
// transaction rather than once per record.
type recordBuckets struct{ prompts, records *bolt.Bucket }

func recordBucketsOf(tx *bolt.Tx) recordBuckets {
	return recordBuckets{prompts: tx.Bucket(bPrompts), records: tx.Bucket(bRecords)}
}

// byID finds the record with that id; found is false when none.
func (rb recordBuckets) byID(id []byte) (ref recordRef, found bool) {
	v := rb.prompts.Get(id)
	if v == nil {
		return recordRef{}, false
	}
	if len(v) != seqLen {
		return recordRef{body: v}, true
	}
	body := rb.records.Get(v)
	if body == nil {
		return recordRef{}, false
	}
	return recordRef{ptr: v, body: body}, true
}

// delete removes a record's id entry and body. ref.ptr is copied first:
// deleting from bPrompts may reuse the memory it points into.
func (rb recordBuckets) delete(id []byte, ref recordRef) error {
	var seq [seqLen]byte
	hasPtr := ref.ptr != nil
	copy(seq[:], ref.ptr)
	if err := rb.prompts.Delete(id); err != nil {
		return err
	}
	if hasPtr {
		return rb.records.Delete(seq[:])
	}
	return nil
}

func parseHeader(v []byte) (header, error) {
	var h header
	if len(v) < fixedHeader || v[0] != formatVersion {
		return h, errCorrupt
	}
	h.seq = binary.BigEndian.Uint64(v[offSeq:])
	h.ms = int64(binary.BigEndian.Uint64(v[offTime:]))
	h.preserve = v[offFlags]&flagPreserve != 0
	rest := v[fixedHeader:]
	for _, dst := range [...]*[]byte{&h.org, &h.user, &h.outcome, &h.project, &h.provider, &h.endpoint, &h.input} {
		l, k := binary.Uvarint(rest)
		if k <= 0 || l > uint64(len(rest)-k) {
			return h, errCorrupt
		}
		*dst = rest[k : k+int(l) : k+int(l)]
		rest = rest[k+int(l):]
	}
	h.body = rest
	return h, nil
}

// decodePrompt copies a stored value into a fresh Prompt; nothing of v is
// retained, so v may be bbolt-owned. tx resolves the shared scanner
// settings the record refers to.
func decodePrompt(tx *bolt.Tx, v []byte) (*Prompt, error) {
	h, err := parseHeader(v)
	if err != nil {
		return nil, err
	}
	return decodeWithHeader(tx, h)
}

func decodeWithHeader(tx *bolt.Tx, h header) (*Prompt, error) {
	p := new(Prompt)
	if err := json.Unmarshal(h.body, p); err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	p.Input = string(h.input)
	if p.ScannersRef != "" {
		set := tx.Bucket(bScannerSets).Get([]byte(p.ScannersRef))
		if set == nil {
			return nil, fmt.Errorf("%w: scanner settings %s missing", errCorrupt, p.ScannersRef)
		}
		p.Scanners, p.ScannersRef = string(set), ""
	}
	p.Result.Normalize()
	return p, nil
}

func seqKey(seq uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], seq)
	return k[:]
}

// expiryKey orders by receivedAt then id. Flipping the sign bit makes the
// big-endian bytes of a signed time sort like the number.
func expiryKey(ms int64, id string) []byte {
	return appendExpiryKey(make([]byte, 0, 8+len(id)), ms, id)
}

func appendExpiryKey(k []byte, ms int64, id string) []byte {
	k = binary.BigEndian.AppendUint64(k, uint64(ms)^(1<<63))
	return append(k, id...)
}

func expiryKeyTime(k []byte) int64 {
	return int64(binary.BigEndian.Uint64(k) ^ (1 << 63))
}

// Index bucket names carry a prefix because bbolt needs non-empty names and
// because the two families then cannot collide.
func orgIndexName(org string) []byte { return []byte("o:" + org) }

func userIndexName(org, user string) []byte { return []byte("u:" + org + "\x00" + user) }
