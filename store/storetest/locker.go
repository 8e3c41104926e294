package storetest

import (
	"context"
	"testing"

	"github.com/promptwall/promptwall/store"
)

// RunLocker runs the store.Locker conformance suite: a lock has one holder
// at a time, names are independent, and a released lock can be taken
// again.
func RunLocker(t *testing.T, h Harness) {
	s := h.open(t, Options{})
	l, ok := s.(store.Locker)
	if !ok {
		t.Fatalf("%T does not implement store.Locker", s)
	}
	ctx := context.Background()
	held := map[string]func(){}
	t.Cleanup(func() {
		for _, release := range held {
			release()
		}
	})
	for _, step := range []struct {
		name    string
		lock    string // take this lock...
		release string // ...or release this one
		want    bool
	}{
		{"first holder", "campaign:a", "", true},
		{"second holder refused", "campaign:a", "", false},
		{"other name", "campaign:b", "", true},
		{"release", "", "campaign:a", false},
		{"taken again after release", "campaign:a", "", true},
		{"release twice is a no-op", "", "campaign:b", false},
		{"still held by the first", "campaign:a", "", false},
	} {
		if step.release != "" {
			release := held[step.release]
			release()
			if step.name == "release twice is a no-op" {
				release()
			}
			continue
		}
		release, ok, err := l.TryLock(ctx, step.lock)
		if err != nil {
			t.Fatalf("%s: TryLock: %v", step.name, err)
		}
		if ok != step.want {
			t.Fatalf("%s: TryLock(%q) ok = %v, want %v", step.name, step.lock, ok, step.want)
		}
		if ok {
			held[step.lock] = release
		}
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, ok, err := l.TryLock(canceled, "campaign:c"); err == nil || ok {
		t.Fatalf("TryLock with a canceled context: ok %v, err %v", ok, err)
	}
}
