package ttl

import (
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
)

// DefaultExpiration returns the default-expiration strategy: the family's
// GC policy is MaxAge(d), and a cell that should expire at a given instant
// is stamped d before it, so that timestamp + d = expiry.
//
// A plain write ([Default]) therefore carries its real write time; a cell
// that should live less than d carries an earlier timestamp, one that
// should live longer a later (future) one, and [Forever] is stored at
// MaxTimestamp − d. A cell is live while its timestamp + d is after now.
//
// This is the strategy to migrate an existing family to: cells written
// before, with their real write times, simply live for d. It is also the
// only managed family where read-modify-write (server timestamps) is safe.
//
// d must be a positive whole number of milliseconds; otherwise the strategy
// is invalid: NewTable refuses it and Timestamp returns ErrInvalidStrategy.
func DefaultExpiration(d time.Duration) Strategy { return defaultExpiration{d: d} }

type defaultExpiration struct {
	d     time.Duration
	grace time.Duration // how long GC keeps a cell after its expiry
}

func (s defaultExpiration) Timestamp(now time.Time, life Lifetime) (bigtable.Timestamp, error) {
	if err := s.valid(); err != nil {
		return 0, err
	}
	return timestamp(rules.Time{Offset: s.d}, now, life, s.String)
}

func (s defaultExpiration) Filter(now time.Time) bigtable.Filter {
	if s.valid() != nil {
		return bigtable.BlockAllFilter()
	}
	return rules.Time{Offset: s.d}.Filter(now)
}

func (s defaultExpiration) GCPolicy() bigtable.GCPolicy {
	if s.valid() != nil {
		return bigtable.NoGcPolicy()
	}
	return bigtable.MaxAgePolicy(s.d + s.grace)
}

func (s defaultExpiration) ExpiresAt(ts bigtable.Timestamp) (time.Time, bool) {
	if s.valid() != nil {
		return time.Time{}, false
	}
	return rules.Time{Offset: s.d}.Expiry(ts)
}

func (defaultExpiration) Versions() (int, bool) { return 0, false }

// String returns the strategy as the Go expression that makes it, such as
// "DefaultExpiration(48h0m0s)", wrapped with its grace when it has one.
func (s defaultExpiration) String() string {
	return withGrace(fmt.Sprintf("DefaultExpiration(%v)", s.d), s.grace)
}

func (s defaultExpiration) valid() error {
	if s.d <= 0 || s.d%time.Millisecond != 0 {
		return fmt.Errorf("%w: %v: the default must be a positive whole number of milliseconds", ErrInvalidStrategy, s)
	}
	return checkGrace(s.grace, s.String)
}

// Rule gives package rules the strategy's rule (see rules.Ruler).
func (s defaultExpiration) Rule() (rules.Strategy, error) { return checkedRule(s) }

func (s defaultExpiration) rule() rules.Strategy {
	return rules.Strategy{Kind: rules.ByTime, Time: rules.Time{Offset: s.d}, GraceAge: s.grace}
}

func (defaultExpiration) supersedes(bigtable.Timestamp) (rules.Range, bool) {
	return rules.Range{}, false
}

// A cell stamped now lives for the default.
func (s defaultExpiration) readModifyWrite(now time.Time, margin time.Duration) (bool, []rules.Range) {
	return true, rules.Time{Offset: s.d}.Expired(now.Add(margin))
}
