package rules

import (
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
)

// start is the instant the tests' moves start at, and bStart its
// timestamp; both whole milliseconds.
var (
	start  = time.Date(2030, 5, 1, 0, 0, 0, 0, time.UTC)
	bStart = bigtable.Time(start)
)

// micros is d as a number of microseconds, a span of timestamps.
func micros(d time.Duration) bigtable.Timestamp { return bigtable.Timestamp(d / time.Microsecond) }

// sameFilter reports whether two filters are the same, as they print: nil
// (none) only equals nil.
func sameFilter(a, b bigtable.Filter) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.String() == b.String()
}

func filterText(f bigtable.Filter) string {
	if f == nil {
		return "nil"
	}
	return f.String()
}

// TestRange checks the ranges of timestamps: empty, what they contain,
// their parts below and from a timestamp, their filters and the range of
// one millisecond.
func TestRange(t *testing.T) {
	closed := Range{Lo: 1000, Hi: 3000}
	open := Range{Lo: 1000, Open: true}
	for _, tt := range []struct {
		r     Range
		empty bool
	}{
		{Range{}, true},
		{Range{Lo: 5000, Hi: 5000}, true},
		{Range{Lo: 5000, Hi: 4000}, true},
		{Range{Lo: 5000, Hi: 5001}, false},
		{Range{Open: true}, false},
		{Range{Lo: MaxTimestamp, Open: true}, false},
	} {
		if got := tt.r.Empty(); got != tt.empty {
			t.Errorf("%+v.Empty() = %v", tt.r, got)
		}
	}
	for _, tt := range []struct {
		r    Range
		ts   bigtable.Timestamp
		want bool
	}{
		{closed, 999, false}, {closed, 1000, true}, {closed, 2999, true}, {closed, 3000, false},
		{open, 999, false}, {open, 1000, true}, {open, MaxTimestamp, true},
		{Range{}, 0, false},
	} {
		if got := tt.r.Contains(tt.ts); got != tt.want {
			t.Errorf("%+v.Contains(%d) = %v", tt.r, tt.ts, got)
		}
	}
	for _, tt := range []struct {
		name      string
		got, want Range
	}{
		{"closed below inside", closed.Below(2000), Range{Lo: 1000, Hi: 2000}},
		{"closed below past its end", closed.Below(4000), closed},
		{"closed below its end", closed.Below(3000), closed},
		{"open below", open.Below(2000), Range{Lo: 1000, Hi: 2000}},
		{"closed from inside", closed.From(2000), Range{Lo: 2000, Hi: 3000}},
		{"closed from before it", closed.From(500), closed},
		{"open from", open.From(2000), Range{Lo: 2000, Open: true}},
		{"a millisecond", Millisecond(7000), Range{Lo: 7000, Hi: 8000}},
		{"the last whole millisecond", Millisecond(MaxTimestamp - 1000), Range{Lo: MaxTimestamp - 1000, Hi: MaxTimestamp}},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, tt.got, tt.want)
		}
	}
	// Nothing below a range's start, nothing from past its end.
	for _, r := range []Range{closed.Below(1000), closed.Below(500), open.Below(1000), closed.From(3000), closed.From(5000)} {
		if !r.Empty() {
			t.Errorf("%+v is not empty", r)
		}
	}
	// The last millisecond has no end (its end would pass the largest
	// timestamp).
	if last := Millisecond(MaxTimestamp); last.Lo != MaxTimestamp || !last.Open || last.Empty() {
		t.Errorf("Millisecond(MaxTimestamp) = %+v, want from MaxTimestamp on", last)
	}
	if !Millisecond(MaxTimestamp).Contains(MaxTimestamp) || Millisecond(7000).Contains(8000) || !Millisecond(7000).Contains(7999) {
		t.Error("a millisecond's range holds the wrong timestamps")
	}
	// A filter passes the range: [Lo, Hi), or from Lo on (0: no end).
	if f, want := closed.Filter(), bigtable.TimestampRangeFilterMicros(1000, 3000); !sameFilter(f, want) {
		t.Errorf("closed filter %s, want %s", f, want)
	}
	if f, want := open.Filter(), bigtable.TimestampRangeFilterMicros(1000, 0); !sameFilter(f, want) {
		t.Errorf("open filter %s, want %s", f, want)
	}
}

// TestTime checks the time rule: a cell stamped ts is live while
// ts + Offset > now, a cell stamped Forever (the largest timestamp minus
// the offset) always is, and the rule's filter passes the live cells.
func TestTime(t *testing.T) {
	oneSecond, hour := Time{}, Time{Offset: time.Hour}
	if oneSecond.ServerTimestamps() || !hour.ServerTimestamps() {
		t.Error("ServerTimestamps: only a rule with an offset keeps a cell stamped now live")
	}
	if oneSecond.Forever() != MaxTimestamp || hour.Forever() != MaxTimestamp-3_600_000_000 {
		t.Errorf("Forever = %d, %d", oneSecond.Forever(), hour.Forever())
	}

	for _, tt := range []struct {
		name string
		r    Time
		now  time.Time
		want bigtable.Timestamp
	}{
		// A cell stamped now expires now: the next millisecond lives.
		{"on a millisecond", oneSecond, start, bStart + 1000},
		{"within a millisecond", oneSecond, start.Add(999 * time.Microsecond), bStart + 1000},
		{"the next millisecond", oneSecond, start.Add(time.Millisecond), bStart + 2000},
		{"an offset", hour, start, bStart - 3_600_000_000 + 1000},
		// now − Offset before 1970: every timestamp lives.
		{"before the epoch", hour, time.Unix(1800, 0), 0},
		{"at the epoch", hour, time.Unix(3600, 0), 1000},
		// Past the last timestamp: the Forever cells alone.
		{"the end of time", oneSecond, time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC), MaxTimestamp},
		{"the last millisecond", oneSecond, time.UnixMilli(MaxMillis - 1), MaxTimestamp},
		{"the one before", oneSecond, time.UnixMilli(MaxMillis - 2), MaxTimestamp - 1000},
		{"the last of an offset", hour, time.UnixMilli(MaxMillis - 1), hour.Forever()},
		{"the one before with an offset", hour, time.UnixMilli(MaxMillis - 2), hour.Forever() - 1000},
	} {
		if got := tt.r.LiveFrom(tt.now); got != tt.want {
			t.Errorf("%s: LiveFrom(%v) = %d, want %d", tt.name, tt.now, got, tt.want)
		}
	}

	// LiveFrom splits the timestamps where Expiry says: the cell stamped
	// LiveFrom lives at now, the one a millisecond before does not.
	for _, r := range []Time{oneSecond, hour, {Offset: 1500 * time.Millisecond}} {
		for _, now := range []time.Time{start, start.Add(time.Microsecond), start.Add(-999 * time.Microsecond), time.Unix(7200, 5)} {
			lf := r.LiveFrom(now)
			if e, ok := r.Expiry(lf); ok && !e.After(now) {
				t.Errorf("%+v at %v: the cell stamped LiveFrom %d expires at %v", r, now, lf, e)
			}
			if lf >= 1000 {
				if e, ok := r.Expiry(lf - 1000); !ok || e.After(now) {
					t.Errorf("%+v at %v: the cell stamped %d, before LiveFrom, lives until %v", r, now, lf-1000, e)
				}
			}
		}
	}

	if got, want := oneSecond.Expired(start), []Range{{Hi: bStart + 1000}}; len(got) != 1 || got[0] != want[0] {
		t.Errorf("Expired = %+v, want %+v", got, want)
	}
	if got := hour.Expired(time.Unix(1800, 0)); got != nil {
		t.Errorf("Expired before the epoch = %+v, want none", got)
	}
	if f, want := hour.Filter(start), bigtable.TimestampRangeFilterMicros(hour.LiveFrom(start), 0); !sameFilter(f, want) {
		t.Errorf("Filter = %s, want %s", f, want)
	}

	for _, tt := range []struct {
		r      Time
		ts     bigtable.Timestamp
		want   time.Time
		expire bool
	}{
		{hour, bStart, start.Add(time.Hour), true},
		{oneSecond, bStart, start, true},
		{hour, 0, time.Unix(3600, 0), true},
		{hour, hour.Forever() - 1000, time.UnixMilli(MaxMillis - 1), true},
		{hour, hour.Forever(), time.Time{}, false},
		{hour, MaxTimestamp, time.Time{}, false},
		{oneSecond, MaxTimestamp, time.Time{}, false},
	} {
		got, ok := tt.r.Expiry(tt.ts)
		if ok != tt.expire || !got.Equal(tt.want) {
			t.Errorf("%+v.Expiry(%d) = %v, %v; want %v, %v", tt.r, tt.ts, got, ok, tt.want, tt.expire)
		}
	}
}

// TestIsDefaultExpiration checks which strategies are DefaultExpiration.
func TestIsDefaultExpiration(t *testing.T) {
	for _, tt := range []struct {
		s    Strategy
		want bool
	}{
		{Strategy{Kind: ByTime, Time: Time{Offset: time.Hour}}, true},
		{Strategy{Kind: ByTime}, false}, // OneSecond
		{Strategy{Kind: ByVersions, Versions: 2}, false},
		{Strategy{Kind: None}, false},
	} {
		if got := tt.s.IsDefaultExpiration(); got != tt.want {
			t.Errorf("%+v.IsDefaultExpiration() = %v", tt.s, got)
		}
	}
}
