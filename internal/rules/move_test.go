package rules

import (
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
)

// The strategies of the tests' moves, as their rules.
var (
	none      = Strategy{Kind: None}
	oneSecond = Strategy{Kind: ByTime}
	seq2      = Strategy{Kind: ByVersions, Versions: 2}
	seq3      = Strategy{Kind: ByVersions, Versions: 3}
)

func defaultExp(d time.Duration) Strategy { return Strategy{Kind: ByTime, Time: Time{Offset: d}} }

// The Old lifetimes of the tests' moves.
var (
	oldFor    = Old{Kind: OldFor, For: 30 * time.Minute}
	until     = start.Add(48 * time.Hour)
	oldUntil  = Old{Kind: OldUntil, Until: until}
	oldNever  = Old{Kind: OldForever}
	oldDefalt = Old{Kind: OldDefault}
	skew      = time.Minute
)

// The spans of timestamps on either side of a boundary: below it and
// from it on.
var (
	beforeStart = Range{Hi: bStart}
	fromStart   = Range{Lo: bStart, Open: true}
	seqNumbers  = Range{Hi: RealTime}
	realTimes   = Range{Lo: RealTime, Open: true}
)

// moveCase is a move and what DESIGN.md ("Two encodings, one boundary",
// "Steps and clock skew") says of it.
type moveCase struct {
	name     string
	m        Move
	old, new Side
	boundary bigtable.Timestamp
	endsBy   time.Time // zero: never by time
	rewrite  bool
}

func move(from, to Strategy, old Old) Move {
	return Move{From: from, To: to, Start: start, Old: old, Skew: skew}
}

// moveCases are the moves of every kind: from no strategy, from a time
// rule without an offset (OneSecond) or with one (DefaultExpiration), and
// from sequence numbers, each with every kind of Old.
var moveCases = []moveCase{
	// Between time rules the boundary is Start: the old cells below it,
	// the new ones from it on. The old side lives by its old rule
	// (Default: real write times always live), For(d) (ts + d), Until(t),
	// or for ever. The move ends when the last old cell, stamped just
	// before Start, expires by its rule, then Skew.
	{"none to OneSecond, Default", move(none, oneSecond, oldDefalt),
		Side{Kind: None, Span: beforeStart}, Side{Kind: ByTime, Span: fromStart}, bStart, time.Time{}, true},
	{"none to OneSecond, For", move(none, oneSecond, oldFor),
		Side{Kind: ByTime, Time: Time{30 * time.Minute}, Span: beforeStart}, Side{Kind: ByTime, Span: fromStart}, bStart,
		start.Add(30*time.Minute + skew), true},
	{"none to OneSecond, Until", move(none, oneSecond, oldUntil),
		Side{Kind: None, Until: until, Span: beforeStart}, Side{Kind: ByTime, Span: fromStart}, bStart, until.Add(skew), true},
	{"none to OneSecond, Forever", move(none, oneSecond, oldNever),
		Side{Kind: None, Span: beforeStart}, Side{Kind: ByTime, Span: fromStart}, bStart, time.Time{}, true},
	{"none to DefaultExpiration, For", move(none, defaultExp(2*time.Hour), oldFor),
		Side{Kind: ByTime, Time: Time{30 * time.Minute}, Span: beforeStart}, Side{Kind: ByTime, Time: Time{2 * time.Hour}, Span: fromStart}, bStart,
		start.Add(30*time.Minute + skew), true},
	{"DefaultExpiration to OneSecond, Default", move(defaultExp(time.Hour), oneSecond, oldDefalt),
		Side{Kind: ByTime, Time: Time{time.Hour}, Span: beforeStart}, Side{Kind: ByTime, Span: fromStart}, bStart,
		start.Add(time.Hour + skew), true},
	{"DefaultExpiration to OneSecond, For", move(defaultExp(time.Hour), oneSecond, oldFor),
		Side{Kind: ByTime, Time: Time{30 * time.Minute}, Span: beforeStart}, Side{Kind: ByTime, Span: fromStart}, bStart,
		start.Add(30*time.Minute + skew), true},
	{"DefaultExpiration to OneSecond, Until", move(defaultExp(time.Hour), oneSecond, oldUntil),
		Side{Kind: None, Until: until, Span: beforeStart}, Side{Kind: ByTime, Span: fromStart}, bStart, until.Add(skew), true},
	{"DefaultExpiration to OneSecond, Forever", move(defaultExp(time.Hour), oneSecond, oldNever),
		Side{Kind: None, Span: beforeStart}, Side{Kind: ByTime, Span: fromStart}, bStart, time.Time{}, true},
	{"OneSecond to DefaultExpiration, Default", move(oneSecond, defaultExp(2*time.Hour), oldDefalt),
		Side{Kind: ByTime, Span: beforeStart}, Side{Kind: ByTime, Time: Time{2 * time.Hour}, Span: fromStart}, bStart,
		start.Add(skew), true},
	{"OneSecond to DefaultExpiration, Until", move(oneSecond, defaultExp(2*time.Hour), oldUntil),
		Side{Kind: None, Until: until, Span: beforeStart}, Side{Kind: ByTime, Time: Time{2 * time.Hour}, Span: fromStart}, bStart,
		until.Add(skew), true},

	// To sequence numbers the boundary is 2000-01-01: the new versions
	// below it, the old real times above it. Versions are not times: no
	// rewrite.
	{"none to SequenceNumbers, Default", move(none, seq3, oldDefalt),
		Side{Kind: None, Span: realTimes}, Side{Kind: ByVersions, Versions: 3, Span: seqNumbers}, RealTime, time.Time{}, false},
	{"none to SequenceNumbers, For", move(none, seq3, oldFor),
		Side{Kind: ByTime, Time: Time{30 * time.Minute}, Span: realTimes}, Side{Kind: ByVersions, Versions: 3, Span: seqNumbers}, RealTime,
		start.Add(30*time.Minute + skew), false},
	{"none to SequenceNumbers, Until", move(none, seq3, oldUntil),
		Side{Kind: None, Until: until, Span: realTimes}, Side{Kind: ByVersions, Versions: 3, Span: seqNumbers}, RealTime, until.Add(skew), false},
	{"none to SequenceNumbers, Forever", move(none, seq3, oldNever),
		Side{Kind: None, Span: realTimes}, Side{Kind: ByVersions, Versions: 3, Span: seqNumbers}, RealTime, time.Time{}, false},

	// From sequence numbers the old versions are below 2000-01-01 and
	// stay versions: the newest n, for ever (Default, Forever), until
	// Start + d (For) or until t (Until).
	{"SequenceNumbers to OneSecond, Default", move(seq2, oneSecond, oldDefalt),
		Side{Kind: ByVersions, Versions: 2, Span: seqNumbers}, Side{Kind: ByTime, Span: realTimes}, RealTime, time.Time{}, false},
	{"SequenceNumbers to OneSecond, For", move(seq2, oneSecond, oldFor),
		Side{Kind: ByVersions, Versions: 2, Until: start.Add(30 * time.Minute), Span: seqNumbers}, Side{Kind: ByTime, Span: realTimes}, RealTime,
		start.Add(30*time.Minute + skew), false},
	{"SequenceNumbers to OneSecond, Until", move(seq2, oneSecond, oldUntil),
		Side{Kind: ByVersions, Versions: 2, Until: until, Span: seqNumbers}, Side{Kind: ByTime, Span: realTimes}, RealTime, until.Add(skew), false},
	{"SequenceNumbers to OneSecond, Forever", move(seq2, oneSecond, oldNever),
		Side{Kind: ByVersions, Versions: 2, Span: seqNumbers}, Side{Kind: ByTime, Span: realTimes}, RealTime, time.Time{}, false},
	{"SequenceNumbers to DefaultExpiration, Default", move(seq2, defaultExp(time.Hour), oldDefalt),
		Side{Kind: ByVersions, Versions: 2, Span: seqNumbers}, Side{Kind: ByTime, Time: Time{time.Hour}, Span: realTimes}, RealTime, time.Time{}, false},
}

// TestMoveSides checks each move's sides, boundary, end and whether its
// old cells can be rewritten.
func TestMoveSides(t *testing.T) {
	for _, tt := range moveCases {
		old, new, boundary := tt.m.Sides()
		if old != tt.old {
			t.Errorf("%s: old side %+v\nwant %+v", tt.name, old, tt.old)
		}
		if new != tt.new {
			t.Errorf("%s: new side %+v\nwant %+v", tt.name, new, tt.new)
		}
		if boundary != tt.boundary {
			t.Errorf("%s: boundary %d, want %d", tt.name, boundary, tt.boundary)
		}
		end, ok := tt.m.EndsBy()
		if ok != !tt.endsBy.IsZero() || !end.Equal(tt.endsBy) {
			t.Errorf("%s: EndsBy = %v, %v; want %v", tt.name, end, ok, tt.endsBy)
		}
		if got := tt.m.Rewritable(); got != tt.rewrite {
			t.Errorf("%s: Rewritable = %v, want %v", tt.name, got, tt.rewrite)
		}
		// The sides hold disjoint timestamps, and between them all.
		for _, ts := range []bigtable.Timestamp{0, 1000, RealTime - 1000, RealTime, bStart - 1000, bStart, MaxTimestamp} {
			if old.Span.Contains(ts) == new.Span.Contains(ts) {
				t.Errorf("%s: timestamp %d is on both sides or on neither", tt.name, ts)
			}
		}
	}
}

// TestMoveEndsByLocation checks that EndsBy is in Start's location.
func TestMoveEndsByLocation(t *testing.T) {
	paris := time.FixedZone("CEST", 2*3600)
	m := move(defaultExp(time.Hour), oneSecond, oldDefalt)
	m.Start = start.In(paris)
	end, ok := m.EndsBy()
	if !ok || !end.Equal(start.Add(time.Hour+skew)) || end.Location() != paris {
		t.Errorf("EndsBy = %v, %v; want %v in %v", end, ok, start.Add(time.Hour+skew).In(paris), paris)
	}
}

// TestMoveStarted checks Started and MisplacedBefore: before Start, a
// move from DefaultExpiration writes nothing on the new side, so the
// cells there are old cells stamped in the future.
func TestMoveStarted(t *testing.T) {
	fromDefault := move(defaultExp(time.Hour), oneSecond, oldDefalt)
	fromNone := move(none, oneSecond, oldDefalt)
	fromOneSecond := move(oneSecond, defaultExp(time.Hour), oldDefalt)
	for _, tt := range []struct {
		now                       time.Time
		started, misplacedFromDef bool
	}{
		{start.Add(-time.Hour), false, true},
		{start.Add(-time.Nanosecond), false, true},
		{start, true, false},
		{start.Add(time.Nanosecond), true, false},
	} {
		if got := fromDefault.Started(tt.now); got != tt.started {
			t.Errorf("Started(%v) = %v", tt.now, got)
		}
		if got := fromDefault.MisplacedBefore(tt.now); got != tt.misplacedFromDef {
			t.Errorf("from DefaultExpiration: MisplacedBefore(%v) = %v", tt.now, got)
		}
		if fromNone.MisplacedBefore(tt.now) || fromOneSecond.MisplacedBefore(tt.now) {
			t.Errorf("MisplacedBefore(%v) from no strategy or OneSecond", tt.now)
		}
	}
}

// TestSideFilter checks the filter of each kind of side: its live cells
// at now, none once its Until has passed.
func TestSideFilter(t *testing.T) {
	oldFor := Side{Kind: ByTime, Time: Time{30 * time.Minute}, Span: beforeStart}
	newOneSecond := Side{Kind: ByTime, Span: fromStart}
	versions := Side{Kind: ByVersions, Versions: 2, Span: seqNumbers}
	realOld := Side{Kind: None, Span: realTimes}
	untilOld := Side{Kind: None, Until: until, Span: beforeStart}
	versionsUntil := Side{Kind: ByVersions, Versions: 2, Until: until, Span: seqNumbers}
	ms := func(t time.Time) bigtable.Timestamp { return bigtable.Time(t) }
	for _, tt := range []struct {
		name string
		got  bigtable.Filter
		want bigtable.Filter
	}{
		// The old cells stamped from 30 minutes before now, up to Start.
		{"old For at Start", oldFor.Filter(start), bigtable.TimestampRangeFilterMicros(ms(start.Add(-30*time.Minute))+1000, bStart)},
		{"old For, all expired", oldFor.Filter(start.Add(30 * time.Minute)), nil},
		// The new expiries after now.
		{"new OneSecond", newOneSecond.Filter(start.Add(time.Hour)), bigtable.TimestampRangeFilterMicros(ms(start.Add(time.Hour))+1000, 0)},
		{"new OneSecond before Start", newOneSecond.Filter(start.Add(-time.Hour)), bigtable.TimestampRangeFilterMicros(bStart, 0)},
		{"versions", versions.Filter(start), bigtable.ChainFilters(bigtable.TimestampRangeFilterMicros(0, RealTime), bigtable.LatestNFilter(2))},
		{"real times", realOld.Filter(start), bigtable.TimestampRangeFilterMicros(RealTime, 0)},
		{"until, before it", untilOld.Filter(until.Add(-time.Millisecond)), bigtable.TimestampRangeFilterMicros(0, bStart)},
		{"until, at it", untilOld.Filter(until), nil},
		{"until, after it", untilOld.Filter(until.Add(time.Hour)), nil},
		{"versions until, at it", versionsUntil.Filter(until), nil},
	} {
		if !sameFilter(tt.got, tt.want) {
			t.Errorf("%s: %s, want %s", tt.name, filterText(tt.got), filterText(tt.want))
		}
	}
}

// TestSideExpiry checks a side's expiries: by its time rule, capped by
// its Until; none for a side that is live until nothing.
func TestSideExpiry(t *testing.T) {
	hour := Side{Kind: ByTime, Time: Time{time.Hour}, Span: beforeStart}
	hourUntil := hour
	hourUntil.Until = start.Add(30 * time.Minute)
	for _, tt := range []struct {
		name   string
		s      Side
		ts     bigtable.Timestamp
		want   time.Time
		expire bool
	}{
		{"time rule", hour, bStart, start.Add(time.Hour), true},
		{"time rule, Forever", hour, Time{time.Hour}.Forever(), time.Time{}, false},
		{"until before the rule's expiry", hourUntil, bStart, start.Add(30 * time.Minute), true},
		{"the rule's expiry before until", hourUntil, bStart - micros(time.Hour), start, true},
		{"until, a Forever cell", hourUntil, Time{time.Hour}.Forever(), start.Add(30 * time.Minute), true},
		{"no strategy", Side{Kind: None, Span: beforeStart}, bStart, time.Time{}, false},
		{"no strategy until", Side{Kind: None, Until: until}, bStart, until, true},
		{"versions", Side{Kind: ByVersions, Versions: 2}, 1000, time.Time{}, false},
		{"versions until", Side{Kind: ByVersions, Versions: 2, Until: until}, 1000, until, true},
	} {
		got, ok := tt.s.Expiry(tt.ts)
		if ok != tt.expire || !got.Equal(tt.want) {
			t.Errorf("%s: Expiry(%d) = %v, %v; want %v, %v", tt.name, tt.ts, got, ok, tt.want, tt.expire)
		}
	}
}

// TestSideExpired checks the timestamps of a side's cells expired by time:
// all of them once its Until has passed, those its time rule says, and
// none under another rule.
func TestSideExpired(t *testing.T) {
	oldFor := Side{Kind: ByTime, Time: Time{30 * time.Minute}, Span: beforeStart}
	newHour := Side{Kind: ByTime, Time: Time{time.Hour}, Span: fromStart}
	for _, tt := range []struct {
		name string
		got  []Range
		want []Range
	}{
		{"old For at Start", oldFor.Expired(start), []Range{{Hi: bigtable.Time(start.Add(-30*time.Minute)) + 1000}}},
		{"old For, all expired", oldFor.Expired(start.Add(time.Hour)), []Range{beforeStart}},
		{"new side, nothing expired yet", newHour.Expired(start.Add(30 * time.Minute)), nil},
		{"new side later", newHour.Expired(start.Add(2 * time.Hour)), []Range{{Lo: bStart, Hi: bigtable.Time(start.Add(time.Hour)) + 1000}}},
		{"until passed", Side{Kind: None, Until: until, Span: beforeStart}.Expired(until), []Range{beforeStart}},
		{"until not passed", Side{Kind: None, Until: until, Span: beforeStart}.Expired(start), nil},
		{"versions until passed", Side{Kind: ByVersions, Versions: 1, Until: until, Span: seqNumbers}.Expired(until.Add(time.Hour)), []Range{seqNumbers}},
		{"versions", Side{Kind: ByVersions, Versions: 1, Span: seqNumbers}.Expired(start), nil},
		{"no strategy", Side{Kind: None, Span: realTimes}.Expired(start), nil},
	} {
		if len(tt.got) != len(tt.want) || len(tt.got) == 1 && tt.got[0] != tt.want[0] {
			t.Errorf("%s: %+v, want %+v", tt.name, tt.got, tt.want)
		}
	}
}

// TestSideLiveAt checks whether a cell of a side is live: by its rank for
// versions, its expiry for a time rule, always otherwise, never once the
// side's Until has passed.
func TestSideLiveAt(t *testing.T) {
	hour := Side{Kind: ByTime, Time: Time{time.Hour}, Span: beforeStart}
	versions := Side{Kind: ByVersions, Versions: 2, Span: seqNumbers}
	realOld := Side{Kind: None, Span: realTimes}
	untilOld := Side{Kind: None, Until: until, Span: beforeStart}
	versionsUntil := Side{Kind: ByVersions, Versions: 2, Until: until, Span: seqNumbers}
	for _, tt := range []struct {
		name string
		s    Side
		ts   bigtable.Timestamp
		rank int
		now  time.Time
		want bool
	}{
		{"time rule, live", hour, bStart - 1000, 5, start.Add(59 * time.Minute), true},
		{"time rule, at its expiry", hour, bStart - 1000, 0, start.Add(time.Hour - time.Millisecond), false},
		{"time rule, Forever", hour, Time{time.Hour}.Forever(), 0, start.AddDate(100, 0, 0), true},
		{"newest version", versions, 1000, 0, start, true},
		{"second version", versions, 1000, 1, start, true},
		{"third version", versions, 5000, 2, start, false},
		{"real time", realOld, bStart, 9, start.AddDate(100, 0, 0), true},
		{"until, before it", untilOld, bStart - 1000, 0, until.Add(-time.Millisecond), true},
		{"until, at it", untilOld, bStart - 1000, 0, until, false},
		{"versions until, at it", versionsUntil, 1000, 0, until, false},
	} {
		if got := tt.s.LiveAt(tt.ts, tt.rank, tt.now); got != tt.want {
			t.Errorf("%s: LiveAt(%d, %d, %v) = %v", tt.name, tt.ts, tt.rank, tt.now, got)
		}
	}
}

// TestSideRestamp checks the timestamp of an old cell rewritten in the new
// encoding: the same expiry, rounded down to the millisecond, under the
// new rule; refused when it would not fall on the new side.
func TestSideRestamp(t *testing.T) {
	// none to OneSecond with For(30m), and to DefaultExpiration(2h).
	forOld, oneSecondNew, _ := move(none, oneSecond, oldFor).Sides()
	_, twoHoursNew, _ := move(none, defaultExp(2*time.Hour), oldFor).Sides()
	// DefaultExpiration(1h) to OneSecond; and Until or Forever.
	hourOld, _, _ := move(defaultExp(time.Hour), oneSecond, oldDefalt).Sides()
	untilSide, _, _ := move(none, oneSecond, oldUntil).Sides()
	foreverOld, _, _ := move(none, oneSecond, oldNever).Sides()
	ms := func(t time.Time) bigtable.Timestamp { return bigtable.Time(t) }
	for _, tt := range []struct {
		name     string
		from, to Side
		ts       bigtable.Timestamp
		want     bigtable.Timestamp
		ok       bool
	}{
		// Written 10 minutes before Start, it expires 20 minutes after:
		// OneSecond stamps the expiry.
		{"For to OneSecond", forOld, oneSecondNew, ms(start.Add(-10 * time.Minute)), ms(start.Add(20 * time.Minute)), true},
		{"sub-millisecond expiry", forOld, oneSecondNew, ms(start.Add(-10*time.Minute)) + 999, ms(start.Add(20 * time.Minute)), true},
		// Its expiry before Start is on the old side.
		{"For, expired before Start", forOld, oneSecondNew, ms(start.Add(-40 * time.Minute)), ms(start.Add(-10 * time.Minute)), false},
		// DefaultExpiration(2h) stamps the expiry minus two hours: before
		// Start for an expiry less than two hours after it.
		{"For to DefaultExpiration, before Start", forOld, twoHoursNew, ms(start.Add(-10 * time.Minute)), ms(start.Add(20*time.Minute - 2*time.Hour)), false},
		{"Until to DefaultExpiration", untilSide, twoHoursNew, ms(start.Add(-10 * time.Minute)), ms(until.Add(-2 * time.Hour)), true},
		// DefaultExpiration(1h)'s cell stamped ts expires at ts + 1h.
		{"DefaultExpiration to OneSecond", hourOld, oneSecondNew, ms(start.Add(-10 * time.Minute)), ms(start.Add(50 * time.Minute)), true},
		// A cell that never expires is the new rule's Forever cell.
		{"Forever to OneSecond", foreverOld, oneSecondNew, ms(start.Add(-10 * time.Minute)), MaxTimestamp, true},
		{"Forever to DefaultExpiration", foreverOld, twoHoursNew, ms(start.Add(-10 * time.Minute)), Time{2 * time.Hour}.Forever(), true},
		{"a Forever cell of DefaultExpiration", hourOld, oneSecondNew, Time{time.Hour}.Forever(), MaxTimestamp, true},
		// An expiry before 1970 under the new rule's offset, or past the
		// last timestamp, has no timestamp.
		{"before 1970", Side{Kind: None, Until: time.Unix(3600, 0)}, twoHoursNew, 0, 0, false},
		{"past the end of time", Side{Kind: None, Until: time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC)}, oneSecondNew, bStart, 0, false},
	} {
		got, ok := tt.from.Restamp(tt.to, tt.ts)
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("%s: Restamp(%d) = %d, %v; want %d, %v", tt.name, tt.ts, got, ok, tt.want, tt.ok)
		}
	}

	// A cell that expires at the very last millisecond keeps expiring: it
	// is not stamped as a Forever cell, which never does.
	last := Side{Kind: None, Until: time.UnixMilli(MaxMillis)}
	ts, ok := last.Restamp(oneSecondNew, bStart)
	if !ok {
		t.Fatal("the last millisecond cannot be restamped")
	}
	if e, expires := oneSecondNew.Expiry(ts); !expires || e.After(time.UnixMilli(MaxMillis)) {
		t.Errorf("restamped at %d, which expires at %v, %v; want by the last millisecond", ts, e, expires)
	}
}

// TestSideExpiredIn checks, cell by cell, that the range of a side's cells
// that expire in (a, b] holds exactly those live at a and not at b, for
// time rules, Untils and sides that never expire, over windows that start
// and end on and around expiries.
func TestSideExpiredIn(t *testing.T) {
	hour := Side{Kind: ByTime, Time: Time{time.Hour}, Span: beforeStart}
	hourUntil := hour
	hourUntil.Until = start.Add(30 * time.Minute)
	oneSecondAll := Side{Kind: ByTime, Span: Range{Open: true}}
	sides := map[string]Side{
		"time rule":       hour,
		"time rule until": hourUntil,
		"one second":      oneSecondAll,
		"one second new":  Side{Kind: ByTime, Span: fromStart},
		"none until":      {Kind: None, Until: until, Span: beforeStart},
		"versions until":  {Kind: ByVersions, Versions: 1, Until: until, Span: seqNumbers},
		"none":            {Kind: None, Span: realTimes},
		"versions":        {Kind: ByVersions, Versions: 1, Span: seqNumbers},
	}
	var instants []time.Time
	for _, t0 := range []time.Time{start, start.Add(-time.Hour), start.Add(30 * time.Minute), until, start.Add(time.Hour)} {
		for _, d := range []time.Duration{-time.Millisecond, -time.Microsecond, 0, time.Microsecond, time.Millisecond, time.Second} {
			instants = append(instants, t0.Add(d))
		}
	}
	var stamps []bigtable.Timestamp
	for _, t0 := range instants {
		for _, d := range []time.Duration{-time.Hour, 0, time.Hour} {
			stamps = append(stamps, bigtable.Time(t0.Add(d)).TruncateToMilliseconds())
		}
	}
	stamps = append(stamps, 0, 1000, 5000, Time{time.Hour}.Forever(), MaxTimestamp)
	for name, s := range sides {
		for _, a := range instants {
			for _, b := range instants {
				r, ok := s.ExpiredIn(a, b)
				if ok == r.Empty() {
					t.Errorf("%s: ExpiredIn(%v, %v) = %+v, %v: ok disagrees with the range", name, a, b, r, ok)
				}
				for _, ts := range stamps {
					if !s.Span.Contains(ts) && !(s.Span == Range{}) {
						continue
					}
					want := s.LiveAt(ts, 0, a) && !s.LiveAt(ts, 0, b)
					if got := ok && r.Contains(ts); got != want {
						t.Errorf("%s: ExpiredIn(%v, %v) = %+v holds %d: %v, want %v", name, a.Format(time.RFC3339Nano), b.Format(time.RFC3339Nano), r, ts, got, want)
					}
				}
			}
		}
	}
}
