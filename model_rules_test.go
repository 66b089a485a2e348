package ttl_test

import (
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
)

// DESIGN.md's rules as the reference model applies them: for each family's
// rule (the strategy, or none), the timestamp a write gets or the error
// that refuses it (model.timestamp), whether a stored cell is returned at
// an instant (model.live), and the expiry of a cell read (model.expiry).
// Everything else in the model follows from these.

const (
	modelDefault  = 90 * time.Second // the d of the model's DefaultExpiration
	modelVersions = 2                // the n of the model's SequenceNumbers
)

// rule is the visibility rule of one family of a model table.
type rule uint8

const (
	ruleOneSecond rule = iota
	ruleDefault
	ruleSequence
	ruleNone // no strategy
)

func (r rule) strategy() ttl.Strategy {
	switch r {
	case ruleOneSecond:
		return ttl.OneSecond()
	case ruleDefault:
		return ttl.DefaultExpiration(modelDefault)
	case ruleSequence:
		return ttl.SequenceNumbers(modelVersions)
	}
	return nil
}

// offset is the time between a cell's timestamp and its expiry.
func (r rule) offset() time.Duration {
	if r == ruleDefault {
		return modelDefault
	}
	return 0
}

// floorMs is t in whole milliseconds since the epoch, rounded down. The
// model's instants lie within ±300,000 years, where this cannot overflow.
func floorMs(t time.Time) int64 { return t.Unix()*1000 + int64(t.Nanosecond())/1e6 }

// timestamp is DESIGN.md's write rule: the timestamp a cell written at now
// with life gets in family, or the error that refuses it.
func (m *model) timestamp(family string, l lifeSpec, now time.Time) (int64, error) {
	r := m.v.families[family]
	switch r {
	case ruleNone:
		if l.kind != lkDefault {
			return 0, ttl.ErrLifetime
		}
		return floorMs(now) * 1000, nil
	case ruleSequence:
		if l.kind != lkVersion {
			return 0, ttl.ErrLifetime
		}
		if l.seq < 0 || l.seq > maxSeq {
			return 0, ttl.ErrOutOfRange
		}
		return l.seq * 1000, nil
	}
	offset := r.offset().Milliseconds()
	var expiry time.Time
	switch l.kind {
	case lkForever:
		return int64(ttl.MaxTimestamp) - offset*1000, nil
	case lkVersion:
		return 0, ttl.ErrLifetime
	case lkDefault:
		if r == ruleOneSecond {
			return 0, ttl.ErrLifetime
		}
		expiry = now.Add(r.offset())
	case lkFor:
		expiry = now.Add(l.d)
	case lkUntil:
		expiry = l.t
	}
	e := floorMs(expiry) // never late: rounded down
	if !time.UnixMilli(e).After(now) {
		return 0, ttl.ErrExpired // never born expired
	}
	if e >= maxSeq || e-offset < 0 { // the last millisecond is Forever's
		return 0, ttl.ErrOutOfRange
	}
	if !time.UnixMilli(e).After(now.Add(m.v.margin)) {
		return 0, ttl.ErrExpired // born hidden by the read margin
	}
	return (e - offset) * 1000, nil
}

// live is DESIGN.md's read rule: whether cells[i] of a column of family is
// returned at instant at.
func (m *model) live(family string, cells []storedCell, i int, at time.Time) bool {
	switch m.v.families[family] {
	case ruleOneSecond:
		return time.UnixMicro(cells[i].ts).After(at)
	case ruleDefault:
		return time.UnixMicro(cells[i].ts).Add(modelDefault).After(at)
	case ruleSequence:
		return i < modelVersions
	}
	return true
}

// expiry is DESIGN.md's expiry of a cell read: the instant from which it
// is hidden, and false for one that does not expire by time (Forever,
// stored at MaxTimestamp less the offset; a sequence number; a family
// without a strategy).
func (m *model) expiry(it bigtable.ReadItem) (time.Time, bool) {
	fam, _, _ := strings.Cut(it.Column, ":")
	r := m.v.families[fam]
	if r != ruleOneSecond && r != ruleDefault || int64(it.Timestamp) >= int64(ttl.MaxTimestamp)-r.offset().Microseconds() {
		return time.Time{}, false
	}
	return time.UnixMicro(int64(it.Timestamp)).Add(r.offset()), true
}
