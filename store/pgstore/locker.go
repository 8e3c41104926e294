package pgstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/promptwall/promptwall/store"
)

// lockKey is the advisory lock key of a TryLock name: a 64-bit hash of
// the name within the schema, because advisory locks are per database and
// two installations may share one database in separate schemas; the prefix
// keeps the keys apart from other software's.
const lockKey = `hashtextextended('promptwall.lock:' || current_schema() || ':' || $1, 0)`

// TryLock takes the lock called name for as long as release is not
// called, with a session advisory lock on a connection of its own (not one
// of the pool's, so held locks never starve the pool): when the instance
// dies, its connection closes and PostgreSQL frees the lock. If the
// connection is lost while the lock is held (the server restarted), the
// lock is lost with it.
func (s *Store) TryLock(ctx context.Context, name string) (release func(), ok bool, err error) {
	select {
	case <-s.q.Closing():
		return nil, false, store.ErrClosed
	default:
	}
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, false, fmt.Errorf("store: lock %q: %w", name, err)
	}
	closeConn := func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer ccancel()
		// Closing the session frees every lock it holds.
		_ = conn.Close(cctx)
	}
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(`+lockKey+`)`, name).Scan(&ok); err != nil {
		closeConn()
		return nil, false, fmt.Errorf("store: lock %q: %w", name, err)
	}
	if !ok {
		closeConn()
		return nil, false, nil
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			s.locksMu.Lock()
			delete(s.locks, conn)
			s.locksMu.Unlock()
			// The server frees a closed session's locks only when its
			// backend has exited, after Close returns: unlocking first
			// makes the lock free for the next taker once release
			// returns. Should that fail, closing still frees it, later.
			uctx, ucancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer ucancel()
			_, _ = conn.Exec(uctx, `SELECT pg_advisory_unlock(`+lockKey+`)`, name)
			closeConn()
		})
	}
	s.locksMu.Lock()
	if s.locks == nil {
		s.locks = make(map[*pgx.Conn]func())
	}
	s.locks[conn] = release
	s.locksMu.Unlock()
	// Close may have freed the held locks while this one was being taken.
	select {
	case <-s.q.Closing():
		release()
		return nil, false, store.ErrClosed
	default:
	}
	return release, true, nil
}

// releaseLocks frees the locks still held when the store closes, so that
// a holder that never released cannot keep them past the instance.
func (s *Store) releaseLocks() {
	s.locksMu.Lock()
	held := make([]func(), 0, len(s.locks))
	for _, release := range s.locks {
		held = append(held, release)
	}
	s.locksMu.Unlock()
	for _, release := range held {
		release()
	}
}

var _ store.Locker = (*Store)(nil)
