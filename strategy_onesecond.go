package ttl

import (
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
)

// OneSecond returns the one-second expiration strategy: a cell's timestamp
// is its expiry itself, and the family's GC policy is MaxAge(1s), so that
// GC may remove a cell one second after it expires.
//
// It takes For, Until and Forever lifetimes; it has no Default, and refuses
// Version. A cell is live while its timestamp is after now.
//
// Never write to such a family with bigtable.ServerTime or from a client
// that does not use this rule: a timestamp of "now" means "expired now",
// and GC deletes the cell within seconds. Switching a family that holds
// ordinary timestamps to this policy deletes its data.
func OneSecond() Strategy { return oneSecond{} }

type oneSecond struct {
	grace time.Duration // how long GC keeps a cell after its expiry
}

// oneSecondRule stores the expiry itself.
var oneSecondRule = rules.Time{}

func (s oneSecond) Timestamp(now time.Time, life Lifetime) (bigtable.Timestamp, error) {
	if s.grace != 0 {
		if err := s.valid(); err != nil {
			return 0, err
		}
	}
	return timestamp(oneSecondRule, now, life, s.String)
}

func (s oneSecond) Filter(now time.Time) bigtable.Filter {
	if s.grace != 0 && s.valid() != nil {
		return bigtable.BlockAllFilter()
	}
	return oneSecondRule.Filter(now)
}

// GCPolicy returns MaxAge(1s), or, with a grace, MaxAge of the
// grace if it is longer.
func (s oneSecond) GCPolicy() bigtable.GCPolicy {
	if s.valid() != nil {
		return bigtable.NoGcPolicy()
	}
	return bigtable.MaxAgePolicy(max(time.Second, s.grace))
}

func (s oneSecond) ExpiresAt(ts bigtable.Timestamp) (time.Time, bool) {
	if s.grace != 0 && s.valid() != nil {
		return time.Time{}, false
	}
	return oneSecondRule.Expiry(ts)
}

func (oneSecond) Versions() (int, bool) { return 0, false }

// String returns "OneSecond()", wrapped with its grace when it has one.
func (s oneSecond) String() string { return withGrace("OneSecond()", s.grace) }

func (s oneSecond) valid() error { return checkGrace(s.grace, s.String) }

// Rule gives package rules the strategy's rule (see rules.Ruler).
func (s oneSecond) Rule() (rules.Strategy, error) { return checkedRule(s) }

func (s oneSecond) rule() rules.Strategy {
	return rules.Strategy{Kind: rules.ByTime, Time: oneSecondRule, GraceAge: s.grace}
}

func (oneSecond) supersedes(bigtable.Timestamp) (rules.Range, bool) { return rules.Range{}, false }

// A cell stamped now has expired now.
func (oneSecond) readModifyWrite(time.Time, time.Duration) (bool, []rules.Range) { return false, nil }
