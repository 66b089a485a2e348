package model_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
)

// The operations of the counter model (TestModelCounters) as recipes that
// replay, and their seeded generator, which keeps a model of its own to
// aim clock moves at window boundaries and expiries and reads at the
// columns that hold windows.

type ctrKind uint8

const (
	ctrClock       ctrKind = iota // the clock moves to at
	ctrApply                      // Apply of mut (a conditional mutation when cond)
	ctrBulk                       // ApplyBulk of muts to rows
	ctrReadCounter                // ReadCounter(row, fam, col, w)
	ctrSumCounter                 // SumCounter(row, fam, col, w, n)
	ctrReadRow                    // ReadRow(row) through the Table
	ctrGC                         // GC by hand, with the families' policies at the clock's instant
)

var ctrKindNames = [...]string{"clock", "Apply", "ApplyBulk", "ReadCounter", "SumCounter", "ReadRow", "GC"}

// ctrAdd is one Mutation.Add or, when set, one Mutation.Set of value
// for life.
type ctrAdd struct {
	fam, col string
	delta    int64
	w        ttl.Window
	set      bool
	value    string
	life     time.Duration
}

// ctrMut is a Mutation of Adds, and now and then Sets. One ctrMut applied
// twice is one *ttl.Mutation applied twice.
type ctrMut struct {
	id   int
	adds []ctrAdd
}

func (m *ctrMut) String() string {
	if m == nil {
		return "nil"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#%d[", m.id)
	for i, a := range m.adds {
		if i > 0 {
			b.WriteString(", ")
		}
		if a.set {
			fmt.Fprintf(&b, "%s:%s = %q For(%v)", a.fam, a.col, a.value, a.life)
			continue
		}
		fmt.Fprintf(&b, "%s:%s %+d in %v", a.fam, a.col, a.delta, a.w)
	}
	return b.String() + "]"
}

// ctrOp is one operation of a run.
type ctrOp struct {
	kind ctrKind
	at   time.Time // ctrClock

	row       string
	mut       *ctrMut
	cond      bool    // mut and orElse are the branches of NewCondMutation(nil, mut, orElse)
	orElse    *ctrMut // may be nil
	ahead     time.Duration
	rows      []string  // ctrBulk
	muts      []*ctrMut // ctrBulk
	fam, col  string    // reads
	w         ttl.Window
	n         int // ctrSumCounter
	ownWindow bool
}

func (o ctrOp) String() string {
	switch o.kind {
	case ctrClock:
		return "clock → " + o.at.UTC().Format(time.RFC3339Nano)
	case ctrApply:
		s := fmt.Sprintf("Apply(%q, %v)", o.row, o.mut)
		if o.cond {
			s = fmt.Sprintf("Apply(%q, NewCondMutation(nil, %v, %v))", o.row, o.mut, o.orElse)
		}
		if o.ahead > 0 {
			s += fmt.Sprintf(" by a Table whose clock is %v ahead", o.ahead)
		}
		return s
	case ctrBulk:
		var parts []string
		for i, r := range o.rows {
			parts = append(parts, fmt.Sprintf("%q: %v", r, o.muts[i]))
		}
		return "ApplyBulk(" + strings.Join(parts, ", ") + ")"
	case ctrReadCounter:
		return fmt.Sprintf("ReadCounter(%q, %q, %q, %v)", o.row, o.fam, o.col, o.w)
	case ctrSumCounter:
		return fmt.Sprintf("SumCounter(%q, %q, %q, %v, %d)", o.row, o.fam, o.col, o.w, o.n)
	case ctrGC:
		return "GC"
	}
	return fmt.Sprintf("ReadRow(%q)", o.row)
}

// ctrSegment is a run of operations on one table, from a clock reading
// start.
type ctrSegment struct {
	start time.Time
	ops   []ctrOp
}

var ctrRows = []string{"r0", "r1", "r2", "r3"}

// ctrGen generates a segment.
type ctrGen struct {
	r      *rand.Rand
	m      *ctrModel
	focus  ttl.Window // the window clock moves are scaled to
	hot    []ctrCol   // the columns most operations aim at
	muts   []*ctrMut  // recent mutations, to apply again
	nextID int
}

// generateCounters returns segment s of a run: n operations from a seed.
func generateCounters(seed uint64, s int, v ctrVariant, n int) ctrSegment {
	r := rand.New(rand.NewPCG(seed, 0xc0c0))
	// A start anywhere in three days after base, or just before a day
	// (and a 48h window) ends.
	start := testkit.Base.Add(time.Duration(r.Int64N(int64(72 * time.Hour))))
	if r.IntN(3) == 0 {
		day := 48 * time.Hour.Milliseconds()
		end := (floorMs(start)/day + 1) * day
		start = time.UnixMilli(end).Add(-time.Duration(r.Int64N(int64(2 * time.Second)))).UTC()
	}
	g := &ctrGen{r: r, m: newCtrModel(v, start), focus: ctrWindows[s%len(ctrWindows)]}
	// Hot columns: three counting in the focus window, two anywhere.
	focusCol := fmt.Sprintf("c%d", s%len(ctrWindows))
	for i := range 5 {
		col := focusCol
		if i >= 3 {
			col = fmt.Sprintf("c%d", r.IntN(len(ctrWindows)))
		}
		g.hot = append(g.hot, ctrCol{testkit.Pick(r, ctrRows...), testkit.Pick(r, ctrFamilies[:3]...).name, col})
	}
	seg := ctrSegment{start: start}
	for range n {
		o := g.op()
		g.m.replay(o)
		seg.ops = append(seg.ops, o)
	}
	return seg
}

func (g *ctrGen) op() ctrOp {
	switch x := g.r.IntN(100); {
	case x < 28:
		return ctrOp{kind: ctrClock, at: g.clockMove()}
	case x < 55:
		o := ctrOp{kind: ctrApply, row: g.row(), mut: g.mutation()}
		if g.r.IntN(16) == 0 {
			o.cond = true
			if g.r.IntN(3) > 0 {
				o.orElse = g.mutation()
			}
		}
		if g.r.IntN(12) == 0 {
			o.ahead = testkit.Pick(g.r, time.Microsecond, time.Millisecond, 250*time.Millisecond, 2*time.Second, g.focus.Size/2, g.focus.Size)
		}
		return o
	case x < 63:
		o := ctrOp{kind: ctrBulk}
		for range 2 + g.r.IntN(4) {
			o.rows = append(o.rows, g.row())
			if len(o.muts) > 0 && g.r.IntN(5) == 0 {
				o.muts = append(o.muts, o.muts[g.r.IntN(len(o.muts))])
			} else {
				o.muts = append(o.muts, g.mutation())
			}
		}
		return o
	case x < 79:
		return g.read(ctrReadCounter)
	case x < 93:
		return g.read(ctrSumCounter)
	case x < 97:
		return ctrOp{kind: ctrReadRow, row: g.row()}
	}
	return ctrOp{kind: ctrGC}
}

func (g *ctrGen) row() string {
	if g.r.IntN(3) > 0 {
		return testkit.Pick(g.r, g.hot...).row
	}
	return testkit.Pick(g.r, ctrRows...)
}

// column returns a column to add to or read: mostly a hot one, now and
// then one of the plain family.
func (g *ctrGen) column() ctrCol {
	switch x := g.r.IntN(200); {
	case x < 140:
		return testkit.Pick(g.r, g.hot...)
	case x < 197:
		return ctrCol{testkit.Pick(g.r, ctrRows...), testkit.Pick(g.r, ctrFamilies[:3]...).name, fmt.Sprintf("c%d", g.r.IntN(len(ctrWindows)))}
	}
	return ctrCol{testkit.Pick(g.r, ctrRows...), "sess", fmt.Sprintf("c%d", g.r.IntN(len(ctrWindows)))}
}

// ctrBadWindows are windows a counter cannot count in.
var ctrBadWindows = []ttl.Window{
	{Size: 7 * time.Minute, Keep: time.Hour},
	{Size: 36 * time.Hour},
	{Keep: time.Hour},
	{Size: 1500 * time.Microsecond},
	{Size: time.Minute, Keep: -time.Second},
	{Size: time.Minute, Keep: 1500 * time.Microsecond},
	{Size: -time.Minute},
}

// mutation returns a new mutation of Adds, or now and then one applied
// before.
func (g *ctrGen) mutation() *ctrMut {
	if len(g.muts) > 0 && g.r.IntN(10) == 0 {
		return testkit.Pick(g.r, g.muts...)
	}
	g.nextID++
	m := &ctrMut{id: g.nextID}
	for range testkit.Pick(g.r, 1, 1, 1, 1, 2, 2, 3, 5, 6, 8) {
		c := g.column()
		if g.r.IntN(3) == 0 && len(m.adds) > 0 { // the same column again
			prev := m.adds[g.r.IntN(len(m.adds))]
			c.fam, c.col = prev.fam, prev.col
		}
		if g.r.IntN(10) == 0 { // a Set, mostly in the plain family
			fam := "sess"
			if g.r.IntN(12) == 0 {
				fam = c.fam
			}
			life := testkit.Pick(g.r, time.Millisecond, 500*time.Millisecond, 700*time.Millisecond+time.Microsecond, 2*time.Second, time.Minute,
				g.focus.Size, g.focus.Size+g.focus.Keep, time.Hour, 0)
			m.adds = append(m.adds, ctrAdd{fam: fam, col: c.col, set: true, value: fmt.Sprintf("v%d", m.id), life: life})
			continue
		}
		w := ctrColumnWindow(c.col)
		if g.r.IntN(60) == 0 {
			w = testkit.Pick(g.r, ctrBadWindows...)
		}
		m.adds = append(m.adds, ctrAdd{fam: c.fam, col: c.col, delta: g.delta(), w: w})
	}
	g.muts = append(g.muts, m)
	if len(g.muts) > 20 {
		g.muts = g.muts[1:]
	}
	return m
}

func (g *ctrGen) delta() int64 {
	switch g.r.IntN(10) {
	case 0:
		return 0
	case 1, 2:
		return g.r.Int64N(2001) - 1000
	case 3:
		return g.r.Int64N(1<<41) - 1<<40
	}
	return 1
}

// read returns a ReadCounter or a SumCounter, mostly of a column that
// holds windows and with its own Window.
func (g *ctrGen) read(kind ctrKind) ctrOp {
	c := g.column()
	switch x := g.r.IntN(6); {
	case x < 4:
		cols := slices.DeleteFunc(g.m.columns(x < 3), func(c ctrCol) bool { return !ctrFamilyNamed(c.fam).counter })
		if len(cols) > 0 {
			c = testkit.Pick(g.r, cols...)
		}
	}
	w := ctrColumnWindow(c.col)
	own := true
	if g.r.IntN(8) == 0 {
		own = false
		switch g.r.IntN(5) {
		case 0: // a Keep a whole number of windows longer: cells fall on other windows
			w.Keep += w.Size * time.Duration(1+g.r.IntN(2))
		case 1: // or shorter
			if w.Keep >= w.Size {
				w.Keep -= w.Size
			}
		case 2: // on no window
			w.Keep += time.Millisecond
		case 3:
			w = testkit.Pick(g.r, ctrWindows...)
		default:
			w = testkit.Pick(g.r, ctrBadWindows...)
		}
	}
	o := ctrOp{kind: kind, row: c.row, fam: c.fam, col: c.col, w: w, ownWindow: own}
	if kind == ctrSumCounter {
		most := 0 // the most windows Keep lets a sum read
		if w.Size > 0 && w.Keep >= g.m.margin {
			most = 1 + int((w.Keep-g.m.margin)/w.Size)
		}
		switch x := g.r.IntN(20); {
		case x < 6:
			o.n = 1
		case x < 11:
			o.n = most
		case x < 16:
			o.n = 1 + g.r.IntN(max(most, 1))
		case x < 18:
			o.n = most + 1
		case x < 19:
			o.n = 0
		default:
			o.n = most + 1 + g.r.IntN(5)
		}
	}
	return o
}

// clockMove returns the instant the clock moves to: forward by a little,
// by a part of the focus window, to a window's end or a cell's expiry
// (less the read margin) or just around it, or past the focus window's
// whole life.
func (g *ctrGen) clockMove() time.Time {
	now, w := g.m.now, g.focus
	var at time.Time
	switch g.r.IntN(16) {
	case 0, 1:
		at = now.Add(time.Duration(1 + g.r.Int64N(int64(time.Millisecond))))
	case 2, 3:
		at = now.Add(time.Duration(1 + g.r.Int64N(int64(w.Size/4))))
	case 4, 5:
		at = now.Add(time.Duration(1 + g.r.Int64N(int64(w.Size))))
	case 6, 7, 8: // a window boundary
		b := w
		if g.r.IntN(2) == 0 {
			b = ctrColumnWindow(testkit.Pick(g.r, g.hot...).col)
		}
		size := b.Size.Milliseconds()
		end := time.UnixMilli((floorMs(now)/size + 1) * size)
		at = end.Add(-testkit.Pick(g.r, 0, 0, time.Nanosecond, time.Microsecond, time.Millisecond, g.m.margin))
	case 9, 10, 11, 12, 13: // when a stored window hides
		if hides := g.m.hides(g.hot); len(hides) > 0 {
			at = testkit.Pick(g.r, hides...).Add(testkit.Pick(g.r, -time.Millisecond, -time.Microsecond, -time.Nanosecond, 0, 0, 0, time.Nanosecond, time.Microsecond))
		} else {
			at = now.Add(time.Duration(1 + g.r.Int64N(int64(w.Size))))
		}
	case 14:
		at = now.Add(w.Size + w.Keep + time.Duration(g.r.Int64N(int64(w.Size))))
	default: // a microsecond-aligned instant, as most clocks read
		at = now.Add(time.Duration(1+g.r.Int64N(int64(w.Size/time.Microsecond))) * time.Microsecond)
	}
	if !at.After(now) {
		at = now.Add(time.Microsecond)
	}
	return at
}

// replay applies o to the model alone, as the generator keeps its own.
func (m *ctrModel) replay(o ctrOp) {
	switch o.kind {
	case ctrGC:
		m.gc(m.now)
	case ctrClock:
		m.now = o.at
	case ctrApply:
		if o.cond {
			_, _ = m.applyCond(o.row, o.mut, o.orElse, m.now.Add(o.ahead))
		} else {
			_ = m.apply(o.row, o.mut, m.now.Add(o.ahead))
		}
	case ctrBulk:
		for i, row := range o.rows {
			_ = m.apply(row, o.muts[i], m.now)
		}
	}
}

// hides returns, sorted, the instants after now at which the cells of the
// columns cols (of any column, if those have none) stop being read.
func (m *ctrModel) hides(cols []ctrCol) []time.Time {
	var out []time.Time
	for _, all := range []bool{false, true} {
		for c, cells := range m.cells {
			if !all && !slices.Contains(cols, c) {
				continue
			}
			for ts := range cells {
				if at := ctrExpiry(ctrFamilyNamed(c.fam), ts).Add(-m.margin); at.After(m.now) {
					out = append(out, at)
				}
			}
		}
		if len(out) > 0 {
			break
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return slices.Compact(out)
}
