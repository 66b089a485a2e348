package main

import (
	"testing"
	"time"

	"github.com/cellttl/ttl/sweep"
)

// TestServiceStatusWatchesSweeper: once the command watches its sweeper,
// readiness follows the sweeper's role: a standby is ready while its
// checks of the lease end, a holder while its rounds do.
func TestServiceStatusWatchesSweeper(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	s := &service{}
	s.roundEnded(t0)
	if holding, standby, last := s.status(); !holding || standby || !last.Equal(t0) {
		t.Errorf("unwatched: status() = %v, %v, %v; want true, false, %v", holding, standby, last, t0)
	}
	st := sweep.Status{Role: sweep.StandsBy, Finished: t0.Add(time.Minute)}
	s.watch(func() sweep.Status { return st })
	if holding, standby, last := s.status(); holding || !standby || !last.Equal(t0.Add(time.Minute)) {
		t.Errorf("standing by: status() = %v, %v, %v; want false, true, %v", holding, standby, last, t0.Add(time.Minute))
	}
	st = sweep.Status{Role: sweep.HoldsLease, Finished: t0.Add(-time.Minute)}
	if holding, standby, last := s.status(); !holding || standby || !last.Equal(t0) {
		t.Errorf("holding: status() = %v, %v, %v; want true, false, %v", holding, standby, last, t0)
	}
}
