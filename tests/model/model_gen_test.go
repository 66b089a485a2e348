package model_test

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/cellttl/ttl/internal/testkit"
)

// The generator of model runs: seeded, it keeps its own model so that
// lifetimes, clock moves, conditions and reads can aim at the expiries of
// the cells stored.

var modelRows = []string{"r0", "r1", "r2", "r3"}

var modelColumns = []string{"", "a", "b"}

// gen makes a random run. It keeps its own model so that clock moves and
// lifetimes can aim at the expiries of stored cells.
type gen struct {
	r        *rand.Rand
	v        *variant
	m        *model
	values   int
	condNext string // the row of a condition to make next
	sliding  bool   // also Touch and reads with KeepAlive
}

func (g *gen) family() string {
	if g.v.move != nil && g.r.IntN(2) == 0 {
		return "m" // the moving family, half of the time
	}
	return testkit.Pick(g.r, g.v.familyNames()...)
}

// timedCell is a stored cell of a family whose rule expires cells by
// time, with its expiry.
type timedCell struct {
	fam, col string
	cell     storedCell
	expiry   time.Time
}

// timedCells returns the cells of row that expire by time, in map order.
func (g *gen) timedCells(row string) []timedCell {
	var out []timedCell
	for f, cols := range g.m.rows[row] {
		for c, cells := range cols {
			for _, cell := range cells {
				if e, ok := g.m.expiry(bigtable.ReadItem{Column: f + ":" + c, Timestamp: bigtable.Timestamp(cell.ts)}); ok {
					out = append(out, timedCell{f, c, cell, e})
				}
			}
		}
	}
	return out
}

// expiries returns the expiries of the stored cells that expire by time,
// earliest first.
func (g *gen) expiries() []time.Time {
	var out []time.Time
	for row := range g.m.rows {
		for _, c := range g.timedCells(row) {
			out = append(out, c.expiry)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

func (g *gen) duration() time.Duration {
	ms := time.Millisecond
	switch g.r.IntN(12) {
	case 0:
		return testkit.Pick(g.r, 0, -ms, time.Nanosecond, 999*time.Microsecond, ms, ms+time.Nanosecond, 1500*time.Microsecond, 2*ms-time.Nanosecond)
	case 1:
		return g.v.margin + testkit.Pick(g.r, -time.Nanosecond, 0, time.Nanosecond, ms, ms+time.Nanosecond)
	case 2:
		return modelDefault + testkit.Pick(g.r, -ms, -time.Nanosecond, 0, time.Nanosecond, ms)
	case 3, 4, 5:
		return time.Duration(g.r.Int64N(int64(10 * time.Second)))
	case 6, 7:
		return time.Duration(g.r.Int64N(int64(10 * time.Minute)))
	case 8:
		return time.Duration(g.r.Int64N(int64(48 * time.Hour)))
	case 9:
		return -time.Duration(g.r.Int64N(int64(time.Hour)))
	case 10:
		return 290 * 365 * 24 * time.Hour // about the longest Duration
	}
	return time.Duration(1+g.r.IntN(5000)) * ms
}

func (g *gen) until() time.Time {
	switch g.r.IntN(8) {
	case 0:
		return g.m.now
	case 1:
		if es := g.expiries(); len(es) > 0 { // collide with a stored cell
			return testkit.Pick(g.r, es...).Add(testkit.Pick(g.r, -time.Millisecond, -time.Nanosecond, 0, time.Nanosecond))
		}
	case 2:
		return testkit.Pick(g.r,
			time.Time{}, time.Unix(-1, 0), time.Unix(0, 0),
			time.Date(200000, 1, 1, 0, 0, 0, 0, time.UTC),
			time.UnixMilli(maxSeq), time.UnixMilli(maxSeq).Add(999999), time.UnixMilli(maxSeq).Add(time.Millisecond),
			time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC))
	}
	return g.m.now.Add(g.duration())
}

func (g *gen) life(family string) lifeSpec {
	if g.v.families[family] == ruleMove {
		return g.moveLife()
	}
	kind := lkDefault
	if g.r.IntN(100) < 8 {
		kind = testkit.Pick(g.r, lkDefault, lkFor, lkUntil, lkVersion, lkForever) // mostly refused
	} else {
		switch g.v.families[family] {
		case ruleSequence:
			kind = lkVersion
		case ruleOneSecond:
			kind = testkit.Pick(g.r, lkFor, lkFor, lkFor, lkUntil, lkUntil, lkFor, lkFor, lkUntil, lkFor, lkForever)
		case ruleDefault:
			kind = testkit.Pick(g.r, lkDefault, lkDefault, lkFor, lkFor, lkFor, lkUntil, lkUntil, lkFor, lkUntil, lkForever)
		}
	}
	switch kind {
	case lkFor:
		return lifeSpec{kind: lkFor, d: g.duration()}
	case lkUntil:
		return lifeSpec{kind: lkUntil, t: g.until()}
	case lkVersion:
		seq := g.r.Int64N(6)
		if g.r.IntN(20) == 0 {
			seq = testkit.Pick(g.r, -1, maxSeq-1, maxSeq, maxSeq+1)
		}
		return lifeSpec{kind: lkVersion, seq: seq}
	}
	return lifeSpec{kind: kind}
}

func (g *gen) value() string {
	g.values++
	return "v" + strconv.Itoa(g.values)
}

func (g *gen) mutOp() mutOp {
	o := mutOp{fam: g.family(), col: testkit.Pick(g.r, modelColumns...)}
	switch x := g.r.IntN(100); {
	case x < 50:
		o.kind = mkSet
	case x < 75:
		o.kind = mkReplace
	case x < 88:
		o.kind = mkDeleteColumn
	case x < 97:
		o.kind = mkDeleteFamily
	default:
		o.kind = mkDeleteRow
	}
	if o.kind == mkSet || o.kind == mkReplace {
		o.value = g.value()
		o.life = g.life(o.fam)
	}
	return o
}

func (g *gen) plain() *mutSpec {
	s := &mutSpec{}
	n := 1 + g.r.IntN(3)
	if g.r.IntN(60) == 0 {
		n = 0 // an empty mutation is refused
	}
	for range n {
		s.ops = append(s.ops, g.mutOp())
	}
	return s
}

func (g *gen) branch() *mutSpec {
	switch g.r.IntN(12) {
	case 0, 1, 2:
		return nil
	case 3:
		return &mutSpec{} // empty: skipped
	case 4:
		if g.r.IntN(4) == 0 {
			return &mutSpec{cond: &condSpec{yes: g.plain()}} // nested: refused
		}
	}
	return g.plain()
}

// storedValue returns a value stored in family:col of row, live or not.
func (g *gen) storedValue(row, family, col string) string {
	if cells := g.m.rows[row][family][col]; len(cells) > 0 {
		return testkit.Pick(g.r, cells...).value
	}
	return "v1"
}

// nearExpiry returns a cell of row that is live at now but expires soon:
// within twice the read margin, or 10ms. A condition or read aimed at it
// tells a rule applied at now from one applied at now + margin.
func (g *gen) nearExpiry(row string) (fam, col, value string, ok bool) {
	horizon := g.m.now.Add(max(2*g.v.margin, 10*time.Millisecond))
	var near [][3]string
	for _, c := range g.timedCells(row) {
		if c.expiry.After(g.m.now) && !c.expiry.After(horizon) {
			near = append(near, [3]string{c.fam, c.col, c.cell.value})
		}
	}
	if len(near) == 0 {
		return "", "", "", false
	}
	sort.Slice(near, func(i, j int) bool { return near[i][2] < near[j][2] }) // map order is random
	n := testkit.Pick(g.r, near...)
	return n[0], n[1], n[2], true
}

// How cond chooses the column a conditional mutation tests.
const (
	aimNear = true  // a column whose cell is about to be hidden
	aimAny  = false // that, half the time; any column otherwise
)

// cond makes a conditional mutation; an aimed one tests a column whose
// cell is about to be hidden.
func (g *gen) cond(row string, aimed bool) *mutSpec {
	c := &condSpec{yes: g.branch(), no: g.branch()}
	fam, col := g.family(), testkit.Pick(g.r, modelColumns...)
	value := g.storedValue(row, fam, col)
	kind := g.r.IntN(3)
	if f, cl, v, ok := g.nearExpiry(row); ok && (aimed || g.r.IntN(2) == 0) {
		fam, col, value = f, cl, v
		if aimed {
			kind = 1 + g.r.IntN(2)
		}
	}
	switch kind {
	case 1: // the column has a live cell
		c.filter = fColumns{fam, col, col + "\x00"}
	case 2: // the column's newest live value is v
		c.filter = fChain{fChain{fColumns{fam, col, col + "\x00"}, fLatest(1)}, fValue(value)}
	}
	return &mutSpec{cond: c}
}

func (g *gen) filter(row string) mfilter {
	fam, col := g.family(), testkit.Pick(g.r, modelColumns...)
	bound := func() string { return testkit.Pick(g.r, "", "a", "a\x00", "b", "c") }
	switch g.r.IntN(11) {
	case 0:
		return fLatest(1 + g.r.IntN(3))
	case 1:
		return fRowLimit(1 + g.r.IntN(4))
	case 2:
		return fColumns{fam, bound(), bound()}
	case 3:
		return fFamily(fam)
	case 4:
		return fValue(g.storedValue(row, fam, col))
	case 5:
		return fChain{fColumns{fam, col, col + "\x00"}, fLatest(1)}
	case 6:
		return fChain{fLatest(1 + g.r.IntN(2)), fRowLimit(1 + g.r.IntN(3))}
	case 7:
		return fInterleave{fColumns{fam, bound(), bound()}, fColumns{g.family(), bound(), bound()}}
	case 8:
		return fChain{fFamily(fam), fRowLimit(1 + g.r.IntN(3))}
	case 9:
		return fChain{fLatest(1), fValue(g.storedValue(row, fam, col))}
	}
	return nil
}

func (g *gen) readSpec(row string) readSpec {
	r := readSpec{row: row}
	if g.r.IntN(3) > 0 {
		r.filter = g.filter(row)
	}
	r.writeTimes = g.v.writeTimes && g.r.IntN(2) == 0
	return r
}

func (g *gen) clock() time.Time {
	now := g.m.now
	tiny := func() time.Time {
		return now.Add(testkit.Pick(g.r, time.Nanosecond, time.Microsecond, 999*time.Microsecond, time.Millisecond,
			time.Millisecond+time.Nanosecond, 1500*time.Microsecond, 2*time.Millisecond))
	}
	switch g.r.IntN(10) {
	case 0, 1, 2:
		return tiny()
	case 3, 4: // to an expiry boundary
		var next []time.Time
		for _, e := range g.expiries() {
			if e.After(now) && len(next) < 3 {
				next = append(next, e)
			}
		}
		if len(next) == 0 {
			return tiny()
		}
		at := testkit.Pick(g.r, next...).Add(testkit.Pick(g.r, -time.Millisecond, -time.Nanosecond, 0, time.Nanosecond,
			-g.v.margin, -g.v.margin-time.Nanosecond, -g.v.margin+time.Nanosecond))
		if !at.After(now) {
			return tiny()
		}
		return at
	case 5, 6, 7:
		return now.Add(time.Duration(g.r.Int64N(int64(10 * time.Second))))
	case 8:
		return now.Add(time.Duration(g.r.Int64N(int64(3 * time.Minute))))
	}
	return now.Add(time.Duration(g.r.Int64N(int64(72 * time.Hour))))
}

// aim returns an instant just before or at the moment a cell of row that
// is visible now becomes hidden (its expiry less the read margin), or
// false.
func (g *gen) aim(row string) (time.Time, bool) {
	var at []time.Time
	for _, c := range g.timedCells(row) {
		if hidden := c.expiry.Add(-g.v.margin); hidden.After(g.m.now) && hidden.Before(g.m.now.Add(time.Hour)) {
			at = append(at, hidden)
		}
	}
	if len(at) == 0 {
		return time.Time{}, false
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) }) // map order is random
	t := testkit.Pick(g.r, at...).Add(testkit.Pick(g.r, -time.Millisecond, -time.Nanosecond, 0, time.Nanosecond))
	return t, t.After(g.m.now)
}

func (g *gen) op() op {
	row := testkit.Pick(g.r, modelRows...)
	if g.condNext != "" { // a condition on a row whose cell the clock was just moved to
		row, g.condNext = g.condNext, ""
		return op{kind: opApply, row: row, mut: g.cond(row, aimNear)}
	}
	if g.sliding {
		if o, ok := g.slidingOp(row); ok {
			return o
		}
	}
	switch x := g.r.IntN(100); {
	case x < 22:
		return op{kind: opClock, at: g.clock()}
	case x < 47:
		return op{kind: opApply, row: row, mut: g.plain()}
	case x < 57:
		if at, ok := g.aim(row); ok && g.r.IntN(4) > 0 {
			g.condNext = row
			return op{kind: opClock, at: at}
		}
		return op{kind: opApply, row: row, mut: g.cond(row, aimAny)}
	case x < 64:
		o := op{kind: opBulk}
		for _, i := range g.r.Perm(len(modelRows))[:1+g.r.IntN(len(modelRows))] {
			o.rows = append(o.rows, modelRows[i])
			switch g.r.IntN(20) {
			case 0:
				o.muts = append(o.muts, &mutSpec{isNil: true})
			case 1:
				o.muts = append(o.muts, g.cond(modelRows[i], aimAny))
			default:
				o.muts = append(o.muts, g.plain())
			}
		}
		return o
	case x < 84:
		if g.r.IntN(10) == 0 {
			row = "zz" // no such row
		}
		return op{kind: opReadRow, read: g.readSpec(row)}
	}
	return g.readRowsOp(row)
}

// readRowsOp returns a ReadRows of a random row set.
func (g *gen) readRowsOp(row string) op {
	r := g.readSpec(row)
	switch g.r.IntN(3) {
	case 0:
		r.rows = rowSetSpec{start: ""}
	case 1:
		var list []string
		for _, k := range modelRows {
			if g.r.IntN(2) == 0 {
				list = append(list, k)
			}
		}
		r.rows = rowSetSpec{list: append(list, "zz")}
	case 2:
		r.rows = rowSetSpec{start: testkit.Pick(g.r, "", "r1"), end: testkit.Pick(g.r, "r2", "r3", "s")}
	}
	if g.r.IntN(4) == 0 {
		r.limit = 1 + g.r.Int64N(3)
	}
	r.reverse = g.r.IntN(5) == 0
	return op{kind: opReadRows, read: r}
}

// generate makes n operations, applying each to its own model so that the
// next can aim at what is stored.
func generate(v *variant, seed uint64, n int) []op {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x5eed)), v: v, m: newModel(v), sliding: true}
	ops := make([]op, n)
	for i := range ops {
		ops[i] = g.op()
		g.m.replay(ops[i])
	}
	return ops
}

// replay applies o to the model alone, as a generator keeps its own.
func (m *model) replay(o op) {
	if o.slides() {
		m.replaySlide(o)
		return
	}
	switch o.kind {
	case opClock:
		m.now = o.at
	case opApply:
		_, _ = m.apply(o.row, o.mut, m.now)
	case opBulk:
		for j, row := range o.rows {
			if o.muts[j] != nil && o.muts[j].cond == nil {
				_, _ = m.apply(row, o.muts[j], m.now)
			}
		}
	}
}
