package ttl

import (
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
)

// Grace returns s with a grace of g: the family's GC policy keeps each
// expired cell stored for g after its expiry (OneSecond's MaxAge(1s)
// becomes MaxAge(g); DefaultExpiration(d)'s MaxAge(d) becomes
// MaxAge(d+g)), while timestamps, reads and ExpiresAt are s's own. The
// expired cells are hidden from the library's readers as before; they stay
// stored so that a sweep (package sweep) that keeps within g finds every
// one of them, and can report it.
// s must be OneSecond, DefaultExpiration or a Counter of one, and g
// positive: otherwise NewTable refuses it with ErrInvalidStrategy.
//
// Costs and rationale: docs/api-notes.md#ttlgrace.
func Grace(s Strategy, g time.Duration) Strategy {
	switch s := s.(type) {
	case oneSecond:
		s.grace = g
		return s
	case defaultExpiration:
		s.grace = g
		return s
	case counterStrategy:
		return counterStrategy{Grace(s.s, g)}
	}
	return badGrace{s, g}
}

// badGrace is the grace of a strategy that cannot have one: invalid.
type badGrace struct {
	s Strategy
	g time.Duration
}

func (b badGrace) Timestamp(time.Time, Lifetime) (bigtable.Timestamp, error) { return 0, b.valid() }

func (badGrace) Filter(time.Time) bigtable.Filter { return bigtable.BlockAllFilter() }

func (badGrace) GCPolicy() bigtable.GCPolicy { return bigtable.NoGcPolicy() }

func (badGrace) ExpiresAt(bigtable.Timestamp) (time.Time, bool) { return time.Time{}, false }

func (badGrace) Versions() (int, bool) { return 0, false }

// String returns "Grace(s, g)".
func (b badGrace) String() string {
	inner := "nil"
	if b.s != nil {
		inner = b.s.String()
	}
	return fmt.Sprintf("Grace(%s, %v)", inner, b.g)
}

func (b badGrace) valid() error {
	return fmt.Errorf("%w: %v: a grace is for OneSecond, DefaultExpiration and their counters, whose cells expire at an instant; a move's grace is its sides'", ErrInvalidStrategy, b)
}

// Rule gives package rules the error that makes the strategy invalid
// (see rules.Ruler).
func (b badGrace) Rule() (rules.Strategy, error) { return checkedRule(b) }

func (b badGrace) rule() rules.Strategy { return rules.Strategy{} }

func (badGrace) supersedes(bigtable.Timestamp) (rules.Range, bool) { return rules.Range{}, false }

func (badGrace) readModifyWrite(time.Time, time.Duration) (bool, []rules.Range) { return false, nil }
