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

type oneSecond struct{}

// oneSecondRule stores the expiry itself.
var oneSecondRule = rules.Time{}

func (s oneSecond) Timestamp(now time.Time, life Lifetime) (bigtable.Timestamp, error) {
	return timestamp(oneSecondRule, now, life, s.String)
}

func (oneSecond) Filter(now time.Time) bigtable.Filter { return oneSecondRule.Filter(now) }

func (oneSecond) GCPolicy() bigtable.GCPolicy { return bigtable.MaxAgePolicy(time.Second) }

func (oneSecond) ExpiresAt(ts bigtable.Timestamp) (time.Time, bool) { return oneSecondRule.Expiry(ts) }

func (oneSecond) Versions() (int, bool) { return 0, false }

// String returns "OneSecond()".
func (oneSecond) String() string { return "OneSecond()" }

func (oneSecond) valid() error { return nil }

func (oneSecond) rule() rules.Strategy {
	return rules.Strategy{Kind: rules.ByTime, Time: oneSecondRule}
}

func (oneSecond) supersedes(bigtable.Timestamp) (rules.Range, bool) { return rules.Range{}, false }

// A cell stamped now has expired now.
func (oneSecond) readModifyWrite(time.Time, time.Duration) (bool, []rules.Range) { return false, nil }
