package store

import (
	"bytes"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Records of one endpoint share its scanner settings: stored once, served
// with every record.
func TestScannerSettingsStoredOnce(t *testing.T) {
	s := openTest(t, Options{})
	settingsA := `[{"id":"secrets","mode":"block","flagMessage":"` + strings.Repeat("a", 500) + `"}]`
	settingsB := `[{"id":"pii","mode":"flag"}]`
	tests := []struct {
		id, settings string
	}{
		{NewID(), settingsA}, {NewID(), settingsA}, {NewID(), settingsA}, {NewID(), settingsB}, {NewID(), ""},
	}
	for _, tc := range tests {
		put(t, s, &Prompt{
			PromptFields: PromptFields{ID: tc.id, OrgID: "o1", Type: TypePrompt, Input: "hi", ReceivedAt: Timestamp(time.Now())},
			Scanners:     tc.settings,
		})
	}
	syncStore(t, s)
	for _, tc := range tests {
		p, err := s.GetPrompt(tc.id)
		if err != nil {
			t.Fatal(err)
		}
		if p.Scanners != tc.settings || p.ScannersRef != "" {
			t.Errorf("prompt %s: scanners %q (ref %q), want %q", tc.id, p.Scanners, p.ScannersRef, tc.settings)
		}
	}
	page, err := s.ListPrompts(Query{OrgID: "o1", Limit: 10})
	if err != nil || len(page.Items) != len(tests) {
		t.Fatalf("list: %v %d", err, len(page.Items))
	}
	for _, p := range page.Items {
		if p.ScannersRef != "" {
			t.Errorf("listed prompt keeps its internal reference")
		}
	}
	var sets, carrying int
	err = s.db.View(func(tx *bolt.Tx) error {
		sets = tx.Bucket(bScannerSets).Stats().KeyN
		return tx.Bucket(bPrompts).ForEach(func(_, v []byte) error {
			if bytes.Contains(v, []byte(strings.Repeat("a", 100))) {
				carrying++
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if sets != 2 || carrying != 0 {
		t.Errorf("%d stored settings (want 2), %d records carrying a copy (want 0)", sets, carrying)
	}
}
