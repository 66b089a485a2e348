package bench_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/schedule"
)

// The cost of a schedule (issue 26): BenchmarkApply's and
// BenchmarkApplyBulk's writes with a schedule (impl=ttl-sched) beside the
// same writes without one (impl=ttl) and by hand (impl=raw), in one run.
// The targets, of the median ratio ttl-sched ÷ ttl: Apply within 2.1,
// ApplyBulk of 500 rows within 2.0 (one more request per call, never per
// cell). The Client benchmarks are the same writes on a TableAPI that
// sends nothing, data and schedule alike: what the entries cost the
// client (allocations, bytes), which the emulator's work hides.

var schedImpls = []string{"raw", "ttl", "ttl-sched"}

// newSchedSide is newSide, and for impl=ttl-sched a side whose table
// writes a schedule, on a second table of the same emulator.
func newSchedSide(b *testing.B, impl string) *side {
	b.Helper()
	if impl != "ttl-sched" {
		return newSide(b, impl)
	}
	e := emulator.StartForTest(b)
	s := &side{impl: impl, clock: testkit.NewClock(testkit.Base)}
	s.raw = e.TableForTest(b, "t", map[string]bigtable.GCPolicy{benchManaged: nil, benchOther: nil})
	sched := e.TableForTest(b, "s", map[string]bigtable.GCPolicy{schedule.Family: nil})
	s.tbl = newSchedBenchTable(b, s.raw, sched, s.clock)
	return s
}

// newSchedBenchTable returns the ttl.Table of impl=ttl on tbl, with a
// schedule in sched.
func newSchedBenchTable(b *testing.B, tbl, sched bigtable.TableAPI, clock *testkit.Clock) *ttl.Table {
	b.Helper()
	t, err := ttl.NewTable(tbl, map[string]ttl.Strategy{benchManaged: ttl.OneSecond()},
		ttl.WithClock(clock.Now), ttl.OtherFamilies(benchOther), ttl.WithSchedule(sched))
	if err != nil {
		b.Fatal(err)
	}
	return t
}

// forSchedImpls runs bench once per impl of schedImpls, each on a fresh
// side.
func forSchedImpls(b *testing.B, bench func(b *testing.B, s *side)) {
	for _, impl := range schedImpls {
		b.Run("impl="+impl, func(b *testing.B) {
			bench(b, newSchedSide(b, impl))
		})
	}
}

// BenchmarkScheduleApply is BenchmarkApply with a schedule: 5 cells of one
// row, one entry.
func BenchmarkScheduleApply(b *testing.B) { forSchedImpls(b, benchApply) }

// BenchmarkScheduleApplyBulk is BenchmarkApplyBulk with a schedule: 500
// rows of 5 cells, 500 entries in one request.
func BenchmarkScheduleApplyBulk(b *testing.B) { forSchedImpls(b, benchApplyBulk) }

// clientSched runs a client-side triple: raw on a TableAPI that sends
// nothing, and lib on the ttl.Table over one without a schedule
// (impl=ttl) and with one that sends nothing either (impl=ttl-sched).
func clientSched(b *testing.B, raw func(api bigtable.TableAPI, now time.Time) error, lib func(tbl *ttl.Table) error) {
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
	for _, impl := range []string{"ttl", "ttl-sched"} {
		b.Run("impl="+impl, func(b *testing.B) {
			tbl := newBenchTable(b, testkit.Nop{}, "ttl", clock)
			if impl == "ttl-sched" {
				tbl = newSchedBenchTable(b, testkit.Nop{}, &testkit.Nop{}, clock)
			}
			b.ReportAllocs()
			defer reportCPU(b)()
			b.ResetTimer()
			for range b.N {
				if err := lib(tbl); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkScheduleClientApply is BenchmarkScheduleApply without a
// server.
func BenchmarkScheduleClientApply(b *testing.B) {
	ctx := context.Background()
	clientSched(b, func(api bigtable.TableAPI, now time.Time) error {
		return api.Apply(ctx, "r", handMutation(now, time.Hour))
	}, func(tbl *ttl.Table) error {
		return tbl.Apply(ctx, "r", ttlMutation(time.Hour))
	})
}

// BenchmarkScheduleClientApplyBulk is BenchmarkScheduleApplyBulk without
// a server.
func BenchmarkScheduleClientApplyBulk(b *testing.B) {
	ctx := context.Background()
	clientSched(b, func(api bigtable.TableAPI, now time.Time) error {
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
	})
}
