package ttl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
)

// The fuzz targets check each strategy's timestamp arithmetic against
// DESIGN.md's rules computed in exact (big integer) arithmetic, and check
// visibility through the filter the strategy itself returns: the filter
// is read back from its printed form (bigtable filters print what they
// send) and applied as the server applies it, bounds truncated to the
// millisecond as the client truncates them on the wire. That tests the
// filter Bigtable receives, not a helper of the package; the test is
// internal only to compare the package's own liveFrom with it.
//
// Run one briefly with, for example,
//
//	go test -run='^$' -fuzz='^FuzzOneSecond$' -fuzztime=5s .
//
// The seeds below and in testdata/fuzz run with every go test.

// fuzzBase is 2030-04-30 09:00 UTC, the other tests' base.
const fuzzBase = 1903770000

// instant maps any two integers to an instant within about ±557,000 years
// of the epoch: beyond Bigtable's range on both sides, within the range
// where time.Time arithmetic with a Duration cannot overflow.
func instant(sec, nsec int64) time.Time {
	const span = 1 << 44 // seconds
	sec %= span
	nsec %= 1e9
	if nsec < 0 {
		nsec += 1e9
	}
	return time.Unix(sec, nsec)
}

// lifetimeOf maps fuzz inputs to a lifetime of any kind.
func lifetimeOf(kind uint8, d int64, until time.Time, seq int64) Lifetime {
	switch kind % 5 {
	case 0:
		return Default
	case 1:
		return For(time.Duration(d))
	case 2:
		return Until(until)
	case 3:
		return Version(seq)
	}
	return Forever
}

// nanos is t in nanoseconds since the epoch, exactly.
func nanos(t time.Time) *big.Int {
	n := big.NewInt(t.Unix())
	n.Mul(n, big.NewInt(1e9))
	return n.Add(n, big.NewInt(int64(t.Nanosecond())))
}

var (
	bigMillion = big.NewInt(1e6)
	bigMax     = big.NewInt(math.MaxInt64 / 1000) // the largest timestamp, in ms
)

// requestedExpiry is the expiry a lifetime asks for at now under a time
// strategy with the given default, and false for one that has none.
func requestedExpiry(life Lifetime, now time.Time, def time.Duration) (time.Time, bool) {
	switch life.kind {
	case lifeFor:
		return now.Add(time.Duration(life.n)), true
	case lifeUntil:
		return life.until(), true
	case lifeDefault:
		return now.Add(def), def > 0
	}
	return time.Time{}, false
}

// wantTimeStamp is DESIGN.md's write rule for a time strategy whose
// timestamps lie offset before the expiry: the expiry rounded down to the
// millisecond, refused if that is not after now, then offset subtracted,
// refused if outside 0 through MaxTimestamp (or the expiry past it).
func wantTimeStamp(offset time.Duration, now, expiry time.Time) (bigtable.Timestamp, error) {
	e := new(big.Int).Div(nanos(expiry), bigMillion) // Div floors for a positive divisor
	if new(big.Int).Mul(e, bigMillion).Cmp(nanos(now)) <= 0 {
		return 0, ErrExpired
	}
	ts := new(big.Int).Sub(e, big.NewInt(offset.Milliseconds()))
	if e.Cmp(bigMax) >= 0 || ts.Sign() < 0 { // the last millisecond is Forever's
		return 0, ErrOutOfRange
	}
	return bigtable.Timestamp(ts.Int64() * 1000), nil
}

var sentinels = []error{ErrExpired, ErrOutOfRange, ErrLifetime, ErrInvalidStrategy, ErrInvalidMutation}

// checkSentinel fails unless err wraps want and no other sentinel.
func checkSentinel(t *testing.T, call string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: error %v, want %v", call, err, want)
	}
	for _, s := range sentinels {
		if s != want && errors.Is(err, s) {
			t.Fatalf("%s: error %v wraps %v as well as %v", call, err, s, want)
		}
	}
}

var (
	timestampRange = regexp.MustCompile(`^timestamp_range\((-?\d+),(-?\d+)\)$`)
	latestN        = regexp.MustCompile(`^col\(\*,(-?\d+)\)$`)
)

// serverFilter is a strategy's filter as the server applies it.
type serverFilter struct {
	block      bool
	start, end int64 // a timestamp range; end 0: unbounded
	latest     int   // LatestN; 0 for a timestamp range
}

// parseFilter reads a strategy's filter back from its printed form.
func parseFilter(t *testing.T, f bigtable.Filter) serverFilter {
	t.Helper()
	s := f.String()
	if s == bigtable.BlockAllFilter().String() {
		return serverFilter{block: true}
	}
	if m := timestampRange.FindStringSubmatch(s); m != nil {
		start, err1 := strconv.ParseInt(m[1], 10, 64)
		end, err2 := strconv.ParseInt(m[2], 10, 64)
		if err1 != nil || err2 != nil || start < 0 || end < 0 {
			t.Fatalf("filter %s: bounds out of range", s)
		}
		if start%1000 != 0 || end%1000 != 0 {
			t.Fatalf("filter %s: bounds not whole milliseconds; the client would truncate them", s)
		}
		return serverFilter{start: start - start%1000, end: end - end%1000}
	}
	if m := latestN.FindStringSubmatch(s); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil || n <= 0 {
			t.Fatalf("filter %s: Bigtable rejects a count that is not positive", s)
		}
		return serverFilter{latest: n}
	}
	t.Fatalf("unexpected strategy filter %s", s)
	return serverFilter{}
}

// passes reports whether the server returns a cell stamped ts that is the
// index-th newest of its column.
func (f serverFilter) passes(ts bigtable.Timestamp, index int) bool {
	switch {
	case f.block:
		return false
	case f.latest > 0:
		return index < f.latest
	}
	return int64(ts) >= f.start && (f.end == 0 || int64(ts) < f.end)
}

// checkTimeStrategy checks one write under a time strategy (offset 0 for
// OneSecond, d for DefaultExpiration(d)) against the rule, and the
// strategy's filter at instants around the cell's expiry.
func checkTimeStrategy(t *testing.T, s Strategy, offset time.Duration, now time.Time, life Lifetime, probe time.Time) {
	t.Helper()
	call := fmt.Sprintf("%v.Timestamp(%v, %v)", s, now.UTC().Format(time.RFC3339Nano), life)
	ts, err := s.Timestamp(now, life)
	forever := MaxTimestamp - bigtable.Timestamp(offset/time.Microsecond)

	var want bigtable.Timestamp
	var wantErr error
	expiry, finite := requestedExpiry(life, now, offset)
	switch {
	case finite:
		want, wantErr = wantTimeStamp(offset, now, expiry)
	case life.kind == lifeForever:
		want = forever
	default: // Version, or Default under OneSecond
		wantErr = ErrLifetime
	}
	if wantErr != nil {
		checkSentinel(t, call, err, wantErr)
		return
	}
	if err != nil || ts != want {
		t.Fatalf("%s = %d, %v want %d", call, ts, err, want)
	}
	if ts%1000 != 0 || ts < 0 || ts > MaxTimestamp {
		t.Fatalf("%s = %d: not a whole millisecond from 0 to MaxTimestamp", call, ts)
	}

	// The instant the stored cell expires: never after the requested
	// expiry, less than a millisecond before it.
	stored, expires := s.ExpiresAt(ts)
	if expires != (ts < forever) {
		t.Fatalf("%s = %d: expiry reports expires = %v, Forever is %d", call, ts, expires, forever)
	}
	if finite && !expires {
		t.Fatalf("%s = %d: a finite lifetime stored as never expiring", call, ts)
	}
	if expires {
		if want := time.UnixMicro(int64(ts)).Add(offset); !stored.Equal(want) {
			t.Fatalf("%s = %d: expiry = %v want %v", call, ts, stored, want)
		}
		if finite && (stored.After(expiry) || !stored.After(expiry.Add(-time.Millisecond))) {
			t.Fatalf("%s: the cell expires at %v, requested %v: late, or a millisecond or more early", call, stored, expiry)
		}
	}

	// Visibility through the strategy's own filter is expiry > at: from
	// its expiry on the cell is hidden, and it is born live.
	probes := []time.Time{now, probe}
	if finite {
		probes = append(probes, expiry, expiry.Add(-time.Nanosecond), expiry.Add(-time.Millisecond), expiry.Add(time.Millisecond))
	}
	if expires {
		probes = append(probes, stored, stored.Add(-time.Nanosecond), stored.Add(time.Nanosecond))
	}
	for _, at := range probes {
		f := s.Filter(at)
		got := parseFilter(t, f).passes(ts, 0)
		if live := !expires || stored.After(at); got != live {
			t.Fatalf("%s = %d (expires %v): Filter(%v) = %v passes it: %v, want %v",
				call, ts, stored, at.UTC().Format(time.RFC3339Nano), f, got, live)
		}
		if r := s.rule(); r.Kind != rules.ByTime || int64(r.Time.LiveFrom(at)) != parseFilter(t, f).start {
			t.Fatalf("rule().Time.LiveFrom(%v) = %d, %v; Filter = %v", at, r.Time.LiveFrom(at), r.Kind, f)
		}
	}
}

func FuzzOneSecond(f *testing.F) {
	ms := int64(time.Millisecond)
	for _, seed := range []struct {
		nowSec, nowNsec   int64
		kind              uint8
		d                 int64
		untilSec, untilNs int64
		probe             int64
	}{
		{fuzzBase, 0, 1, ms, 0, 0, 0},
		{fuzzBase, 0, 1, 0, 0, 0, 0},
		{fuzzBase, 0, 1, ms - 1, 0, 0, 0},
		{fuzzBase, 500_000, 1, ms, 0, 0, ms},
		{fuzzBase, 999_999, 1, 1, 0, 0, 1},
		{fuzzBase, 0, 1, -1, 0, 0, 0},
		{fuzzBase, 0, 1, math.MaxInt64, 0, 0, math.MaxInt64},
		{fuzzBase, 0, 2, 0, fuzzBase, 1_000_000, 0},
		{fuzzBase, 0, 2, 0, fuzzBase, 999_999, 0},
		{fuzzBase, 0, 2, 0, -1, 999_999_999, 0},
		{fuzzBase, 0, 2, 0, rules.MaxMillis / 1000, 775_999_999, 0},
		{fuzzBase, 0, 2, 0, rules.MaxMillis / 1000, 776_000_000, 0},
		{fuzzBase, 0, 0, 0, 0, 0, 0},
		{fuzzBase, 0, 3, 0, 0, 0, 0},
		{fuzzBase, 0, 4, 0, 0, 0, math.MaxInt64},
		{0, 0, 1, ms, 0, 0, -1},
		{-1, 0, 1, 2 * ms, 0, 0, 0},
		{rules.MaxMillis / 1000, 775_000_000, 1, ms, 0, 0, ms},
	} {
		f.Add(seed.nowSec, seed.nowNsec, seed.kind, seed.d, seed.untilSec, seed.untilNs, seed.probe)
	}
	f.Fuzz(func(t *testing.T, nowSec, nowNsec int64, kind uint8, d, untilSec, untilNsec, probe int64) {
		now := instant(nowSec, nowNsec)
		life := lifetimeOf(kind, d, instant(untilSec, untilNsec), d)
		checkTimeStrategy(t, oneSecond{}, 0, now, life, now.Add(time.Duration(probe)))
	})
}

func FuzzDefaultExpiration(f *testing.F) {
	ms, day := int64(time.Millisecond), int64(24*time.Hour)
	for _, seed := range []struct {
		def               int64
		nowSec, nowNsec   int64
		kind              uint8
		d                 int64
		untilSec, untilNs int64
		probe             int64
	}{
		{2 * day, fuzzBase, 0, 0, 0, 0, 0, 0},
		{2 * day, fuzzBase, 123_456, 0, 0, 0, 0, 2 * day},
		{2 * day, fuzzBase, 0, 1, ms, 0, 0, 0},
		{2 * day, fuzzBase, 0, 1, 3 * day, 0, 0, 2 * day},
		{2 * day, fuzzBase, 0, 1, 0, 0, 0, 0},
		{2 * day, fuzzBase, 0, 2, 0, fuzzBase - 1, 0, 0},
		{2 * day, fuzzBase, 0, 2, 0, rules.MaxMillis / 1000, 775_999_999, 0},
		{2 * day, fuzzBase, 0, 4, 0, 0, 0, math.MaxInt64},
		{2 * day, fuzzBase, 0, 3, 0, 0, 0, 0},
		{2 * day, 0, 0, 1, ms, 0, 0, 0},
		{2 * day, 100, 0, 1, ms, 0, 0, 0}, // the timestamp would be before 1970
		{ms, fuzzBase, 0, 0, 0, 0, 0, 0},
		{0, fuzzBase, 0, 0, 0, 0, 0, 0},
		{-ms, fuzzBase, 0, 1, ms, 0, 0, 0},
		{ms + 1, fuzzBase, 0, 1, ms, 0, 0, 0},
		{math.MaxInt64 - math.MaxInt64%ms, fuzzBase, 0, 4, 0, 0, 0, 0},
	} {
		f.Add(seed.def, seed.nowSec, seed.nowNsec, seed.kind, seed.d, seed.untilSec, seed.untilNs, seed.probe)
	}
	f.Fuzz(func(t *testing.T, def, nowSec, nowNsec int64, kind uint8, d, untilSec, untilNsec, probe int64) {
		s := defaultExpiration{d: time.Duration(def)}
		now := instant(nowSec, nowNsec)
		life := lifetimeOf(kind, d, instant(untilSec, untilNsec), d)
		if def <= 0 || def%ms != 0 {
			checkInvalid(t, s, now, life)
			return
		}
		checkTimeStrategy(t, s, s.d, now, life, now.Add(time.Duration(probe)))
		if got, want := s.GCPolicy().String(), bigtable.MaxAgePolicy(s.d).String(); got != want {
			t.Fatalf("%v.GCPolicy() = %s want %s", s, got, want)
		}
	})
}

// checkInvalid checks that an invalid strategy refuses every write,
// passes no cell and asks for no GC.
func checkInvalid(t *testing.T, s Strategy, now time.Time, life Lifetime) {
	t.Helper()
	_, err := s.Timestamp(now, life)
	checkSentinel(t, fmt.Sprintf("%v.Timestamp(%v, %v)", s, now, life), err, ErrInvalidStrategy)
	if !parseFilter(t, s.Filter(now)).block {
		t.Fatalf("%v.Filter = %v, want a filter that passes nothing", s, s.Filter(now))
	}
	if got := s.GCPolicy().String(); got != bigtable.NoGcPolicy().String() {
		t.Fatalf("%v.GCPolicy() = %s, want no GC", s, got)
	}
}

func FuzzSequenceNumbers(f *testing.F) {
	for _, seed := range []struct {
		versions        int
		kind            uint8
		seq             int64
		nowSec, nowNsec int64
		newer           int64
	}{
		{3, 3, 1, fuzzBase, 0, 2},
		{3, 3, 0, fuzzBase, 0, 3},
		{1, 3, rules.MaxMillis, fuzzBase, 0, 0},
		{1, 3, rules.MaxMillis + 1, fuzzBase, 0, 0},
		{1, 3, -1, fuzzBase, 0, 0},
		{1, 3, math.MaxInt64, fuzzBase, 0, 0},
		{1, 3, math.MinInt64, fuzzBase, 0, 0},
		{3, 0, 1, fuzzBase, 0, 0},
		{3, 1, 1, fuzzBase, 0, 0},
		{3, 4, 1, fuzzBase, 0, 0},
		{0, 3, 1, fuzzBase, 0, 0},
		{-1, 3, 1, fuzzBase, 0, 0},
		{math.MaxInt32, 3, 1, fuzzBase, 0, 0},
		{math.MaxInt32 + 1, 3, 1, fuzzBase, 0, 0},
	} {
		f.Add(seed.versions, seed.kind, seed.seq, seed.nowSec, seed.nowNsec, seed.newer)
	}
	f.Fuzz(func(t *testing.T, versions int, kind uint8, seq, nowSec, nowNsec, newer int64) {
		s := sequenceNumbers{n: versions}
		now := instant(nowSec, nowNsec)
		life := lifetimeOf(kind, seq, now, seq)
		if versions <= 0 || versions > math.MaxInt32 {
			checkInvalid(t, s, now, life)
			return
		}
		call := fmt.Sprintf("%v.Timestamp(%v, %v)", s, now, life)
		ts, err := s.Timestamp(now, life)
		switch {
		case life.kind != lifeVersion:
			checkSentinel(t, call, err, ErrLifetime)
			return
		case seq < 0 || seq > rules.MaxMillis:
			checkSentinel(t, call, err, ErrOutOfRange)
			return
		case err != nil || ts != bigtable.Timestamp(seq*1000):
			t.Fatalf("%s = %d, %v want %d", call, ts, err, seq*1000)
		}
		if _, expires := s.ExpiresAt(ts); expires {
			t.Fatalf("%v.ExpiresAt(%d) says a sequence number expires by time", s, ts)
		}
		if r := s.rule(); r.Kind != rules.ByVersions || r.Versions != versions {
			t.Fatalf("%v.rule() = %+v: want versions %d, not time", s, r, versions)
		}
		if got, want := s.GCPolicy().String(), bigtable.MaxVersionsPolicy(versions).String(); got != want {
			t.Fatalf("%v.GCPolicy() = %s want %s", s, got, want)
		}
		// The cell is visible, at any instant, while fewer than versions
		// newer sequence numbers of its column are stored.
		newer = (newer%8 + 8) % 8
		for _, at := range []time.Time{now, now.Add(-1 << 62), now.Add(1 << 62)} {
			got := parseFilter(t, s.Filter(at)).passes(ts, int(newer))
			if want := int(newer) < versions; got != want {
				t.Fatalf("%v.Filter(%v) = %v passes Version(%d) under %d newer versions: %v want %v",
					s, at, s.Filter(at), seq, newer, got, want)
			}
		}
	})
}

// nopTable is a bigtable.TableAPI whose Apply succeeds without sending
// anything; its other methods are not called.
type nopTable struct{ bigtable.TableAPI }

func (nopTable) Apply(context.Context, string, *bigtable.Mutation, ...bigtable.ApplyOption) error {
	return nil
}

// FuzzLifetime checks any strategy with any lifetime, at any instant, with
// any read margin, by properties rather than exact values: no panic; a
// timestamp that is a whole millisecond in range, or exactly one
// sentinel error; a cell written is live at once and hidden from its
// requested expiry on; and a Table with a read margin refuses a write
// exactly when its own read filter would hide the cell at once.
func FuzzLifetime(f *testing.F) {
	ms := int64(time.Millisecond)
	f.Add(uint8(0), int64(0), uint8(1), int64(fuzzBase), int64(0), int64(ms), int64(0), int64(0), int64(0), int64(0))
	f.Add(uint8(1), int64(48*time.Hour), uint8(0), int64(fuzzBase), int64(1), int64(0), int64(0), int64(0), int64(0), int64(time.Hour))
	f.Add(uint8(1), int64(ms), uint8(2), int64(fuzzBase), int64(0), int64(0), int64(fuzzBase), int64(2_000_000), int64(0), int64(1500*time.Microsecond))
	f.Add(uint8(0), int64(0), uint8(1), int64(fuzzBase), int64(500_000), int64(2*ms), int64(0), int64(0), int64(0), int64(ms))
	f.Add(uint8(0), int64(0), uint8(1), int64(fuzzBase), int64(0), int64(2*ms), int64(0), int64(0), int64(0), int64(2*ms))
	f.Add(uint8(2), int64(3), uint8(3), int64(fuzzBase), int64(0), int64(0), int64(0), int64(0), int64(7), int64(time.Hour))
	f.Add(uint8(2), int64(0), uint8(3), int64(fuzzBase), int64(0), int64(0), int64(0), int64(0), int64(7), int64(0))
	f.Add(uint8(0), int64(0), uint8(4), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(math.MaxInt64))
	f.Add(uint8(1), int64(-1), uint8(1), int64(fuzzBase), int64(0), int64(ms), int64(0), int64(0), int64(0), int64(0))
	f.Add(uint8(0), int64(0), uint8(2), int64(fuzzBase), int64(0), int64(0), int64(rules.MaxMillis/1000), int64(775_000_000), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, which uint8, param int64, kind uint8, nowSec, nowNsec, d, untilSec, untilNsec, seq, margin int64) {
		var s Strategy
		switch which % 3 {
		case 0:
			s = oneSecond{}
		case 1:
			s = defaultExpiration{d: time.Duration(param)}
		default:
			s = sequenceNumbers{n: int(param)}
		}
		now := instant(nowSec, nowNsec)
		life := lifetimeOf(kind, d, instant(untilSec, untilNsec), seq)
		call := fmt.Sprintf("%v.Timestamp(%v, %v)", s, now.UTC().Format(time.RFC3339Nano), life)
		ts, err := s.Timestamp(now, life)
		_ = s.GCPolicy().String()
		if err != nil {
			n := 0
			for _, sentinel := range sentinels {
				if errors.Is(err, sentinel) {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("%s: error %v wraps %d sentinels, want one", call, err, n)
			}
			if (s.valid() != nil) != errors.Is(err, ErrInvalidStrategy) {
				t.Fatalf("%s: error %v; valid() = %v", call, err, s.valid())
			}
		} else {
			if ts%1000 != 0 || ts < 0 || ts > MaxTimestamp {
				t.Fatalf("%s = %d: not a whole millisecond from 0 to MaxTimestamp", call, ts)
			}
			if !parseFilter(t, s.Filter(now)).passes(ts, 0) {
				t.Fatalf("%s = %d: born hidden: Filter(now) = %v", call, ts, s.Filter(now))
			}
			def := time.Duration(0)
			if de, ok := s.(defaultExpiration); ok {
				def = de.d
			}
			if expiry, finite := requestedExpiry(life, now, def); finite {
				if parseFilter(t, s.Filter(expiry)).passes(ts, 0) {
					t.Fatalf("%s = %d: visible at its expiry %v: Filter = %v", call, ts, expiry, s.Filter(expiry))
				}
				if early := expiry.Add(-time.Millisecond); early.After(now) && !parseFilter(t, s.Filter(early)).passes(ts, 0) {
					t.Fatalf("%s = %d: hidden a millisecond before its expiry %v: Filter = %v", call, ts, expiry, s.Filter(early))
				}
			}
		}

		// Through a Table with a read margin: a write is refused with
		// ErrExpired exactly when the table's own read filter would hide
		// the cell at once.
		if margin < 0 || s.valid() != nil {
			return
		}
		tbl, terr := NewTable(nopTable{}, map[string]Strategy{"f": s}, OtherFamilies(), WithReadMargin(time.Duration(margin)),
			WithClock(func() time.Time { return now }))
		if terr != nil {
			t.Fatal(terr)
		}
		m := NewMutation()
		m.Set("f", "c", nil, life)
		aerr := tbl.Apply(context.Background(), "r", m)
		switch {
		case err != nil:
			if !errors.Is(aerr, sentinelOf(err)) {
				t.Fatalf("Apply(%v) = %v, Timestamp: %v", life, aerr, err)
			}
		case aerr == nil:
			if !parseFilter(t, tbl.ReadFilter(now)).passes(ts, 0) {
				t.Fatalf("Apply(%v) at %v with margin %v wrote a cell (%d) its own read filter %v hides", life, now, time.Duration(margin), ts, tbl.ReadFilter(now))
			}
		case errors.Is(aerr, ErrExpired):
			if parseFilter(t, tbl.ReadFilter(now)).passes(ts, 0) {
				t.Fatalf("Apply(%v) at %v with margin %v: %v, but its read filter %v would show the cell (%d)", life, now, time.Duration(margin), aerr, tbl.ReadFilter(now), ts)
			}
		default:
			t.Fatalf("Apply(%v) = %v, Timestamp = %d", life, aerr, ts)
		}
	})
}

// sentinelOf returns the package sentinel err wraps.
func sentinelOf(err error) error {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return s
		}
	}
	return nil
}
