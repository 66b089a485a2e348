package bench_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
)

// The counter pairs (docs/counters.md): the library's counters against
// what a careful engineer writes by hand on the raw client. impl=raw
// stamps each increment with its window's expiry computed inline
// (handWindowStamp) and sums the windows of a read itself; impl=ttl uses
// Mutation.Add and Table.SumCounter. Each impl runs on a fresh emulator, on
// a table with an aggregate family of int64 sums (Counter(OneSecond())) and
// a plain family for read-modify-write, neither with a GC policy. The clock
// is fixed, so every increment lands in one window's cell.
const (
	benchCounter = "hits" // Counter(OneSecond()): an aggregate family
	benchPlain   = "n"    // a plain family: read-modify-write counters
	benchColumn  = "req"
	benchSum     = 6 // windows summed: the last minute in windows of 10s
	benchWriters = 8 // concurrent writers on one hot counter
)

// benchWindow is the rate limiter's window of docs/counters.md.
var benchWindow = ttl.Window{Size: 10 * time.Second, Keep: 50 * time.Second}

// handWindowStamp is the timestamp of the cell of w's window that holds
// now, written by hand: the window's end plus w.Keep, its expiry, the
// windows aligned to the Unix epoch.
func handWindowStamp(now time.Time, w ttl.Window) bigtable.Timestamp {
	ms, size := now.UnixMilli(), w.Size.Milliseconds()
	start := ms - ms%size
	return bigtable.Timestamp((start + size + w.Keep.Milliseconds()) * 1000)
}

// handAdd is an increment written by hand: AddIntToCell at the stamp of
// the window of now.
func handAdd(now time.Time, delta int64) *bigtable.Mutation {
	m := bigtable.NewMutation()
	m.AddIntToCell(benchCounter, benchColumn, handWindowStamp(now, benchWindow), delta)
	return m
}

// ttlAdd is the same increment as a recipe.
func ttlAdd(delta int64) *ttl.Mutation {
	m := ttl.NewMutation()
	m.Add(benchCounter, benchColumn, delta, benchWindow)
	return m
}

// counterSide is one impl of a counter benchmark, on its own emulator.
type counterSide struct {
	clock *testkit.Clock
	raw   *bigtable.Table
	tbl   *ttl.Table // nil for impl=raw
}

// newCounterSide starts a fresh emulator with the counter table, its
// client connected with opts, and, unless impl is raw, a ttl.Table on it.
// The table is created with its families in one call, so the emulator's
// GC loop does not start.
func newCounterSide(tb testing.TB, impl string, opts ...grpc.DialOption) *counterSide {
	tb.Helper()
	e := emulator.StartForTest(tb, opts...)
	sum := bigtable.AggregateType{Input: bigtable.Int64Type{}, Aggregator: bigtable.SumAggregator{}}
	if err := e.Admin.CreateTableFromConf(context.Background(), &bigtable.TableConf{TableID: "t", ColumnFamilies: map[string]bigtable.Family{
		benchCounter: {ValueType: sum},
		benchPlain:   {},
	}}); err != nil {
		tb.Fatal(err)
	}
	s := &counterSide{clock: testkit.NewClock(testkit.Base.Add(5 * time.Second)), raw: e.Client.Open("t")}
	if impl == "raw" {
		return s
	}
	s.tbl = newCounterTable(tb, s.raw, s.clock)
	checkSameIncrement(tb, s)
	return s
}

// newCounterTable returns the library's table of the counter benchmarks
// on tbl.
func newCounterTable(tb testing.TB, tbl bigtable.TableAPI, clock *testkit.Clock) *ttl.Table {
	tb.Helper()
	t, err := ttl.NewTable(tbl, map[string]ttl.Strategy{benchCounter: ttl.Counter(ttl.OneSecond())},
		ttl.OtherFamilies(benchPlain), ttl.WithClock(clock.Now))
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// checkSameIncrement makes an increment by hand and one through the
// library, in two rows, and fails unless they stored the same cell: the
// pair is comparable.
func checkSameIncrement(tb testing.TB, s *counterSide) {
	tb.Helper()
	ctx := context.Background()
	if err := s.raw.Apply(ctx, "check-raw", handAdd(s.clock.Now(), 3)); err != nil {
		tb.Fatal(err)
	}
	if err := s.tbl.Apply(ctx, "check-ttl", ttlAdd(3)); err != nil {
		tb.Fatal(err)
	}
	cells := func(row string) string {
		r, err := s.raw.ReadRow(ctx, row)
		if err != nil {
			tb.Fatal(err)
		}
		var out []string
		for _, it := range r[benchCounter] {
			out = append(out, fmt.Sprintf("%s@%d=%x", it.Column, it.Timestamp, it.Value))
		}
		return fmt.Sprint(out)
	}
	if hand, lib := cells("check-raw"), cells("check-ttl"); hand != lib {
		tb.Fatalf("the library stored %s, the hand-written increment %s: the pair is not comparable", lib, hand)
	}
}

// counterValue reads the counter family:benchColumn of row through the
// raw client: the sum of its windows in the aggregate family, the newest
// cell in the plain one (each read-modify-write adds a version).
func counterValue(b *testing.B, raw *bigtable.Table, row, family string) int64 {
	b.Helper()
	r, err := raw.ReadRow(context.Background(), row)
	if err != nil {
		b.Fatal(err)
	}
	var sum int64
	for _, it := range r[family] {
		sum += int64(binary.BigEndian.Uint64(it.Value))
		if family == benchPlain {
			break // newest first
		}
	}
	return sum
}

// forCounterImpls runs bench as one sub-benchmark per impl, each on a
// fresh counter side.
func forCounterImpls(b *testing.B, bench func(b *testing.B, s *counterSide)) {
	for _, impl := range []string{"raw", "ttl"} {
		b.Run("impl="+impl, func(b *testing.B) {
			bench(b, newCounterSide(b, impl))
		})
	}
}

// TestCounterRequests checks that the counter pairs compare like with
// like on the wire (rpc_test.go's wire): an increment sends the same
// request by hand and through the library, and a sum the same call and
// response. It logs what each costs, the read-modify-write of
// BenchmarkHotCounter's raw side among them.
func TestCounterRequests(t *testing.T) {
	ctx := context.Background()
	w := &wire{calls: map[string]int{}, sentBy: map[string]int{}}
	s := newCounterSide(t, "ttl", w.dialOptions()...)
	now := s.clock.Now()
	for k := range 10 {
		require.NoError(t, s.raw.Apply(ctx, "r", handAdd(now.Add(-time.Duration(k)*benchWindow.Size), int64(k+1))))
	}
	byHand := w.measure(t, func() error { return s.raw.Apply(ctx, "a", handAdd(now, 1)) })
	lib := w.measure(t, func() error { return s.tbl.Apply(ctx, "b", ttlAdd(1)) })
	t.Logf("CounterAdd: raw: %v; ttl: %v", byHand, lib)
	assert.Equal(t, byHand, lib, "an increment: the same request")

	var handTotal, libTotal int64
	byHand = w.measure(t, func() (err error) { handTotal, err = handSum(ctx, s.raw, now, "r"); return err })
	lib = w.measure(t, func() (err error) {
		libTotal, err = s.tbl.SumCounter(ctx, "r", benchCounter, benchColumn, benchWindow, benchSum)
		return err
	})
	t.Logf("CounterSum: raw: %v; ttl: %v", byHand, lib)
	assert.Equal(t, handTotal, libTotal)
	assert.Equal(t, byHand.Calls, lib.Calls, "a sum: one read")
	assert.Equal(t, byHand.Recv, lib.Recv, "a sum: the same cells")

	rmw := w.measure(t, func() error {
		m := bigtable.NewReadModifyWrite()
		m.Increment(benchPlain, benchColumn, 1)
		_, err := s.raw.ApplyReadModifyWrite(ctx, "hot", m)
		return err
	})
	t.Logf("HotCounter: raw (read-modify-write): %v; ttl: as CounterAdd", rmw)
}

// BenchmarkCounterAdd adds 1 to a counter: an AddIntToCell in a MutateRow,
// stamped by hand, or Mutation.Add through Table.Apply. Both send the same
// request.
func BenchmarkCounterAdd(b *testing.B) {
	ctx := context.Background()
	forCounterImpls(b, func(b *testing.B, s *counterSide) {
		b.ReportAllocs()
		stopCPU := reportCPU(b)
		b.ResetTimer()
		for range b.N {
			var err error
			if s.tbl == nil {
				err = s.raw.Apply(ctx, "r", handAdd(s.clock.Now(), 1))
			} else {
				err = s.tbl.Apply(ctx, "r", ttlAdd(1))
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		stopCPU()
		if got := counterValue(b, s.raw, "r", benchCounter); got != int64(b.N) {
			b.Fatalf("the counter holds %d after %d increments", got, b.N)
		}
	})
}

// BenchmarkClientCounterAdd is BenchmarkCounterAdd without a server: the
// client-side cost of the recipe, its window and its stamp, over building
// the AddIntToCell by hand.
func BenchmarkClientCounterAdd(b *testing.B) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base.Add(5 * time.Second))
	b.Run("impl=raw", func(b *testing.B) {
		var api bigtable.TableAPI = testkit.Nop{}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if err := api.Apply(ctx, "r", handAdd(clock.Now(), 1)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=ttl", func(b *testing.B) {
		tbl := newCounterTable(b, testkit.Nop{}, clock)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if err := tbl.Apply(ctx, "r", ttlAdd(1)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkHotCounter increments one hot counter from benchWriters
// concurrent writers: impl=raw with ReadModifyWrite.Increment on a plain
// family (a single-row transaction), impl=ttl with Mutation.Add, a blind
// write to the aggregate family. It reports increments a second (incr/s)
// besides the time per increment.
func BenchmarkHotCounter(b *testing.B) {
	ctx := context.Background()
	forCounterImpls(b, func(b *testing.B, s *counterSide) {
		family := benchCounter
		inc := func() error { return s.tbl.Apply(ctx, "hot", ttlAdd(1)) }
		if s.tbl == nil {
			family = benchPlain
			inc = func() error {
				rmw := bigtable.NewReadModifyWrite()
				rmw.Increment(benchPlain, benchColumn, 1)
				_, err := s.raw.ApplyReadModifyWrite(ctx, "hot", rmw)
				return err
			}
		}
		b.ReportAllocs()
		stopCPU := reportCPU(b)
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, benchWriters)
		b.ResetTimer()
		start := time.Now()
		for range benchWriters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= int64(b.N) {
					if err := inc(); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		b.StopTimer()
		stopCPU()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.N)/elapsed.Seconds(), "incr/s")
		if got := counterValue(b, s.raw, "hot", family); got != int64(b.N) {
			b.Fatalf("the counter holds %d after %d increments", got, b.N)
		}
	})
}

// BenchmarkCounterSum reads a sliding minute: the sum of the last 6
// windows of 10 seconds, of a counter that holds 10 windows, 6 of them
// live. impl=raw reads the 6 windows' cells by hand (the column, the
// timestamps of their stamps) and sums them; impl=ttl calls SumCounter.
func BenchmarkCounterSum(b *testing.B) {
	ctx := context.Background()
	forCounterImpls(b, func(b *testing.B, s *counterSide) {
		now := s.clock.Now()
		var want int64
		for k := range 10 {
			if err := s.raw.Apply(ctx, "r", handAdd(now.Add(-time.Duration(k)*benchWindow.Size), int64(k+1))); err != nil {
				b.Fatal(err)
			}
			if k < benchSum {
				want += int64(k + 1)
			}
		}
		b.ReportAllocs()
		defer reportCPU(b)()
		b.ResetTimer()
		for range b.N {
			var sum int64
			var err error
			if s.tbl == nil {
				sum, err = handSum(ctx, s.raw, s.clock.Now(), "r")
			} else {
				sum, err = s.tbl.SumCounter(ctx, "r", benchCounter, benchColumn, benchWindow, benchSum)
			}
			if err != nil || sum != want {
				b.Fatalf("sum %d, error %v; want %d", sum, err, want)
			}
		}
	})
}

// handSum is SumCounter written by hand for the benchmark's counter: read
// the cells stamped from the oldest window summed to the current one, and
// add up their 8-byte big-endian values. Keep covers the windows summed,
// so every cell in that span is live.
func handSum(ctx context.Context, tbl *bigtable.Table, now time.Time, row string) (int64, error) {
	oldest := handWindowStamp(now.Add(-(benchSum-1)*benchWindow.Size), benchWindow)
	newest := handWindowStamp(now, benchWindow)
	r, err := tbl.ReadRow(ctx, row, bigtable.RowFilter(bigtable.ChainFilters(
		bigtable.ColumnRangeFilter(benchCounter, benchColumn, benchColumn+"\x00"),
		bigtable.TimestampRangeFilterMicros(oldest, newest+1000))))
	var sum int64
	for _, it := range r[benchCounter] {
		sum += int64(binary.BigEndian.Uint64(it.Value))
	}
	return sum, err
}
