package scanner

import (
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
)

func detectedFinding(kind string) Finding {
	return Finding{Detected: true, Reason: "found " + kind, Matches: []Match{{Start: 1, End: 4, Kind: kind, Score: 1}}}
}

func TestVerdictCacheEntries(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, vc *VerdictCache)
	}{
		{"clean verdict found", func(t *testing.T, vc *VerdictCache) {
			vc.set(1, 11, Finding{})
			if f, ok := vc.get(1, 11); !ok || f.Detected {
				t.Fatalf("get = %+v, %v", f, ok)
			}
		}},
		{"detected verdict keeps its Findings", func(t *testing.T, vc *VerdictCache) {
			vc.set(2, 22, detectedFinding("EMAIL"))
			f, ok := vc.get(2, 22)
			if !ok || !f.Detected || len(f.Matches) != 1 || f.Matches[0].Kind != "EMAIL" {
				t.Fatalf("get = %+v, %v", f, ok)
			}
		}},
		{"another text's check is a miss", func(t *testing.T, vc *VerdictCache) {
			vc.set(3, 33, detectedFinding("SSN"))
			if f, ok := vc.get(3, 34); ok {
				t.Fatalf("key collision returned %+v", f)
			}
		}},
		{"a verdict replaced in place", func(t *testing.T, vc *VerdictCache) {
			vc.set(4, 44, detectedFinding("IP"))
			vc.set(4, 44, Finding{})
			if f, ok := vc.get(4, 44); !ok || f.Detected {
				t.Fatalf("get = %+v, %v", f, ok)
			}
		}},
		{"clean group", func(t *testing.T, vc *VerdictCache) {
			vc.setGroup(5, 55, make([]Finding, 3))
			if g := vc.getGroup(5, 55, 3); len(g) != 3 || g[0].Detected {
				t.Fatalf("getGroup = %+v", g)
			}
		}},
		{"detected group", func(t *testing.T, vc *VerdictCache) {
			vc.setGroup(6, 66, []Finding{{}, detectedFinding("CARD")})
			if g := vc.getGroup(6, 66, 2); len(g) != 2 || g[0].Detected || !g[1].Detected {
				t.Fatalf("getGroup = %+v", g)
			}
		}},
		{"zero key and check never read as a free slot", func(t *testing.T, vc *VerdictCache) {
			if _, ok := vc.get(0, 0); ok {
				t.Fatal("an empty cache found key 0")
			}
			vc.set(0, 0, detectedFinding("X"))
			if f, ok := vc.get(0, 0); ok && !f.Detected {
				t.Fatal("a detected verdict read back clean")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vc, err := NewVerdictCache(1 << 20)
			if err != nil {
				t.Fatal(err)
			}
			tt.run(t, vc)
		})
	}
}

// TestVerdictCacheKeepsHotEntries: the turns of live conversations, asked
// for again at every turn, survive one-off prompts that fill a third of the
// cache between two turns, 15 times its size in all. (With the default
// 64 MiB, a third is a million prompts between two turns.)
func TestVerdictCacheKeepsHotEntries(t *testing.T) {
	vc, err := NewVerdictCache(64 << 10) // ~3,600 clean entries
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	hot := make([]uint64, 200)
	for i := range hot {
		hot[i] = rng.Uint64()
		vc.set(hot[i], hot[i]^1, Finding{})
	}
	kept := 0
	for round := range 50 {
		for range 1000 { // 50,000 one-off texts in all
			k := rng.Uint64()
			vc.set(k, k^1, Finding{})
		}
		for _, k := range hot {
			if _, ok := vc.get(k, k^1); ok {
				if round == 49 {
					kept++
				}
				continue
			}
			vc.set(k, k^1, Finding{}) // screened again, cached again
		}
	}
	if kept < len(hot)*98/100 {
		t.Fatalf("%d of %d hot entries kept", kept, len(hot))
	}
}

// TestVerdictCacheEvictedFindingsMiss: when the Findings of a detected
// verdict were evicted, the text is screened again; it is never taken as
// clean.
func TestVerdictCacheEvictedFindingsMiss(t *testing.T) {
	vc, err := NewVerdictCache(16 << 10)
	if err != nil {
		t.Fatal(err)
	}
	tab := vc.tab.Load()
	for k := uint64(1); k <= 2000; k++ {
		vc.set(k, k, detectedFinding("EMAIL"))
	}
	if tab.detected.used > tab.detected.budget {
		t.Fatalf("Findings use %d bytes over a %d budget", tab.detected.used, tab.detected.budget)
	}
	found, wrong := 0, 0
	for k := uint64(1); k <= 2000; k++ {
		if f, ok := vc.get(k, k); ok {
			found++
			if !f.Detected {
				wrong++
			}
		}
	}
	if wrong > 0 {
		t.Fatalf("%d detected verdicts read back clean", wrong)
	}
	if found == 0 || found == 2000 {
		t.Fatalf("found %d of 2000: the budget should keep some and evict others", found)
	}
}

func TestVerdictCacheCloseAndClear(t *testing.T) {
	vc, err := NewVerdictCache(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	vc.set(1, 1, Finding{})
	vc.Clear()
	if _, ok := vc.get(1, 1); ok {
		t.Fatal("Clear kept an entry")
	}
	vc.set(2, 2, Finding{})
	if _, ok := vc.get(2, 2); !ok {
		t.Fatal("a cleared cache stopped caching")
	}
	vc.Close()
	vc.Clear()
	vc.set(3, 3, Finding{})
	if _, ok := vc.get(3, 3); ok {
		t.Fatal("a closed cache (cleared after closing) stored an entry")
	}
}

func TestVerdictCacheConcurrent(t *testing.T) {
	vc, err := NewVerdictCache(256 << 10)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for range 20000 {
				k := rng.Uint64N(4096)
				if k%3 == 0 {
					vc.set(k, k*7, detectedFinding("K"))
				} else {
					vc.setGroup(k, k*7, make([]Finding, 2))
				}
				if f, ok := vc.get(k, k*7); ok && f.Detected && len(f.Matches) != 1 {
					t.Errorf("torn entry %+v", f)
				}
				if k%97 == 0 {
					vc.Clear()
				}
			}
		})
	}
	wg.Wait()
}

// TestVerdictTableHoldsNoPointers guards why the table exists: a pointer in
// verdictSet would make the garbage collector scan every entry again.
func TestVerdictTableHoldsNoPointers(t *testing.T) {
	var hasPointers func(reflect.Type) bool
	hasPointers = func(t reflect.Type) bool {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.String, reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
			return true
		case reflect.Array:
			return hasPointers(t.Elem())
		case reflect.Struct:
			for i := range t.NumField() {
				if hasPointers(t.Field(i).Type) {
					return true
				}
			}
		}
		return false
	}
	if hasPointers(reflect.TypeFor[verdictSet]()) {
		t.Fatal("verdictSet holds a pointer")
	}
}
