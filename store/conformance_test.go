package store_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store"
	"github.com/promptwall/promptwall/store/storetest"
)

// bboltHarness opens bbolt stores, each in its own file.
var bboltHarness = storetest.Harness{
	Open: func(t testing.TB, o storetest.Options) store.Backend {
		t.Helper()
		s, err := store.Open(store.Options{
			Path:      filepath.Join(t.TempDir(), "pw.db"),
			QueueSize: o.QueueSize,
			BatchWait: o.BatchWait,
			Retention: o.Retention,
		})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	},
	Sweep: func(s store.RecordStore, now time.Time) (int, error) {
		return store.Sweep(s.(*store.Store), now)
	},
}

func TestConformance(t *testing.T) { storetest.RunAll(t, bboltHarness) }
