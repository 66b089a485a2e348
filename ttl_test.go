package ttl_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
)

// maxSeq is the largest sequence number.
const maxSeq = int64(ttl.MaxTimestamp / 1000)

// write is one cell a conformance case writes at base.
type write struct {
	column string
	life   ttl.Lifetime
	wantTS bigtable.Timestamp
}

// refusal is a lifetime a strategy must refuse at base, and the sentinel.
type refusal struct {
	life ttl.Lifetime
	want error
}

// conformance is what one strategy must do, from DESIGN.md's table.
type conformance struct {
	strategy ttl.Strategy
	gc       string // GCPolicy().String()
	writes   []write
	refuses  []refusal
	// live says, by the design's rule, whether writes[i] is visible at now.
	live   func(ws []write, i int, now time.Time) bool
	probes []time.Time
}

// subtestStrategy runs one strategy through the contract every strategy
// keeps: timestamps aligned and in range, exactly the documented ones;
// refusals with the documented sentinels; and, on the emulator, a filter
// that passes exactly the cells the design says are live at each probe.
func subtestStrategy(t *testing.T, c conformance) {
	t.Helper()
	s := c.strategy
	if got := s.GCPolicy().String(); got != c.gc {
		t.Errorf("GCPolicy() = %q want %q", got, c.gc)
	}
	for _, w := range c.writes {
		got, err := s.Timestamp(base, w.life)
		if err != nil || got != w.wantTS {
			t.Errorf("Timestamp(base, %v) = %d, %v want %d, nil", w.life, got, err, w.wantTS)
		}
		if got%1000 != 0 || got < 0 || got > ttl.MaxTimestamp {
			t.Errorf("Timestamp(base, %v) = %d: not a millisecond from 0 to MaxTimestamp", w.life, got)
		}
	}
	for _, r := range c.refuses {
		got, err := s.Timestamp(base, r.life)
		if !errors.Is(err, r.want) {
			t.Errorf("Timestamp(base, %v) = %d, %v want error %v", r.life, got, err, r.want)
		}
	}

	raw := emulator.StartForTest(t).TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	ctx := context.Background()
	for i, w := range c.writes {
		m := bigtable.NewMutation()
		m.Set("f", w.column, w.wantTS, []byte(fmt.Sprint(i)))
		if err := raw.Apply(ctx, "r", m); err != nil {
			t.Fatal(err)
		}
	}
	for _, at := range c.probes {
		var want []cell
		for i, w := range c.writes {
			if c.live(c.writes, i, at) {
				want = append(want, cell{"f:" + w.column, fmt.Sprint(i), w.wantTS})
			}
		}
		r, err := raw.ReadRow(ctx, "r", bigtable.RowFilter(s.Filter(at)))
		if err != nil {
			t.Fatalf("ReadRow with Filter(%v): %v", at, err)
		}
		if got, want := cells(r), sortCells(want); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Filter(%v) = %v passes %v want %v", at.Format(time.RFC3339Nano), s.Filter(at), got, want)
		}
	}
}

// sortCells sorts cells as cells() does.
func sortCells(cs []cell) []cell {
	r := bigtable.Row{}
	for _, c := range cs {
		r["f"] = append(r["f"], bigtable.ReadItem{Column: c.Column, Value: []byte(c.Value), Timestamp: c.TS})
	}
	return cells(r)
}

// The instants the conformance cases write for and probe at.
var (
	hour      = base.Add(time.Hour)
	farFuture = time.Date(200000, 1, 1, 0, 0, 0, 0, time.UTC)
	beyond    = time.UnixMilli(maxSeq).Add(time.Millisecond) // after MaxTimestamp
)

// oneSecondConformance is the contract of s, OneSecond or a strategy that
// stamps and reads as OneSecond does (a Counter of it, or it with a grace),
// whose GC policy is gc.
func oneSecondConformance(s ttl.Strategy, gc string) conformance {
	return conformance{
		strategy: s,
		gc:       gc,
		writes: []write{
			{"until", ttl.Until(hour), ms(hour)},
			{"for", ttl.For(time.Hour), ms(hour)},
			{"floored", ttl.For(1500 * time.Microsecond), ms(base.Add(time.Millisecond))},
			{"minimal", ttl.Until(base.Add(time.Millisecond)), ms(base.Add(time.Millisecond))},
			{"forever", ttl.Forever, ttl.MaxTimestamp},
			{"last", ttl.Until(time.UnixMilli(maxSeq - 1)), ttl.MaxTimestamp - 1000},
		},
		refuses: []refusal{
			{ttl.Default, ttl.ErrLifetime},
			{ttl.Version(1), ttl.ErrLifetime},
			{ttl.For(0), ttl.ErrExpired},
			{ttl.For(-time.Hour), ttl.ErrExpired},
			{ttl.For(999 * time.Microsecond), ttl.ErrExpired}, // floors to now
			{ttl.Until(base), ttl.ErrExpired},
			{ttl.Until(time.Time{}), ttl.ErrExpired},
			{ttl.Until(beyond), ttl.ErrOutOfRange},
			{ttl.Until(time.UnixMilli(maxSeq)), ttl.ErrOutOfRange}, // Forever's millisecond
			{ttl.Until(farFuture.AddDate(100000, 0, 0)), ttl.ErrOutOfRange},
		},
		live: func(ws []write, i int, now time.Time) bool { return ws[i].wantTS.Time().After(now) }, // ts > now
		probes: []time.Time{
			base, base.Add(time.Millisecond - 1), base.Add(time.Millisecond),
			hour.Add(-time.Millisecond), hour.Add(-1), hour, hour.Add(time.Millisecond), farFuture,
		},
	}
}

// defaultConformance is the contract of s, DefaultExpiration(d) or a
// strategy that stamps and reads as it does, whose GC policy is gc.
func defaultConformance(s ttl.Strategy, d time.Duration, gc string) conformance {
	return conformance{
		strategy: s,
		gc:       gc,
		writes: []write{
			{"default", ttl.Default, ms(base)},                                // the real write time
			{"shorter", ttl.For(time.Hour), ms(hour.Add(-d))},                 // earlier
			{"longer", ttl.For(72 * time.Hour), ms(base.Add(24 * time.Hour))}, // later
			{"until", ttl.Until(hour.Add(500 * time.Microsecond)), ms(hour.Add(-d))},
			{"forever", ttl.Forever, ttl.MaxTimestamp - bigtable.Timestamp(d/time.Microsecond)},
		},
		refuses: []refusal{
			{ttl.Version(1), ttl.ErrLifetime},
			{ttl.For(0), ttl.ErrExpired},
			{ttl.For(time.Microsecond), ttl.ErrExpired},
			{ttl.Until(base.Add(-time.Nanosecond)), ttl.ErrExpired},
			{ttl.Until(beyond), ttl.ErrOutOfRange},
			{ttl.Until(time.UnixMilli(maxSeq)), ttl.ErrOutOfRange}, // Forever's millisecond
		},
		live: func(ws []write, i int, now time.Time) bool { return ws[i].wantTS.Time().Add(d).After(now) }, // ts + d > now
		probes: []time.Time{
			base, hour.Add(-time.Millisecond), hour.Add(-1), hour, base.Add(d - time.Millisecond), base.Add(d),
			base.Add(72*time.Hour - time.Millisecond), base.Add(72 * time.Hour), farFuture,
		},
	}
}

// TestStrategies runs every strategy through the conformance contract. A
// Counter and a Grace stamp and read as the strategy they wrap; only their
// GC policies differ (a Counter's family is also an aggregate family,
// which policy checks).
func TestStrategies(t *testing.T) {
	d := 48 * time.Hour
	for _, c := range []struct {
		name string
		c    conformance
	}{
		{"OneSecond", oneSecondConformance(ttl.OneSecond(), "age() > 1000000")},
		{"Grace(OneSecond)", oneSecondConformance(ttl.Grace(ttl.OneSecond(), 10*time.Minute), "age() > 10m")},
		{"Counter(OneSecond)", oneSecondConformance(ttl.Counter(ttl.OneSecond()), "age() > 1000000")},
		{"DefaultExpiration", defaultConformance(ttl.DefaultExpiration(d), d, "age() > 2d")},
		{"Grace(DefaultExpiration)", defaultConformance(ttl.Grace(ttl.DefaultExpiration(d), time.Hour), d, "age() > 49h")},
		{"Counter(Grace(DefaultExpiration))", defaultConformance(ttl.Counter(ttl.Grace(ttl.DefaultExpiration(d), time.Hour)), d, "age() > 49h")},
	} {
		t.Run(c.name, func(t *testing.T) { subtestStrategy(t, c.c) })
	}

	// A move from DefaultExpiration(48h) to OneSecond, written an hour
	// before its Start and at its Start: before, the old encoding, which
	// must stay below the boundary (Start), and longer lifetimes wait for
	// Start; from Start, the new one. Each cell is read by its side's rule.
	moveLive := func(start time.Time) func(ws []write, i int, now time.Time) bool {
		return func(ws []write, i int, now time.Time) bool {
			if ts := ws[i].wantTS; ts >= ms(start) { // the new side: OneSecond's rule
				return ts == ttl.MaxTimestamp || ts.Time().After(now)
			}
			return ws[i].wantTS.Time().Add(d).After(now) // the old side: DefaultExpiration's
		}
	}
	moveProbes := []time.Time{
		base, hour.Add(-time.Millisecond), hour, base.Add(d - time.Millisecond), base.Add(d),
		base.Add(72*time.Hour - time.Millisecond), base.Add(72 * time.Hour), farFuture,
	}
	t.Run("Move before Start", func(t *testing.T) {
		subtestStrategy(t, conformance{
			strategy: ttl.Move{From: ttl.DefaultExpiration(d), To: ttl.OneSecond(), Start: hour},
			gc:       "age() > 2d",
			writes: []write{
				{"default", ttl.Default, ms(base)},                // the write time
				{"shorter", ttl.For(time.Hour), ms(hour.Add(-d))}, // expiry − 48h
				{"until", ttl.Until(hour), ms(hour.Add(-d))},
			},
			refuses: []refusal{
				{ttl.For(72 * time.Hour), ttl.ErrLifetime}, // base + 24h: past the boundary
				{ttl.Forever, ttl.ErrLifetime},
				{ttl.Version(1), ttl.ErrLifetime},
				{ttl.For(0), ttl.ErrExpired},
				{ttl.Until(beyond), ttl.ErrOutOfRange},
			},
			live:   moveLive(hour),
			probes: moveProbes,
		})
	})
	t.Run("Move from Start", func(t *testing.T) {
		subtestStrategy(t, conformance{
			strategy: ttl.Move{From: ttl.DefaultExpiration(d), To: ttl.OneSecond(), Start: base},
			gc:       "age() > 2d",
			writes: []write{
				{"default", ttl.Default, ms(base.Add(d))}, // the old default, in the new encoding
				{"shorter", ttl.For(time.Hour), ms(hour)},
				{"longer", ttl.For(72 * time.Hour), ms(base.Add(72 * time.Hour))},
				{"forever", ttl.Forever, ttl.MaxTimestamp},
			},
			refuses: []refusal{
				{ttl.Version(1), ttl.ErrLifetime},
				{ttl.For(0), ttl.ErrExpired},
				{ttl.Until(base), ttl.ErrExpired},
				{ttl.Until(beyond), ttl.ErrOutOfRange},
			},
			live:   moveLive(base),
			probes: moveProbes,
		})
	})

	t.Run("SequenceNumbers", func(t *testing.T) {
		var ws []write
		for v := int64(1); v <= 5; v++ {
			ws = append(ws, write{"c", ttl.Version(v), bigtable.Timestamp(v * 1000)})
		}
		ws = append(ws,
			write{"zero", ttl.Version(0), 0},
			write{"max", ttl.Version(maxSeq), ttl.MaxTimestamp})
		subtestStrategy(t, conformance{
			strategy: ttl.SequenceNumbers(3),
			gc:       "versions() > 3",
			writes:   ws,
			refuses: []refusal{
				{ttl.Default, ttl.ErrLifetime},
				{ttl.For(time.Hour), ttl.ErrLifetime},
				{ttl.Until(hour), ttl.ErrLifetime},
				{ttl.Forever, ttl.ErrLifetime},
				{ttl.Version(-1), ttl.ErrOutOfRange},
				{ttl.Version(maxSeq + 1), ttl.ErrOutOfRange},
				{ttl.Version(math.MaxInt64), ttl.ErrOutOfRange},
			},
			live: func(ws []write, i int, _ time.Time) bool { // among the newest 3 of its column
				newer := 0
				for _, w := range ws {
					if w.column == ws[i].column && w.wantTS > ws[i].wantTS {
						newer++
					}
				}
				return newer < 3
			},
			probes: []time.Time{base, farFuture},
		})
	})
}

// TestInvalidStrategies checks that a strategy made with bad arguments
// refuses every write, passes no cell and asks for no GC.
func TestInvalidStrategies(t *testing.T) {
	for _, s := range []ttl.Strategy{
		ttl.DefaultExpiration(0),
		ttl.DefaultExpiration(-time.Hour),
		ttl.DefaultExpiration(1500 * time.Microsecond),
		ttl.SequenceNumbers(0),
		ttl.SequenceNumbers(-1),
		ttl.SequenceNumbers(math.MaxInt32 + 1),
	} {
		for _, life := range []ttl.Lifetime{ttl.Default, ttl.For(time.Hour), ttl.Version(1), ttl.Forever} {
			if ts, err := s.Timestamp(base, life); !errors.Is(err, ttl.ErrInvalidStrategy) {
				t.Errorf("%v.Timestamp(base, %v) = %d, %v want ErrInvalidStrategy", s, life, ts, err)
			}
		}
		if got := s.Filter(base).String(); got != bigtable.BlockAllFilter().String() {
			t.Errorf("%v.Filter(base) = %s want %s", s, got, bigtable.BlockAllFilter())
		}
		if got := s.GCPolicy().String(); got != bigtable.NoGcPolicy().String() {
			t.Errorf("%v.GCPolicy() = %q want no GC", s, got)
		}
	}
}

// TestTimestampPure checks that Timestamp depends only on its arguments.
func TestTimestampPure(t *testing.T) {
	for _, s := range []ttl.Strategy{ttl.OneSecond(), ttl.DefaultExpiration(time.Hour)} {
		a, errA := s.Timestamp(base, ttl.For(time.Minute))
		b, errB := s.Timestamp(base, ttl.For(time.Minute))
		c, _ := s.Timestamp(base.Add(time.Second), ttl.For(time.Minute))
		if a != b || errA != nil || errB != nil || c != a+1_000_000 {
			t.Errorf("%v: Timestamp(base, For(1m)) = %d, %d; a second later %d", s, a, b, c)
		}
	}
}

func TestStrings(t *testing.T) {
	for _, tt := range []struct {
		v    fmt.Stringer
		want string
	}{
		{ttl.OneSecond().(fmt.Stringer), "OneSecond()"},
		{ttl.DefaultExpiration(48 * time.Hour).(fmt.Stringer), "DefaultExpiration(48h0m0s)"},
		{ttl.SequenceNumbers(3).(fmt.Stringer), "SequenceNumbers(3)"},
		{ttl.Default, "Default"},
		{ttl.Forever, "Forever"},
		{ttl.For(time.Hour), "For(1h0m0s)"},
		{ttl.Until(base), "Until(2030-04-30T09:00:00Z)"},
		{ttl.Version(7), "Version(7)"},
	} {
		if got := tt.v.String(); got != tt.want {
			t.Errorf("String() = %q want %q", got, tt.want)
		}
	}
}

// TestStrategiesEqual checks that strategies are comparable values, which
// lets a Table group families that share one.
func TestStrategiesEqual(t *testing.T) {
	if ttl.OneSecond() != ttl.OneSecond() || ttl.DefaultExpiration(time.Hour) != ttl.DefaultExpiration(time.Hour) ||
		ttl.SequenceNumbers(2) != ttl.SequenceNumbers(2) {
		t.Error("equal arguments made unequal strategies")
	}
	if ttl.DefaultExpiration(time.Hour) == ttl.DefaultExpiration(2*time.Hour) {
		t.Error("different defaults made equal strategies")
	}
}

// The package's own tests that remain here (the conformance cases, the
// examples) share these; the others stand in tests/, one package per
// concern, on testkit.

// base is the fake clocks' starting instant; ms a time's Bigtable
// timestamp.
var (
	base = testkit.Base
	ms   = testkit.MS
)

// cell is a testkit.Cell of the package's own, which the tests spell
// without field names.
type cell struct {
	Column string
	Value  string
	TS     bigtable.Timestamp
}

// cells flattens a row, sorted by column then newest first.
func cells(r bigtable.Row) []cell {
	var out []cell
	for _, c := range testkit.Cells(r) {
		out = append(out, cell(c))
	}
	return out
}
