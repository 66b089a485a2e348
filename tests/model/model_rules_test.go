package model_test

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
	ruleMove // the variant's Move (model_moves_rules_test.go)
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
	switch r := m.v.families[family]; r {
	case ruleNone:
		if l.kind != lkDefault {
			return 0, ttl.ErrLifetime
		}
		return floorMs(now) * 1000, nil
	case ruleSequence:
		return versionStamp(l)
	case ruleMove:
		return m.v.move.timestamp(l, now) // move variants have no read margin
	default:
		return timeStamp(r.offset(), l, now, m.v.margin)
	}
}

// versionStamp is SequenceNumbers' write rule.
func versionStamp(l lifeSpec) (int64, error) {
	if l.kind != lkVersion {
		return 0, ttl.ErrLifetime
	}
	if l.seq < 0 || l.seq > maxSeq {
		return 0, ttl.ErrOutOfRange
	}
	return l.seq * 1000, nil
}

// timeStamp is the write rule of a time strategy whose timestamps are the
// expiry less offset (OneSecond: 0, DefaultExpiration(d): d), for a table
// whose reads look margin ahead. Default is For(offset), which OneSecond
// does not have.
func timeStamp(offset time.Duration, l lifeSpec, now time.Time, margin time.Duration) (int64, error) {
	off := offset.Milliseconds()
	var expiry time.Time
	switch l.kind {
	case lkForever:
		return int64(ttl.MaxTimestamp) - off*1000, nil
	case lkVersion:
		return 0, ttl.ErrLifetime
	case lkDefault:
		if offset == 0 {
			return 0, ttl.ErrLifetime
		}
		expiry = now.Add(offset)
	case lkFor:
		expiry = now.Add(l.d)
	case lkUntil:
		expiry = l.t
	}
	e := floorMs(expiry) // never late: rounded down
	if !time.UnixMilli(e).After(now) {
		return 0, ttl.ErrExpired // never born expired
	}
	if e >= maxSeq || e-off < 0 { // the last millisecond is Forever's
		return 0, ttl.ErrOutOfRange
	}
	if !time.UnixMilli(e).After(now.Add(margin)) {
		return 0, ttl.ErrExpired // born hidden by the read margin
	}
	return (e - off) * 1000, nil
}

// live is DESIGN.md's read rule: whether cells[i] of a column of family is
// returned at instant at.
func (m *model) live(family string, cells []storedCell, i int, at time.Time) bool {
	switch r := m.v.families[family]; r {
	case ruleOneSecond, ruleDefault:
		return timeLive(r.offset(), cells[i].ts, at)
	case ruleSequence:
		return i < modelVersions
	case ruleMove:
		return m.v.move.live(cells, i, at)
	}
	return true
}

// timeLive is a time strategy's read rule: ts + offset > at.
func timeLive(offset time.Duration, ts int64, at time.Time) bool {
	return time.UnixMicro(ts).Add(offset).After(at)
}

// expiry is DESIGN.md's expiry of a cell read: the instant from which it
// is hidden, and false for one that does not expire by time (Forever,
// stored at MaxTimestamp less the offset; a sequence number; a family
// without a strategy).
func (m *model) expiry(it bigtable.ReadItem) (time.Time, bool) {
	fam, _, _ := strings.Cut(it.Column, ":")
	switch r := m.v.families[fam]; r {
	case ruleOneSecond, ruleDefault:
		return timeExpiry(r.offset(), int64(it.Timestamp))
	case ruleMove:
		return m.v.move.expiry(int64(it.Timestamp))
	}
	return time.Time{}, false
}

// timeExpiry is a time strategy's expiry of a cell stamped ts: ts +
// offset, and none for Forever's timestamp.
func timeExpiry(offset time.Duration, ts int64) (time.Time, bool) {
	if ts >= int64(ttl.MaxTimestamp)-offset.Microseconds() {
		return time.Time{}, false
	}
	return time.UnixMicro(ts).Add(offset), true
}
