package sweep_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/scan"
)

// Replaying one run of TestSweepModel again and again, with the
// goroutines' schedules perturbed, to see whether a divergence it once
// showed comes back: the run of a seed, up to the operation at which it
// diverged, each repetition under another GOMAXPROCS and with random
// yields wherever a call of Once meets the harness (each delivery, before
// and after its fault, each row read, each deletion, each Save of the
// checkpoint). A run whose sweep has two workers need not replay exactly
// (the order of the shards' deliveries picks the rows another writer
// changes, and the generator then draws differently): the repetitions
// count the distinct paths they took, each a hash of the operations and
// of the model's table and the checkpoints at the end. Under the race
// detector no other writer changes a row during a delivery (see
// attempt.deliver), so a seed's run there takes a path of its own from
// the first such change on.

// divergedSeed, run 6, operation 10778 ("sweep 1: Once, delivery cancels
// at 2"): where the sweep model, on 2026-11-25, reported a call that
// recorded rows owing 3 events and delivered 2 of them (issue 26).
const divergedSeed = 1795599442681808035

// TestSweepModelReplay replays run CELLTTL_SWEEP_RUN (default 6) of seed
// CELLTTL_SWEEP_SEED (default divergedSeed) up to operation
// CELLTTL_SWEEP_OP (default 10778), CELLTTL_SWEEP_REPLAY times, perturbed,
// under GOMAXPROCS 1, 2, 4 and 8 in turn (or CELLTTL_SWEEP_GOMAXPROCS).
// Without CELLTTL_SWEEP_REPLAY it replays the first 400 operations twice,
// to keep the harness working.
//
//	CELLTTL_SWEEP_REPLAY=40 go test -race -count=1 -run 'TestSweepModelReplay$' -v ./sweep
func TestSweepModelReplay(t *testing.T) {
	reps := int(envInt(t, "CELLTTL_SWEEP_REPLAY", 0))
	upTo := int(envInt(t, "CELLTTL_SWEEP_OP", 10778))
	if reps == 0 {
		reps, upTo = 2, 400
	}
	seed := uint64(envInt(t, "CELLTTL_SWEEP_SEED", divergedSeed))
	run := int(envInt(t, "CELLTTL_SWEEP_RUN", 6))
	procs := []int{1, 2, 4, 8}
	if p := int(envInt(t, "CELLTTL_SWEEP_GOMAXPROCS", 0)); p > 0 {
		procs = []int{p}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	paths := map[uint64]int{}
	var yields int64
	for k := range reps {
		p := procs[k%len(procs)]
		runtime.GOMAXPROCS(p)
		res := replay(seed, run, upTo, uint64(k))
		if res.err != "" {
			t.Fatalf("repetition %d (GOMAXPROCS %d, perturbation seed %d): CELLTTL_SWEEP_SEED=%d CELLTTL_SWEEP_RUN=%d (%s): %s",
				k, p, k, seed, run, sourceOf(), res.err)
		}
		paths[res.path]++
		yields += res.yields
		t.Logf("repetition %d, GOMAXPROCS %d: %d operations, none diverged; %d yields; path %x; operation %d: %v",
			k, p, res.ops, res.yields, res.path, upTo, res.last)
	}
	t.Logf("%d repetitions of seed %d run %d up to operation %d: none diverged; %d distinct paths; %d yields (%s)",
		reps, seed, run, upTo, len(paths), yields, sourceOf())
	if yields == 0 {
		t.Error("no schedule was perturbed")
	}
}

// A replayed is what one repetition did.
type replayed struct {
	ops    int
	yields int64
	path   uint64 // a hash of the operations run, the model's table and the checkpoints at the end
	last   string // the last operation, and what its call of Once delivered
	err    string // the divergence, if any
}

// replay runs operations 0 to upTo of run i of seed, with schedules
// perturbed by a jitter seeded with k.
func replay(seed uint64, i, upTo int, k uint64) replayed {
	r := rand.New(rand.NewPCG(seed+uint64(i), 0x5eed))
	v := newVariant(r)
	e, idle, stop, err := startEmulator()
	if err != nil {
		return replayed{err: err.Error()}
	}
	defer stop()
	st := &modelStats{}
	mr, err := newModelRun(e, v, r, st)
	if err != nil {
		return replayed{err: err.Error()}
	}
	mr.idle = idle
	j := &jitter{r: rand.New(rand.NewPCG(k, 0x717)), yields: new(atomic.Int64)}
	mr.perturb = j.yield
	mr.data.TableAPI = jitterTable{mr.data.TableAPI, j}
	for _, sw := range mr.sweeps {
		sw.cp.Checkpoint = jitterCheckpoint{sw.cp.Checkpoint, j}
	}
	idx, msg, ops := mr.run(upTo + 1)
	out := replayed{ops: len(ops), yields: j.yields.Load(), path: mr.path(ops), last: ops[len(ops)-1].String()}
	if o := ops[len(ops)-1]; o.kind == opSweep && mr.last != nil {
		out.last += ": " + mr.last.summary()
	}
	if idx >= 0 {
		out.err = fmt.Sprintf("operation %d: %v\n%s\nvariant: %v\noperations:%s", idx, ops[idx], msg, v, lastOps(ops, idx, 25))
	}
	return out
}

// path returns a hash of the operations run and where they left the
// model's table and the sweeps' checkpoints: repetitions that followed
// the same path have the same.
func (mr *modelRun) path(ops []*op) uint64 {
	h := fnv.New64a()
	for _, o := range ops {
		fmt.Fprintln(h, o)
	}
	fmt.Fprintln(h, mr.m.rows)
	for _, sw := range mr.sweeps {
		rec, _ := sw.mem.Load(context.Background())
		fmt.Fprintln(h, formatRecord(rec))
	}
	return h.Sum64()
}

// summary says what the attempt delivered: the events of each delivery,
// and its error.
func (a *attempt) summary() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var parts []string
	for _, d := range a.calls {
		parts = append(parts, fmt.Sprintf("%d events (%v, %d taken)", len(d.events), d.err, d.accepted))
	}
	if len(parts) == 0 {
		return "no delivery"
	}
	return fmt.Sprintf("%d deliveries: %s", len(parts), strings.Join(parts, "; "))
}

// A jitter perturbs the schedule where it is called: nothing, a run of
// yields to the other goroutines, or a pause of up to 300µs, which lets
// the emulator's streams move on meanwhile. Nothing waits on it: it
// changes only which goroutine runs when.
type jitter struct {
	mu     sync.Mutex
	r      *rand.Rand
	yields *atomic.Int64
}

func (j *jitter) yield() {
	j.mu.Lock()
	x, n, d := j.r.IntN(10), j.r.IntN(40), time.Duration(j.r.IntN(300))*time.Microsecond
	j.mu.Unlock()
	switch {
	case x < 4:
		return
	case x < 8:
		for range n {
			runtime.Gosched()
		}
	default:
		time.Sleep(d)
	}
	j.yields.Add(1)
}

// jitterTable is the table a replayed sweep reads, perturbed before and
// after each row it reads and each deletion.
type jitterTable struct {
	bigtable.TableAPI
	j *jitter
}

func (t jitterTable) ReadRows(ctx context.Context, rs bigtable.RowSet, f func(bigtable.Row) bool, opts ...bigtable.ReadOption) error {
	t.j.yield()
	err := t.TableAPI.ReadRows(ctx, rs, func(r bigtable.Row) bool {
		t.j.yield()
		more := f(r)
		t.j.yield()
		return more
	}, opts...)
	t.j.yield()
	return err
}

func (t jitterTable) ApplyBulk(ctx context.Context, rows []string, muts []*bigtable.Mutation, opts ...bigtable.ApplyOption) ([]error, error) {
	t.j.yield()
	errs, err := t.TableAPI.ApplyBulk(ctx, rows, muts, opts...)
	t.j.yield()
	return errs, err
}

// jitterCheckpoint is a replayed sweep's checkpoint, perturbed before and
// after each Save.
type jitterCheckpoint struct {
	scan.Checkpoint
	j *jitter
}

func (c jitterCheckpoint) Save(ctx context.Context, r *scan.Record) error {
	c.j.yield()
	err := c.Checkpoint.Save(ctx, r)
	c.j.yield()
	return err
}
