package sweep_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	btpb "cloud.google.com/go/bigtable/apiv2/bigtablepb"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
	"github.com/cellttl/ttl/sweep"
)

// What a sweep costs (docs/benchmarks.md, "Sweeps"). BenchmarkSweepTransfer
// measures what one round transfers against a full audit of the same
// table, both reading values: on a table whose expiries are spread evenly
// over sweepSpan, a 10-second round reads 1% of its cells. It reports per
// operation, besides time and allocations:
//
//	wire-B/op   the size of the ReadRows responses (protobuf), as sent
//	chunk-B/op  the size of their cell chunks alone (see wireCounter)
//	read-B/op   what the scan counts as returned: keys, columns, timestamps, values
//	cells/op    the cells returned (scan.Stats.CellsReturned)
//	seen/op     the cells the server read to return them
//
// BenchmarkSweepDelay measures, on a fake clock, how long after its expiry
// each cell's event is delivered by a sweep every 10 seconds with the
// default margin.
//
//	go test -run '^$' -bench '^BenchmarkSweep' -benchtime 1x ./sweep
const (
	sweepFamily  = "f"
	sweepColumns = 5   // cells a row
	sweepValue   = 100 // bytes a value
	sweepSpan    = 1000 * time.Second
	sweepPeriod  = 10 * time.Second
	sweepStride  = 7919 // a prime: spreads the expiries over the rows
	readRowsRPC  = "/google.bigtable.v2.Bigtable/ReadRows"
)

var (
	// sweepStrategy keeps expired cells an hour, so that a sweep misses
	// none (Report.Missed stays empty).
	sweepStrategy = ttl.Grace(ttl.OneSecond(), time.Hour)
	sweepFamilies = map[string]ttl.Strategy{sweepFamily: sweepStrategy}
	// sweepFrom is where the measured round starts: half of the table
	// expired before it (still stored, within the grace), 1% in the
	// round's 10 seconds, the rest later.
	sweepFrom = testkit.Base.Add(sweepSpan / 2)
)

// wireCounter counts the bytes of the ReadRows responses a client
// receives: all of them, and those of their cell chunks alone. The rest is
// the requests' stats and, from the emulator, a response naming the last
// row scanned for every row the filter dropped (Bigtable sends those now
// and then, as heartbeats of a long scan).
type wireCounter struct{ all, chunks atomic.Int64 }

func (w *wireCounter) reset() { w.all.Store(0); w.chunks.Store(0) }

func (w *wireCounter) option() grpc.DialOption {
	return grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
		streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		s, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil || method != readRowsRPC {
			return s, err
		}
		return countedStream{s, w}, nil
	})
}

type countedStream struct {
	grpc.ClientStream
	w *wireCounter
}

func (s countedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if resp, ok := m.(*btpb.ReadRowsResponse); ok && err == nil {
		s.w.all.Add(int64(proto.Size(resp)))
		for _, c := range resp.Chunks {
			s.w.chunks.Add(int64(proto.Size(c)))
		}
	}
	return err
}

// sweepTable creates table "t" with the family of sweepStrategy (in one
// call, so the emulator's GC loop does not start) and loads it with cells
// cells, sweepColumns a row, 100-byte values, their expiries those of
// expiry(i) for the i-th cell written.
func sweepTable(b *testing.B, e *emulator.Emulator, cells int, expiry func(i int) time.Time) bigtable.TableAPI {
	b.Helper()
	ctx := context.Background()
	if err := e.Admin.CreateTableFromConf(ctx, &bigtable.TableConf{TableID: "t", ColumnFamilies: map[string]bigtable.Family{
		sweepFamily: {GCPolicy: sweepStrategy.GCPolicy()},
	}}); err != nil {
		b.Fatal(err)
	}
	raw := e.Client.Open("t")
	value := make([]byte, sweepValue)
	const chunk = 5000 // rows a request
	rows := cells / sweepColumns
	for first := 0; first < rows; first += chunk {
		n := min(chunk, rows-first)
		keys := make([]string, n)
		muts := make([]*bigtable.Mutation, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("r%07d", first+i)
			muts[i] = bigtable.NewMutation()
			for c := range sweepColumns {
				// Under OneSecond a cell's timestamp is its expiry.
				muts[i].Set(sweepFamily, fmt.Sprint("c", c), bigtable.Time(expiry((first+i)*sweepColumns+c)), value)
			}
		}
		if errs, err := raw.ApplyBulk(ctx, keys, muts); err != nil || errs != nil {
			b.Fatal(err, errs)
		}
	}
	return raw
}

// evenExpiry spreads the expiries of n cells evenly over sweepSpan from
// testkit.Base, one every sweepSpan/n, in an order that scatters them over
// the rows: the cells of any 10 seconds are 1% of the table, spread
// through it.
func evenExpiry(n int) func(i int) time.Time {
	step := sweepSpan / time.Duration(n)
	return func(i int) time.Time {
		return testkit.Base.Add(time.Duration(i*sweepStride%n) * step)
	}
}

// BenchmarkSweepTransfer compares what one sweep round reads (impl=sweep,
// cell events with values) with a full audit with values (impl=audit), on
// the same table of 100,000 and of 1,000,000 cells; the round's window,
// 10 seconds after sweepFrom, holds 1% of them.
func BenchmarkSweepTransfer(b *testing.B) {
	for _, cells := range []int{100_000, 1_000_000} { // the million: 15 s to load
		b.Run(fmt.Sprintf("cells=%d", cells), func(b *testing.B) {
			var wire wireCounter
			e := emulator.StartForTest(b, wire.option())
			start := time.Now()
			tbl := sweepTable(b, e, cells, evenExpiry(cells))
			b.Logf("loaded %d cells in %v", cells, time.Since(start).Round(time.Millisecond))
			now := sweepFrom.Add(sweepPeriod + sweep.DefaultMargin)
			clock := func() time.Time { return now }
			for _, impl := range []string{"audit", "sweep"} {
				b.Run("impl="+impl, func(b *testing.B) {
					var read scan.Progress
					progress := scan.Options{Progress: func(p scan.Progress) { read = p }}
					var returned, seen int
					b.ReportAllocs()
					b.ResetTimer()
					wire.reset()
					for range b.N {
						switch impl {
						case "audit":
							scanOpts := progress
							scanOpts.Now = clock
							auditor, err := audit.New(e.Admin, tbl, "t", sweepFamilies, audit.Options{Values: true, Scan: scanOpts})
							if err != nil {
								b.Fatal(err)
							}
							a, err := auditor.Run(context.Background())
							if err != nil {
								b.Fatal(err)
							}
							if !a.Read.Complete() || a.Read.CellsReturned != cells {
								b.Fatalf("audit: %+v; want %d cells", a.Read, cells)
							}
							returned, seen = a.Read.CellsReturned, a.Read.CellsSeen
						case "sweep":
							opts := sweep.Options{Since: sweepFrom, Values: true, Scan: progress}
							opts.Scan.Now = clock
							s, err := sweep.New(e.Admin, tbl, "t", sweepFamilies, opts)
							if err != nil {
								b.Fatal(err)
							}
							var events int
							r, err := s.Once(context.Background(), func(_ context.Context, ev []sweep.Event) error {
								events += len(ev)
								return nil
							})
							if err != nil {
								b.Fatal(err)
							}
							if !r.Complete() || events != cells/100 || r.Read.CellsReturned != cells/100 {
								b.Fatalf("sweep: %d events, %v; want %d", events, r, cells/100)
							}
							returned, seen = r.Read.CellsReturned, r.Read.CellsSeen
						}
					}
					b.StopTimer()
					b.ReportMetric(float64(wire.all.Load())/float64(b.N), "wire-B/op")
					b.ReportMetric(float64(wire.chunks.Load())/float64(b.N), "chunk-B/op")
					b.ReportMetric(float64(read.Bytes), "read-B/op")
					b.ReportMetric(float64(returned), "cells/op")
					b.ReportMetric(float64(seen), "seen/op")
				})
			}
		})
	}
}

// BenchmarkSweepDelay sweeps every 10 seconds, with the default margin,
// on a fake clock, a table of 10,000 cells whose expiries fall at random
// (uniformly, at whole milliseconds) over sweepSpan, from the first
// expiry until every cell is reported, and reports how long after its
// expiry each cell's event was delivered: the median (delay-p50-s), the
// 99th percentile (delay-p99-s), the shortest and the longest
// (delay-min-s, delay-max-s), in seconds of the fake clock. Delivering
// takes no time on it, nor do the rounds: on a real table, add a round's
// duration.
func BenchmarkSweepDelay(b *testing.B) {
	const cells = 10_000
	rng := rand.New(rand.NewPCG(1, 2))
	expiries := make([]time.Time, cells)
	for i := range expiries {
		expiries[i] = testkit.Base.Add(time.Duration(rng.Int64N(int64(sweepSpan/time.Millisecond))) * time.Millisecond)
	}
	e := emulator.StartForTest(b)
	tbl := sweepTable(b, e, cells, func(i int) time.Time { return expiries[i] })
	b.ReportAllocs()
	b.ResetTimer()
	var delays []time.Duration
	for range b.N {
		delays = sweepDelays(b, tbl)
	}
	b.StopTimer()
	if len(delays) != cells {
		b.Fatalf("%d events, want one for each of %d cells", len(delays), cells)
	}
	slices.Sort(delays)
	quantile := func(q float64) float64 { return delays[int(q*float64(len(delays)-1)+0.5)].Seconds() }
	b.ReportMetric(quantile(0.5), "delay-p50-s")
	b.ReportMetric(quantile(0.99), "delay-p99-s")
	b.ReportMetric(delays[len(delays)-1].Seconds(), "delay-max-s")
	b.ReportMetric(delays[0].Seconds(), "delay-min-s")
}

// sweepDelays runs a sweep of tbl every sweepPeriod on a fake clock from
// testkit.Base until every expiry of sweepSpan is behind it, and returns
// each event's delay: the clock when it was delivered less its expiry.
func sweepDelays(b *testing.B, tbl bigtable.TableAPI) []time.Duration {
	b.Helper()
	clock := testkit.NewClock(testkit.Base)
	s, err := sweep.New(nil, tbl, "t", sweepFamilies, sweep.Options{Since: testkit.Base, Scan: scan.Options{Now: clock.Now}})
	if err != nil {
		b.Fatal(err)
	}
	sweep.SetSleep(s, func(_ context.Context, d time.Duration) error {
		clock.Advance(d)
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var delays []time.Duration
	deliver := func(_ context.Context, events []sweep.Event) error {
		now := clock.Now()
		for _, ev := range events {
			delays = append(delays, now.Sub(ev.Expired))
		}
		return nil
	}
	var failed error
	err = s.Every(ctx, sweepPeriod, deliver, func(r *sweep.Report, err error) {
		if err != nil || !r.Complete() {
			failed = fmt.Errorf("a round failed: %v, %v", err, r)
			cancel()
			return
		}
		if !r.Until.Before(testkit.Base.Add(sweepSpan)) {
			cancel()
		}
	})
	if failed != nil || !errors.Is(err, context.Canceled) {
		b.Fatal(failed, err)
	}
	return delays
}

// What a round costs as the table grows (docs/benchmarks.md, "Sweeps").
// BenchmarkSweepScale runs rounds of 1,000 expiries (scaleRound cells,
// sweepColumns a row, the cells of a row expiring together) on a table of
// 100,000 and of 1,000,000 cells, the rest of which expire a day later:
// through the schedule (mode=schedule), whose round reads the entries of
// its seconds and the rows they name, and by a scan (mode=scan), which
// makes the server read the whole table. Each op is one round; besides
// time and allocations it reports
//
//	read-cells/op  the cells the server read for the round, entries
//	               included (Report.Read.CellsSeen)
//
//	go test -run '^$' -bench '^BenchmarkSweepScale$' -benchtime 1x ./sweep
const (
	scaleRound  = 1000   // cells that expire in each round
	scaleRounds = 10     // rounds the table holds expiries for; an op sweeps one of them
	scaleStride = 104729 // a prime: spreads the rows that expire over the table
)

func BenchmarkSweepScale(b *testing.B) {
	for _, cells := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("cells=%d", cells), func(b *testing.B) {
			e := emulator.StartForTest(b)
			start := time.Now()
			data, sched := scaleTables(b, e, cells)
			b.Logf("loaded %d cells and their entries in %v", cells, time.Since(start).Round(time.Millisecond))
			runtime.GC() // the load's garbage is not the rounds'
			for _, mode := range []string{"schedule", "scan"} {
				b.Run("mode="+mode, func(b *testing.B) {
					opts := sweep.Options{}
					if mode == "schedule" {
						opts.Schedule, opts.ScheduleTable = sched, "s"
					}
					var seen int
					b.ReportAllocs()
					b.ResetTimer()
					for i := range b.N {
						// Op i sweeps the window of round i%scaleRounds afresh.
						from := sweepFrom.Add(time.Duration(i%scaleRounds) * sweepPeriod)
						now := from.Add(sweepPeriod + sweep.DefaultMargin)
						opts.Scan.Now, opts.Since = func() time.Time { return now }, from
						s, err := sweep.New(nil, data, "t", sweepFamilies, opts)
						if err != nil {
							b.Fatal(err)
						}
						var events int
						r, err := s.Once(context.Background(), func(_ context.Context, ev []sweep.Event) error {
							events += len(ev)
							return nil
						})
						if err != nil {
							b.Fatal(err)
						}
						if !r.Complete() || events != scaleRound {
							b.Fatalf("%d events, %v; want %d", events, r, scaleRound)
						}
						seen += r.Read.CellsSeen
					}
					b.StopTimer()
					b.ReportMetric(float64(seen)/float64(b.N), "read-cells/op")
				})
			}
		})
	}
}

// scaleTables creates table "t" with the family of sweepStrategy and its
// schedule "s", and loads them: cells cells, sweepColumns a row, 100-byte
// values, and one entry a row. The rows that expire in round k (k <
// scaleRounds) expire in the k-th sweepPeriod after sweepFrom, scaleRound
// cells a round; the others a day later.
func scaleTables(b *testing.B, e *emulator.Emulator, cells int) (data, sched bigtable.TableAPI) {
	b.Helper()
	ctx := context.Background()
	for name, fam := range map[string]string{"t": sweepFamily, "s": schedule.Family} {
		if err := e.Admin.CreateTableFromConf(ctx, &bigtable.TableConf{TableID: name, ColumnFamilies: map[string]bigtable.Family{
			fam: {GCPolicy: sweepStrategy.GCPolicy()},
		}}); err != nil {
			b.Fatal(err)
		}
	}
	data, sched = e.Client.Open("t"), e.Client.Open("s")
	rows := cells / sweepColumns
	perRound := scaleRound / sweepColumns
	expiry := func(row int) time.Time {
		if k := row / perRound; k < scaleRounds {
			return sweepFrom.Add(time.Duration(k)*sweepPeriod + time.Duration(row%perRound)*sweepPeriod/time.Duration(perRound) + time.Millisecond)
		}
		return sweepFrom.Add(24*time.Hour + time.Duration(row)*time.Millisecond)
	}
	value := make([]byte, sweepValue)
	const chunk = 5000 // rows a request
	var entries schedule.Batch
	for first := 0; first < rows; first += chunk {
		n := min(chunk, rows-first)
		keys := make([]string, n)
		muts := make([]*bigtable.Mutation, n)
		entries.Reset()
		for i := range keys {
			row := first + i
			keys[i] = fmt.Sprintf("r%07d", row*scaleStride%rows)
			at := expiry(row)
			entries.Add(keys[i], at)
			muts[i] = bigtable.NewMutation()
			for c := range sweepColumns {
				muts[i].Set(sweepFamily, fmt.Sprint("c", c), bigtable.Time(at), value)
			}
		}
		if err := entries.Write(ctx, sched); err != nil {
			b.Fatal(err)
		}
		if errs, err := data.ApplyBulk(ctx, keys, muts); err != nil || errs != nil {
			b.Fatal(err, errs)
		}
	}
	return data, sched
}
