//go:build scale

package bench_test

// The scale tests take minutes and are kept out of the default run:
//
//	go test -tags scale -run '^TestScale' -v -timeout 30m ./tests/bench
//
// They compare the library with the raw client on large jobs, for time and
// for the client's peak heap. The emulator runs in a child process (this
// test binary, re-run as TestScaleEmulatorProcess), so that the heap
// measured is the client's alone: an in-process emulator would hold every
// cell written and dwarf what the client uses.

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
)

const (
	scaleBulkRows = 100_000 // rows of the ApplyBulk job, 5 cells each
	scaleScanRows = 200_000 // rows of the scan, 5 cells each: 1,000,000 cells
	scaleRounds   = 5       // alternated runs of each side
)

// TestScaleEmulatorProcess is not a test: it is the emulator's child
// process (testkit.StartEmulatorChild), which serves until its standard
// input closes.
func TestScaleEmulatorProcess(t *testing.T) { testkit.EmulatorChild(t) }

// startEmulatorProcess starts an emulator in a child process with the
// benchmark table, and returns the raw table on it and a function that
// stops the child, which the test's cleanup also calls.
func startEmulatorProcess(t *testing.T) (*bigtable.Table, func()) {
	t.Helper()
	e, stop := testkit.StartEmulatorChild(t, "TestScaleEmulatorProcess")
	return e.TableForTest(t, "t", map[string]bigtable.GCPolicy{benchManaged: nil, benchOther: nil}), stop
}

// logHeader logs the header of report's Markdown table.
func logHeader(t *testing.T) {
	t.Helper()
	t.Log("| job | side | time | input (live) | peak heap | peak live heap | allocated |")
	t.Log("|---|---|---:|---:|---:|---:|---:|")
}

// report logs a Markdown table row per side and the ratio row, and
// returns the ratios of the medians, library over raw.
func report(t *testing.T, job string, raw, lib []testkit.Usage) (peak, peakLive float64) {
	t.Helper()
	r, l := testkit.Medians(raw), testkit.Medians(lib)
	for _, s := range []struct {
		side string
		u    testkit.Usage
	}{{"raw", r}, {"ttl", l}} {
		t.Logf("| %s | %s | %v | %s | %s | %s | %s |", job, s.side, s.u.Elapsed.Round(time.Millisecond),
			testkit.MiB(s.u.Input), testkit.MiB(s.u.Peak), testkit.MiB(s.u.PeakLive), testkit.MiB(s.u.Allocated))
	}
	ratio := func(a, b uint64) string {
		if b == 0 {
			return "–"
		}
		return fmt.Sprintf("%.3f", float64(a)/float64(b))
	}
	t.Logf("| %s | ttl ÷ raw | %s | %s | %s | %s | %s |", job, ratio(uint64(l.Elapsed), uint64(r.Elapsed)),
		ratio(l.Input, r.Input), ratio(l.Peak, r.Peak), ratio(l.PeakLive, r.PeakLive), ratio(l.Allocated, r.Allocated))
	peak, peakLive = float64(l.Peak)/float64(r.Peak), float64(l.PeakLive)/float64(r.PeakLive)
	for i := range raw {
		t.Logf("run %d: raw %v, peak %s, live %s; ttl %v, peak %s, live %s", i,
			raw[i].Elapsed.Round(time.Millisecond), testkit.MiB(raw[i].Peak), testkit.MiB(raw[i].PeakLive),
			lib[i].Elapsed.Round(time.Millisecond), testkit.MiB(lib[i].Peak), testkit.MiB(lib[i].PeakLive))
	}
	return peak, peakLive
}

// TestScaleApplyBulk writes 100,000 rows of 5 cells in one ApplyBulk, by
// hand and through the library, alternated, each run on a fresh emulator.
// The job includes building its input, the mutations written by hand or
// the recipes the library turns into them: both are in memory when the
// call starts. The input's own live heap is measured apart.
func TestScaleApplyBulk(t *testing.T) {
	ctx := context.Background()
	keys := rowKeys(scaleBulkRows)
	clock := testkit.NewClock(testkit.Base)
	build := map[string]func() any{
		"raw": func() any {
			muts := make([]*bigtable.Mutation, len(keys))
			for i := range muts {
				muts[i] = handMutation(clock.Now(), time.Hour)
			}
			return muts
		},
		"ttl": func() any {
			muts := make([]*ttl.Mutation, len(keys))
			for i := range muts {
				muts[i] = ttlMutation(time.Hour)
			}
			return muts
		},
	}
	apply := func(raw *bigtable.Table, tbl *ttl.Table, input any) {
		var errs []error
		var err error
		switch muts := input.(type) {
		case []*bigtable.Mutation:
			errs, err = raw.ApplyBulk(ctx, keys, muts)
		case []*ttl.Mutation:
			errs, err = tbl.ApplyBulk(ctx, keys, muts)
		}
		if err != nil || errs != nil {
			t.Fatal(err, errs)
		}
	}
	runs := map[string][]testkit.Usage{}
	for round := range scaleRounds {
		order := []string{"raw", "ttl"}
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, side := range order {
			raw, stop := startEmulatorProcess(t)
			tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{benchManaged: ttl.OneSecond()},
				ttl.WithClock(clock.Now), ttl.OtherFamilies(benchOther))
			if err != nil {
				t.Fatal(err)
			}
			u := testkit.Measure(func() { apply(raw, tbl, build[side]()) })
			u.Input = liveSize(build[side])
			runs[side] = append(runs[side], u)
			n := 0
			if err := raw.ReadRows(ctx, bigtable.InfiniteRange(""), func(bigtable.Row) bool { n++; return true },
				bigtable.RowFilter(bigtable.CellsPerRowLimitFilter(1))); err != nil {
				t.Fatal(err)
			}
			if n != scaleBulkRows {
				t.Fatalf("%s wrote %d rows, want %d", side, n, scaleBulkRows)
			}
			stop()
		}
	}
	logHeader(t)
	peak, peakLive := report(t, fmt.Sprintf("ApplyBulk %d rows × 5 cells", scaleBulkRows), runs["raw"], runs["ttl"])
	if peak > 1.1 || peakLive > 1.1 {
		t.Errorf("the library's peak heap is %.2f× the raw client's, its peak live heap %.2f×; the target is 1.1×", peak, peakLive)
	}
}

// liveSize returns the live heap of what build returns.
func liveSize(build func() any) uint64 {
	samples := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	runtime.GC()
	metrics.Read(samples)
	before := samples[0].Value.Uint64()
	v := build()
	runtime.GC()
	metrics.Read(samples)
	runtime.KeepAlive(v)
	return samples[0].Value.Uint64() - before
}

// TestScaleReadRows scans 1,000,000 cells (200,000 rows of 5 cells, 4 of
// them expired) by hand and through the library, alternated, and a tenth
// of them, to show that a scan's memory does not grow with the rows read.
func TestScaleReadRows(t *testing.T) {
	ctx := context.Background()
	raw, _ := startEmulatorProcess(t)
	clock := testkit.NewClock(testkit.Base)
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{benchManaged: ttl.OneSecond()},
		ttl.WithClock(clock.Now), ttl.OtherFamilies(benchOther))
	if err != nil {
		t.Fatal(err)
	}
	keys := rowKeys(scaleScanRows)
	const chunk = 10_000
	for _, w := range []struct {
		life time.Duration
		cols []string
		ts   bigtable.Timestamp
	}{
		{time.Minute, benchColumns[:4], bigtable.Time(testkit.Base.Add(-time.Minute))},
		{time.Hour, benchColumns[4:], bigtable.Time(testkit.Base.Add(time.Hour))},
	} {
		m := bigtable.NewMutation()
		for _, c := range w.cols {
			m.Set(benchManaged, c, w.ts, benchValue)
		}
		for i := 0; i < len(keys); i += chunk {
			muts := make([]*bigtable.Mutation, chunk)
			for j := range muts {
				muts[j] = m
			}
			if errs, err := raw.ApplyBulk(ctx, keys[i:i+chunk], muts); err != nil || errs != nil {
				t.Fatal(err, errs)
			}
		}
	}

	scan := func(side string, rows int) func() {
		rs := bigtable.NewRange("", keys[rows-1]+"\x00")
		return func() {
			n, cells := 0, 0
			f := func(r bigtable.Row) bool {
				n++
				cells += len(r[benchManaged])
				return true
			}
			var err error
			if side == "raw" {
				err = raw.ReadRows(ctx, rs, f, bigtable.RowFilter(handFilter(clock.Now())))
			} else {
				err = tbl.ReadRows(ctx, rs, f)
			}
			if err != nil {
				t.Fatal(err)
			}
			if n != rows || cells != rows {
				t.Fatalf("%s read %d rows of %d live cells, want %d of %d", side, n, cells, rows, rows)
			}
		}
	}
	logHeader(t)
	var peaks [2]map[string]uint64
	for i, rows := range []int{scaleScanRows / 10, scaleScanRows} {
		runs := map[string][]testkit.Usage{}
		for round := range scaleRounds {
			order := []string{"raw", "ttl"}
			if round%2 == 1 {
				slices.Reverse(order)
			}
			for _, side := range order {
				runs[side] = append(runs[side], testkit.Measure(scan(side, rows)))
			}
		}
		peak, peakLive := report(t, fmt.Sprintf("ReadRows %d rows × 5 cells, 4 expired", rows), runs["raw"], runs["ttl"])
		// The target is for the full scan; the tenth's peak, a few MiB of
		// GC minimum heap and gRPC buffers, is all noise.
		if rows == scaleScanRows && peak > 1.1 {
			t.Errorf("scanning %d rows, the library's peak heap is %.2f× the raw client's (peak live heap %.2f×); the target is 1.1×", rows, peak, peakLive)
		}
		peaks[i] = map[string]uint64{"raw": testkit.Medians(runs["raw"]).Peak, "ttl": testkit.Medians(runs["ttl"]).Peak}
	}
	// Ten times the rows: a result set collected in memory would grow
	// tenfold. A stream's heap stays within GC noise of the same.
	for _, side := range []string{"raw", "ttl"} {
		small, large := peaks[0][side], peaks[1][side]
		t.Logf("%s: peak heap %s for %d rows, %s for %d rows", side, testkit.MiB(small), scaleScanRows/10, testkit.MiB(large), scaleScanRows)
		if large > 2*small+4<<20 {
			t.Errorf("%s: the scan's peak heap grows with the rows read: %s for %d rows, %s for %d", side, testkit.MiB(small), scaleScanRows/10, testkit.MiB(large), scaleScanRows)
		}
	}
}
