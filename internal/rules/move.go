package rules

import (
	"time"

	"cloud.google.com/go/bigtable"
)

// A Kind is how the cells of a strategy, or of one side of a move, live.
type Kind uint8

const (
	// None is a family without a strategy: its cells carry real write
	// times and live as its GC policy says. A side of a move of this
	// kind is live (until its Until).
	None Kind = iota
	// ByTime cells live by a Time rule.
	ByTime
	// ByVersions cells live while among the newest Versions of their
	// column.
	ByVersions
	// Moving is a strategy move: each cell lives by the rule of its side
	// of the boundary.
	Moving
)

// A Strategy is the rule behind a ttl.Strategy.
type Strategy struct {
	Kind     Kind
	Time     Time  // ByTime
	Versions int   // ByVersions
	Move     *Move // Moving
	Counter  bool  // the family is an aggregate family of counters (ByTime)
	// GraceAge is how much longer than its rule needs the family's GC keeps
	// an expired cell stored (ByTime): reads are unchanged.
	GraceAge time.Duration
}

// IsDefaultExpiration reports whether s is DefaultExpiration: a time rule
// with an offset (OneSecond has none).
func (s Strategy) IsDefaultExpiration() bool { return s.Kind == ByTime && s.Time.Offset > 0 }

// An OldKind is what a move's Old lifetime says of the cells written
// before the move.
type OldKind uint8

const (
	OldDefault OldKind = iota // their old rule
	OldFor                    // For(d): d after their timestamp (from SequenceNumbers, after Start)
	OldUntil                  // Until(t)
	OldForever                // for ever (from SequenceNumbers, the newest n versions)
)

// Old is a move's Old lifetime.
type Old struct {
	Kind  OldKind
	For   time.Duration // OldFor
	Until time.Time     // OldUntil
}

// A Move is the rule behind a ttl.Move: the cells written before Start
// live by the old side's rule, those written after it by To's, and the two
// encodings occupy disjoint ranges of timestamps on either side of a
// boundary.
type Move struct {
	From  Strategy // Kind None for a family without a strategy
	To    Strategy
	Start time.Time
	Old   Old
	Skew  time.Duration
}

// A Side is the rule of one side of a move's boundary.
type Side struct {
	Kind     Kind      // None: live
	Time     Time      // ByTime
	Versions int       // ByVersions
	Until    time.Time // not zero: nothing on this side is live from then on
	Span     Range     // the timestamps on this side
}

// sideOf returns the rule of a strategy, as a side.
func sideOf(s Strategy) Side { return Side{Kind: s.Kind, Time: s.Time, Versions: s.Versions} }

// Sides returns the rules of the cells written before the move and after
// it, each with its span of timestamps, and the boundary between them:
// Start for moves between time rules, RealTime (2000-01-01) for moves to
// or from sequence numbers.
func (m Move) Sides() (oldSide, newSide Side, boundary bigtable.Timestamp) {
	newSide = sideOf(m.To)
	fromVersions := m.From.Kind == ByVersions
	oldSide = sideOf(m.From)
	switch m.Old.Kind {
	case OldFor:
		if fromVersions {
			oldSide.Until = m.Start.Add(m.Old.For)
		} else {
			oldSide = Side{Kind: ByTime, Time: Time{m.Old.For}}
		}
	case OldUntil:
		if fromVersions {
			oldSide.Until = m.Old.Until
		} else {
			oldSide = Side{Kind: None, Until: m.Old.Until}
		}
	case OldForever:
		if !fromVersions {
			oldSide = Side{Kind: None}
		}
	}
	switch {
	case fromVersions:
		boundary = RealTime
		oldSide.Span, newSide.Span = Range{Hi: boundary}, Range{Lo: boundary, Open: true}
	case m.To.Kind == ByVersions:
		boundary = RealTime
		oldSide.Span, newSide.Span = Range{Lo: boundary, Open: true}, Range{Hi: boundary}
	default:
		boundary = bigtable.Time(m.Start)
		oldSide.Span, newSide.Span = Range{Hi: boundary}, Range{Lo: boundary, Open: true}
	}
	return oldSide, newSide, boundary
}

// Strategy returns the move as a strategy's rule, of Kind Moving.
func (m Move) Strategy() Strategy { return Strategy{Kind: Moving, Move: &m} }

// Started reports whether the move has started at now: whether writes
// use the new strategy.
func (m Move) Started(now time.Time) bool { return !now.Before(m.Start) }

// EndsBy returns the instant from which no cell written before Start is
// live, Skew included: the earliest the move can be finished without
// rewriting them. It reports false when the old cells never expire by
// time: the move then ends once they are rewritten.
func (m Move) EndsBy() (time.Time, bool) {
	oldSide, _, _ := m.Sides()
	switch {
	case !oldSide.Until.IsZero():
		return oldSide.Until.Add(m.Skew), true
	case oldSide.Kind == ByTime:
		// Every old cell was written before Start and stamped before it:
		// below the boundary, Start, in a move between time rules; at its
		// real write time in a move to sequence numbers, whose old side
		// has no end.
		last, _ := oldSide.Time.Expiry(bigtable.Time(m.Start) - 1000)
		return last.Add(time.Millisecond + m.Skew).In(m.Start.Location()), true
	}
	return time.Time{}, false
}

// Rewritable reports whether the move's old cells can be rewritten in the
// new encoding: times to times. Sequence numbers have no times, and
// versions rewritten as times would collapse into one cell.
func (m Move) Rewritable() bool {
	oldSide, newSide, _ := m.Sides()
	return oldSide.Kind != ByVersions && newSide.Kind == ByTime
}

// MisplacedBefore reports whether, at now, the cells on the new side are
// old cells stamped there: in a move from DefaultExpiration before Start,
// when the move writes nothing on the new side (a lifetime longer than the
// default stamps a cell in the future).
func (m Move) MisplacedBefore(now time.Time) bool {
	return m.From.IsDefaultExpiration() && !m.Started(now)
}

// Filter passes the cells of the side live at now; nil passes none.
func (s Side) Filter(now time.Time) bigtable.Filter {
	if !s.Until.IsZero() && !now.Before(s.Until) {
		return nil
	}
	switch s.Kind {
	case ByTime:
		if live := s.Span.From(s.Time.LiveFrom(now)); !live.Empty() {
			return live.Filter()
		}
		return nil
	case ByVersions:
		return bigtable.ChainFilters(s.Span.Filter(), bigtable.LatestNFilter(s.Versions))
	}
	return s.Span.Filter()
}

// Expiry returns the expiry of a cell of the side stamped ts, and false
// for one that does not expire by time.
func (s Side) Expiry(ts bigtable.Timestamp) (time.Time, bool) {
	var t time.Time
	ok := false
	if s.Kind == ByTime {
		t, ok = s.Time.Expiry(ts)
	}
	if !s.Until.IsZero() && (!ok || s.Until.Before(t)) {
		return s.Until, true
	}
	return t, ok
}

// Expired returns the timestamps of the side's cells expired by time at
// now.
func (s Side) Expired(now time.Time) []Range {
	if !s.Until.IsZero() && !now.Before(s.Until) {
		return []Range{s.Span}
	}
	if s.Kind != ByTime {
		return nil
	}
	if dead := s.Span.Below(s.Time.LiveFrom(now)); !dead.Empty() {
		return []Range{dead}
	}
	return nil
}

// ExpiredIn returns the timestamps of the side's cells that expire in
// the interval (a, b]: live at a, expired at b. It is empty when b is not
// after a.
func (s Side) ExpiredIn(a, b time.Time) (Range, bool) {
	at := s.Expired(b)
	if len(at) == 0 || !b.After(a) {
		return Range{}, false
	}
	r := at[0]
	if before := s.Expired(a); len(before) > 0 {
		if before[0].Open {
			return Range{}, false
		}
		r = r.From(before[0].Hi)
	}
	return r, !r.Empty()
}

// LiveAt reports whether a cell of the side stamped ts, the rank-th newest
// of the side in its column, is live at now.
func (s Side) LiveAt(ts bigtable.Timestamp, rank int, now time.Time) bool {
	switch {
	case !s.Until.IsZero() && !now.Before(s.Until):
		return false
	case s.Kind == ByVersions:
		return rank < s.Versions
	case s.Kind == ByTime:
		e, ok := s.Time.Expiry(ts)
		return !ok || e.After(now)
	}
	return true
}

// Restamp returns the timestamp of a cell of the side stamped ts in the
// encoding of to, a time rule, keeping its expiry, and false when that
// timestamp would not fall on to's side.
func (s Side) Restamp(to Side, ts bigtable.Timestamp) (bigtable.Timestamp, bool) {
	at := to.Time.Forever()
	if e, ok := s.Expiry(ts); ok {
		ms, inRange := FloorMillis(e)
		ms -= int64(to.Time.Offset / time.Millisecond)
		if inRange != 0 || ms < 0 {
			return 0, false
		}
		at = min(bigtable.Timestamp(ms*1000), at-1000)
	}
	return at, to.Span.Contains(at)
}
