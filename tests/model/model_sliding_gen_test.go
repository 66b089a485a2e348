package model_test

import (
	"time"

	"github.com/cellttl/ttl/internal/testkit"
)

// The generator's Touch and KeepAlive operations (model_sliding_*): aimed
// at live cells, some of them about to be due or to expire, and, half of
// the time, with another process's write between two of their requests,
// aimed at the column they act on.

// slidingOp returns a Touch or a read with KeepAlive of row, or false for
// neither (most of the time).
func (g *gen) slidingOp(row string) (op, bool) {
	switch x := g.r.IntN(100); {
	case x < 7:
		return g.touchOp(row), true
	case x < 19:
		o := op{kind: opReadRow, read: g.readSpec(row)}
		if g.r.IntN(2) == 0 {
			o = g.readRowsOp(row)
		}
		o.read.idle = testkit.Pick(g.r, time.Millisecond, 50*time.Millisecond, time.Second, 10*time.Second, modelDefault,
			10*time.Minute, 2*time.Hour, 72*time.Hour)
		if g.r.IntN(4) == 0 { // the values stripped: the renewal reads them
			if o.read.filter == nil {
				o.read.filter = fStrip{}
			} else {
				o.read.filter = fChain{o.read.filter, fStrip{}}
			}
		}
		if g.r.IntN(5) < 2 {
			fam, col := g.liveColumn(row)
			o.inject = g.injection(testkit.Pick(g.r, 1, 1, 1, 2, 3, 4), row, fam, col)
		}
		return o, true
	}
	return op{}, false
}

// touchOp returns a Touch of a column of row, mostly one with a live cell.
func (g *gen) touchOp(row string) op {
	fam, col := g.family(), testkit.Pick(g.r, modelColumns...)
	if g.r.IntN(4) > 0 {
		fam, col = g.liveColumn(row)
	}
	var life lifeSpec
	switch g.r.IntN(4) {
	case 0:
		life = g.life(fam)
	case 1:
		life = lifeSpec{kind: lkFor, d: g.duration()}
	default: // a lifetime a session would get
		life = lifeSpec{kind: lkFor, d: time.Duration(1 + g.r.Int64N(int64(10*time.Minute)))}
	}
	o := op{kind: opTouch, touch: touchSpec{row: row, fam: fam, col: col, life: life}}
	if g.r.IntN(2) == 0 {
		o.inject = g.injection(testkit.Pick(g.r, 1, 1, 1, 2), row, fam, col)
	}
	return o
}

// liveColumn returns the column of a cell of row live now, or any column.
func (g *gen) liveColumn(row string) (fam, col string) {
	if live := g.m.liveCells(row, g.m.now.Add(g.v.margin)); len(live) > 0 {
		c := testkit.Pick(g.r, live...)
		return c.Fam, c.Col
	}
	return g.family(), testkit.Pick(g.r, modelColumns...)
}

// injection returns another process's write before request at, of one or
// two changes, mostly to fam:col: a newer or older cell, a replace, a
// delete.
func (g *gen) injection(at int, row, fam, col string) *injectSpec {
	s := &mutSpec{}
	for range 1 + g.r.IntN(2) {
		o := g.mutOp()
		if g.r.IntN(5) < 3 {
			o.fam, o.col = fam, col
			o.kind = testkit.Pick(g.r, mkSet, mkSet, mkReplace, mkReplace, mkDeleteColumn)
			o.value, o.life = g.value(), g.life(fam)
		}
		s.ops = append(s.ops, o)
	}
	return &injectSpec{at: at, row: row, mut: s}
}

// replaySlide applies a Touch or a read with KeepAlive to the model alone,
// as a generator keeps its own, taking the first way a row may be read.
func (m *model) replaySlide(o op) {
	s := &slide{now: m.now, inject: o.inject}
	if o.kind == opTouch {
		_, _ = m.touch(o.touch, s)
	} else {
		want := m.read(o.read, o.kind == opReadRow)
		m.request(s, o.read.row)
		for _, k := range want.keys {
			m.keepAlive(k, want.cells[k][0], o.read.idle, o.read.writeTimes, s)
		}
	}
	m.finish(s)
}
