package store

import (
	"context"
	"sync"
)

// Locker lets work that must run once, such as a scheduled campaign run,
// run on one instance only: the instance that takes the lock does the work
// and the others skip it. Both backends offer it; with the bbolt store
// (one instance per database file) the lock is held in process.
type Locker interface {
	// TryLock takes the lock called name without waiting: ok is false when
	// another holder has it. release frees the lock; calling it again is a
	// no-op. A holder that dies (a crashed instance) frees its locks.
	TryLock(ctx context.Context, name string) (release func(), ok bool, err error)
}

// localLocks is the in-process Locker of the bbolt store.
type localLocks struct {
	mu   sync.Mutex
	held map[string]bool
}

// TryLock takes the lock called name unless this Store already holds it.
func (s *Store) TryLock(ctx context.Context, name string) (release func(), ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	select {
	case <-s.q.Closing():
		return nil, false, ErrClosed
	default:
	}
	l := &s.locks
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[name] {
		return nil, false, nil
	}
	if l.held == nil {
		l.held = make(map[string]bool)
	}
	l.held[name] = true
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			delete(l.held, name)
			l.mu.Unlock()
		})
	}, true, nil
}

var _ Locker = (*Store)(nil)
