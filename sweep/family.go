package sweep

import (
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
)

// A family is one swept family: its strategy, and the sides of its rule
// under which cells expire at an instant (one for a time strategy, those
// of a move that do).
type family struct {
	name  string
	s     ttl.Strategy
	rule  rules.Strategy
	sides []rules.Side // rule.Expiring()
}

// newFamily checks that the family can be swept: a valid name and a
// strategy under which cells expire at an instant.
func newFamily(name string, s ttl.Strategy) (family, error) {
	if err := rules.CheckFamilyName(name); err != nil {
		return family{}, fmt.Errorf("%w: %v", ttl.ErrInvalidStrategy, err)
	}
	r, err := rules.Of(s)
	if err != nil {
		return family{}, fmt.Errorf("%w (family %q)", err, name)
	}
	f := family{name: name, s: s, rule: r, sides: r.Expiring()}
	switch {
	case r.Kind == rules.ByVersions:
		return family{}, fmt.Errorf("%w: family %q (%v): a sweep reports cells that expire at an instant, and under SequenceNumbers none does: a version is superseded by newer ones, at no time Bigtable records; read the versions with ttl.Table instead",
			ttl.ErrInvalidStrategy, name, s)
	case r.Kind == rules.None:
		return family{}, fmt.Errorf("%w: family %q has no strategy: its cells do not expire at an instant, and a sweep has nothing to report", ttl.ErrInvalidStrategy, name)
	case len(f.sides) == 0:
		return family{}, fmt.Errorf("%w: family %q (%v): no cell of the move expires at an instant (its old cells live for ever, its new ones are versions), and a sweep has nothing to report",
			ttl.ErrInvalidStrategy, name, s)
	}
	return f, nil
}

// expiredIn returns the timestamps of the family's cells that expire in
// (a, b].
func (f family) expiredIn(a, b time.Time) []rules.Range {
	var out []rules.Range
	for _, side := range f.sides {
		if r, ok := side.ExpiredIn(a, b); ok {
			out = append(out, r)
		}
	}
	return out
}

// expiredAt returns the timestamps of the family's cells expired at t:
// those a sweep may delete.
func (f family) expiredAt(t time.Time) []rules.Range {
	var out []rules.Range
	for _, side := range f.sides {
		out = append(out, side.Expired(t)...)
	}
	return out
}

// expiry returns the expiry of the family's cell stamped ts, by the rule
// of its side, and false for a cell that does not expire at an instant.
func (f family) expiry(ts bigtable.Timestamp) (time.Time, bool) {
	for _, side := range f.sides {
		if side.Span.Contains(ts) {
			return side.Expiry(ts)
		}
	}
	return time.Time{}, false
}

// keep returns how long after its expiry GC may delete a cell of the
// family under policy p, and false when GC never deletes one by age: the
// age its schedule must keep (rules.Strategy.ScheduleAge).
func (f family) keep(p bigtable.GCPolicy) (time.Duration, bool) { return f.rule.ScheduleAge(p) }
