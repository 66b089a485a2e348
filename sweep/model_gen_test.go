package sweep_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
)

// The operations of a model run, and the seeded generator that makes them
// one at a time from the model's state: writes with every kind of
// lifetime, deletes, Touch and KeepAlive renewals aimed mostly at live
// columns, raw writes, clock moves from microseconds to hours (past the
// graces), passes of GC, and sweeps of each granularity, a third of them
// stopped at a random point.

type opKind uint8

const (
	opWrite opKind = iota
	opTouch
	opKeepAlive
	opClock
	opGC
	opRaw
	opSweep
	opBulk  // ApplyBulk (model_schedule_test.go)
	opCrash // a write whose entries land and whose data fails
)

// An op is one operation of a model run.
type op struct {
	kind     opKind
	row      string
	changes  []change      // opWrite
	fam, col string        // opTouch, opRaw
	life     life          // opTouch
	ts       int64         // opRaw
	value    string        // opRaw
	idle     time.Duration // opKeepAlive
	advance  time.Duration // opClock
	sweep    *sweepOp      // opSweep
	bulk     []bulkRow     // opBulk
	crashed  *op           // opCrash: the write that fails after its entries
}

// A sweepOp is one call of Once of one of the run's sweeps.
type sweepOp struct {
	sweeper int
	restart bool // a new Sweeper on the same checkpoint: a process restarted
	// fresh: a new Sweeper on a new checkpoint, from since (zero: from
	// its first round's end), as an operator starts the sweep anew
	// (model_schedule_test.go).
	fresh  bool
	since  time.Time
	fault  fault
	at     int  // the delivery, Save, row or deletion at which the fault strikes
	prefix int  // deliverFailure: the events the consumer took; bulkFailure: the row refused
	all    bool // saveFailure: every later Save fails too; deliverCancel: it returns the error; bulkFailure: one row
	inject int  // the delivery during which another writer changes a row of the batch; 0: none
}

func (o *op) String() string {
	switch o.kind {
	case opWrite:
		var parts []string
		for _, c := range o.changes {
			parts = append(parts, c.String())
		}
		return fmt.Sprintf("Apply(%q, %s)", o.row, strings.Join(parts, ", "))
	case opTouch:
		return fmt.Sprintf("Touch(%q, %s:%s, %v)", o.row, o.fam, o.col, o.life)
	case opKeepAlive:
		return fmt.Sprintf("ReadRow(%q, KeepAlive(%v))", o.row, o.idle)
	case opClock:
		return fmt.Sprintf("clock += %v", o.advance)
	case opGC:
		return "GC"
	case opRaw:
		return fmt.Sprintf("raw Set(%q, %s:%s=%s @%d)", o.row, o.fam, o.col, o.value, o.ts)
	case opBulk:
		return bulkString(o.bulk)
	case opCrash:
		return fmt.Sprintf("%v, its data failing after its entries", o.crashed)
	}
	s := o.sweep
	out := fmt.Sprintf("sweep %d: Once", s.sweeper)
	switch {
	case s.fresh:
		out += fmt.Sprintf(" (new Sweeper, new checkpoint, since %v)", s.since.Format(time.RFC3339Nano))
	case s.restart:
		out += " (new Sweeper)"
	}
	if s.fault != noFault {
		out += fmt.Sprintf(", %v at %d (prefix %d, all %v)", s.fault, s.at, s.prefix, s.all)
	}
	if s.inject > 0 {
		out += fmt.Sprintf(", another writer during delivery %d", s.inject)
	}
	return out
}

// applyTo makes a write or a Touch through tbl, and returns its error.
func (o *op) applyTo(ctx context.Context, tbl *ttl.Table) error {
	if o.kind == opTouch {
		_, err := tbl.Touch(ctx, o.row, o.fam, o.col, o.life.lifetime())
		return err
	}
	return tbl.Apply(ctx, o.row, mutation(o.changes))
}

// keepAliveOn reads o.row with KeepAlive through tbl.
func (o *op) keepAliveOn(ctx context.Context, tbl *ttl.Table) (bigtable.Row, error) {
	return tbl.ReadRow(ctx, o.row, ttl.KeepAlive(o.idle))
}

// A gen makes the operations of a run.
type gen struct {
	r      *rand.Rand
	m      *model
	rows   []string
	cols   []string
	sweeps int
	values int
	sched  bool // make ApplyBulk and crashes too (model_schedule_test.go)
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// next returns the next operation.
func (g *gen) next() *op {
	row := pick(g.r, g.rows...)
	if g.sched {
		if o := g.schedOp(row); o != nil {
			return o
		}
	}
	switch x := g.r.IntN(100); {
	case x < 38:
		return &op{kind: opWrite, row: row, changes: g.changes()}
	case x < 46:
		return g.touch(row)
	case x < 52:
		return &op{kind: opKeepAlive, row: row, idle: pick(g.r,
			time.Millisecond, 500*time.Millisecond, 3*time.Second, 20*time.Second, 2*time.Minute, 15*time.Minute, time.Hour)}
	case x < 69:
		return &op{kind: opClock, advance: g.advance()}
	case x < 71:
		return &op{kind: opGC}
	case x < 73:
		return g.raw(row)
	}
	return &op{kind: opSweep, sweep: g.sweepOp()}
}

// changes returns the changes of a mutation: one to three.
func (g *gen) changes() []change {
	n := pick(g.r, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3)
	out := make([]change, n)
	for i := range out {
		out[i] = g.change()
	}
	return out
}

func (g *gen) change() change {
	fam, col := pick(g.r, g.m.names...), pick(g.r, g.cols...)
	switch x := g.r.IntN(100); {
	case x < 55:
		return change{kind: chSet, fam: fam, col: col, value: g.value(), life: g.life()}
	case x < 80:
		return change{kind: chReplace, fam: fam, col: col, value: g.value(), life: g.life()}
	case x < 98:
		return change{kind: chDeleteColumn, fam: fam, col: col}
	}
	return change{kind: chDeleteRow}
}

func (g *gen) value() string {
	g.values++
	return fmt.Sprintf("v%d", g.values)
}

// life returns a lifetime: mostly For, some Until, Default (which
// OneSecond refuses) and a few Forever.
func (g *gen) life() life {
	switch x := g.r.IntN(100); {
	case x < 62:
		return life{kind: lkFor, d: g.duration()}
	case x < 84:
		return life{kind: lkUntil, at: g.m.now.Add(g.duration())}
	case x < 97:
		return life{kind: lkDefault}
	}
	return life{kind: lkForever}
}

// duration returns a lifetime's length: a few under a millisecond (born
// expired, or not), most of seconds to minutes, some of hours and days.
func (g *gen) duration() time.Duration {
	r := g.r
	switch x := r.IntN(100); {
	case x < 3:
		return time.Duration(r.IntN(1500)) * time.Microsecond
	case x < 40:
		return time.Duration(1+r.IntN(5000)) * time.Millisecond
	case x < 75:
		return time.Duration(5000+r.IntN(115000)) * time.Millisecond
	case x < 90:
		return time.Duration(2+r.IntN(28))*time.Minute + time.Duration(r.IntN(60000))*time.Millisecond
	case x < 97:
		return time.Duration(1+r.IntN(3))*time.Hour + time.Duration(r.IntN(3600))*time.Second
	}
	return time.Duration(1+r.IntN(3)) * 24 * time.Hour
}

// advance returns a clock move: microseconds to minutes, and now and then
// hours, past the families' graces.
func (g *gen) advance() time.Duration {
	r := g.r
	switch x := r.IntN(100); {
	case x < 5:
		return time.Duration(1+r.IntN(999)) * time.Microsecond
	case x < 30:
		return time.Duration(1+r.IntN(999)) * time.Millisecond
	case x < 70:
		return time.Duration(1000+r.IntN(9000)) * time.Millisecond
	case x < 91:
		return time.Duration(10+r.IntN(110)) * time.Second
	case x < 99:
		return time.Duration(2+r.IntN(18)) * time.Minute
	}
	return time.Duration(1+r.IntN(3)) * time.Hour
}

// raw returns a write of a cell stamped by a writer without the library,
// or one that lands late: its expiry from two hours before now (behind
// the sweeps' watermarks: never reported) to ten minutes after.
func (g *gen) raw(row string) *op {
	fam := pick(g.r, g.m.names...)
	expiry := g.m.now.Add(time.Duration(g.r.Int64N(int64(130*time.Minute))) - 2*time.Hour).Truncate(time.Millisecond)
	ts := expiry.UnixMicro() - g.m.fams[fam].offset
	if f := g.m.fams[fam]; f.move && ts < f.start {
		ts -= f.old // an old cell, written before the move: it lives Old
	}
	return &op{kind: opRaw, row: row, fam: fam, col: pick(g.r, g.cols...), ts: ts, value: g.value()}
}

// touch returns a Touch, mostly of a live column.
func (g *gen) touch(row string) *op {
	fam, col := pick(g.r, g.m.names...), pick(g.r, g.cols...)
	if live := g.m.liveColumns(row); len(live) > 0 && g.r.IntN(5) > 0 {
		fc := pick(g.r, live...)
		fam, col = fc[0], fc[1]
	}
	l := life{kind: lkFor, d: g.duration()}
	if g.r.IntN(5) == 0 {
		l = g.life()
	}
	return &op{kind: opTouch, row: row, fam: fam, col: col, life: l}
}

// injected returns another writer's change to row, made while a batch
// holding it is delivered: a write (a renewal of a column, mostly) or a
// Touch.
func (g *gen) injected(row string) *op {
	if g.r.IntN(3) == 0 {
		return g.touch(row)
	}
	changes := g.changes()
	if live := g.m.liveColumns(row); len(live) > 0 && g.r.IntN(2) == 0 {
		fc := pick(g.r, live...)
		changes[0].fam, changes[0].col = fc[0], fc[1]
	}
	return &op{kind: opWrite, row: row, changes: changes}
}

// sweepOp returns a call of Once of one of the sweeps: two thirds run
// undisturbed, the others stop at a random point.
func (g *gen) sweepOp() *sweepOp {
	r := g.r
	s := &sweepOp{sweeper: r.IntN(g.sweeps), restart: r.IntN(7) == 0}
	if r.IntN(3) == 0 {
		s.fault = fault(1 + r.IntN(5))
		s.all = r.IntN(2) == 0
		switch s.fault {
		case deliverFailure, deliverCancel:
			s.at, s.prefix = 1+r.IntN(3), r.IntN(4)
		case saveFailure:
			s.at = 1 + r.IntN(6)
		case readCancel:
			s.at = 1 + r.IntN(14)
		case bulkFailure:
			s.at, s.prefix = 1+r.IntN(2), r.IntN(4)
		}
	}
	if r.IntN(6) == 0 {
		s.inject = 1 + r.IntN(3)
	}
	if g.sched && s.restart {
		g.freshOp(s)
	}
	return s
}
