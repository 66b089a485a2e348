package model_test

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/move"
)

// DESIGN.md's rules for a family in a Move ("Changing the strategy of a
// family that holds data"), as the reference model applies them: the two
// sides of the boundary and the rule of each, the write rule (which
// encoding a cell gets, or the error that refuses it), the expiry of a
// cell read, the retirement of real timestamps by sequence numbers, the
// rewrite of an old cell, the GC policies during and after the move, and
// when the move ends. The rules are written from DESIGN.md alone: nothing
// here asks the library's Move what it does.

// moveSpec is the Move of a model table's family "m", in terms the model
// computes with.
type moveSpec struct {
	from, to   rule          // from is ruleNone for a family without a strategy
	fromD, toD time.Duration // the d of a DefaultExpiration on either side
	start      time.Time
	old        lifeSpec // Default, For, Until or Forever
	skew       time.Duration
}

// realTime is 2000-01-01, the boundary of moves to and from sequence
// numbers.
const realTime = int64(946_684_800_000_000)

func (s *moveSpec) strategyOf(r rule, d time.Duration) ttl.Strategy {
	if r == ruleDefault {
		return ttl.DefaultExpiration(d)
	}
	return r.strategy() // nil for ruleNone
}

// move is the library's Move for the spec.
func (s *moveSpec) move() ttl.Move {
	return ttl.Move{From: s.strategyOf(s.from, s.fromD), To: s.strategyOf(s.to, s.toD), Start: s.start, Old: s.old.lifetime(), Skew: s.skew}
}

func (s *moveSpec) String() string { return fmt.Sprint(s.move()) }

// sideKind is how the cells of one side of the boundary live.
type sideKind uint8

const (
	byTime     sideKind = iota // ts + offset > now
	byVersions                 // among the newest n of the side in their column
	always                     // live
)

// sideRule is the rule of one side of the boundary.
type sideRule struct {
	kind   sideKind
	offset time.Duration // byTime
	until  time.Time     // not zero: no cell of the side is live from then on
}

// oldSide is the rule Old gives the cells written before the move
// (DESIGN.md's list under "Each side has its rule").
func (s *moveSpec) oldSide() sideRule {
	fromVersions := s.from == ruleSequence
	switch s.old.kind {
	case lkFor:
		if fromVersions { // live until Start + d, and among the newest n
			return sideRule{kind: byVersions, until: s.start.Add(s.old.d)}
		}
		return sideRule{kind: byTime, offset: s.old.d} // their write time plus d
	case lkUntil:
		if fromVersions {
			return sideRule{kind: byVersions, until: s.old.t}
		}
		return sideRule{kind: always, until: s.old.t}
	case lkForever:
		if fromVersions { // the newest n
			return sideRule{kind: byVersions}
		}
		return sideRule{kind: always}
	}
	switch s.from { // Default: their old rule
	case ruleDefault:
		return sideRule{kind: byTime, offset: s.fromD}
	case ruleSequence:
		return sideRule{kind: byVersions}
	}
	return sideRule{kind: always} // the library read them all
}

// newSide is the To strategy's rule.
func (s *moveSpec) newSide() sideRule {
	switch s.to {
	case ruleSequence:
		return sideRule{kind: byVersions}
	case ruleDefault:
		return sideRule{kind: byTime, offset: s.toD}
	}
	return sideRule{kind: byTime}
}

// onOld reports whether a cell stamped ts lies on the old side of the
// boundary: around sequence numbers the boundary is 2000-01-01, sequence
// numbers below it and real times above it; between time rules it is
// Start, the old encodings below it.
func (s *moveSpec) onOld(ts int64) bool {
	switch {
	case s.to == ruleSequence:
		return ts >= realTime
	case s.from == ruleSequence:
		return ts < realTime
	}
	return ts < s.start.UnixMicro()
}

func (s *moveSpec) sideOf(ts int64) sideRule {
	if s.onOld(ts) {
		return s.oldSide()
	}
	return s.newSide()
}

// live is the read rule: whether cells[i] of a column (newest first) is
// returned at instant at, by the rule of its side.
func (s *moveSpec) live(cells []storedCell, i int, at time.Time) bool {
	r := s.sideOf(cells[i].ts)
	if r.kind == byVersions {
		rank := 0 // among the cells of its side
		for _, c := range cells[:i] {
			if s.onOld(c.ts) == s.onOld(cells[i].ts) {
				rank++
			}
		}
		if rank >= modelVersions {
			return false
		}
	}
	return r.liveAt(cells[i].ts, at)
}

// liveAt is the side's rule for a cell stamped ts at instant at, its rank
// among versions aside.
func (r sideRule) liveAt(ts int64, at time.Time) bool {
	switch {
	case !r.until.IsZero() && !at.Before(r.until):
		return false
	case r.kind == byTime:
		return timeLive(r.offset, ts, at)
	}
	return true
}

// expiry is the expiry of a cell stamped ts by the rule of its side, and
// false for none.
func (s *moveSpec) expiry(ts int64) (time.Time, bool) {
	return s.sideOf(ts).expiry(ts)
}

func (r sideRule) expiry(ts int64) (time.Time, bool) {
	var e time.Time
	ok := false
	if r.kind == byTime {
		e, ok = timeExpiry(r.offset, ts)
	}
	if !r.until.IsZero() && (!ok || r.until.Before(e)) {
		return r.until, true
	}
	return e, ok
}

// defaultLife is what Default stands for at a write: the old strategy's
// default before Start, the new one's from Start on, the other's where the
// one in force has none (DESIGN.md: DefaultExpiration(d)'s For(d), which
// OneSecond stores as an expiry). A family without a strategy's default is
// a write at now, which lkDefault stands for below; false: neither has one.
func (s *moveSpec) defaultLife(started bool) (lifeSpec, bool) {
	type strategy struct {
		r rule
		d time.Duration
	}
	order := []strategy{{s.from, s.fromD}, {s.to, s.toD}}
	if started {
		slices.Reverse(order)
	}
	for _, st := range order {
		switch st.r {
		case ruleDefault:
			return lifeSpec{kind: lkFor, d: st.d}, true
		case ruleNone:
			return lifeSpec{kind: lkDefault}, true
		}
	}
	return lifeSpec{}, false
}

// timestamp is the write rule: before Start (by the writer's clock) the
// old encoding first, the new one when the old cannot hold the cell on its
// side; from Start on the reverse; in a move from DefaultExpiration only
// the old encoding before Start, and in a move to SequenceNumbers only the
// new one from Start on (a real timestamp would outrank every version). An encoding holds a cell when it stamps
// it on its own side and that side's rule gives the cell the expiry its
// lifetime asks for, and a cell is never born expired. Refused by both,
// the write gets the error of the encoding tried first.
func (s *moveSpec) timestamp(l lifeSpec, now time.Time) (int64, error) {
	started := !now.Before(s.start)
	if l.kind == lkDefault {
		if d, ok := s.defaultLife(started); ok {
			l = d
		}
	}
	order := []bool{false, true} // old encoding?
	if started && s.to == ruleSequence {
		order = order[:1]
	}
	if !started {
		order = []bool{true, false}
		if s.from == ruleDefault {
			order = order[:1]
		}
	}
	var first error
	for _, old := range order {
		ts, err := s.hold(old, l, now)
		if err == nil {
			return ts, nil
		}
		if first == nil {
			first = err
		}
	}
	return 0, first
}

// hold returns the timestamp of a cell written at now with l in one
// encoding, or why that encoding cannot hold it.
func (s *moveSpec) hold(old bool, l lifeSpec, now time.Time) (int64, error) {
	ts, err := s.encode(old, l, now)
	if err != nil {
		return 0, err
	}
	if s.onOld(ts) != old {
		return 0, ttl.ErrLifetime // on the other side of the boundary
	}
	e, ok := s.expiry(ts)
	switch l.kind {
	case lkForever:
		if ok {
			return 0, ttl.ErrLifetime
		}
	case lkFor, lkUntil:
		asked := now.Add(l.d)
		if l.kind == lkUntil {
			asked = l.t
		}
		if !ok || !e.Equal(time.UnixMilli(floorMs(asked))) {
			return 0, ttl.ErrLifetime // its side's rule would give it another expiry
		}
	}
	if ok && !e.After(now) {
		return 0, ttl.ErrExpired // never born expired
	}
	return ts, nil
}

// encode is one encoding's stamp: the new one is To's write rule; the old
// one of a time rule with offset L stamps the expiry less L, that of a
// family without a strategy stamps now (Default, or a Version in a move to
// sequence numbers), that of sequence numbers the version, and that of
// DefaultExpiration(d) under Until or Forever stamps as DefaultExpiration
// did (which hold accepts only where the rule keeps the expiry).
func (s *moveSpec) encode(old bool, l lifeSpec, now time.Time) (int64, error) {
	if !old {
		if s.to == ruleSequence {
			return versionStamp(l)
		}
		return timeStamp(s.newSide().offset, l, now, 0)
	}
	o := s.oldSide()
	switch s.from {
	case ruleSequence:
		return versionStamp(l)
	case ruleNone:
		switch {
		case l.kind == lkDefault || l.kind == lkVersion && s.to == ruleSequence:
			return floorMs(now) * 1000, nil
		case o.kind == byTime:
			return timeStamp(o.offset, l, now, 0)
		}
		return 0, ttl.ErrLifetime // real timestamps take no lifetime
	}
	if o.kind == byTime {
		return timeStamp(o.offset, l, now, 0)
	}
	return timeStamp(s.fromD, l, now, 0)
}

// retire applies, to the cells of a column (newest first) about to get a
// cell stamped ts, DESIGN.md's retirement: in a move from real timestamps
// to sequence numbers, a version written the new way deletes its column's
// old cells in the same mutation.
func (s *moveSpec) retire(cells []storedCell, ts int64) []storedCell {
	if s.from != ruleNone || s.to != ruleSequence || s.onOld(ts) {
		return cells
	}
	return slices.DeleteFunc(cells, func(c storedCell) bool { return s.onOld(c.ts) })
}

// rewritable reports whether the old cells can be rewritten in the new
// encoding: not between sequence numbers and times.
func (s *moveSpec) rewritable() bool { return s.from != ruleSequence && s.to != ruleSequence }

// newStamp returns the timestamp that keeps the expiry of an old cell
// stamped ts in the new encoding (Forever's for one that never expires),
// and false when it would not fall on the new side.
func (s *moveSpec) newStamp(ts int64) (int64, bool) {
	r := s.newSide()
	to := int64(ttl.MaxTimestamp) - r.offset.Microseconds()
	if e, ok := s.oldSide().expiry(ts); ok {
		to = (floorMs(e) - r.offset.Milliseconds()) * 1000
	}
	return to, to >= 0 && !s.onOld(to)
}

// snapshot returns the cells of family in row, as a read returns them
// before later changes.
func (m *model) snapshot(family, row string) map[string][]storedCell {
	out := map[string][]storedCell{}
	for c, cells := range m.rows[row][family] {
		out[c] = slices.Clone(cells)
	}
	return out
}

// rewrite is the rewrite of the old cells of family in row at now, as
// RewriteRow does it on the row read with RewriteFilter when it held read:
// each old cell read that is live for a reader lagging by Skew (as the
// finish judges), column by column and newest first, moves to
// the new encoding keeping its value and expiry, unless a cell of its
// column is now stamped between its old and new timestamps (the new one
// included) or it is no longer there unchanged (a writer wins). It
// returns what it counted.
func (m *model) rewrite(family, row string, read map[string][]storedCell, now time.Time) (move.Counts, error) {
	s := m.v.move
	var done move.Counts
	if !s.rewritable() {
		return done, ttl.ErrInvalidOption
	}
	names := make([]string, 0, len(read))
	for c := range read {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		for _, cell := range read[c] {
			if !s.onOld(cell.ts) {
				continue
			}
			if !s.oldSide().liveAt(cell.ts, now.Add(-s.skew)) {
				done.Expired++
				continue
			}
			to, ok := s.newStamp(cell.ts)
			lo, hi := cell.ts+1000, to+1000 // the cells between, to included
			if to < cell.ts {
				lo, hi = to, cell.ts
			}
			cols := m.rows[row][family]
			cur := cols[c]
			if !ok || !slices.Contains(cur, cell) ||
				slices.ContainsFunc(cur, func(o storedCell) bool { return o.ts >= lo && (o.ts < hi || hi < lo) }) {
				done.Kept++
				continue
			}
			cur = slices.DeleteFunc(cur, func(o storedCell) bool { return o == cell })
			i := sort.Search(len(cur), func(i int) bool { return cur[i].ts <= to })
			cols[c] = slices.Insert(cur, i, storedCell{ts: to, value: cell.value, wt: -1})
			done.Rewritten++
		}
	}
	return done, nil
}

// gcRule is a GC policy the model applies: a maximum age, a number of
// versions, or neither (no GC).
type gcRule struct {
	age      time.Duration
	versions int
}

func (g gcRule) String() string {
	switch {
	case g.age > 0:
		return fmt.Sprintf("MaxAge(%v)", g.age)
	case g.versions > 0:
		return fmt.Sprintf("MaxVersions(%d)", g.versions)
	}
	return "no GC"
}

// gcOf reads a bigtable.GCPolicy of one rule, as Bigtable applies it.
func gcOf(p bigtable.GCPolicy) (gcRule, error) {
	switch p := p.(type) {
	case bigtable.MaxAgeGCPolicy:
		return gcRule{age: time.Duration(p)}, nil
	case bigtable.MaxVersionsGCPolicy:
		return gcRule{versions: int(p)}, nil
	}
	if p == nil || p.String() == "" {
		return gcRule{}, nil
	}
	return gcRule{}, fmt.Errorf("GC policy %v: not one rule", p)
}

// windowGC is the GC policy during the move: between time rules MaxAge of
// the longer of the old cells' offset and the new strategy's, rounded up
// to a whole second; otherwise (sequence numbers on either side, old cells
// with no offset or an Until) no GC.
func (s *moveSpec) windowGC() gcRule {
	o := s.oldSide()
	if s.from == ruleSequence || s.to == ruleSequence || o.kind != byTime || !o.until.IsZero() {
		return gcRule{}
	}
	age := max(o.offset, s.newSide().offset)
	if rem := age % time.Second; rem != 0 {
		age += time.Second - rem
	}
	return gcRule{age: age}
}

// gc is the policy of a GC step: To's once the move is finished, else the
// move's.
func (s *moveSpec) gc(final bool) gcRule {
	if final {
		return s.finalGC()
	}
	return s.windowGC()
}

// finalGC is To's own policy, set when the move is finished.
func (s *moveSpec) finalGC() gcRule {
	switch s.to {
	case ruleSequence:
		return gcRule{versions: modelVersions}
	case ruleDefault:
		return gcRule{age: s.toD}
	}
	return gcRule{age: time.Second}
}

// collect removes from family what g lets Bigtable's GC delete at now:
// the cells older than the age (ts < now − age), the versions past the
// newest n of their column.
func (m *model) collect(family string, g gcRule, now time.Time) {
	cutoff := now.UnixMicro() - g.age.Microseconds()
	for _, fams := range m.rows {
		for c, cells := range fams[family] {
			if g.versions > 0 && len(cells) > g.versions {
				cells = cells[:g.versions]
			}
			if g.age > 0 {
				cells = slices.DeleteFunc(cells, func(o storedCell) bool { return o.ts < cutoff })
			}
			fams[family][c] = cells
		}
	}
	m.prune()
}

// finishable reports whether the move could be finished at now: no old
// cell of family is live for a reader whose clock lags by Skew. In a move
// to sequence numbers that is not enough: expired old cells outrank every
// version, and To's MaxVersions would delete live ones. FinishMove deletes
// them first (TestMoveFinishToSequenceNumbersLosesVersions); the model's
// GC steps set To's policy without it, so there the model also waits
// until no old cell is stored.
func (m *model) finishable(family string, now time.Time) bool {
	s := m.v.move
	for _, fams := range m.rows {
		for _, cells := range fams[family] {
			for i, c := range cells {
				if s.onOld(c.ts) && (s.to == ruleSequence || s.live(cells, i, now.Add(-s.skew))) {
					return false
				}
			}
		}
	}
	return true
}

// endsBy is when the last old cell expires by its rule, Skew included:
// Start + L for a time rule with offset L, t for Until(t), never for old
// cells that never expire.
func (s *moveSpec) endsBy() (time.Time, bool) {
	switch o := s.oldSide(); {
	case !o.until.IsZero():
		return o.until.Add(s.skew), true
	case o.kind == byTime:
		return s.start.Add(o.offset + s.skew), true
	}
	return time.Time{}, false
}
