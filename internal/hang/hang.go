// Package hang gives up on a GPU wait that does not complete. A barrier
// that never completes (a wrong mbarrier phase, a producer and consumers
// that disagree on a trip count) spins until the process dies: the drivers
// have no watchdog on a compute GPU, and a test or benchmark would sit out
// its whole time limit saying nothing. runtime/cuda and runtime/hip wait
// through it and turn a timeout into their own hung-kernel error.
package hang

import (
	"strconv"
	"time"
)

// Limit reads a TILEGO_HANG_S value: whole seconds, 0 for no limit; def
// when empty or not a number.
func Limit(v string, def time.Duration) time.Duration {
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	return def
}

// Wait runs wait and returns its error, or timedOut's once limit has passed
// (wait is left blocked: nothing can cancel it). A limit of 0 or less
// waits as long as wait does.
func Wait(limit time.Duration, wait func() error, timedOut func() error) error {
	if limit <= 0 {
		return wait()
	}
	done := make(chan error, 1)
	go func() { done <- wait() }()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return timedOut()
	}
}
