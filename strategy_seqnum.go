package ttl

import (
	"fmt"
	"math"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
)

// SequenceNumbers returns the sequence-number strategy: a cell written as
// [Version](seq) is stamped seq milliseconds after the Unix epoch
// (seq × 1000 µs, so that each sequence number is its own millisecond), the
// family's GC policy is MaxVersions(versions), and reads return the newest
// versions cells of each column.
//
// It takes only Version lifetimes. Time plays no part: a cell lives until
// enough newer versions of its column are written. Never give such a family
// an age-based GC policy: its timestamps lie in 1970, and GC would delete
// every cell at once.
//
// versions must be 1 through math.MaxInt32; otherwise the strategy is
// invalid: NewTable refuses it and Timestamp returns ErrInvalidStrategy.
func SequenceNumbers(versions int) Strategy { return sequenceNumbers{n: versions} }

type sequenceNumbers struct {
	n int
}

// maxSequence is the largest sequence number: MaxTimestamp / 1000.
const maxSequence = rules.MaxMillis

func (s sequenceNumbers) Timestamp(_ time.Time, life Lifetime) (bigtable.Timestamp, error) {
	if err := s.valid(); err != nil {
		return 0, err
	}
	if life.kind != lifeVersion {
		return 0, fmt.Errorf("%w: %v under %v, which keeps versions; use Version", ErrLifetime, life, s)
	}
	if life.n < 0 || life.n > maxSequence {
		return 0, fmt.Errorf("%w: %v under %v: sequence numbers run from 0 to %d", ErrOutOfRange, life, s, int64(maxSequence))
	}
	return bigtable.Timestamp(life.n * 1000), nil
}

func (s sequenceNumbers) Filter(time.Time) bigtable.Filter {
	if s.valid() != nil {
		return bigtable.BlockAllFilter()
	}
	return bigtable.LatestNFilter(s.n)
}

func (s sequenceNumbers) GCPolicy() bigtable.GCPolicy {
	if s.valid() != nil {
		return bigtable.NoGcPolicy()
	}
	return bigtable.MaxVersionsPolicy(s.n)
}

func (sequenceNumbers) ExpiresAt(bigtable.Timestamp) (time.Time, bool) { return time.Time{}, false }

func (s sequenceNumbers) Versions() (int, bool) { return s.n, true }

// String returns the strategy as the Go expression that makes it, such as
// "SequenceNumbers(3)".
func (s sequenceNumbers) String() string { return fmt.Sprintf("SequenceNumbers(%d)", s.n) }

func (s sequenceNumbers) valid() error {
	if s.n <= 0 || s.n > math.MaxInt32 {
		return fmt.Errorf("%w: %v: the number of versions must be 1 through %d", ErrInvalidStrategy, s, math.MaxInt32)
	}
	return nil
}

// Rule gives package rules the strategy's rule (see rules.Ruler).
func (s sequenceNumbers) Rule() (rules.Strategy, error) { return checkedRule(s) }

func (s sequenceNumbers) rule() rules.Strategy {
	return rules.Strategy{Kind: rules.ByVersions, Versions: s.n}
}

func (sequenceNumbers) supersedes(bigtable.Timestamp) (rules.Range, bool) {
	return rules.Range{}, false
}

// A cell stamped now is no sequence number.
func (sequenceNumbers) readModifyWrite(time.Time, time.Duration) (bool, []rules.Range) {
	return false, nil
}
