package scanner

import (
	"encoding/binary"
	"hash/maphash"
	"slices"
	"unsafe"

	"github.com/dgraph-io/ristretto/v2"
)

// DefaultCacheBytes is the verdict cache's size when none is configured.
const DefaultCacheBytes = 64 << 20

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
// independently seeded 64-bit hash is stored with each entry and compared on
// lookup, so a wrong verdict needs a 128-bit collision: a key collision alone
// is a miss, never someone else's verdict. That second hash is the larger
// part of a cached turn's cost (two passes over the text, ~0.15 us per KB),
// and is kept deliberately: a collision would hand one text another's
// verdict. Errors are never cached.
type VerdictCache struct {
	c *ristretto.Cache[uint64, cachedVerdict]
	// Two seeds, fixed for the cache's life, give two independent hashes
	// of the same bytes. They are random per process, so an attacker cannot
	// precompute colliding texts.
	seedA, seedB maphash.Seed
}

// cachedVerdict is one stage's Finding, or a group's Findings by slot.
// Most verdicts find nothing, and a Finding that is not Detected carries
// nothing the pipeline reads: such entries are stored as clean, with no
// Findings at all. That keeps the common entry free of heap objects the
// garbage collector would trace on every cycle (a full cache is tens of
// MB) and spares a copy per screened message.
type cachedVerdict struct {
	check uint64
	clean bool
	f     Finding
	group []Finding
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

// verdictOverhead approximates what one entry costs beyond its variable
// parts; ristretto adds its own per-item bookkeeping on top.
const verdictOverhead = int64(unsafe.Sizeof(cachedVerdict{}))

// NewVerdictCache returns a cache bounded to about maxBytes of verdicts;
// maxBytes <= 0 means DefaultCacheBytes. Close it when no pipeline uses it.
func NewVerdictCache(maxBytes int64) (*VerdictCache, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultCacheBytes
	}
	// Ristretto admits well with ~10 frequency counters per entry it can
	// hold. A clean verdict costs ~160 bytes once ristretto's bookkeeping
	// is counted, so maxBytes/16 counters is that ratio (~3 bytes each, so
	// about a fifth of maxBytes on top); the floor keeps tiny caches sane.
	counters := max(maxBytes/16, 1024)
	c, err := ristretto.NewCache(&ristretto.Config[uint64, cachedVerdict]{
		NumCounters: counters,
		MaxCost:     maxBytes,
		BufferItems: 64,
		// Keys are already uniform hashes: use them as they are.
		KeyToHash: func(k uint64) (uint64, uint64) { return k, 0 },
	})
	if err != nil {
		return nil, err
	}
	return &VerdictCache{c: c, seedA: maphash.MakeSeed(), seedB: maphash.MakeSeed()}, nil
}

// Close stops the cache's goroutines and drops its entries. Lookups on a
// closed cache miss.
func (vc *VerdictCache) Close() { vc.c.Close() }

// Wait blocks until verdicts stored so far are visible to lookups.
// Ristretto applies writes asynchronously; screening never needs to wait,
// tests and warm-ups do.
func (vc *VerdictCache) Wait() { vc.c.Wait() }

// Clear drops every entry (for example after a scanner's rules changed
// without a version bump).
func (vc *VerdictCache) Clear() { vc.c.Clear() }

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

func (vc *VerdictCache) get(key, check uint64) (Finding, bool) {
	v, ok := vc.c.Get(key)
	if !ok || v.check != check {
		return Finding{}, false
	}
	return v.f, true
}

// getGroup returns a group entry's n Findings, nil on a miss. The slice is
// shared: callers read it and never write it.
func (vc *VerdictCache) getGroup(key, check uint64, n int) []Finding {
	v, ok := vc.c.Get(key)
	if !ok || v.check != check {
		return nil
	}
	if v.clean {
		if n <= len(cleanGroup) {
			return cleanGroup[:n]
		}
		return make([]Finding, n)
	}
	return v.group
}

// set stores f.
func (vc *VerdictCache) set(key, check uint64, f Finding) {
	if !f.Detected {
		vc.c.Set(key, cachedVerdict{check: check, clean: true}, verdictOverhead)
		return
	}
	cost := verdictOverhead + ownFinding(&f)
	vc.c.Set(key, cachedVerdict{check: check, f: f}, cost)
}

// setGroup stores a copy of fs.
func (vc *VerdictCache) setGroup(key, check uint64, fs []Finding) {
	if allClean(fs) {
		vc.c.Set(key, cachedVerdict{check: check, clean: true}, verdictOverhead)
		return
	}
	fs = slices.Clone(fs)
	cost := verdictOverhead
	for i := range fs {
		cost += int64(unsafe.Sizeof(fs[i])) + ownFinding(&fs[i])
	}
	vc.c.Set(key, cachedVerdict{check: check, group: fs}, cost)
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
