package bench_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
)

// The benchmarks compare the library with what a careful engineer writes by
// hand on the raw client: the same timestamps computed inline, the same
// filter. Each benchmark has sub-benchmarks named impl=…, so that
//
//	benchstat -col /impl@(raw ttl) results.txt
//
// prints each pair side by side with the ratio. The impls are:
//
//	raw             the raw client, timestamps and filter written by hand
//	ttl             the library, families declared with OtherFamilies
//	ttl-undeclared  the library without OtherFamilies: a regex in the filter
//	ttl-wt          the library with RecordWriteTime (companion cells)
//	ttl-wt-read     the same, reading WithWriteTimes
//	ttl-keepalive   the library, reading with KeepAlive (bench_idle_test.go)
//
// Each impl runs on a fresh in-process emulator, on a table with a managed
// family (OneSecond) and an unmanaged one, neither with a GC policy, so the
// emulator's GC loop does no work. The clock is fixed: every iteration
// writes the same timestamps, which replace the cells of the last one, so
// rows do not grow.
const (
	benchManaged = "f" // OneSecond
	benchOther   = "u" // no strategy
	benchRows    = 500 // rows of ApplyBulk and ReadRows
)

var (
	benchColumns = []string{"c0", "c1", "c2", "c3", "c4"}
	benchValue   = bytes.Repeat([]byte("v"), 32)
	benchKeys    = rowKeys(benchRows)
	// Results kept so that the compiler cannot drop the work.
	sinkTimestamp bigtable.Timestamp
	sinkFilter    bigtable.Filter
)

// rowKeys returns n sorted row keys.
func rowKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("r%07d", i)
	}
	return keys
}

// handFilter is the read filter written by hand for the benchmark table:
// the managed family's cells whose timestamp (under OneSecond, the expiry)
// is after now, interleaved with the unmanaged family, selected without a
// regular expression.
func handFilter(now time.Time) bigtable.Filter {
	return bigtable.InterleaveFilters(
		bigtable.ChainFilters(
			bigtable.ColumnRangeFilter(benchManaged, "", ""),
			bigtable.TimestampRangeFilterMicros(bigtable.Time(now)+1000, 0)),
		bigtable.ColumnRangeFilter(benchOther, "", ""))
}

// handMutation is the 5-cell mutation written by hand: each cell lives for
// life from now, its timestamp the expiry rounded down to the millisecond.
func handMutation(now time.Time, life time.Duration) *bigtable.Mutation {
	m := bigtable.NewMutation()
	ts := bigtable.Time(now.Add(life))
	for _, c := range benchColumns {
		m.Set(benchManaged, c, ts, benchValue)
	}
	return m
}

// ttlMutation is the same mutation as a recipe.
func ttlMutation(life time.Duration) *ttl.Mutation {
	m := ttl.NewMutation()
	for _, c := range benchColumns {
		m.Set(benchManaged, c, benchValue, ttl.For(life))
	}
	return m
}

// writeBenchRow writes the same row through a RowWriter, for an hour.
func writeBenchRow(w ttl.RowWriter) {
	for _, c := range benchColumns {
		w.Set(benchManaged, c, benchValue, ttl.For(time.Hour))
	}
}

// side is one impl of a benchmark, on its own emulator.
type side struct {
	impl  string
	clock *testkit.Clock
	raw   *bigtable.Table
	tbl   *ttl.Table // nil for impl=raw
	read  []ttl.ReadOption
}

// newSide starts a fresh emulator with the benchmark table and, unless
// impl is raw, a ttl.Table on it configured as impl says.
func newSide(b *testing.B, impl string) *side {
	b.Helper()
	s := &side{impl: impl, clock: testkit.NewClock(testkit.Base)}
	s.raw = emulator.StartForTest(b).TableForTest(b, "t", map[string]bigtable.GCPolicy{benchManaged: nil, benchOther: nil})
	if impl == "raw" {
		return s
	}
	s.tbl = newBenchTable(b, s.raw, impl, s.clock)
	switch impl {
	case "ttl-wt-read":
		s.read = []ttl.ReadOption{ttl.WithWriteTimes()}
	case "ttl-keepalive":
		s.read = []ttl.ReadOption{ttl.KeepAlive(benchIdle)}
	}
	return s
}

// newBenchTable returns the ttl.Table of impl on tbl.
func newBenchTable(b *testing.B, tbl bigtable.TableAPI, impl string, clock *testkit.Clock) *ttl.Table {
	b.Helper()
	opts := []ttl.Option{ttl.WithClock(clock.Now)}
	switch impl {
	case "ttl", "ttl-keepalive":
		opts = append(opts, ttl.OtherFamilies(benchOther))
	case "ttl-undeclared":
	case "ttl-wt", "ttl-wt-read":
		opts = append(opts, ttl.OtherFamilies(benchOther), ttl.RecordWriteTime())
	default:
		b.Fatalf("unknown impl %q", impl)
	}
	t, err := ttl.NewTable(tbl, map[string]ttl.Strategy{benchManaged: ttl.OneSecond()}, opts...)
	if err != nil {
		b.Fatal(err)
	}
	if impl == "ttl" {
		if got, want := t.ReadFilter(testkit.Base).String(), handFilter(testkit.Base).String(); got != want {
			b.Fatalf("the library's filter is %s, the hand-written one %s: the pair is not comparable", got, want)
		}
	}
	return t
}

// reportCPU starts counting the CPU time of the process, and returns a
// function that reports it per iteration as cpu-ns/op. It counts the
// client, the in-process emulator and the Go runtime alike: the work an
// operation costs. On a machine shared with other work, wall time varies
// with their load; CPU time much less.
func reportCPU(b *testing.B) func() {
	start, ok := testkit.CPUTime(b)
	return func() {
		if end, _ := testkit.CPUTime(b); ok {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// forImpls runs bench as one sub-benchmark per impl, each on a fresh side.
func forImpls(b *testing.B, impls []string, bench func(b *testing.B, s *side)) {
	for _, impl := range impls {
		b.Run("impl="+impl, func(b *testing.B) {
			bench(b, newSide(b, impl))
		})
	}
}

// write applies the 5-cell mutation to row, through the library or by
// hand, at the side's clock.
func (s *side) write(b *testing.B, row string, life time.Duration) {
	b.Helper()
	ctx := context.Background()
	var err error
	if s.tbl == nil {
		err = s.raw.Apply(ctx, row, handMutation(s.clock.Now(), life))
	} else {
		err = s.tbl.Apply(ctx, row, ttlMutation(life))
	}
	if err != nil {
		b.Fatal(err)
	}
}

// readRow reads row as the side reads it.
func (s *side) readRow(b *testing.B, row string) bigtable.Row {
	ctx := context.Background()
	var r bigtable.Row
	var err error
	if s.tbl == nil {
		r, err = s.raw.ReadRow(ctx, row, bigtable.RowFilter(handFilter(s.clock.Now())))
	} else {
		r, err = s.tbl.ReadRow(ctx, row, s.read...)
	}
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// scan reads every row as the side reads it and returns the number of rows
// and of cells.
func (s *side) scan(b *testing.B) (rows, cells int) {
	ctx := context.Background()
	f := func(r bigtable.Row) bool {
		rows++
		for _, items := range r {
			cells += len(items)
		}
		return true
	}
	var err error
	if s.tbl == nil {
		err = s.raw.ReadRows(ctx, bigtable.InfiniteRange(""), f, bigtable.RowFilter(handFilter(s.clock.Now())))
	} else {
		err = s.tbl.ReadRows(ctx, bigtable.InfiniteRange(""), f, s.read...)
	}
	if err != nil {
		b.Fatal(err)
	}
	return rows, cells
}

var (
	writeImpls = []string{"raw", "ttl", "ttl-wt"}
	readImpls  = []string{"raw", "ttl", "ttl-undeclared", "ttl-wt", "ttl-wt-read"}
	condImpls  = []string{"raw", "ttl", "ttl-undeclared"}
)

// BenchmarkApply writes a 5-cell mutation to one row.
func BenchmarkApply(b *testing.B) { forImpls(b, writeImpls, benchApply) }

// benchApply is BenchmarkApply's work on a side (BenchmarkScheduleApply's
// too).
func benchApply(b *testing.B, s *side) {
	b.ReportAllocs()
	defer reportCPU(b)()
	b.ResetTimer()
	for range b.N {
		s.write(b, "r", time.Hour)
	}
}

// BenchmarkApplyBulk writes a 5-cell mutation to each of 500 rows in one
// call.
func BenchmarkApplyBulk(b *testing.B) { forImpls(b, writeImpls, benchApplyBulk) }

// benchApplyBulk is BenchmarkApplyBulk's work on a side
// (BenchmarkScheduleApplyBulk's too).
func benchApplyBulk(b *testing.B, s *side) {
	ctx := context.Background()
	b.ReportAllocs()
	defer reportCPU(b)()
	b.ResetTimer()
	for range b.N {
		var errs []error
		var err error
		if s.tbl == nil {
			now := s.clock.Now()
			muts := make([]*bigtable.Mutation, len(benchKeys))
			for i := range muts {
				muts[i] = handMutation(now, time.Hour)
			}
			errs, err = s.raw.ApplyBulk(ctx, benchKeys, muts)
		} else {
			muts := make([]*ttl.Mutation, len(benchKeys))
			for i := range muts {
				muts[i] = ttlMutation(time.Hour)
			}
			errs, err = s.tbl.ApplyBulk(ctx, benchKeys, muts)
		}
		if err != nil || errs != nil {
			b.Fatal(err, errs)
		}
	}
}

// BenchmarkReadRow reads one row of 5 live cells.
func BenchmarkReadRow(b *testing.B) {
	forImpls(b, readImpls, func(b *testing.B, s *side) {
		s.write(b, "r", time.Hour)
		b.ReportAllocs()
		defer reportCPU(b)()
		b.ResetTimer()
		for range b.N {
			if r := s.readRow(b, "r"); len(r[benchManaged]) != len(benchColumns) {
				b.Fatalf("read %d cells, want %d", len(r[benchManaged]), len(benchColumns))
			}
		}
	})
}

// BenchmarkReadRows scans 500 rows of 5 cells, 4 of which have expired.
func BenchmarkReadRows(b *testing.B) {
	forImpls(b, readImpls, func(b *testing.B, s *side) {
		seedExpired(b, s)
		b.ReportAllocs()
		defer reportCPU(b)()
		b.ResetTimer()
		for range b.N {
			if rows, cells := s.scan(b); rows != benchRows || cells != benchRows {
				b.Fatalf("read %d rows of %d cells, want %d of %d", rows, cells, benchRows, benchRows)
			}
		}
	})
}

// seedExpired writes the benchmark rows with 5 cells each: c0 to c3
// written two minutes ago to live for one, so expired now, and c4 live.
func seedExpired(b *testing.B, s *side) {
	b.Helper()
	ctx := context.Background()
	now := s.clock.Now()
	muts := func(life time.Duration, cols []string) ([]*bigtable.Mutation, []*ttl.Mutation) {
		hand := bigtable.NewMutation()
		rec := ttl.NewMutation()
		for _, c := range cols {
			hand.Set(benchManaged, c, bigtable.Time(s.clock.Now().Add(life)), benchValue)
			rec.Set(benchManaged, c, benchValue, ttl.For(life))
		}
		raws := make([]*bigtable.Mutation, len(benchKeys))
		recs := make([]*ttl.Mutation, len(benchKeys))
		for i := range raws {
			raws[i], recs[i] = hand, rec
		}
		return raws, recs
	}
	for _, w := range []struct {
		at   time.Time
		life time.Duration
		cols []string
	}{
		{now.Add(-2 * time.Minute), time.Minute, benchColumns[:4]},
		{now, time.Hour, benchColumns[4:]},
	} {
		s.clock.Set(w.at)
		raws, recs := muts(w.life, w.cols)
		var errs []error
		var err error
		if s.tbl == nil {
			errs, err = s.raw.ApplyBulk(ctx, benchKeys, raws)
		} else {
			errs, err = s.tbl.ApplyBulk(ctx, benchKeys, recs)
		}
		if err != nil || errs != nil {
			b.Fatal(err, errs)
		}
	}
	s.clock.Set(now)
}

// BenchmarkCondApply applies a conditional mutation whose predicate, a
// live lock cell, matches: the true branch refreshes a heartbeat cell.
func BenchmarkCondApply(b *testing.B) {
	ctx := context.Background()
	lock := bigtable.ColumnRangeFilter(benchManaged, "lock", "lock\x00")
	forImpls(b, condImpls, func(b *testing.B, s *side) {
		seed := bigtable.NewMutation()
		seed.Set(benchManaged, "lock", bigtable.Time(s.clock.Now().Add(time.Hour)), benchValue)
		if err := s.raw.Apply(ctx, "r", seed); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		defer reportCPU(b)()
		b.ResetTimer()
		for range b.N {
			var matched bool
			var err error
			if s.tbl == nil {
				now := s.clock.Now()
				hb := bigtable.NewMutation()
				hb.Set(benchManaged, "hb", bigtable.Time(now.Add(time.Minute)), benchValue)
				take := bigtable.NewMutation()
				take.Set(benchManaged, "lock", bigtable.Time(now.Add(time.Hour)), benchValue)
				m := bigtable.NewCondMutation(bigtable.ChainFilters(handFilter(now), lock), hb, take)
				err = s.raw.Apply(ctx, "r", m, bigtable.GetCondMutationResult(&matched))
			} else {
				hb := ttl.NewMutation()
				hb.Set(benchManaged, "hb", benchValue, ttl.For(time.Minute))
				take := ttl.NewMutation()
				take.Set(benchManaged, "lock", benchValue, ttl.For(time.Hour))
				m := ttl.NewCondMutation(lock, hb, take)
				err = s.tbl.Apply(ctx, "r", m, bigtable.GetCondMutationResult(&matched))
			}
			if err != nil || !matched {
				b.Fatal(err, matched)
			}
		}
	})
}

// BenchmarkTimestamp computes one cell's timestamp: by hand, and with each
// strategy. It must not allocate.
func BenchmarkTimestamp(b *testing.B) {
	now := testkit.Base
	b.Run("impl=raw", func(b *testing.B) {
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			sinkTimestamp = bigtable.Time(now.Add(time.Hour))
		}
	})
	for _, tt := range []struct {
		impl string
		s    ttl.Strategy
		life ttl.Lifetime
	}{
		{"ttl", ttl.OneSecond(), ttl.For(time.Hour)},
		{"ttl-default", ttl.DefaultExpiration(48 * time.Hour), ttl.Default},
		{"ttl-seqnum", ttl.SequenceNumbers(3), ttl.Version(7)},
	} {
		b.Run("impl="+tt.impl, func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				ts, err := tt.s.Timestamp(now, tt.life)
				if err != nil {
					b.Fatal(err)
				}
				sinkTimestamp = ts
			}
		})
	}
}

// BenchmarkReadFilter builds the benchmark table's read filter: by hand,
// and as each kind of table builds it for a read.
func BenchmarkReadFilter(b *testing.B) {
	now := testkit.Base
	b.Run("impl=raw", func(b *testing.B) {
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			sinkFilter = handFilter(now)
		}
	})
	for _, impl := range []string{"ttl", "ttl-undeclared", "ttl-wt"} {
		b.Run("impl="+impl, func(b *testing.B) {
			tbl := newBenchTable(b, testkit.Nop{}, impl, testkit.NewClock(now))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				sinkFilter = tbl.ReadFilter(now)
			}
		})
	}
}

// clientPair runs a client-side pair: raw on a TableAPI that sends
// nothing, given the clock's now, and lib (impl=ttl, through recipes) and
// direct (impl=ttl-direct, through ApplyRow or ApplyBatch; nil: none) on
// the benchmark's ttl.Table over it, reading the same clock. All report
// CPU time (cpu-ns/op) beside wall time: on a machine other work loads,
// the CPU time of so short an operation varies far less.
func clientPair(b *testing.B, raw func(api bigtable.TableAPI, now time.Time) error, lib, direct func(tbl *ttl.Table) error) {
	clientPairOn(b, func(b *testing.B, clock *testkit.Clock) *ttl.Table {
		return newBenchTable(b, testkit.Nop{}, "ttl", clock)
	}, raw, lib, direct)
}

// clientPairOn is clientPair with the ttl.Table that table makes over a
// TableAPI that sends nothing.
func clientPairOn(b *testing.B, table func(b *testing.B, clock *testkit.Clock) *ttl.Table,
	raw func(api bigtable.TableAPI, now time.Time) error, lib, direct func(tbl *ttl.Table) error) {
	clock := testkit.NewClock(testkit.Base)
	b.Run("impl=raw", func(b *testing.B) {
		var api bigtable.TableAPI = testkit.Nop{}
		b.ReportAllocs()
		defer reportCPU(b)()
		b.ResetTimer()
		for range b.N {
			if err := raw(api, clock.Now()); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, impl := range []struct {
		name  string
		write func(tbl *ttl.Table) error
	}{{"impl=ttl", lib}, {"impl=ttl-direct", direct}} {
		if impl.write == nil {
			continue
		}
		b.Run(impl.name, func(b *testing.B) {
			tbl := table(b, clock)
			b.ReportAllocs()
			defer reportCPU(b)()
			b.ResetTimer()
			for range b.N {
				if err := impl.write(tbl); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkClientApply is BenchmarkApply without a server: the client-side
// cost of the recipe over building the mutation by hand, which the
// emulator's work hides.
func BenchmarkClientApply(b *testing.B) {
	ctx := context.Background()
	clientPair(b, func(api bigtable.TableAPI, now time.Time) error {
		return api.Apply(ctx, "r", handMutation(now, time.Hour))
	}, func(tbl *ttl.Table) error {
		return tbl.Apply(ctx, "r", ttlMutation(time.Hour))
	}, func(tbl *ttl.Table) error {
		return tbl.ApplyRow(ctx, "r", writeBenchRow)
	})
}

// BenchmarkClientApplyBulk is BenchmarkApplyBulk without a server: the
// client-side cost of building 500 rows as recipes and then as
// bigtable.Mutations (grouping included), over building them by hand.
func BenchmarkClientApplyBulk(b *testing.B) {
	ctx := context.Background()
	clientPair(b, func(api bigtable.TableAPI, now time.Time) error {
		muts := make([]*bigtable.Mutation, len(benchKeys))
		for i := range muts {
			muts[i] = handMutation(now, time.Hour)
		}
		return noErrors(api.ApplyBulk(ctx, benchKeys, muts))
	}, func(tbl *ttl.Table) error {
		muts := make([]*ttl.Mutation, len(benchKeys))
		for i := range muts {
			muts[i] = ttlMutation(time.Hour)
		}
		return noErrors(tbl.ApplyBulk(ctx, benchKeys, muts))
	}, func(tbl *ttl.Table) error {
		return noErrors(tbl.ApplyBatch(ctx, benchKeys, func(_ int, w ttl.RowWriter) { writeBenchRow(w) }))
	})
}

// BenchmarkClientReadRow is BenchmarkReadRow without a server: the
// client-side cost of the library's read options and filter. (Not through
// clientPair: the filter passed through a func value escapes, which adds
// two allocations to the raw side.)
func BenchmarkClientReadRow(b *testing.B) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	b.Run("impl=raw", func(b *testing.B) {
		var api bigtable.TableAPI = testkit.Nop{}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if _, err := api.ReadRow(ctx, "r", bigtable.RowFilter(handFilter(clock.Now()))); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=ttl", func(b *testing.B) {
		tbl := newBenchTable(b, testkit.Nop{}, "ttl", clock)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if _, err := tbl.ReadRow(ctx, "r"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
