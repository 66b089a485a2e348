// Package rules holds the rules behind the strategies' timestamps that
// package ttl and the operators' tools both need and that services must
// not see: the time rule and its millisecond arithmetic, ranges of
// timestamps, the two sides of a strategy move, what a GC policy lets GC
// delete, and family names.
//
// It is the module's ground floor: it imports nothing of the module and
// nothing above fills it in. A strategy is a ttl.Strategy, whose rule ttl
// keeps unexported; [Of] is the one way the module's other packages read
// it, through the Rule method ([Ruler]) of ttl's strategy types. The
// sentinels the floors below ttl return are declared here, and ttl
// re-exports them under the same names.
package rules

import (
	"math"
	"time"

	"cloud.google.com/go/bigtable"
)

// MaxMillis is MaxTimestamp in milliseconds: the largest millisecond whose
// microsecond count fits an int64.
const MaxMillis = math.MaxInt64 / 1000

// MaxTimestamp is the largest timestamp Bigtable accepts: math.MaxInt64
// microseconds rounded down to a whole millisecond, in the year 294,247.
const MaxTimestamp bigtable.Timestamp = MaxMillis * 1000

// RealTime is the smallest timestamp taken for a real instant rather than
// a sequence number: 2000-01-01T00:00:00Z. Sequence numbers stay far below
// it (it would be sequence number 946,684,800,000).
const RealTime bigtable.Timestamp = 946_684_800_000_000

// FloorMillis returns t in whole milliseconds since the Unix epoch, rounded
// down. inRange is -1 when t is before the epoch, +1 when the result would
// pass MaxMillis, and 0 otherwise; ms is only meaningful when it is 0.
func FloorMillis(t time.Time) (ms int64, inRange int) {
	sec := t.Unix()
	switch {
	case sec < 0:
		return 0, -1
	case sec > MaxMillis/1000:
		return 0, +1
	}
	ms = sec*1000 + int64(t.Nanosecond()/int(time.Millisecond))
	if ms > MaxMillis {
		return 0, +1
	}
	return ms, 0
}

// Time is the one rule both time strategies share: a cell's timestamp is
// its expiry, rounded down to the millisecond, minus Offset; a cell is
// live while timestamp + Offset > now. OneSecond has Offset 0,
// DefaultExpiration(d) has Offset d. Offset is a whole, non-negative
// number of milliseconds.
//
// The rule's default lifetime is its offset: a plain write at now gets the
// timestamp now. With Offset 0 that cell would be born expired, so a zero
// offset has no default.
type Time struct {
	Offset time.Duration
}

// ServerTimestamps reports whether a cell stamped with the server's clock,
// as read-modify-write stamps it, lives as the family intends: at a
// timestamp of now it lives while now + Offset > now, so only with an
// offset.
func (r Time) ServerTimestamps() bool { return r.Offset > 0 }

// Forever is the timestamp of a Forever cell: the largest valid timestamp
// minus the offset.
func (r Time) Forever() bigtable.Timestamp {
	return MaxTimestamp - bigtable.Timestamp(r.Offset/time.Microsecond)
}

// LiveFrom returns the smallest timestamp whose cell is live at now: the
// first whole millisecond after now − Offset, but never past a Forever
// cell's, which is always live.
func (r Time) LiveFrom(now time.Time) bigtable.Timestamp {
	forever := r.Forever()
	ms, inRange := FloorMillis(now.Add(-r.Offset))
	switch {
	case inRange < 0:
		return 0
	case inRange > 0 || ms+1 >= int64(forever/1000):
		return forever
	}
	return bigtable.Timestamp((ms + 1) * 1000)
}

// Expired returns the timestamps of the cells expired at now: none, or
// those before LiveFrom.
func (r Time) Expired(now time.Time) []Range {
	if lf := r.LiveFrom(now); lf > 0 {
		return []Range{{Hi: lf}}
	}
	return nil
}

// Filter passes the cells live at now.
func (r Time) Filter(now time.Time) bigtable.Filter {
	return bigtable.TimestampRangeFilterMicros(r.LiveFrom(now), 0)
}

// Expiry returns the instant from which a cell stamped ts is hidden, and
// false for a Forever cell.
func (r Time) Expiry(ts bigtable.Timestamp) (time.Time, bool) {
	if ts >= r.Forever() {
		return time.Time{}, false
	}
	return time.UnixMicro(int64(ts)).Add(r.Offset), true
}

// Range is the timestamps [Lo, Hi), or from Lo on when Open; the zero
// value is empty.
type Range struct {
	Lo, Hi bigtable.Timestamp
	Open   bool
}

// Empty reports whether the range holds no timestamp.
func (r Range) Empty() bool { return !r.Open && r.Hi <= r.Lo }

// Contains reports whether ts is in the range.
func (r Range) Contains(ts bigtable.Timestamp) bool { return ts >= r.Lo && (r.Open || ts < r.Hi) }

// Below returns the part of the range before ts.
func (r Range) Below(ts bigtable.Timestamp) Range {
	if r.Open || r.Hi > ts {
		return Range{Lo: r.Lo, Hi: ts}
	}
	return r
}

// From returns the part of the range from ts on.
func (r Range) From(ts bigtable.Timestamp) Range {
	r.Lo = max(r.Lo, ts)
	return r
}

// Filter passes the cells of the range.
func (r Range) Filter() bigtable.Filter {
	if r.Open {
		return bigtable.TimestampRangeFilterMicros(r.Lo, 0) // 0: no upper bound
	}
	return bigtable.TimestampRangeFilterMicros(r.Lo, r.Hi)
}

// Millisecond returns the range of the one millisecond that starts at ts:
// the cells stamped exactly ts, whatever their microseconds would be. The
// last millisecond has no end.
func Millisecond(ts bigtable.Timestamp) Range {
	if ts > MaxTimestamp-1000 {
		return Range{Lo: ts, Open: true}
	}
	return Range{Lo: ts, Hi: ts + 1000}
}
