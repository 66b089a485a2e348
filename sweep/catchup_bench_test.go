package sweep_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	btpb "cloud.google.com/go/bigtable/apiv2/bigtablepb"
	"google.golang.org/grpc"

	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
	"github.com/cellttl/ttl/sweep"
)

// Catch-up after an outage (docs/sweeps.md, "Catching up after an
// outage"). BenchmarkSweepCatchUp runs the one scheduled round that finds
// every row of a table expired while no sweeper ran: catchUpRows rows of
// one cell (a 100-byte value), each with its schedule entry, their
// expiries spread evenly over catchUpSpan. Each op is one round, from
// before the first expiry to after the last, as `cellttl sweep -format
// json -checkpoint FILE` runs it: cell events without values, each
// encoded as JSON (to a discarded buffered writer), the progress saved to
// a file checkpoint after each batch of sweep.DefaultBatch, 8 workers.
//
// reads=sequential reads the rows each salt names one request after the
// other (what rounds did before issue 32); reads=concurrent keeps the
// default read-ahead in flight. latency=0 is the emulator as it is: its
// work and the client's share the machine's cores, so the round is bound
// by CPU. latency=sim delays every ReadRows stream as a remote server
// would (catchUpRTT before its first response, catchUpRowTime for each row
// it returns), which the emulator does not. Besides time and allocations
// it reports
//
//	rows/s         rows reported a second of the round
//	read-cells/op  the cells the server read, entries included
//	reads/op       the read requests the round made
//	streams-peak   the most ReadRows streams open at once
//	cpu-s/op       the CPU time of the test process a round: the client's,
//	               and the in-process emulator's when it runs in process
//	emulator-cpu-s/op  the standalone emulator's CPU time a round, when
//	               CATCHUP_EMULATOR_PID names its process (Linux)
//
//	go test -run '^$' -bench '^BenchmarkSweepCatchUp$' -benchtime 1x ./sweep
//
// With CATCHUP_EMULATOR=HOST:PORT it loads and sweeps the standalone
// emulator there instead (a fresh one: it creates tables "t" and "s"),
// and CATCHUP_ROWS sets the number of rows.
const (
	catchUpSpan    = 1000 * time.Second
	catchUpRTT     = 2 * time.Millisecond  // from a request to its first response
	catchUpRowTime = 50 * time.Microsecond // a row returned: 20,000 rows a second a stream
)

func BenchmarkSweepCatchUp(b *testing.B) {
	rows := 100_000
	if n := os.Getenv("CATCHUP_ROWS"); n != "" {
		if _, err := fmt.Sscan(n, &rows); err != nil {
			b.Fatalf("CATCHUP_ROWS=%q: %v", n, err)
		}
	}
	var lat latency
	var e *emulator.Emulator
	if addr := os.Getenv("CATCHUP_EMULATOR"); addr != "" {
		e = emulator.ConnectForTest(b, addr, lat.option())
	} else {
		e = emulator.StartForTest(b, lat.option())
	}
	start := time.Now()
	data, sched := catchUpTables(b, e, rows)
	b.Logf("loaded %d rows and their entries in %v", rows, time.Since(start).Round(time.Millisecond))
	for _, sim := range []bool{false, true} {
		for _, reads := range []string{"sequential", "concurrent"} {
			name := fmt.Sprintf("latency=%s/reads=%s", map[bool]string{false: "0", true: "sim"}[sim], reads)
			b.Run(name, func(b *testing.B) {
				lat.on = sim
				lat.peak.Store(0)
				defer func() { lat.on = false }()
				var seen, read int
				runtime.GC() // the load's and the last round's garbage are not this round's
				b.ReportAllocs()
				cpu0, cpuOK := testkit.CPUTime(b)
				emu0, emuOK := processCPU(os.Getenv("CATCHUP_EMULATOR_PID"))
				b.ResetTimer()
				for range b.N {
					r := catchUpRound(b, data, sched, rows, reads == "sequential")
					seen += r.Read.CellsSeen
					read += r.Read.Reads
				}
				b.StopTimer()
				if cpu1, _ := testkit.CPUTime(b); cpuOK {
					b.ReportMetric((cpu1-cpu0).Seconds()/float64(b.N), "cpu-s/op")
				}
				if emu1, _ := processCPU(os.Getenv("CATCHUP_EMULATOR_PID")); emuOK {
					b.ReportMetric((emu1-emu0).Seconds()/float64(b.N), "emulator-cpu-s/op")
				}
				b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
				b.ReportMetric(float64(seen)/float64(b.N), "read-cells/op")
				b.ReportMetric(float64(read)/float64(b.N), "reads/op")
				b.ReportMetric(float64(lat.peak.Load()), "streams-peak")
			})
		}
	}
}

// processCPU returns the user and system CPU time of process pid, as
// Linux's /proc says it, and false where pid is empty or not readable.
func processCPU(pid string) (time.Duration, bool) {
	if pid == "" {
		return 0, false
	}
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, false
	}
	// The fields after the command's closing parenthesis: utime and stime
	// are the 12th and 13th, in clock ticks of 1/100 s.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(fields) < 13 {
		return 0, false
	}
	var utime, stime int64
	if _, err := fmt.Sscan(fields[11]+" "+fields[12], &utime, &stime); err != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
}

// catchUpRound runs one round over every expiry of the catch-up tables,
// with a fresh file checkpoint, and checks that it reported each row.
func catchUpRound(b *testing.B, data, sched bigtable.TableAPI, rows int, sequential bool) *sweep.Report {
	b.Helper()
	now := sweepFrom.Add(catchUpSpan + time.Second + sweep.DefaultMargin)
	opts := sweep.Options{Schedule: sched, ScheduleTable: "s", Since: sweepFrom,
		Checkpoint: scan.FileCheckpoint(filepath.Join(b.TempDir(), "cp")),
		Scan:       scan.Options{Now: func() time.Time { return now }, Workers: 8}}
	s, err := sweep.New(nil, data, "t", sweepFamilies, opts)
	if err != nil {
		b.Fatal(err)
	}
	if sequential {
		sweep.SetRowReads(s, 1, 0)
	}
	out := bufio.NewWriter(io.Discard)
	events := 0
	r, err := s.Once(context.Background(), func(_ context.Context, ev []sweep.Event) error {
		for _, e := range ev {
			line, err := e.MarshalJSON() // as cellttl sweep -format json writes it
			if err != nil {
				return err
			}
			out.Write(append(line, '\n'))
		}
		events += len(ev)
		return out.Flush()
	})
	if err != nil {
		b.Fatal(err)
	}
	if !r.Complete() || events != rows {
		b.Fatalf("%d events, %v; want %d", events, r, rows)
	}
	return r
}

// catchUpTables creates table "t" with the family of sweepStrategy and its
// schedule "s", and loads rows rows of one cell, the i-th written expiring
// i steps of catchUpSpan/rows after sweepFrom (plus a millisecond), in an
// order that scatters them over the keys, each with its entry.
func catchUpTables(b *testing.B, e *emulator.Emulator, rows int) (data, sched bigtable.TableAPI) {
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
	step := catchUpSpan / time.Duration(rows)
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
			at := sweepFrom.Add(time.Duration(row)*step + time.Millisecond)
			entries.Add(keys[i], at)
			muts[i] = bigtable.NewMutation()
			muts[i].Set(sweepFamily, "c", bigtable.Time(at), value)
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

// A latency, when on, delays every ReadRows stream as a remote server's:
// catchUpRTT before its first response, and catchUpRowTime for each row
// its responses complete, slept once the debt reaches a millisecond (a
// shorter sleep is not kept to). It counts the streams open, on or not,
// and keeps their peak.
type latency struct {
	on         bool
	open, peak atomic.Int64
}

// opened counts a stream opened, and closed one ended.
func (l *latency) opened() {
	n := l.open.Add(1)
	for p := l.peak.Load(); n > p && !l.peak.CompareAndSwap(p, n); p = l.peak.Load() {
	}
}

func (l *latency) closed() { l.open.Add(-1) }

func (l *latency) option() grpc.DialOption {
	return grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
		streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		s, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil || method != readRowsRPC {
			return s, err
		}
		l.opened()
		d := &delayed{ClientStream: s, l: l}
		if l.on {
			d.debt = catchUpRTT
		}
		return d, nil
	})
}

type delayed struct {
	grpc.ClientStream
	l     *latency
	debt  time.Duration
	ended bool
}

func (s *delayed) RecvMsg(m any) error {
	err := s.recv(m)
	if err != nil && !s.ended {
		s.ended = true
		s.l.closed()
	}
	return err
}

func (s *delayed) recv(m any) error {
	if s.debt >= time.Millisecond {
		start := time.Now()
		time.Sleep(s.debt)
		s.debt -= time.Since(start)
	}
	err := s.ClientStream.RecvMsg(m)
	if resp, ok := m.(*btpb.ReadRowsResponse); ok && err == nil {
		for _, c := range resp.Chunks {
			if s.l.on && c.GetCommitRow() {
				s.debt += catchUpRowTime
			}
		}
	}
	return err
}
