package scanner

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// DefaultCacheBytes is the verdict cache's size when none is configured:
// about 815,000 verdicts, the turns of some 40,000 live 20-turn
// conversations.
const DefaultCacheBytes = 16 << 20

// VerdictCache remembers scanners' Findings so that the unchanged turns of a
// growing conversation are not screened again: a 20-turn chat with one new
// turn costs about one turn. It is safe for concurrent use and meant to be
// shared by every pipeline of a process (kept across config reloads); the
// pipeline's ConfigVersion in the key keeps configs apart.
//
// Keys are 64-bit hashes of (ConfigVersion, scanner ID, scanner Version,
// direction, role, text). The inline scanners of a pipeline share one entry
// per text, keyed by all their IDs and Versions (see group in pipeline.go),
// so a cached turn costs one lookup, not one per scanner. A second,
// independently seeded hash is stored with each entry and compared on
// lookup, so a wrong verdict needs a 127-bit collision (64 bits of key, 63
// of check): a key collision alone is a miss, never someone else's verdict.
// That second hash is the larger part of a cached turn's cost (two passes
// over the text, ~0.15 us per KB), and is kept deliberately. Errors are
// never cached.
//
// Most verdicts find nothing and need only (key, check) to be remembered.
// Those live in a set-associative table of plain integers: the garbage
// collector never scans it, and it counts toward the heap that paces the
// collector, so a full cache makes collections rarer rather than longer.
// (Ristretto, used here before, keeps per-item pointers in Go maps: every
// collection walked the whole cache, and each write went through a channel
// to its goroutine.) The few verdicts that found something keep their
// Findings in a small map with its own byte budget; their table entry says
// where to look.
type VerdictCache struct {
	// tab is nil once the cache is closed; Clear swaps in a fresh one.
	tab atomic.Pointer[verdictTable]
	// Two seeds, fixed for the cache's life, give two independent hashes
	// of the same bytes. They are random per process, so an attacker cannot
	// precompute colliding texts.
	seedA, seedB maphash.Seed
	maxBytes     int64
}

// verdictWays is the associativity: a text competes for one of 8 slots,
// so hot conversations survive a stream of one-off prompts (CLOCK keeps
// the slots that were hit).
const verdictWays = 8

// verdictSet holds 8 entries and no pointers. An entry's check has its low
// bit replaced by the "found something" flag; a free slot is all zero.
type verdictSet struct {
	mu     sync.Mutex
	ref    uint8 // CLOCK reference bits: set on a hit, cleared as the hand passes
	hand   uint8
	keys   [verdictWays]uint64
	checks [verdictWays]uint64
}

const detectedFlag = 1

type verdictTable struct {
	sets     []verdictSet
	detected findingStore
}

// cachedVerdict is the Findings of an entry that found something: one
// stage's Finding, or a group's Findings by slot.
type cachedVerdict struct {
	check uint64
	cost  int64
	f     Finding
	group []Finding
}

// findingStore keeps the Findings of detected verdicts within a byte
// budget, evicting a random entry (Go's map order) when full.
type findingStore struct {
	mu     sync.Mutex
	m      map[uint64]cachedVerdict
	used   int64
	budget int64
}

// cleanGroup backs the Findings returned for a clean group entry: all
// zero, never written (callers copy a slot's Finding out of it).
var cleanGroup [64]Finding

// allClean says whether no Finding of fs is Detected.
func allClean(fs []Finding) bool {
	for i := range fs {
		if fs[i].Detected {
			return false
		}
	}
	return true
}

// verdictOverhead approximates what one detected entry costs beyond its
// variable parts, map slot included.
const verdictOverhead = int64(unsafe.Sizeof(cachedVerdict{})) + 16

// NewVerdictCache returns a cache bounded to about maxBytes; maxBytes <= 0
// means DefaultCacheBytes. An eighth of it keeps the Findings of detected
// verdicts, the rest holds clean ones at 18 bytes each (16 MiB remember
// about 815,000 texts). Texts land at random, so the table is resident
// soon after traffic starts; size it for the conversations in flight, not
// for the machine's memory.
func NewVerdictCache(maxBytes int64) (*VerdictCache, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultCacheBytes
	}
	vc := &VerdictCache{seedA: maphash.MakeSeed(), seedB: maphash.MakeSeed(), maxBytes: maxBytes}
	vc.tab.Store(newVerdictTable(maxBytes))
	return vc, nil
}

func newVerdictTable(maxBytes int64) *verdictTable {
	detected := maxBytes / 8
	n := max((maxBytes-detected)/int64(unsafe.Sizeof(verdictSet{})), 16)
	return &verdictTable{
		sets:     make([]verdictSet, n),
		detected: findingStore{m: make(map[uint64]cachedVerdict), budget: detected},
	}
}

// Close drops every entry; lookups on a closed cache miss and stores are
// ignored.
func (vc *VerdictCache) Close() { vc.tab.Store(nil) }

// Clear drops every entry (for example after a scanner's rules changed
// without a version bump).
func (vc *VerdictCache) Clear() {
	if old := vc.tab.Load(); old != nil {
		// A cache closed meanwhile stays closed.
		vc.tab.CompareAndSwap(old, newVerdictTable(vc.maxBytes))
	}
}

// textKey is the pair of independent hashes of one text, computed once per
// message per screening and combined with each stage's prefix.
type textKey struct{ a, b uint64 }

func (vc *VerdictCache) hashText(s string) textKey {
	return textKey{maphash.String(vc.seedA, s), maphash.String(vc.seedB, s)}
}

// prefix hashes the per-stage part of the key. Fields are length-prefixed so
// that ("ab","c") and ("a","bc") differ.
func (vc *VerdictCache) prefix(parts ...string) textKey {
	var ha, hb maphash.Hash
	ha.SetSeed(vc.seedA)
	hb.SetSeed(vc.seedB)
	var n [8]byte
	for _, p := range parts {
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		_, _ = ha.Write(n[:])
		_, _ = hb.Write(n[:])
		_, _ = ha.WriteString(p)
		_, _ = hb.WriteString(p)
	}
	return textKey{ha.Sum64(), hb.Sum64()}
}

// combine mixes a stage prefix, a direction/role hash and a text hash into
// one key. Each step is a bijection in the value mixed in, so for one stage
// and role two texts collide only if their text hashes do.
func combine(prefix, roleDir, text uint64) uint64 {
	return fmix64(fmix64(prefix^roleDir) ^ text)
}

// fmix64 is MurmurHash3's finaliser: a cheap bijective avalanche.
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// set returns key's set: the high bits of a multiply map the uniform key
// onto any set count, so the table needs no power-of-two size.
func (t *verdictTable) set(key uint64) *verdictSet {
	hi, _ := bits.Mul64(key, uint64(len(t.sets)))
	return &t.sets[hi]
}

// lookup finds key with check; detected says the Findings are in t.detected.
func (t *verdictTable) lookup(key, check uint64) (found, detected bool) {
	s := t.set(key)
	want := check &^ detectedFlag
	s.mu.Lock()
	for i := range verdictWays {
		if s.keys[i] == key && s.checks[i]&^detectedFlag == want && s.checks[i] != 0 {
			s.ref |= 1 << i
			detected = s.checks[i]&detectedFlag != 0
			s.mu.Unlock()
			return true, detected
		}
	}
	s.mu.Unlock()
	return false, false
}

// insert remembers key: over its old entry, in a free slot, or over the
// first slot the CLOCK hand finds unreferenced since it last passed. A new
// entry starts unreferenced, so a one-off text is the next to go unless it
// is asked for again.
func (t *verdictTable) insert(key, check uint64, detected bool) {
	stored := check &^ detectedFlag
	if detected {
		stored |= detectedFlag
	}
	if stored == 0 {
		// Zero marks a free slot. Stored as 2, such an entry never matches
		// its check again: a miss, for one check in 2^63.
		stored = 2
	}
	s := t.set(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	slot := -1
	for i := range verdictWays {
		if s.keys[i] == key {
			slot = i
			break
		}
		if slot < 0 && s.checks[i] == 0 {
			slot = i
		}
	}
	if slot < 0 {
		for {
			i := s.hand
			s.hand = (s.hand + 1) % verdictWays
			if s.ref&(1<<i) == 0 {
				slot = int(i)
				break
			}
			s.ref &^= 1 << i
		}
	}
	s.keys[slot], s.checks[slot] = key, stored
	s.ref &^= 1 << slot
}

func (fs *findingStore) get(key, check uint64) (cachedVerdict, bool) {
	fs.mu.Lock()
	v, ok := fs.m[key]
	fs.mu.Unlock()
	if !ok || v.check != check {
		return cachedVerdict{}, false
	}
	return v, true
}

// put stores v, evicting random entries while over budget; a verdict larger
// than the whole budget is not kept.
func (fs *findingStore) put(key uint64, v cachedVerdict) bool {
	if v.cost > fs.budget {
		return false
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if old, ok := fs.m[key]; ok {
		fs.used -= old.cost
		delete(fs.m, key)
	}
	for k, old := range fs.m {
		if fs.used+v.cost <= fs.budget {
			break
		}
		fs.used -= old.cost
		delete(fs.m, k)
	}
	fs.m[key] = v
	fs.used += v.cost
	return true
}

// find returns key's entry: clean (no Findings kept), detected (Findings in
// v), or not found.
func (vc *VerdictCache) find(key, check uint64) (v cachedVerdict, clean, found bool) {
	t := vc.tab.Load()
	if t == nil {
		return v, false, false
	}
	found, detected := t.lookup(key, check)
	if !found {
		return v, false, false
	}
	if !detected {
		return v, true, true
	}
	v, found = t.detected.get(key, check)
	return v, false, found
}

func (vc *VerdictCache) get(key, check uint64) (Finding, bool) {
	v, clean, found := vc.find(key, check)
	if !found || clean {
		return Finding{}, found
	}
	return v.f, true
}

// getGroup returns a group entry's n Findings, nil on a miss. The slice is
// shared: callers read it and never write it.
func (vc *VerdictCache) getGroup(key, check uint64, n int) []Finding {
	v, clean, found := vc.find(key, check)
	switch {
	case !found:
		return nil
	case clean && n <= len(cleanGroup):
		return cleanGroup[:n]
	case clean:
		return make([]Finding, n)
	}
	return v.group
}

// store remembers a verdict: clean ones in the table alone, detected ones
// with their Findings in the side store first, so the table never points
// to Findings that are not there.
func (vc *VerdictCache) store(key, check uint64, clean bool, v cachedVerdict) {
	t := vc.tab.Load()
	if t == nil {
		return
	}
	if !clean {
		v.check = check
		if !t.detected.put(key, v) {
			return
		}
	}
	t.insert(key, check, !clean)
}

// set stores f.
func (vc *VerdictCache) set(key, check uint64, f Finding) {
	if !f.Detected {
		vc.store(key, check, true, cachedVerdict{})
		return
	}
	cost := verdictOverhead + ownFinding(&f)
	vc.store(key, check, false, cachedVerdict{f: f, cost: cost})
}

// setGroup stores a copy of fs.
func (vc *VerdictCache) setGroup(key, check uint64, fs []Finding) {
	if allClean(fs) {
		vc.store(key, check, true, cachedVerdict{})
		return
	}
	fs = slices.Clone(fs)
	cost := verdictOverhead
	for i := range fs {
		cost += int64(unsafe.Sizeof(fs[i])) + ownFinding(&fs[i])
	}
	vc.store(key, check, false, cachedVerdict{group: fs, cost: cost})
}

// ownFinding copies f's Matches, because a cached value is shared by every
// later hit and must not alias a buffer the scanner may reuse, and returns
// the bytes f holds beyond its own struct.
func ownFinding(f *Finding) int64 {
	cost := int64(len(f.Reason))
	if len(f.Matches) > 0 {
		f.Matches = slices.Clone(f.Matches)
		for _, m := range f.Matches {
			cost += int64(unsafe.Sizeof(m)) + int64(len(m.Kind))
		}
	}
	return cost
}
