package webhook

import (
	"context"
	"fmt"
)

// Limiter caps how many calls run at once: a counting semaphore. It is
// shared by every scanner under one cap (an organisation's custom or
// vendored classifiers) and safe for concurrent use. A nil *Limiter imposes
// no cap.
type Limiter struct {
	slots chan struct{}
}

// NewLimiter returns a Limiter allowing n concurrent calls, or nil (no cap)
// when n <= 0.
func NewLimiter(n int) *Limiter {
	if n <= 0 {
		return nil
	}
	return &Limiter{slots: make(chan struct{}, n)}
}

// Cap returns the number of concurrent calls allowed, 0 for no cap.
func (l *Limiter) Cap() int {
	if l == nil {
		return 0
	}
	return cap(l.slots)
}

// TryAcquire takes a slot if one is free, without waiting.
func (l *Limiter) TryAcquire() bool {
	if l == nil {
		return true
	}
	select {
	case l.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// Acquire takes a slot, waiting until one frees up or ctx is done; then it
// returns an error wrapping ErrConcurrencyLimit (and ctx's error). Every
// successful Acquire must be paired with a Release.
func (l *Limiter) Acquire(ctx context.Context) error {
	if l.TryAcquire() {
		return nil
	}
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w (%d in flight): %w", ErrConcurrencyLimit, cap(l.slots), ctx.Err())
	}
}

// Release frees a slot taken by Acquire or TryAcquire.
func (l *Limiter) Release() {
	if l == nil {
		return
	}
	<-l.slots
}
