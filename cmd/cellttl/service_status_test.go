package main

import (
	"testing"
	"time"

	"github.com/cellttl/ttl/cmd/cellttl/internal/serve"
	"github.com/cellttl/ttl/sweep"
)

// TestServiceStatusWatchesSweeper: once the command watches its sweeper,
// readiness follows the sweeper's role: a standby is ready while its
// checks of the lease end, a holder or a sweeper without a lease while
// its rounds do.
func TestServiceStatusWatchesSweeper(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	s := &service{}
	s.roundEnded(t0)
	check := func(name string, wantRole serve.Role, wantLast time.Time) {
		t.Helper()
		if role, last := s.status(); role != wantRole || !last.Equal(wantLast) {
			t.Errorf("%s: status() = %v, %v; want %v, %v", name, role, last, wantRole, wantLast)
		}
	}
	check("unwatched", serve.Alone, t0)
	st := sweep.Status{Role: sweep.StandsBy, Finished: t0.Add(time.Minute)}
	s.watch(func() sweep.Status { return st })
	check("standing by", serve.StandingBy, t0.Add(time.Minute))
	st = sweep.Status{Role: sweep.HoldsLease, Finished: t0.Add(-time.Minute)}
	check("holding", serve.Holding, t0)
	st = sweep.Status{Role: sweep.RunsAlone, Finished: t0.Add(-time.Minute)}
	check("alone", serve.Alone, t0)
}
