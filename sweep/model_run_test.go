package sweep_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

// Running a model: one table on its own emulator, written through a
// ttl.Table on a fake clock and swept by four Sweepers on the same clock,
// each with its own checkpoint; the model beside it. Every write, Touch
// and KeepAlive read must succeed or fail as the model says, every call
// of Once must deliver and record what the model owes
// (model_check_test.go), and every rawEvery operations the raw table must
// hold exactly the model's cells, companions included.

const rawEvery = 20

// A variant is the configuration of one run's table and sweeps, drawn
// from its seed.
type variant struct {
	graceA, graceB, graceM time.Duration
	d                      time.Duration // b's default
	move                   bool          // a family "m" in a move
	writeTimes             bool
	splits                 []string // the tablets' boundaries
	sweeps                 []sweepConfig
	// sched: the Table writes a schedule, and each sweep has a twin
	// that reads it (model_schedule_test.go).
	sched bool
}

// A sweepConfig is one sweep of a run.
type sweepConfig struct {
	spec    sweepSpec
	margin  time.Duration // as given: 0 is DefaultMargin
	since   time.Time
	batch   int
	workers int
	delete  bool
	// scheduled: the sweep reads the schedule (Options.Schedule).
	scheduled bool
}

func (c sweepConfig) String() string {
	return fmt.Sprintf("%v of %v (margin %v, since %v, batch %d, %d workers, values %v, delete %v, scheduled %v)",
		c.spec.g, c.spec.fams, c.margin, c.since.Format(time.RFC3339), c.batch, c.workers, c.spec.values, c.delete, c.scheduled)
}

func newVariant(r *rand.Rand) *variant {
	v := &variant{
		graceA:     pick(r, 10*time.Minute, time.Hour, 2*time.Hour),
		graceB:     pick(r, 10*time.Minute, time.Hour),
		graceM:     pick(r, 30*time.Minute, time.Hour),
		d:          pick(r, 30*time.Second, 90*time.Second, 10*time.Minute),
		move:       r.IntN(2) == 0,
		writeTimes: r.IntN(2) == 0,
		splits:     pick(r, []string(nil), []string{"r06"}, []string{"r03", "r08"}, []string{"r02", "r05", "r09"}),
	}
	all := []string{"a", "b"}
	if v.move {
		all = append(all, "m")
	}
	rowFams := []string{"a"}
	if v.move && r.IntN(2) == 0 {
		rowFams = []string{"a", "m"}
	}
	for i, g := range []sweep.Granularity{sweep.Cell, sweep.Column, sweep.Row, sweep.Row} {
		fams := all
		if i == 3 {
			fams = rowFams
		}
		c := sweepConfig{
			spec:    sweepSpec{fams: fams, g: g, values: r.IntN(2) == 0},
			margin:  pick(r, 0, time.Millisecond, time.Second, 3*time.Second),
			since:   base,
			batch:   pick(r, 1, 2, 3, 4, 7, 1000),
			workers: pick(r, 1, 1, 2),
		}
		if r.IntN(4) == 0 {
			c.since = time.Time{}
		}
		v.sweeps = append(v.sweeps, c)
	}
	if r.IntN(3) > 0 {
		v.sweeps[r.IntN(len(v.sweeps))].delete = true
	}
	return v
}

func (v *variant) String() string {
	s := fmt.Sprintf("a: grace %v; b: DefaultExpiration(%v), grace %v; move %v (grace %v); write times %v; tablets split at %q; schedule %v",
		v.graceA, v.d, v.graceB, v.move, v.graceM, v.writeTimes, v.splits, v.sched)
	for i, c := range v.sweeps {
		s += fmt.Sprintf("\n  sweep %d: %v", i, c)
	}
	return s
}

// A sweeper is one sweep of a run, and what the model knows of it.
type sweeper struct {
	cfg  sweepConfig
	mem  scan.Checkpoint // where its checkpoint keeps the record
	cp   *faultyCheckpoint
	s    *sweep.Sweeper
	fams map[string]ttl.Strategy
	// shards are those of its rounds: the tablets, or the schedule's
	// salts.
	shards []scan.Shard

	watermark  time.Time // the last complete round's Until
	start      time.Time // the From of the first round its checkpoint recorded
	open       bool      // a round is begun and not finished
	from, till time.Time // its window
	round      tally     // what its attempts recorded so far
	ledger     map[string]bool
}

// tally is what a round's attempts recorded, as its Report counts it.
type tally struct{ events, expired, deleted int64 }

// A modelRun is one run: the table, its Table and sweeps, the model and
// the generator.
type modelRun struct {
	ctx    context.Context
	v      *variant
	e      *emulator.Emulator
	raw    *bigtable.Table
	data   *sweepData
	tbl    *ttl.Table
	clock  *testkit.Clock
	m      *model
	g      *gen
	sweeps []*sweeper
	shards []scan.Shard
	st     *modelStats

	// perturb, when not nil, is called at the points where a call of
	// Once meets the harness, to vary the goroutines' schedules
	// (model_replay_test.go).
	perturb func()
	last    *attempt // the last call of Once, for the replay's report
	idle    func()   // waits until the emulator serves no call (startEmulator)

	sched *schedTable // the schedule, with v.sched; nil without
	crash *crashTable // the Table's data, with v.sched
	// schedRaw is the schedule table, schedAge its family's MaxAge.
	schedRaw *bigtable.Table
	schedAge time.Duration
}

var modelRows = []string{"r00", "r01", "r02", "r03", "r04", "r05", "r06", "r07", "r08", "r09", "r10", "r11"}

// newModelRun sets up the table of v on a fresh emulator, which the
// caller closes, with cells a writer without the library stored before
// the clock starts (some expired before the sweeps' Since), and the
// sweeps.
func newModelRun(e *emulator.Emulator, v *variant, r *rand.Rand, st *modelStats) (*modelRun, error) {
	ctx := context.Background()
	if err := e.Admin.CreateTable(ctx, "t"); err != nil {
		return nil, err
	}
	raw := e.Client.Open("t")
	clock := testkit.NewClock(base)
	us := func(d time.Duration) int64 { return d.Microseconds() }
	rules := []*famRule{
		{name: "a", strategy: ttl.Grace(ttl.OneSecond(), v.graceA), keep: max(v.graceA, time.Second), age: max(v.graceA, time.Second)},
		{name: "b", strategy: ttl.Grace(ttl.DefaultExpiration(v.d), v.graceB), offset: us(v.d), keep: v.graceB, age: v.d + v.graceB},
	}
	if v.move {
		// The move's policy keeps the old cells 30m after their write
		// times, plus the grace; they expire 30m after.
		rules = append(rules, &famRule{name: "m", strategy: ttl.Move{To: ttl.Grace(ttl.OneSecond(), v.graceM), Start: base, Old: ttl.For(30 * time.Minute)},
			move: true, start: base.UnixMicro(), old: us(30 * time.Minute), keep: v.graceM, age: 30*time.Minute + v.graceM})
	}
	strategies := map[string]ttl.Strategy{}
	for _, f := range rules {
		strategies[f.name] = f.strategy
	}
	tool, err := policy.New(e.Admin, raw, "t", strategies, policy.Options{Scan: scan.Options{Now: clock.Now}})
	if err != nil {
		return nil, err
	}
	if _, err := tool.Ensure(ctx); err != nil {
		return nil, err
	}
	opts := []ttl.Option{ttl.WithClock(clock.Now)}
	if v.writeTimes {
		opts = append(opts, ttl.RecordWriteTime())
	}
	mr := &modelRun{ctx: ctx, v: v, e: e, raw: raw, clock: clock, st: st,
		data: &sweepData{TableAPI: raw, splits: v.splits}, m: newModel(rules, base, v.writeTimes)}
	var written bigtable.TableAPI = raw
	if v.sched {
		if err := mr.withSchedule(rules); err != nil {
			return nil, err
		}
		written = mr.crash
		opts = append(opts, ttl.WithSchedule(mr.schedRaw))
	}
	tbl, err := ttl.NewTable(written, strategies, opts...)
	if err != nil {
		return nil, err
	}
	mr.tbl = tbl
	mr.g = &gen{r: r, m: mr.m, rows: modelRows, cols: []string{"c0", "c1", "c2"}, sweeps: len(v.sweeps), sched: v.sched}
	start := ""
	for _, k := range v.splits {
		mr.shards = append(mr.shards, scan.Shard{Start: start, End: k})
		start = k
	}
	mr.shards = append(mr.shards, scan.Shard{Start: start})

	// Cells stored raw: in a and b some expired before the clock starts,
	// some live; in m the old cells of the move, real write times before
	// its start.
	for i := range 24 {
		row, col := pick(r, modelRows...), pick(r, mr.g.cols...)
		f := rules[i%len(rules)]
		var ts int64
		if f.move {
			ts = base.Add(-time.Duration(r.IntN(1800001)) * time.Millisecond).UnixMicro()
		} else {
			expiry := base.Add(time.Duration(r.IntN(240)-120) * time.Second).Add(time.Duration(r.IntN(1000)) * time.Millisecond)
			ts = expiry.UnixMicro() - f.offset
		}
		value := fmt.Sprintf("seed%d", i)
		m := bigtable.NewMutation()
		m.Set(f.name, col, bigtable.Timestamp(ts), []byte(value))
		if err := raw.Apply(ctx, row, m); err != nil {
			return nil, err
		}
		mr.m.put(row, f.name, col, cell{ts: ts, value: value})
	}

	for _, c := range v.sweeps {
		sw := &sweeper{cfg: c, mem: scan.MemoryCheckpoint(), fams: map[string]ttl.Strategy{}, ledger: map[string]bool{}, shards: mr.shards}
		if c.scheduled {
			sw.shards = saltShards()
		}
		sw.cp = &faultyCheckpoint{Checkpoint: sw.mem}
		for _, f := range c.spec.fams {
			sw.fams[f] = strategies[f]
		}
		if sw.s, err = mr.newSweeper(sw); err != nil {
			return nil, err
		}
		mr.sweeps = append(mr.sweeps, sw)
	}
	return mr, nil
}

// newSweeper returns a Sweeper of sw's sweep, on its checkpoint.
func (mr *modelRun) newSweeper(sw *sweeper) (*sweep.Sweeper, error) {
	c := sw.cfg
	o := sweep.Options{
		Granularity: c.spec.g, Margin: c.margin, Since: c.since, Values: c.spec.values,
		Delete: c.delete, WriteTimes: mr.v.writeTimes, Checkpoint: sw.cp, Batch: c.batch, Scan: scan.Options{Now: mr.clock.Now, Workers: c.workers},
	}
	if c.scheduled {
		o.Schedule, o.ScheduleTable = mr.sched, schedName
	}
	return sweep.New(mr.e.Admin, mr.data, "t", sw.fams, o)
}

// step runs o on the table and on the model, and returns what differs.
func (mr *modelRun) step(o *op) string {
	m := mr.m
	switch o.kind {
	case opWrite, opTouch:
		err := o.applyTo(mr.ctx, mr.tbl)
		var want error
		if o.kind == opWrite {
			want = m.apply(o.row, o.changes)
		} else {
			var touched bool
			touched, want = m.touch(o.row, o.fam, o.col, o.life)
			if touched {
				mr.st.touched++
			}
		}
		mr.st.outcome(want)
		return compareErr(err, want)
	case opKeepAlive:
		if _, err := o.keepAliveOn(mr.ctx, mr.tbl); err != nil {
			return fmt.Sprintf("the read returned %v", err)
		}
		mr.st.renewed += m.keepAlive(o.row, o.idle)
	case opClock:
		mr.clock.Advance(o.advance)
		m.now = m.now.Add(o.advance)
	case opGC:
		return mr.gc()
	case opRaw:
		mut := bigtable.NewMutation()
		mut.Set(o.fam, o.col, bigtable.Timestamp(o.ts), []byte(o.value))
		if err := mr.raw.Apply(mr.ctx, o.row, mut); err != nil {
			return fmt.Sprintf("a raw write: %v", err)
		}
		c := cell{ts: o.ts, value: o.value}
		for _, old := range m.rows[o.row][o.fam][o.col] {
			c.wt = c.wt || old.ts == o.ts && old.wt // a companion stays
		}
		m.put(o.row, o.fam, o.col, c)
	case opSweep:
		sw := mr.sweeps[o.sweep.sweeper]
		if o.sweep.fresh {
			mr.fresh(sw, o.sweep.since)
		}
		if o.sweep.restart {
			s, err := mr.newSweeper(sw)
			if err != nil {
				return fmt.Sprintf("a new Sweeper: %v", err)
			}
			sw.s = s
		}
		return mr.attempt(sw, o.sweep)
	case opBulk, opCrash:
		return mr.stepSched(o)
	}
	return ""
}

// gc makes a pass of GC as the families' policies say at the fake
// clock's now (the emulator's own runs on the real clock, and never
// reaches the cells of a run): each cell stamped before now − max age is
// deleted, as in the model.
func (mr *modelRun) gc() string {
	before := mr.m.rows.clone()
	cutoffs := mr.m.gc()
	for row, fams := range before {
		mut := bigtable.NewMutation()
		n := 0
		for fam, cols := range fams {
			for col, cells := range cols {
				if cells[len(cells)-1].ts >= cutoffs[fam] {
					continue
				}
				mut.DeleteTimestampRange(fam, col, 0, bigtable.Timestamp(cutoffs[fam]))
				mut.DeleteTimestampRange(fam, ttl.WriteTimePrefix+col, 0, bigtable.Timestamp(cutoffs[fam]))
				n++
			}
		}
		if n == 0 {
			continue
		}
		mr.st.collected++
		if err := mr.raw.Apply(mr.ctx, row, mut); err != nil {
			return fmt.Sprintf("GC of row %q: %v", row, err)
		}
	}
	if mr.sched != nil {
		return mr.gcEntries()
	}
	return ""
}

// compareErr says how err differs from want: both nil, or err wrapping
// want.
func compareErr(err, want error) string {
	switch {
	case err == nil && want == nil:
		return ""
	case want == nil:
		return fmt.Sprintf("error %v, want none", err)
	case err == nil:
		return fmt.Sprintf("no error, want %v", want)
	case !errors.Is(err, want):
		return fmt.Sprintf("error %v, want one wrapping %v", err, want)
	}
	return ""
}

// checkRaw compares every stored cell with the model's: family, column,
// timestamp and value, and a write-time companion exactly where the
// model has one.
func (mr *modelRun) checkRaw() string {
	type key struct {
		row, fam, col string
		ts            int64
	}
	got, want := map[key]string{}, map[key]string{}
	err := mr.raw.ReadRows(mr.ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		for fam, items := range r {
			for _, it := range items {
				col := strings.TrimPrefix(it.Column, fam+":")
				v := string(it.Value)
				if strings.HasPrefix(col, ttl.WriteTimePrefix) {
					v = "(write time)"
				}
				got[key{r.Key(), fam, col, int64(it.Timestamp)}] = v
			}
		}
		return true
	})
	if err != nil {
		return fmt.Sprintf("reading the table: %v", err)
	}
	for row, fams := range mr.m.rows {
		for fam, cols := range fams {
			for col, cells := range cols {
				for _, c := range cells {
					want[key{row, fam, col, c.ts}] = c.value
					if c.wt {
						want[key{row, fam, ttl.WriteTimePrefix + col, c.ts}] = "(write time)"
					}
				}
			}
		}
	}
	var diffs []string
	for k, v := range got {
		if w, ok := want[k]; !ok || w != v {
			diffs = append(diffs, fmt.Sprintf("stored %s %s:%q@%d = %q, the model has %q", k.row, k.fam, k.col, k.ts, v, w))
		}
	}
	for k, w := range want {
		if _, ok := got[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("the model has %s %s:%q@%d = %q, not stored", k.row, k.fam, k.col, k.ts, w))
		}
	}
	if mr.sched != nil {
		diffs = append(diffs, mr.checkEntries()...)
	}
	sort.Strings(diffs)
	if len(diffs) > 8 {
		diffs = append(diffs[:8], fmt.Sprintf("and %d more", len(diffs)-8))
	}
	return strings.Join(diffs, "\n")
}

// modelStats counts what runs exercised, so that a generator that stops
// making some case is noticed.
type modelStats struct {
	ops, writes, refused, touched, renewed int
	attempts, stopped, resumed, restarts   int
	rounds, empty, missed                  int
	abandoned                              int // rounds restarted after an attempt that recorded nothing
	events                                 [3]int
	inFlight, redelivered                  int // batches delivered and not recorded; their events delivered again
	deletedRows, injected                  int
	collected                              int // rows GC deleted in
	sched                                  schedStats
}

func (st *modelStats) outcome(err error) {
	if err != nil {
		st.refused++
	} else {
		st.writes++
	}
}

func (st *modelStats) add(o *modelStats) {
	st.ops += o.ops
	st.writes += o.writes
	st.refused += o.refused
	st.touched += o.touched
	st.renewed += o.renewed
	st.attempts += o.attempts
	st.stopped += o.stopped
	st.resumed += o.resumed
	st.restarts += o.restarts
	st.rounds += o.rounds
	st.empty += o.empty
	st.missed += o.missed
	st.abandoned += o.abandoned
	for i := range st.events {
		st.events[i] += o.events[i]
	}
	st.inFlight += o.inFlight
	st.redelivered += o.redelivered
	st.deletedRows += o.deletedRows
	st.injected += o.injected
	st.collected += o.collected
	st.sched.add(o.sched)
}

func (st *modelStats) String() string {
	return fmt.Sprintf("%d operations: %d writes and Touches applied, %d refused, %d touched, %d cells renewed by KeepAlive; "+
		"%d calls of Once (%d stopped, %d resumed a round, %d on a new Sweeper); %d rounds complete (%d empty, %d with Missed), %d restarted; "+
		"events delivered: %d cell, %d column, %d row; %d batches in flight when a call stopped, %d of their events delivered again; "+
		"deletions in %d rows; %d writes during a delivery; GC in %d rows",
		st.ops, st.writes, st.refused, st.touched, st.renewed,
		st.attempts, st.stopped, st.resumed, st.restarts, st.rounds, st.empty, st.missed, st.abandoned,
		st.events[0], st.events[1], st.events[2], st.inFlight, st.redelivered, st.deletedRows, st.injected, st.collected) + st.sched.String()
}

// run runs n operations and returns the index of the first whose outcome
// differs from the model's, with what differs, or -1; and the operations
// run, for the report.
func (mr *modelRun) run(n int) (int, string, []*op) {
	var ops []*op
	for i := range n {
		o := mr.g.next()
		ops = append(ops, o)
		mr.st.ops++
		if msg := mr.step(o); msg != "" {
			return i, msg, ops
		}
		if i%rawEvery == rawEvery-1 || i == n-1 {
			if msg := mr.checkRaw(); msg != "" {
				return i, "the stored cells differ from the model's:\n" + msg, ops
			}
		}
	}
	return -1, "", ops
}

// lastOps formats the operations up to i, the last few of them.
func lastOps(ops []*op, i, n int) string {
	var b strings.Builder
	for j := max(0, i-n+1); j <= i; j++ {
		fmt.Fprintf(&b, "\n  %d: %v", j, ops[j])
	}
	return b.String()
}
