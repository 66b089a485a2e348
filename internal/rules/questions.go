package rules

import (
	"time"

	"cloud.google.com/go/bigtable"
)

// The questions every package asks of a strategy's sides, each answered
// once here: package ttl (what a table schedules), policy (the GC a
// schedule needs), sweep (what a sweep reports, whose entries it may
// delete) and move (the entries a move writes). No package above derives
// them again from a Kind.

// ExpiresAtInstant reports whether a cell of the side can expire at an
// instant: under a time rule, or on a side with an end (Until).
func (s Side) ExpiresAtInstant() bool { return s.Kind == ByTime || !s.Until.IsZero() }

// Expiring returns the sides of s whose cells expire at an instant, each
// with its span of timestamps: the one of a time rule, those of a move
// that do; none when no cell of s ever does.
func (s Strategy) Expiring() []Side {
	switch s.Kind {
	case ByTime:
		return []Side{{Kind: ByTime, Time: s.Time, Span: Range{Open: true}}}
	case Moving:
		var out []Side
		oldSide, newSide, _ := s.Move.Sides()
		for _, side := range [2]Side{oldSide, newSide} {
			if side.ExpiresAtInstant() {
				out = append(out, side)
			}
		}
		return out
	}
	return nil
}

// ExpiresAtInstant reports whether some cell of s can expire at an
// instant: whether a table writes schedule entries for the family, a
// schedule may index it, and a sweep has something to report.
func (s Strategy) ExpiresAtInstant() bool { return len(s.Expiring()) > 0 }

// Grace returns how much longer than its rule the family's GC keeps an
// expired cell: its GraceAge, or a move's longer of From's and To's.
func (s Strategy) Grace() time.Duration {
	if s.Kind == Moving {
		return max(s.Move.From.GraceAge, s.Move.To.GraceAge)
	}
	return s.GraceAge
}

// GCAge returns the age from which the GC policy of s lets GC delete a
// cell, and false when it must collect none by age. A time rule's is its
// offset plus its grace (a second at least); a move's between time rules
// is the longer offset plus the longer grace, in whole seconds. A move
// whose rules disagree (sequence numbers and times, old cells with no
// expiry or an end) has none, nor have sequence numbers.
func (s Strategy) GCAge() (time.Duration, bool) {
	switch s.Kind {
	case ByTime:
		if s.Time.Offset == 0 {
			return max(time.Second, s.GraceAge), true
		}
		return s.Time.Offset + s.GraceAge, true
	case Moving:
		oldSide, newSide, _ := s.Move.Sides()
		if oldSide.Kind != ByTime || newSide.Kind != ByTime || !oldSide.Until.IsZero() {
			return 0, false
		}
		age := max(oldSide.Time.Offset, newSide.Time.Offset) + s.Grace()
		return (age + time.Second - 1).Truncate(time.Second), true
	}
	return 0, false
}

// ScheduleAge returns the age a schedule's GC must keep an entry of the
// family for, the family's GC policy being p: how long after its expiry
// GC may delete an expired cell of s, at the shortest over its expiring
// sides. A side whose cells expire at one instant (an Until) keeps real
// write times, which GC may reach before then: 0. It reports false when
// GC deletes none by age (or s has no cell that expires at an instant):
// the schedule must then keep its entries until deleted.
func (s Strategy) ScheduleAge(p bigtable.GCPolicy) (time.Duration, bool) {
	age, ok := GCAge(p)
	sides := s.Expiring()
	if !ok || len(sides) == 0 {
		return 0, false
	}
	shortest := age
	for _, side := range sides {
		k := time.Duration(0)
		if side.Kind == ByTime && side.Until.IsZero() {
			k = max(age-side.Time.Offset, 0)
		}
		shortest = min(shortest, k)
	}
	return shortest, true
}

// MayHoldEntries reports whether a family whose GC policy is p may hold
// cells with schedule entries: unless p is one no strategy that expires
// cells at an instant has. Those collect by age, or, in a move, not at
// all; a version limit alone, or an intersection, is no such policy.
func MayHoldEntries(p bigtable.GCPolicy) bool {
	if _, aged := GCAge(p); aged {
		return true
	}
	return p == nil || p == bigtable.NoGcPolicy()
}

// OwnsEntries reports whether a sweep of the families swept reports true
// for may delete the schedule entries it serves, in a table whose
// families have the GC policies given: when it sweeps every family that
// may hold cells with entries (MayHoldEntries). An entry names a row and
// a second, not a family: a sweep of some families that deleted it would
// hide the cells of the others from a scheduled sweep of those.
func OwnsEntries(policies map[string]bigtable.GCPolicy, swept func(family string) bool) bool {
	for name, p := range policies {
		if MayHoldEntries(p) && !swept(name) {
			return false
		}
	}
	return true
}

// Reschedules reports whether the move gives cells written before it
// another expiry than their old rule did: an Old that shortens it, or
// gives one to cells that had none. Their schedule entries, if any, name
// another second than the one they now expire in.
func (m Move) Reschedules() bool {
	oldSide, _, _ := m.Sides()
	if !oldSide.ExpiresAtInstant() {
		return false
	}
	from := sideOf(m.From)
	return from.Kind != ByTime || oldSide.Kind != ByTime || oldSide.Time != from.Time || !oldSide.Until.IsZero()
}

// Rescheduled returns the expiry under the move of an old cell stamped ts
// (on the old side), and true when the move changed it: when its old
// rule gave it another expiry, or none.
func (m Move) Rescheduled(ts bigtable.Timestamp) (time.Time, bool) {
	oldSide, _, _ := m.Sides()
	if !oldSide.Span.Contains(ts) {
		return time.Time{}, false
	}
	now, ok := oldSide.Expiry(ts)
	if !ok {
		return time.Time{}, false
	}
	was, had := sideOf(m.From).Expiry(ts)
	return now, !had || !was.Equal(now)
}
