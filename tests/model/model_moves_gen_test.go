package model_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/cellttl/ttl/internal/testkit"
)

// The generator of move runs: the framework's operations (model_gen_test.go)
// with lifetimes and clock moves aimed at the move's instants, by either of
// two processes, among cells the old regime wrote, rewrite steps and GC
// steps.

// moveKind is what a moveOp does.
type moveKind uint8

const (
	mvOp      moveKind = iota // the framework's operation, by process proc
	mvOld                     // a cell written the old way, raw, at ts
	mvSkew                    // the second process's clock is set skew from the first's
	mvRewrite                 // RewriteRow of row at the first process's clock, after mut if any
	mvGC                      // a GC step under the move's policy, or To's
)

// moveOp is one step of a move run; like op, everything in it is concrete.
type moveOp struct {
	op
	kind       moveKind
	proc       int           // mvOp: 0, the first process, or 1, the second
	col, value string        // mvOld, in op.row
	ts         int64         // mvOld
	skew       time.Duration // mvSkew
	final      bool          // mvGC: under To's policy
	mut        *mutSpec      // mvRewrite: a write of the first process between the read and the rewrite
}

func (o moveOp) String() string {
	switch o.kind {
	case mvOld:
		return fmt.Sprintf("raw.Apply(%q, Set(m:%q, %d, %q))", o.row, o.col, o.ts, o.value)
	case mvSkew:
		return fmt.Sprintf("second process's clock = first's %+v", o.skew)
	case mvRewrite:
		if o.mut != nil {
			return fmt.Sprintf("row := ReadRow(%q, RewriteFilter); Apply(%[1]q, %v); RewriteRow(row)", o.row, o.mut)
		}
		return fmt.Sprintf("RewriteRow(%q)", o.row)
	case mvGC:
		if o.final {
			return "GC under To's policy"
		}
		return "GC under the move's policy"
	}
	if o.proc == 1 {
		return "second process: " + o.op.String()
	}
	return o.op.String()
}

// movePoints are the instants at which the move changes how a cell is
// written or read: Start, the ends of the old rule and of the offsets on
// either side, and EndsBy.
func (g *gen) movePoints() []time.Time {
	s := g.v.move
	pts := []time.Time{s.start, s.start.Add(s.toD), s.start.Add(s.fromD)}
	o := s.oldSide()
	if o.kind == byTime {
		pts = append(pts, s.start.Add(o.offset))
	}
	if !o.until.IsZero() {
		pts = append(pts, o.until)
	}
	if e, ok := s.endsBy(); ok {
		pts = append(pts, e)
	}
	return pts
}

// movePoint returns an instant near one of the move's points or a stored
// cell's expiry, a skew away now and then; ahead of now when one is.
func (g *gen) movePoint() time.Time {
	jitter := testkit.Pick(g.r, -time.Millisecond, -time.Nanosecond, 0, time.Nanosecond, time.Millisecond, -500*time.Microsecond)
	var pts []time.Time
	if es := g.expiries(); len(es) > 0 && g.r.IntN(3) == 0 {
		pts = es
	} else {
		for _, p := range g.movePoints() {
			pts = append(pts, p, p.Add(-g.v.move.skew), p.Add(g.v.move.skew))
		}
	}
	var ahead []time.Time
	for _, p := range pts {
		if p.After(g.m.now) {
			ahead = append(ahead, p)
		}
	}
	if len(ahead) > 0 && g.r.IntN(8) > 0 {
		pts = ahead
	}
	return testkit.Pick(g.r, pts...).Add(jitter)
}

// milestone returns the next instant at which the move changes: Start,
// then EndsBy, then, for a move that never ends by itself, an hour on.
func (g *gen) milestone() time.Time {
	s := g.v.move
	if g.m.now.Before(s.start) {
		return s.start
	}
	if e, ok := s.endsBy(); ok && g.m.now.Before(e) {
		return e
	}
	return g.m.now.Add(time.Hour)
}

// moveLife returns a lifetime for the moving family: any that either side
// may take, often aimed at an instant where the encoding changes.
func (g *gen) moveLife() lifeSpec {
	s := g.v.move
	kinds := []lifeKind{lkDefault, lkDefault, lkFor, lkFor, lkFor, lkFor, lkUntil, lkUntil, lkUntil, lkForever, lkVersion}
	if s.from == ruleSequence || s.to == ruleSequence {
		kinds = append(kinds, lkVersion, lkVersion, lkVersion, lkVersion, lkVersion)
	}
	switch kind := testkit.Pick(g.r, kinds...); kind {
	case lkFor:
		if g.r.IntN(3) == 0 {
			return lifeSpec{kind: lkFor, d: g.duration()}
		}
		return lifeSpec{kind: lkFor, d: g.movePoint().Sub(g.m.now)}
	case lkUntil:
		if g.r.IntN(3) == 0 {
			return lifeSpec{kind: lkUntil, t: g.until()}
		}
		return lifeSpec{kind: lkUntil, t: g.movePoint()}
	case lkVersion:
		seq := g.r.Int64N(6)
		switch g.r.IntN(16) {
		case 0:
			seq = testkit.Pick(g.r, -1, maxSeq, maxSeq+1)
		case 1: // a sequence number on the real times' side of 2000-01-01
			seq = realTime/1000 + testkit.Pick(g.r, int64(-1), 0, 1)
		}
		return lifeSpec{kind: lkVersion, seq: seq}
	default:
		return lifeSpec{kind: kind}
	}
}

// moveClock returns the next instant of the first process's clock, paced
// by the distance to the next milestone so that a run spends about as
// many operations before Start as in the move's window and after it.
func (g *gen) moveClock() time.Time {
	now := g.m.now
	left := g.milestone().Sub(now)
	switch x := g.r.IntN(20); {
	case x < 2: // one of the move's points ahead
		for range 4 {
			if at := g.movePoint(); at.After(now) && at.Before(now.Add(3*time.Hour)) {
				return at
			}
		}
	case x < 3: // the next milestone itself
		return now.Add(left + testkit.Pick(g.r, -time.Millisecond, -time.Nanosecond, 0, time.Nanosecond))
	case x < 10: // tiny
		if at := g.clock(); at.Before(now.Add(2 * time.Millisecond)) {
			return at
		}
	}
	return now.Add(time.Duration(g.r.Int64N(int64(left/12) + 1)))
}

// oldStamp returns the timestamp the old regime gave a cell written at
// at, below the boundary (or, from real timestamps, at it), and false
// when the one it drew would not be.
func (g *gen) oldStamp(at time.Time) (int64, bool) {
	s := g.v.move
	switch s.from {
	case ruleSequence:
		return g.r.Int64N(6) * 1000, true
	case ruleDefault: // Default, or For(y): stamped y − d after at
		ts := floorMs(at) * 1000
		if g.r.IntN(2) == 0 {
			ts += (time.Duration(g.r.Int64N(int64(2*s.fromD))) - s.fromD).Milliseconds() * 1000
		}
		return ts, ts < s.start.UnixMicro() && timeLive(s.fromD, ts, at)
	}
	return floorMs(at) * 1000, at.Before(s.start)
}

// oldCell returns a raw write of the old regime at at, or false.
func (g *gen) oldCell(at time.Time) (moveOp, bool) {
	ts, ok := g.oldStamp(at)
	o := moveOp{op: op{row: testkit.Pick(g.r, modelRows...)}, kind: mvOld, col: testkit.Pick(g.r, modelColumns...), value: g.value(), ts: ts}
	return o, ok
}

// moveOp returns the next operation of a move run; offset is the second
// process's clock offset.
func (g *gen) moveOp(offset time.Duration) moveOp {
	s := g.v.move
	now := g.m.now
	switch x := g.r.IntN(100); {
	case x < 3 && now.Before(s.start): // a process not yet configured
		if o, ok := g.oldCell(now); ok {
			return o
		}
	case x < 7 && s.skew > 0:
		o := moveOp{kind: mvSkew, skew: testkit.Pick(g.r, -s.skew, s.skew, 0, time.Duration(g.r.Int64N(int64(2*s.skew+1)))-s.skew)}
		if d := s.start.Sub(now); d >= -s.skew && d <= s.skew && g.r.IntN(2) == 0 {
			o.skew = d + testkit.Pick(g.r, -time.Nanosecond, 0) // the second process at its start
		}
		return o
	case x < 11 && !now.Before(s.start):
		return g.rewriteOp()
	case x < 15:
		return moveOp{kind: mvGC, final: g.m.finishable("m", now) && g.r.IntN(2) == 0}
	}
	aimed := g.condNext != "" // the condition aimed at the clock just set
	o := moveOp{op: g.op()}
	if o.op.kind == opClock && g.condNext != "" && o.at.After(g.milestone()) && g.r.IntN(3) > 0 {
		g.condNext = "" // aimed past the milestone: too far, most of the time
	}
	switch {
	case o.op.kind == opClock && g.condNext == "":
		o.at = g.moveClock()
	case o.op.kind != opClock && !aimed && g.r.IntN(4) == 0:
		o.proc = 1
	}
	return o
}

// rewriteOp returns a rewrite step, most often of a row that holds a live
// old cell, now and then with a write of the row between the read and
// the rewrite.
func (g *gen) rewriteOp() moveOp {
	s := g.v.move
	row := testkit.Pick(g.r, modelRows...)
	var rows []string
	for _, r := range g.m.rowKeys() {
		for _, cells := range g.m.rows[r]["m"] {
			if slices.ContainsFunc(cells, func(c storedCell) bool { return s.onOld(c.ts) && s.oldSide().liveAt(c.ts, g.m.now) }) {
				rows = append(rows, r)
				break
			}
		}
	}
	if len(rows) > 0 && g.r.IntN(4) > 0 {
		row = testkit.Pick(g.r, rows...)
	}
	o := moveOp{op: op{row: row}, kind: mvRewrite}
	if g.r.IntN(4) == 0 {
		w := mutOp{kind: testkit.Pick(g.r, mkSet, mkReplace, mkDeleteColumn), fam: "m", col: testkit.Pick(g.r, modelColumns...)}
		if w.kind != mkDeleteColumn {
			w.value, w.life = g.value(), g.moveLife()
		}
		o.mut = &mutSpec{ops: []mutOp{w}}
	}
	return o
}

// generateMoves makes n operations of a move run on v: first the cells the
// old regime left, then the run, each applied to the generator's model so
// that the next can aim at what is stored.
func generateMoves(v *variant, seed uint64, n int) []moveOp {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x5eed)), v: v, m: newModel(v)}
	s := v.move
	span := max(s.fromD, s.toD, time.Minute)
	if o := s.oldSide(); o.kind == byTime {
		span = max(span, o.offset)
	}
	var ops []moveOp
	for len(ops) < min(n, 6+g.r.IntN(11)) {
		if o, ok := g.oldCell(testkit.Base.Add(-time.Duration(g.r.Int64N(int64(testkit.Pick[time.Duration](g.r, 1, 1, 3) * span))))); ok {
			ops = append(ops, o)
			g.m.moveReplay(o, 0)
		}
	}
	offset := time.Duration(0)
	for len(ops) < n {
		o := g.moveOp(offset)
		if o.kind == mvSkew {
			offset = o.skew
		}
		ops = append(ops, o)
		g.m.moveReplay(o, offset)
	}
	return ops
}

// moveReplay applies o to the model alone, the second process's clock
// being offset from the first's.
func (m *model) moveReplay(o moveOp, offset time.Duration) {
	switch o.kind {
	case mvOld:
		m.write(o.row, []change{{mutOp{kind: mkSet, fam: "m", col: o.col, value: o.value}, o.ts}}, m.now)
	case mvRewrite:
		read := m.snapshot("m", o.row)
		if o.mut != nil {
			_, _ = m.apply(o.row, o.mut, m.now)
		}
		_, _ = m.rewrite("m", o.row, read, m.now)
	case mvGC:
		m.collect("m", m.v.move.gc(o.final), m.now)
	case mvOp:
		now := m.now
		if o.proc == 1 {
			m.now = now.Add(offset)
			defer func() { m.now = now }()
		}
		m.replay(o.op)
	}
}
