package sweep_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// sweepSeed is the seed of TestSweepModel unless CELLTTL_SWEEP_SEED says
// otherwise: fixed, so that CI judges the same runs every time.
const sweepSeed = 1795602503812418210

// TestSweepModel checks sweeps against a reference model of what the
// package doc and DESIGN.md ("Expiry you can act on") promise. A seeded
// generator makes random operations on a table of families under
// OneSecond and DefaultExpiration with graces, created by policy.Ensure,
// and in half the runs a family in a Move from real timestamps (with old
// cells a writer without the library stored): writes with every kind of
// lifetime, Replace, DeleteCellsInColumn and DeleteRow, Touch and
// KeepAlive renewals, cells written raw (some landing late, behind the
// watermarks), moves of a fake clock from microseconds to hours, passes
// of GC as the families' policies say on that clock, and calls of Once
// of four sweeps, each with its own checkpoint (Cell,
// Column and Row events of every family; Row events of some), a third of
// them stopped at a random point (a delivery that fails or cancels, a
// Save that fails, a read cancelled, a deletion that fails), sometimes on
// a new Sweeper, sometimes with another writer changing a row of the batch
// being delivered. Rounds left unfinished are resumed by later calls, with
// writes and clock moves in between.
//
// After each call the events delivered must be exactly those the model
// owes for the rows the call recorded, plus at most one batch in flight
// (model_check_test.go); no event recorded is delivered again; a sweep
// that deletes must leave exactly the cells the model keeps (checked with
// every stored cell every few operations); the report must count what
// the round recorded, and a finished round's must list each family in
// which GC may have deleted a cell of its window first, and none in which
// GC did is left out.
//
// CELLTTL_SWEEP_OPS sets the number of operations over all runs (default
// 100,000 in eight runs; 25,000 under the race detector; 4,000 in two
// with -short), CELLTTL_SWEEP_SEED
// the seed (default sweepSeed); run i uses seed + i, and
// CELLTTL_SWEEP_RUN=i runs it alone. A failing run prints the seed, the
// run, the index of the operation that diverged and the operations
// before it. (A run with two workers or a cancelled read may not replay
// exactly: the model follows what the sweep did.)
//
// The model is spread over files that each hold one part of it:
//
//   - model_rules_test.go: the rules: stamps, expiries, Touch, KeepAlive,
//     and what a round owes for a row and deletes in it;
//   - model_gen_test.go: the operations and their seeded generator;
//   - model_faults_test.go: the table, checkpoint and Deliver that stop a
//     sweep and see what it did;
//   - model_run_test.go: a run's setup, its operations, the raw check;
//   - model_check_test.go: checking a call of Once.
func TestSweepModel(t *testing.T) {
	total, runs := 100_000, 8
	switch {
	case testing.Short():
		total, runs = 4_000, 2
	case raceDetector:
		total = 25_000 // the race detector makes each request several times slower
	}
	total = int(envInt(t, "CELLTTL_SWEEP_OPS", int64(total)))
	seed := uint64(envInt(t, "CELLTTL_SWEEP_SEED", sweepSeed))
	only := int(envInt(t, "CELLTTL_SWEEP_RUN", -1))
	t.Logf("CELLTTL_SWEEP_SEED=%d CELLTTL_SWEEP_OPS=%d (%s)", seed, total, sourceOf())
	all := runModels(t, "SWEEP", seed, total, runs, only, false)
	if all != nil && only < 0 && total >= 10_000 && (all.rounds < total/50 || all.stopped < total/100 || all.resumed == 0 || all.abandoned == 0 ||
		all.events[0] == 0 || all.events[1] == 0 || all.events[2] == 0 || all.inFlight == 0 || all.redelivered == 0 ||
		all.deletedRows == 0 || all.injected == 0 && !raceDetector || all.missed == 0 || all.renewed == 0 || all.touched == 0 || all.empty == 0) {
		t.Errorf("the runs exercised too little: %v", all)
	}
}

// runModels makes runs runs of total operations over all, from seed (run
// i from seed + i; only i if only >= 0), with a schedule and scheduled
// sweeps if sched, and returns what they exercised, or nil if one
// diverged, which it reports with the variables CELLTTL_<env>_SEED and
// _RUN that replay it.
func runModels(t *testing.T, env string, seed uint64, total, runs, only int, sched bool) *modelStats {
	source := sourceOf()
	start := time.Now()
	// The runs wait on their emulators more than they compute: all at
	// once, in goroutines of their own, whatever -parallel says.
	results := make([]string, runs)
	stats := make([]*modelStats, runs)
	var wg sync.WaitGroup
	for i := range runs {
		if only >= 0 && i != only {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			stats[i], results[i] = modelRunOf(t, seed, i, total/runs, sched)
		}()
	}
	wg.Wait()
	all := &modelStats{}
	for i, msg := range results {
		switch {
		case msg != "":
			t.Errorf("CELLTTL_%s_SEED=%d CELLTTL_%s_RUN=%d (%s): %s", env, seed, env, i, source, msg)
		case stats[i] != nil:
			all.add(stats[i])
		}
	}
	if t.Failed() {
		return nil
	}
	t.Logf("%v, in %v", all, time.Since(start).Round(time.Millisecond))
	return all
}

// modelRunOf runs run i of n operations, and returns what it exercised
// and, when an operation diverged from the model, what did.
func modelRunOf(t *testing.T, seed uint64, i, n int, sched bool) (*modelStats, string) {
	r := rand.New(rand.NewPCG(seed+uint64(i), 0x5eed))
	v := newVariant(r)
	if sched {
		v.withTwins()
	}
	e, idle, stop, err := startEmulator()
	if err != nil {
		return nil, err.Error()
	}
	t.Cleanup(stop)
	st := &modelStats{}
	mr, err := newModelRun(e, v, r, st)
	if err != nil {
		return nil, err.Error()
	}
	mr.idle = idle
	idx, msg, ops := mr.run(n)
	if idx >= 0 {
		return nil, fmt.Sprintf("operation %d of %d: %v\n%s\nvariant: %v\noperations:%s", idx, n, ops[idx], msg, v, lastOps(ops, idx, 25))
	}
	t.Logf("run %d: %v\n%v", i, v, st)
	return st, ""
}

// envInt returns the integer in the environment variable name, or def.
func envInt(t testing.TB, name string, def int64) int64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return n
}
