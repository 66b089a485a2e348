package model_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/move"
)

// Running a move run: the framework's operations through either of two
// Tables on one raw table (two processes, the second's clock offset from
// the first's), raw writes of the old regime, RewriteRow, and GC steps
// made by hand at the fake clock's instant; each applied to the model too,
// outcomes compared, and the raw table compared with the model after every
// step that is not the framework's and every few that are.

// moveRun is a move run in progress.
type moveRun struct {
	v      *variant
	clock  *testkit.Clock // the first process's
	offset time.Duration  // the second process's clock from the first's
	tbls   [2]*ttl.Table  // the two processes
	raw    *bigtable.Table
	m      *model
	st     *moveStats
}

// moveStats counts what move runs exercised.
type moveStats struct {
	runStats
	second, old, skews int // operations of the second process, raw writes of the old regime, skew changes
	rewriteSteps       int
	rewrites           move.Counts // what the rewrite steps did
	gcWindow, gcFinal  int         // GC steps under the move's policy and under To's
	gcDeleted          int         // cells the GC steps deleted
	phases             [3]int      // operations before Start, before EndsBy, after it (the first process's clock)
	stamped            [2][2]int   // cells the processes wrote in "m": [started][on the new side]
}

func newMoveStats() *moveStats { return &moveStats{runStats: runStats{sentinels: map[string]int{}}} }

func (st *moveStats) String() string {
	return fmt.Sprintf("%v; cells written to m before Start %d old side, %d new side, after %d old side, %d new side; operations %v before Start, in the window, after EndsBy; %d operations of the second process, %d raw old writes, %d skew changes; %d rewrite steps (%d rewritten, %d kept, %d expired); GC steps: %d under the move's policy, %d under To's, deleting %d cells",
		&st.runStats, st.stamped[0][0], st.stamped[0][1], st.stamped[1][0], st.stamped[1][1], st.phases, st.second, st.old, st.skews, st.rewriteSteps, st.rewrites.Rewritten, st.rewrites.Kept, st.rewrites.Expired, st.gcWindow, st.gcFinal, st.gcDeleted)
}

// runMoves applies ops to a fresh table of e through two processes and to
// a model, and returns the index of the first operation whose outcome
// differs, with a description, or -1.
func runMoves(t testing.TB, e *emulator.Emulator, v *variant, name string, ops []moveOp, st *moveStats) (int, string) {
	t.Helper()
	const rawEvery = 16
	x := &moveRun{v: v, clock: testkit.NewClock(testkit.Base), m: newModel(v), st: st}
	x.tbls[0], x.raw = v.newTable(t, e, name, x.clock)
	x.tbls[1] = v.open(t, x.raw, func() time.Time { return x.clock.Now().Add(x.offset) })
	for i, o := range ops {
		if st != nil {
			switch end, ok := v.move.endsBy(); {
			case x.clock.Now().Before(v.move.start):
				st.phases[0]++
			case !ok || x.clock.Now().Before(end):
				st.phases[1]++
			default:
				st.phases[2]++
			}
		}
		msg := x.step(o)
		if msg == "" && (i%rawEvery == rawEvery-1 || i == len(ops)-1 || o.kind != mvOp) {
			msg = checkRaw(x.raw, x.m)
		}
		if msg != "" {
			return i, msg
		}
	}
	return -1, ""
}

func (x *moveRun) step(o moveOp) string {
	ctx := context.Background()
	var rs *runStats
	if x.st != nil {
		rs = &x.st.runStats
	}
	switch o.kind {
	case mvOld:
		mut := bigtable.NewMutation()
		mut.Set("m", o.col, bigtable.Timestamp(o.ts), []byte(o.value))
		if err := x.raw.Apply(ctx, o.row, mut); err != nil {
			return fmt.Sprintf("raw write failed: %v", err)
		}
		x.m.moveReplay(o, x.offset)
		x.count(func(st *moveStats) { st.old++ })
	case mvSkew:
		x.offset = o.skew
		x.count(func(st *moveStats) { st.skews++ })
	case mvRewrite:
		return x.rewrite(o)
	case mvGC:
		return x.gc(o.final)
	case mvOp:
		now := x.m.now
		tbl := x.tbls[0]
		if o.proc == 1 {
			x.count(func(st *moveStats) { st.second++ })
			x.m.now, tbl = now.Add(x.offset), x.tbls[1]
			defer func() { x.m.now = now }()
		}
		if x.st == nil {
			return step(tbl, x.clock, x.m, o.op, nil)
		}
		before := x.m.cellsOf("m")
		msg := step(tbl, x.clock, x.m, o.op, rs)
		started := 0
		if !x.m.now.Before(x.v.move.start) {
			started = 1
		}
		for c := range x.m.cellsOf("m") {
			if !before[c] {
				x.st.stamped[started][b2i(!x.v.move.onOld(c.ts))]++
			}
		}
		return msg
	}
	return ""
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// storedKey is a stored cell with its place.
type storedKey struct {
	row, col string
	storedCell
}

// cellsOf returns the cells family stores.
func (m *model) cellsOf(family string) map[storedKey]bool {
	out := map[storedKey]bool{}
	for row, fams := range m.rows {
		for col, cells := range fams[family] {
			for _, c := range cells {
				out[storedKey{row, col, c}] = true
			}
		}
	}
	return out
}

func (x *moveRun) count(f func(*moveStats)) {
	if x.st != nil {
		f(x.st)
	}
}

// visible is what a reader at at sees of the model, each cell with its
// value and expiry but not its timestamp: a rewrite or a GC step must not
// change it. Expiries are rounded down to the millisecond, as DESIGN.md
// lets a rewrite store them, and a cell whose rounded expiry has passed is
// left out.
func (x *moveRun) visible(at time.Time) []string {
	var out []string
	for _, row := range x.m.rowKeys() {
		for _, c := range x.m.liveCells(row, at) {
			e, ok := x.m.expiry(bigtable.ReadItem{Column: c.Fam + ":" + c.Col, Timestamp: bigtable.Timestamp(c.TS)})
			e = time.UnixMilli(floorMs(e))
			if ok && !e.After(at) {
				continue
			}
			out = append(out, fmt.Sprintf("%s %s:%q=%q expires %v %v", row, c.Fam, c.Col, c.Value, ok, e.UTC().Format(time.RFC3339Nano)))
		}
	}
	return out
}

// rewrite reads a row with RewriteFilter, applies the step's write if it
// has one, rewrites the row read with RewriteRow at the first process's
// clock, and compares what it did with the model.
func (x *moveRun) rewrite(o moveOp) string {
	ctx := context.Background()
	mv := x.v.move.move()
	now := x.clock.Now()
	r, err := x.raw.ReadRow(ctx, o.row, bigtable.RowFilter(move.RewriteFilter(mv, "m")))
	if err != nil {
		return fmt.Sprintf("reading the row to rewrite: %v", err)
	}
	read := x.m.snapshot("m", o.row)
	if o.mut != nil {
		err := x.tbls[0].Apply(ctx, o.row, o.mut.mutation())
		_, want := x.m.apply(o.row, o.mut, x.m.now)
		if msg := compareErr(err, want); msg != "" {
			return "the write between the read and the rewrite: " + msg
		}
	}
	got, err := move.RewriteRow(ctx, x.raw, "m", mv, r, now, false)
	before := x.visible(now)
	want, werr := x.m.rewrite("m", o.row, read, now)
	if msg := compareErr(err, werr); msg != "" {
		return "RewriteRow: " + msg
	}
	if got != want {
		return fmt.Sprintf("RewriteRow counted %+v, want %+v", got, want)
	}
	if after := x.visible(now); !slices.Equal(before, after) {
		return fmt.Sprintf("the model's rewrite changed what a read sees:\n%s\nto\n%s", strings.Join(before, "\n"), strings.Join(after, "\n"))
	}
	x.count(func(st *moveStats) {
		st.rewriteSteps++
		st.rewrites.Rewritten += want.Rewritten
		st.rewrites.Kept += want.Kept
		st.rewrites.Expired += want.Expired
	})
	return ""
}

// gc deletes from the raw table what the library's GC policy for the
// step (the move's, or To's once the move could be finished) lets
// Bigtable's GC delete at the first process's clock, and checks that the
// policy is DESIGN.md's and that a read through the first process returns
// the same before and after.
func (x *moveRun) gc(final bool) string {
	ctx := context.Background()
	mv := x.v.move.move()
	p := mv.GCPolicy()
	if final {
		p = mv.To.GCPolicy()
	}
	want := x.v.move.gc(final)
	if got, err := gcOf(p); err != nil || got != want {
		return fmt.Sprintf("GC policy %v (%v), want %v", p, err, want)
	}
	now := x.clock.Now()
	before, msg := x.readAll(x.tbls[0])
	if msg != "" {
		return msg
	}
	seen := x.visible(now)
	deleted := 0
	err := x.raw.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		mut := bigtable.NewMutation()
		n, changes := 0, 0
		cutoff := now.UnixMicro() - want.age.Microseconds()
		for i, it := range r["m"] {
			if i > 0 && it.Column != r["m"][i-1].Column {
				n = 0
			}
			n++
			if want.versions > 0 && n > want.versions || want.age > 0 && int64(it.Timestamp) < cutoff {
				_, col, _ := strings.Cut(it.Column, ":")
				mut.DeleteTimestampRange("m", col, it.Timestamp, it.Timestamp+1000)
				changes++
			}
		}
		if changes == 0 {
			return true
		}
		deleted += changes
		if err := x.raw.Apply(ctx, r.Key(), mut); err != nil {
			msg = fmt.Sprintf("GC of row %q: %v", r.Key(), err)
			return false
		}
		return true
	}, bigtable.RowFilter(bigtable.FamilyFilter("m")))
	switch {
	case err != nil:
		return fmt.Sprintf("GC read: %v", err)
	case msg != "":
		return msg
	}
	x.count(func(st *moveStats) {
		st.gcDeleted += deleted
		if final {
			st.gcFinal++
		} else {
			st.gcWindow++
		}
	})
	after, msg := x.readAll(x.tbls[0])
	if msg != "" {
		return msg
	}
	if !after.equal(before) {
		return fmt.Sprintf("%v deleted cells a read returned: before\n%s\nafter\n%s", want, formatResult(before), formatResult(after))
	}
	x.m.collect("m", want, now)
	if kept := x.visible(now); !slices.Equal(seen, kept) {
		return fmt.Sprintf("DESIGN.md's %v deletes cells its rules keep live:\n%s\nthen\n%s", want, strings.Join(seen, "\n"), strings.Join(kept, "\n"))
	}
	return ""
}

// readAll reads every row through tbl.
func (x *moveRun) readAll(tbl *ttl.Table) (readResult, string) {
	got := readResult{cells: map[string][]flatCell{}}
	err := tbl.ReadRows(context.Background(), bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		got.keys = append(got.keys, r.Key())
		got.cells[r.Key()] = flatRow(r, x.v.familyNames())
		return true
	})
	if err != nil {
		return got, fmt.Sprintf("read failed: %v", err)
	}
	return got, ""
}
