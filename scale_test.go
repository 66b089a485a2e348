//go:build scale

package ttl_test

// The scale tests take minutes and are kept out of the default run:
//
//	go test -tags scale -run '^TestScale' -v -timeout 30m .
//
// They compare the library with the raw client on large jobs, for time and
// for the client's peak heap. The emulator runs in a child process (this
// test binary, re-run as TestScaleEmulatorProcess), so that the heap
// measured is the client's alone: an in-process emulator would hold every
// cell written and dwarf what the client uses.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"cloud.google.com/go/bigtable/bttest"
	"google.golang.org/grpc"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
)

const (
	scaleBulkRows = 100_000 // rows of the ApplyBulk job, 5 cells each
	scaleScanRows = 200_000 // rows of the scan, 5 cells each: 1,000,000 cells
	scaleRounds   = 5       // alternated runs of each side
	emulatorEnv   = "CELLTTL_EMULATOR_PROCESS"
	maxMessage    = 256 << 20 // as cmd/emulator allows
)

// TestScaleEmulatorProcess is not a test: it is the emulator's child
// process, run by startEmulatorProcess, which serves until its standard
// input closes.
func TestScaleEmulatorProcess(t *testing.T) {
	if os.Getenv(emulatorEnv) != "1" {
		t.Skip("the emulator child process; runs only when started by the scale tests")
	}
	srv, err := bttest.NewServer("127.0.0.1:0", grpc.MaxRecvMsgSize(maxMessage), grpc.MaxSendMsgSize(maxMessage))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	fmt.Printf("emulator at %s\n", srv.Addr)
	_, _ = io.Copy(io.Discard, os.Stdin) // returns when the parent closes it
}

// startEmulatorProcess starts an emulator in a child process with the
// benchmark table, and returns the raw table on it and a function that
// stops the child, which the test's cleanup also calls.
func startEmulatorProcess(t *testing.T) (*bigtable.Table, func()) {
	t.Helper()
	e, stop := startEmulatorChild(t)
	return e.TableForTest(t, "t", map[string]bigtable.GCPolicy{benchManaged: nil, benchOther: nil}), stop
}

// startEmulatorChild starts the emulator in a child process and returns
// clients on it, and a func that stops it (also run at cleanup).
func startEmulatorChild(t *testing.T) (*emulator.Emulator, func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestScaleEmulatorProcess$")
	cmd.Env = append(os.Environ(), emulatorEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := sync.OnceFunc(func() {
		stdin.Close()
		_ = cmd.Wait() // the child's exit status says nothing here
	})
	t.Cleanup(stop)
	var addr string
	for sc := bufio.NewScanner(stdout); sc.Scan(); {
		if a, ok := strings.CutPrefix(sc.Text(), "emulator at "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		t.Fatal("the emulator process did not start")
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }() // the child's test output

	return emulator.ConnectForTest(t, addr, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(maxMessage))), stop
}

// usage is what one run of a job cost the client.
type usage struct {
	elapsed   time.Duration
	input     uint64 // live heap of the job's input, measured apart; 0 for none
	peak      uint64 // highest heap in use (live and not yet collected) above the start
	peakLive  uint64 // highest live heap a GC found, above the live heap at the start
	allocated uint64 // bytes allocated
}

// Heap metrics: in use (HeapAlloc), live as of the last GC, allocated in all.
var heapMetrics = []string{"/memory/classes/heap/objects:bytes", "/gc/heap/live:bytes", "/gc/heap/allocs:bytes"}

// readHeap reads heapMetrics into s.
func readHeap(s []metrics.Sample) (inUse, live, allocs uint64) {
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64()
}

// measure runs job and returns its time and the client's heap over it,
// sampled every millisecond from a goroutine of its own, after a GC.
func measure(job func()) usage {
	samples := make([]metrics.Sample, len(heapMetrics))
	for i, name := range heapMetrics {
		samples[i].Name = name
	}
	runtime.GC()
	inUse0, live0, allocs0 := readHeap(samples)
	stop, done := make(chan struct{}), make(chan [2]uint64)
	go func() {
		own := slices.Clone(samples)
		var peak, peakLive uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			inUse, live, _ := readHeap(own)
			peak, peakLive = max(peak, inUse), max(peakLive, live)
			select {
			case <-stop:
				done <- [2]uint64{peak, peakLive}
				return
			case <-tick.C:
			}
		}
	}()
	start := time.Now()
	job()
	elapsed := time.Since(start)
	close(stop)
	peaks := <-done
	_, _, allocs := readHeap(samples)
	above := func(v, base uint64) uint64 {
		if v < base {
			return 0
		}
		return v - base
	}
	return usage{elapsed: elapsed, peak: above(peaks[0], inUse0), peakLive: above(peaks[1], live0), allocated: allocs - allocs0}
}

// medians returns the median of each field over runs.
func medians(runs []usage) usage {
	med := func(field func(usage) uint64) uint64 {
		vs := make([]uint64, len(runs))
		for i, r := range runs {
			vs[i] = field(r)
		}
		slices.Sort(vs)
		return vs[len(vs)/2]
	}
	return usage{
		elapsed:   time.Duration(med(func(u usage) uint64 { return uint64(u.elapsed) })),
		input:     med(func(u usage) uint64 { return u.input }),
		peak:      med(func(u usage) uint64 { return u.peak }),
		peakLive:  med(func(u usage) uint64 { return u.peakLive }),
		allocated: med(func(u usage) uint64 { return u.allocated }),
	}
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// logHeader logs the header of report's Markdown table.
func logHeader(t *testing.T) {
	t.Helper()
	t.Log("| job | side | time | input (live) | peak heap | peak live heap | allocated |")
	t.Log("|---|---|---:|---:|---:|---:|---:|")
}

// report logs a Markdown table row per side and the ratio row, and
// returns the ratios of the medians, library over raw.
func report(t *testing.T, job string, raw, lib []usage) (peak, peakLive float64) {
	t.Helper()
	r, l := medians(raw), medians(lib)
	for _, s := range []struct {
		side string
		u    usage
	}{{"raw", r}, {"ttl", l}} {
		t.Logf("| %s | %s | %v | %s | %s | %s | %s |", job, s.side, s.u.elapsed.Round(time.Millisecond),
			mib(s.u.input), mib(s.u.peak), mib(s.u.peakLive), mib(s.u.allocated))
	}
	ratio := func(a, b uint64) string {
		if b == 0 {
			return "–"
		}
		return fmt.Sprintf("%.3f", float64(a)/float64(b))
	}
	t.Logf("| %s | ttl ÷ raw | %s | %s | %s | %s | %s |", job, ratio(uint64(l.elapsed), uint64(r.elapsed)),
		ratio(l.input, r.input), ratio(l.peak, r.peak), ratio(l.peakLive, r.peakLive), ratio(l.allocated, r.allocated))
	peak, peakLive = float64(l.peak)/float64(r.peak), float64(l.peakLive)/float64(r.peakLive)
	for i := range raw {
		t.Logf("run %d: raw %v, peak %s, live %s; ttl %v, peak %s, live %s", i,
			raw[i].elapsed.Round(time.Millisecond), mib(raw[i].peak), mib(raw[i].peakLive),
			lib[i].elapsed.Round(time.Millisecond), mib(lib[i].peak), mib(lib[i].peakLive))
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
	clock := newClock(base)
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
	runs := map[string][]usage{}
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
			u := measure(func() { apply(raw, tbl, build[side]()) })
			u.input = liveSize(build[side])
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
	clock := newClock(base)
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
		{time.Minute, benchColumns[:4], bigtable.Time(base.Add(-time.Minute))},
		{time.Hour, benchColumns[4:], bigtable.Time(base.Add(time.Hour))},
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
		runs := map[string][]usage{}
		for round := range scaleRounds {
			order := []string{"raw", "ttl"}
			if round%2 == 1 {
				slices.Reverse(order)
			}
			for _, side := range order {
				runs[side] = append(runs[side], measure(scan(side, rows)))
			}
		}
		peak, peakLive := report(t, fmt.Sprintf("ReadRows %d rows × 5 cells, 4 expired", rows), runs["raw"], runs["ttl"])
		// The target is for the full scan; the tenth's peak, a few MiB of
		// GC minimum heap and gRPC buffers, is all noise.
		if rows == scaleScanRows && peak > 1.1 {
			t.Errorf("scanning %d rows, the library's peak heap is %.2f× the raw client's (peak live heap %.2f×); the target is 1.1×", rows, peak, peakLive)
		}
		peaks[i] = map[string]uint64{"raw": medians(runs["raw"]).peak, "ttl": medians(runs["ttl"]).peak}
	}
	// Ten times the rows: a result set collected in memory would grow
	// tenfold. A stream's heap stays within GC noise of the same.
	for _, side := range []string{"raw", "ttl"} {
		small, large := peaks[0][side], peaks[1][side]
		t.Logf("%s: peak heap %s for %d rows, %s for %d rows", side, mib(small), scaleScanRows/10, mib(large), scaleScanRows)
		if large > 2*small+4<<20 {
			t.Errorf("%s: the scan's peak heap grows with the rows read: %s for %d rows, %s for %d", side, mib(small), scaleScanRows/10, mib(large), scaleScanRows)
		}
	}
}
