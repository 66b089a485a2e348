package ttl

import (
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
)

// Counter returns the strategy of a family of counters that expire: an
// aggregate family (Bigtable sums every int64 added to a cell), whose
// cells are windows of a counter (see Window) stamped by s, which must be
// OneSecond or DefaultExpiration. Each window's increments land on one
// timestamp, its expiry, so they merge into one cell that expires with
// its window: an expiring counter in one blind write, with no
// read-modify-write and no condition (so it works on app profiles that
// refuse single-row transactions, and batches in ApplyBulk).
// Counter of SequenceNumbers, of a Move or of a Counter is invalid:
// NewTable refuses it with ErrInvalidStrategy.
//
// Costs and rationale: docs/api-notes.md#ttlcounter.
func Counter(s Strategy) Strategy { return counterStrategy{s} }

type counterStrategy struct {
	s Strategy
}

func (c counterStrategy) Timestamp(now time.Time, life Lifetime) (bigtable.Timestamp, error) {
	if err := c.valid(); err != nil {
		return 0, err
	}
	return c.s.Timestamp(now, life)
}

func (c counterStrategy) Filter(now time.Time) bigtable.Filter {
	if c.valid() != nil {
		return bigtable.BlockAllFilter()
	}
	return c.s.Filter(now)
}

func (c counterStrategy) GCPolicy() bigtable.GCPolicy {
	if c.valid() != nil {
		return bigtable.NoGcPolicy()
	}
	return c.s.GCPolicy()
}

func (c counterStrategy) ExpiresAt(ts bigtable.Timestamp) (time.Time, bool) {
	if c.valid() != nil {
		return time.Time{}, false
	}
	return c.s.ExpiresAt(ts)
}

func (counterStrategy) Versions() (int, bool) { return 0, false }

// String returns the strategy as the Go expression that makes it, such as
// "Counter(OneSecond())".
func (c counterStrategy) String() string {
	inner := "nil"
	if c.s != nil {
		inner = c.s.String()
	}
	return "Counter(" + inner + ")"
}

func (c counterStrategy) valid() error {
	switch c.s.(type) {
	case oneSecond, defaultExpiration:
		return c.s.valid()
	case nil:
		return fmt.Errorf("%w: Counter(nil): counters count in OneSecond or DefaultExpiration", ErrInvalidStrategy)
	}
	return fmt.Errorf("%w: %v: counters count in OneSecond or DefaultExpiration, whose timestamps are expiries", ErrInvalidStrategy, c)
}

// Rule gives package rules the counter's rule (see rules.Ruler); counter
// is unexported, so the method is no part of this package's API.
func (c counterStrategy) Rule() (rules.Strategy, error) { return checkedRule(c) }

func (c counterStrategy) rule() rules.Strategy {
	var r rules.Strategy
	if c.s != nil {
		r = c.s.rule()
	}
	r.Counter = true
	return r
}

func (counterStrategy) supersedes(bigtable.Timestamp) (rules.Range, bool) {
	return rules.Range{}, false
}

// Read-modify-write has no place in an aggregate family: Mutation.Add adds.
func (counterStrategy) readModifyWrite(time.Time, time.Duration) (bool, []rules.Range) {
	return false, nil
}
