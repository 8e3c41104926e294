package pgstore

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// sweepChunk bounds one delete, so a large backlog never holds locks long
// enough to stall the writers.
const sweepChunk = 1000

// runSweeper sweeps every SweepInterval. Open swept once before starting
// it, so that records written after Open never race the first sweep.
func (s *Store) runSweeper() {
	defer close(s.sweeperDone)
	if s.opts.Retention < 0 || s.opts.noSweeper {
		return
	}
	t := time.NewTicker(s.opts.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-s.q.Closing():
			return
		case <-t.C:
		}
		s.sweepAndLog()
	}
}

func (s *Store) sweepAndLog() {
	n, ran, err := s.Sweep(time.Now())
	switch {
	case err != nil:
		s.log.Error("store retention sweep failed", zap.Error(err))
	case ran && n > 0:
		s.log.Info("store retention sweep", zap.Int("deleted", n), zap.Duration("retention", s.opts.Retention))
	}
}

// Sweep deletes the records received before now-Retention that are not
// preserved. Only one instance sweeps at a time: ran is false when another
// held the sweep lock, and that instance does the work.
func (s *Store) Sweep(now time.Time) (deleted int, ran bool, err error) {
	if s.opts.Retention < 0 {
		return 0, false, nil
	}
	cutoff := now.Add(-s.opts.Retention).UnixMilli()
	ctx := context.Background()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return 0, false, err
	}
	defer conn.Release()
	// A session lock, taken without waiting: instances that find it held
	// skip this round.
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, lockSweep).Scan(&ran); err != nil || !ran {
		return 0, false, err
	}
	defer func() { _, _ = conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, lockSweep) }()
	for {
		tag, err := conn.Exec(ctx, `DELETE FROM promptwall_prompts WHERE seq IN (
			SELECT seq FROM promptwall_prompts WHERE NOT preserve AND received_ms < $1
			ORDER BY received_ms LIMIT $2)`, cutoff, sweepChunk)
		if err != nil {
			return deleted, true, err
		}
		deleted += int(tag.RowsAffected())
		if tag.RowsAffected() < sweepChunk {
			return deleted, true, nil
		}
		select {
		case <-s.q.Closing():
			return deleted, true, nil
		default:
		}
	}
}
