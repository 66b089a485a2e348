package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/sweep"
)

// The sweep tests run on a fake clock at testkit.Base plus a minute: with
// the default margin a round ends at Base+50s, and -since Base starts it at
// Base.

var sweepBase = testkit.Base

// sweepClock fixes the sweep's clock at t for the test.
func sweepClock(t *testing.T, at time.Time) *testkit.Clock {
	t.Helper()
	clock := testkit.NewClock(at)
	old := sweepNow
	sweepNow = clock.Now
	t.Cleanup(func() { sweepNow = old })
	return clock
}

// sweepSeed fills the watched table t (shards split at r2, r4, r6, r8):
//
//	r0  sess:token expired at +10s; sess:keep live
//	r1  sess:token expired at +10s, renewed until +2h
//	r2  sess:token expired at +10s, sess:csrf at +20s
//	r3  sess:token live; meta:src (not swept)
//	r4  clicks:n (default:1h) written at -59m30s: expired at +30s
//	r5  sess:old expired at -10s, before the window
//	r8  sess:token expired at +40s
//	r9  sess:token expired at +45s
func sweepSeed(t *testing.T, w *watchedServer) {
	t.Helper()
	at := func(d time.Duration) time.Time { return sweepBase.Add(d) }
	for _, row := range []string{"r0", "r1", "r2"} {
		put(t, w.raw, row, "sess", "token", at(10*time.Second))
	}
	put(t, w.raw, "r0", "sess", "keep", at(2*time.Hour))
	put(t, w.raw, "r1", "sess", "token", at(2*time.Hour))
	put(t, w.raw, "r2", "sess", "csrf", at(20*time.Second))
	put(t, w.raw, "r3", "sess", "token", at(2*time.Hour))
	put(t, w.raw, "r3", "meta", "src", at(-time.Hour))
	put(t, w.raw, "r4", "clicks", "n", at(-59*time.Minute-30*time.Second))
	put(t, w.raw, "r5", "sess", "old", at(-10*time.Second))
	put(t, w.raw, "r8", "sess", "token", at(40*time.Second))
	put(t, w.raw, "r9", "sess", "token", at(45*time.Second))
}

// startSweep starts a watched emulator seeded by sweepSeed, with the
// sweep's clock a minute after the base.
func startSweep(t *testing.T, families map[string]bigtable.GCPolicy) (*watchedServer, *testkit.Clock) {
	t.Helper()
	w := startWatched(t, families)
	sweepSeed(t, w)
	return w, sweepClock(t, sweepBase.Add(time.Minute))
}

// setStall makes the watched server stall the reads from key ("" for
// none) once no read is open, so that the reads before are over.
func setStall(t *testing.T, w *watchedServer, key string) {
	t.Helper()
	require.Eventually(t, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.active == 0
	}, 10*time.Second, 5*time.Millisecond)
	w.stall = key
}

// sweepArgs sweeps sess (onesecond) and clicks (default:1h) of table t,
// one shard at a time so that events come in row order.
func sweepArgs(extra ...string) []string {
	return append(with("sweep", "-family", "sess=onesecond", "-family", "clicks=default:1h", "-workers", "1"), extra...)
}

// since is -since at the base.
var since = []string{"-since", "2030-04-30T09:00:00Z"}

// cellEvents are the text events of one cell round over the seeded table.
const cellEvents = `cell expired 2030-04-30T09:00:10Z: table "t" row "r0" sess:"token"
cell expired 2030-04-30T09:00:10Z: table "t" row "r1" sess:"token"
cell expired 2030-04-30T09:00:20Z: table "t" row "r2" sess:"csrf"
cell expired 2030-04-30T09:00:10Z: table "t" row "r2" sess:"token"
cell expired 2030-04-30T09:00:30Z: table "t" row "r4" clicks:"n"
cell expired 2030-04-30T09:00:40Z: table "t" row "r8" sess:"token"
cell expired 2030-04-30T09:00:45Z: table "t" row "r9" sess:"token"
`

// TestSweep sweeps the seeded table once, in text and in JSON, at each
// granularity.
func TestSweep(t *testing.T) {
	startSweep(t, seeded)

	stdout, stderr, code := cellttl(sweepArgs(since...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, cellEvents, stdout)
	assert.Equal(t, `sweep of table "t", expiries after 2030-04-30T09:00:00.000Z up to 2030-04-30T09:00:50.000Z: complete
  7 cell events delivered; 7 cells expired (137 B)
  read 7 cells returned of 12 cells seen, in 5 requests
`, unwarned(stderr))

	for _, tt := range []struct {
		granularity, events string
	}{
		{"column", `column expired 2030-04-30T09:00:10Z: table "t" row "r0" sess:"token"
column expired 2030-04-30T09:00:20Z: table "t" row "r2" sess:"csrf"
column expired 2030-04-30T09:00:10Z: table "t" row "r2" sess:"token"
column expired 2030-04-30T09:00:30Z: table "t" row "r4" clicks:"n"
column expired 2030-04-30T09:00:40Z: table "t" row "r8" sess:"token"
column expired 2030-04-30T09:00:45Z: table "t" row "r9" sess:"token"
`},
		{"row", `row expired 2030-04-30T09:00:20Z: table "t" row "r2"
row expired 2030-04-30T09:00:30Z: table "t" row "r4"
row expired 2030-04-30T09:00:40Z: table "t" row "r8"
row expired 2030-04-30T09:00:45Z: table "t" row "r9"
`},
	} {
		stdout, stderr, code := cellttl(sweepArgs(append(since, "-granularity", tt.granularity)...)...)
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, tt.events, stdout, tt.granularity)
		assert.Contains(t, stderr, ": complete\n", tt.granularity)
	}
}

// sweepReportJSON is the part of a {"report": ...} line the tests read.
type sweepReportJSON struct {
	Report struct {
		Table, Granularity string
		From, Until        time.Time
		Resumed, Complete  bool
		Events, Deleted    int64
		Expired            struct{ Cells, Bytes int64 }
		Missed             []struct{ Family string }
		Read               readJSON
	}
	Error string
}

// decodeSweep decodes sweep -format json: every line an event or a
// report.
func decodeSweep(t *testing.T, stdout string) (events []sweep.Event, reports []sweepReportJSON) {
	t.Helper()
	require.True(t, strings.HasSuffix(stdout, "\n"), stdout)
	for _, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		var keys map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(line), &keys), line)
		if _, ok := keys["report"]; ok {
			var r sweepReportJSON
			require.NoError(t, json.Unmarshal([]byte(line), &r), line)
			reports = append(reports, r)
			continue
		}
		var e sweep.Event
		require.NoError(t, json.Unmarshal([]byte(line), &e), line)
		assert.Equal(t, e.ID(), string(keys["id"][1:len(keys["id"])-1]), "the id is the event's")
		events = append(events, e)
	}
	return events, reports
}

// eventLines returns the events as their text.
func eventLines(events []sweep.Event) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString(e.String() + "\n")
	}
	return b.String()
}

// TestSweepJSON checks -format json: stdout is JSON lines, the events and
// then the round's report, and stderr is empty.
func TestSweepJSON(t *testing.T) {
	startSweep(t, seeded)

	stdout, stderr, code := cellttl(sweepArgs(append(since, "-format", "json", "-values")...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, unwarned(stderr))
	events, reports := decodeSweep(t, stdout)
	assert.Equal(t, cellEvents, eventLines(events))
	assert.Equal(t, []byte("v"), events[0].Value)
	assert.Contains(t, stdout, `"value":"dg=="`)
	require.Len(t, reports, 1)
	assert.True(t, strings.HasPrefix(strings.Split(stdout, "\n")[7], `{"report":`), "the report ends the round")
	r := reports[0].Report
	assert.Equal(t, "t", r.Table)
	assert.Equal(t, "cell", r.Granularity)
	assert.Equal(t, sweepBase, r.From)
	assert.Equal(t, sweepBase.Add(50*time.Second), r.Until)
	assert.True(t, r.Complete)
	assert.Equal(t, int64(7), r.Events)
	assert.Equal(t, int64(7), r.Expired.Cells)
	assert.Equal(t, 5, r.Read.ShardsRead)
	assert.Empty(t, reports[0].Error)

	// The same cells, by row: the same ids each time.
	again, _, code := cellttl(sweepArgs(append(since, "-format", "json")...)...)
	require.Equal(t, exitOK, code)
	second, _ := decodeSweep(t, again)
	require.Len(t, second, len(events))
	for i := range events {
		assert.Equal(t, events[i].ID(), second[i].ID())
	}
	stdout, _, code = cellttl(sweepArgs(append(since, "-format", "json", "-granularity", "rows")...)...)
	require.Equal(t, exitOK, code)
	rows, reports := decodeSweep(t, stdout)
	assert.Len(t, rows, 4)
	assert.Equal(t, sweep.Row, rows[0].Kind)
	assert.Equal(t, "row", reports[0].Report.Granularity)
}

// TestSweepDelete deletes what a round found expired: the raw rows keep
// only their live cells and what expired before the window.
func TestSweepDelete(t *testing.T) {
	w, _ := startSweep(t, seeded)

	stdout, stderr, code := cellttl(sweepArgs(append(since, "-delete")...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, cellEvents, stdout)
	assert.Contains(t, stderr, "7 cells expired (137 B), deleted in 6 rows\n")
	stored := func(row string) []string { return testkit.Values(testkit.RawRow(t, w.raw, row)) }
	assert.Equal(t, []string{"sess:keep=v"}, stored("r0"))
	assert.Equal(t, []string{"sess:token=v"}, stored("r1"), "the renewed cell lives")
	assert.Empty(t, stored("r2"))
	assert.Equal(t, []string{"meta:src=v", "sess:token=v"}, stored("r3"))
	assert.Empty(t, stored("r4"))
	assert.Equal(t, []string{"sess:old=v"}, stored("r5"), "expired before the window: not found, not deleted")
	assert.Empty(t, stored("r8"))

	stdout, stderr, code = cellttl(sweepArgs(since...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stdout, "nothing left to report")
}

// TestSweepResume stops a round whose last shard stalls (-timeout), with
// -checkpoint, and runs it again: the second run resumes the round and
// reports only what the first did not; a third, a minute on, reports only
// what expired since.
func TestSweepResume(t *testing.T) {
	w, clock := startSweep(t, seeded)
	cp := filepath.Join(t.TempDir(), "sweep.json")
	setStall(t, w, "r8")

	first, stderr, code := cellttl(sweepArgs(append(since, "-checkpoint", cp, "-timeout", "500ms")...)...)
	assert.Equal(t, exitFailed, code)
	assert.Equal(t, strings.Join(strings.SplitAfter(cellEvents, "\n")[:5], ""), first, "the four shards read")
	assert.Contains(t, stderr, ": stopped after 4 of 5 shards; run again to resume\n")
	assert.Contains(t, stderr, "DeadlineExceeded")
	assert.Contains(t, stderr, "cellttl sweep: the round did not finish: run again with the same -checkpoint to resume it\n")

	setStall(t, w, "")
	second, stderr, code := cellttl(sweepArgs("-checkpoint", cp)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, cellEvents, first+second, "every event once")
	assert.Contains(t, stderr, "  resumed a round an earlier run began\n")
	assert.Contains(t, stderr, "  7 cell events delivered;", "the round's, over both runs")

	// Within the margin of the last round's end: nothing to read.
	stdout, stderr, code := cellttl(sweepArgs("-checkpoint", cp)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "cellttl sweep: the watermark is at 2030-04-30T09:00:50.000Z, -margin before now: the next run reports what expires after it\n")

	put(t, w.raw, "r6", "sess", "token", sweepBase.Add(70*time.Second))
	clock.Advance(time.Minute)
	stdout, stderr, code = cellttl(sweepArgs(append(since, "-checkpoint", cp)...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "cell expired 2030-04-30T09:01:10Z: table \"t\" row \"r6\" sess:\"token\"\n", stdout, "-since gives way to the watermark")
	assert.Contains(t, stderr, "expiries after 2030-04-30T09:00:50.000Z up to 2030-04-30T09:01:50.000Z: complete\n")

	// The checkpoint is this sweep's: a row sweep is refused it.
	stdout, stderr, code = cellttl(sweepArgs("-checkpoint", cp, "-granularity", "row")...)
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "cellttl sweep: ")
	assert.Contains(t, stderr, "row events")
}

// A failingWriter fails every write that holds its text, and keeps the
// others.
type failingWriter struct {
	bytes.Buffer
	fail string
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.fail) {
		return 0, errors.New("broken pipe")
	}
	return w.Buffer.Write(p)
}

// TestSweepDeliveryFails checks that a batch is recorded as delivered only
// once written: stdout fails on the second shard's events, and the run
// given the same checkpoint writes them.
func TestSweepDeliveryFails(t *testing.T) {
	startSweep(t, seeded)
	cp := filepath.Join(t.TempDir(), "sweep.json")

	out := &failingWriter{fail: `row "r2"`}
	var errs bytes.Buffer
	code := execute(sweepArgs(append(since, "-checkpoint", cp)...), out, &errs)
	assert.Equal(t, exitFailed, code)
	first := out.String()
	assert.Equal(t, strings.Join(strings.SplitAfter(cellEvents, "\n")[:2], ""), first)
	assert.Contains(t, errs.String(), `cellttl sweep: shard ["r2", "r4"): sweep: delivering 2 events: broken pipe`)
	assert.Contains(t, errs.String(), "run again with the same -checkpoint to resume it")

	second, stderr, code := cellttl(sweepArgs("-checkpoint", cp)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, cellEvents, first+second)

	// Without -checkpoint, the hint is to sweep the window again.
	out = &failingWriter{fail: `row "r2"`}
	errs.Reset()
	code = execute(sweepArgs(since...), out, &errs)
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, errs.String(), "without -checkpoint no run resumes it: run again with -since 2030-04-30T09:00:00.000Z to sweep its window again\n")

	// A report that cannot be written fails the round too.
	out = &failingWriter{fail: `{"report":`}
	errs.Reset()
	code = execute(sweepArgs(append(since, "-format", "json")...), out, &errs)
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, errs.String(), "cellttl sweep: writing the report: broken pipe\n")
}

// TestSweepMissed: a round that read a family later than its GC keeps
// expired cells lists what it may have missed and exits 3; a family whose
// policy keeps them long enough (a grace) does not.
func TestSweepMissed(t *testing.T) {
	w, _ := startSweep(t, map[string]bigtable.GCPolicy{"sess": bigtable.MaxAgePolicy(time.Second), "clicks": nil, "meta": nil})
	sweepClock(t, sweepBase.Add(time.Hour))

	stdout, stderr, code := cellttl(sweepArgs(since...)...)
	assert.Equal(t, exitMismatch, code)
	assert.Equal(t, cellEvents, stdout, "GC is late, as it often is: the cells are still there")
	assert.Contains(t, stderr, ": complete, but GC may have deleted some expired cells first\n")
	assert.Contains(t, stderr, `family "sess": cells that expired after 2030-04-30T09:00:00.000Z up to 2030-04-30T09:59:50.000Z may have been deleted by GC (it keeps them 1s after expiry)`)
	assert.Contains(t, stderr, "cellttl sweep: GC may have deleted cells that expired before the sweep read them")
	assert.Contains(t, stderr, "-family NAME=grace:DURATION:SPEC")

	stdout, stderr, code = cellttl(sweepArgs(append(since, "-format", "json")...)...)
	assert.Equal(t, exitMismatch, code)
	_, reports := decodeSweep(t, stdout)
	require.Len(t, reports, 1)
	assert.False(t, reports[0].Report.Complete)
	require.Len(t, reports[0].Report.Missed, 1)
	assert.Equal(t, "sess", reports[0].Report.Missed[0].Family)
	assert.Contains(t, stderr, "the report lists them")

	setPolicy(t, w.e.Admin, "sess", bigtable.MaxAgePolicy(2*time.Hour))
	_, stderr, code = cellttl(with("sweep", "-family", "sess=grace:2h:onesecond", "-family", "clicks=default:1h", "-since", "2030-04-30T09:00:00Z")...)
	assert.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stderr, "GC may")

	// A family the table does not have is a mismatch, as for check, with
	// the nearest name it has suggested.
	stdout, stderr, code = cellttl(with("sweep", "-family", "nope=onesecond", "-since", "2030-04-30T09:00:00Z")...)
	assert.Equal(t, exitMismatch, code)
	assert.Empty(t, stdout)
	assert.Equal(t, `cellttl sweep: ttl: unknown column family: table "t" has no family "nope"; its families: clicks, meta, sess
`, stderr)
	_, stderr, code = cellttl(with("sweep", "-family", "ses=onesecond", "-since", "2030-04-30T09:00:00Z")...)
	assert.Equal(t, exitMismatch, code)
	assert.Contains(t, stderr, `has no family "ses" (did you mean "sess"?)`)
}

// watchedOut is a stdout that calls each with the number of reports
// written so far, after each write that holds one.
type watchedOut struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	reports int
	each    func(reports int)
}

func (w *watchedOut) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if strings.Contains(string(p), `{"report":`) {
		w.reports++
		w.each(w.reports)
	}
	return n, err
}

func (w *watchedOut) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestSweepEvery runs rounds with -every until the context ends: the
// clock moves a minute after the first round, and the context is cancelled
// after the second, which reports what expired in that minute.
func TestSweepEvery(t *testing.T) {
	w, clock := startSweep(t, seeded)
	put(t, w.raw, "r6", "sess", "token", sweepBase.Add(90*time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &watchedOut{each: func(n int) {
		if n == 1 {
			clock.Advance(time.Minute)
		} else {
			cancel()
		}
	}}
	c, err := parse(sweepCommand, append(on, "-family", "sess=onesecond", "-family", "clicks=default:1h", "-workers", "1",
		"-since", "2030-04-30T09:00:00Z", "-every", "10ms", "-format", "json"))
	require.NoError(t, err)
	var errs bytes.Buffer
	code := sweepCommand.run(ctx, c, out, &errs)
	assert.Equal(t, exitOK, code, "stopped between rounds: every round complete")
	assert.Equal(t, "cellttl sweep: stopped after 2 rounds: context canceled\n", unwarned(errs.String()))
	events, reports := decodeSweep(t, out.String())
	require.Len(t, reports, 2)
	assert.Equal(t, cellEvents+"cell expired 2030-04-30T09:01:30Z: table \"t\" row \"r6\" sess:\"token\"\n", eventLines(events))
	assert.Equal(t, sweepBase.Add(50*time.Second), reports[1].Report.From)
	assert.Equal(t, sweepBase.Add(110*time.Second), reports[1].Report.Until)
	assert.Equal(t, int64(1), reports[1].Report.Events)

	// -timeout ends -every as an interrupt does: between rounds, a
	// success. Without -since or -checkpoint the first round is empty.
	stdout, stderr, code := cellttl(sweepArgs("-every", "1h", "-timeout", "1s")...)
	assert.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "expiries after 2030-04-30T09:01:50.000Z up to 2030-04-30T09:01:50.000Z: complete\n")
	assert.True(t, strings.HasSuffix(stderr, "cellttl sweep: stopped after 1 round: context deadline exceeded\n"), stderr)

	// A round the context cut short exits 1; a run with its checkpoint
	// resumes it.
	setStall(t, w, "r8")
	cp := filepath.Join(t.TempDir(), "sweep.json")
	first, stderr, code := cellttl(sweepArgs("-every", "1h", "-timeout", "500ms", "-since", "2030-04-30T09:00:00Z", "-checkpoint", cp)...)
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, stderr, "cellttl sweep: the round did not finish: the next round resumes it, as does a run with the same -checkpoint\n")
	assert.Contains(t, stderr, "cellttl sweep: stopped after 1 round: context deadline exceeded\n")
	setStall(t, w, "")
	second, stderr, code := cellttl(sweepArgs("-checkpoint", cp)...)
	require.Equal(t, exitOK, code, stderr)
	r6 := "cell expired 2030-04-30T09:01:30Z: table \"t\" row \"r6\" sess:\"token\"\n"
	assert.Equal(t, strings.Replace(cellEvents, "\ncell expired 2030-04-30T09:00:40Z", "\n"+r6+"cell expired 2030-04-30T09:00:40Z", 1), first+second,
		"the clock moved on: r6 expired in the round too")
}

// TestSweepWriteTimes sweeps a table that records write times, written
// through the library: the companions are neither reported nor left
// behind by -delete. Without -write-times they are cells like any other.
func TestSweepWriteTimes(t *testing.T) {
	w := startWatched(t, map[string]bigtable.GCPolicy{"sess": nil})
	sweepClock(t, sweepBase.Add(time.Minute))
	tbl, err := ttl.NewTable(w.raw, map[string]ttl.Strategy{"sess": ttl.OneSecond()}, ttl.RecordWriteTime(),
		ttl.WithClock(func() time.Time { return sweepBase }))
	require.NoError(t, err)
	require.NoError(t, tbl.Apply(context.Background(), "u1", testkit.Set("sess", "token", "abc", ttl.For(10*time.Second))))
	args := with("sweep", "-family", "sess=onesecond", "-since", "2030-04-30T09:00:00Z")

	stdout, stderr, code := cellttl(args...)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, `cell expired 2030-04-30T09:00:10Z: table "t" row "u1" sess:"token"
cell expired 2030-04-30T09:00:10Z: table "t" row "u1" sess:"\xff\xffwt:token"
`, stdout)

	stdout, stderr, code = cellttl(append(args, "-write-times", "-delete")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "cell expired 2030-04-30T09:00:10Z: table \"t\" row \"u1\" sess:\"token\"\n", stdout)
	assert.Empty(t, testkit.RawRow(t, w.raw, "u1"), "the cell and its companion deleted")
}

// TestSweepCommandLine checks sweep's help and that every bad command line
// exits 2 naming the flag at fault, and prints nothing on stdout.
func TestSweepCommandLine(t *testing.T) {
	startSweep(t, seeded)

	help, _, code := cellttl("help", "sweep")
	assert.Equal(t, exitOK, code)
	for _, f := range []string{"-family", "-granularity", "-since", "-margin", "-every", "-checkpoint", "-delete", "-values",
		"-write-times", "-workers", "-progress", "-app-profile", "-timeout", "-format", "-move", "-from", "-metrics-addr", "-log-format"} {
		assert.Regexp(t, "\n  "+f+"[ \n]", help, "flag %s", f)
	}
	assert.Contains(t, help, `{"report": {...}}`)
	assert.True(t, strings.HasSuffix(help, "\n"+exitHelp()), "the one table of exit statuses")
	stdout, _, _ := cellttl("sweep", "-h")
	assert.Equal(t, help, stdout)
	assert.Contains(t, usage, "\n  sweep    report the cells that expired")

	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-granularity", "table"}, `invalid value "table" for flag -granularity: want cell, column or row`},
		{[]string{"-since", "yesterday"}, `invalid value "yesterday" for flag -since: want a time such as 2030-04-30T09:00:00Z`},
		{[]string{"-since", "2030-04-30T10:00:00Z"}, "-since 2030-04-30T10:00:00.000Z: after now (2030-04-30T09:01:00.000Z): a sweep reports what has expired"},
		{[]string{"-margin", "0s", "-every", "1m"}, "-margin 0s: want a positive duration"},
		{[]string{"-margin", "-1s", "-every", "1m"}, "-margin -1s: a duration cannot be negative"},
		{[]string{"-every", "-1m"}, "-every -1m0s: a duration cannot be negative"},
		{[]string{"-now", "2030-04-30T09:00:00Z", "-every", "1m"}, "-now fixes the instant of one round: it cannot be used with -every"},
		{[]string{"-every", "soon"}, `invalid value "soon" for flag -every`},
		{[]string{"-values", "-granularity", "row", "-every", "1m"}, "-values: row events carry no value"},
		{nil, "one round with neither -checkpoint nor -since reports nothing"},
		{[]string{"-workers", "0", "-every", "1m"}, "-workers 0: want 1 or more"},
		{[]string{"-format", "xml"}, `invalid value "xml" for flag -format: want text or json`},
		{[]string{"-sample", "0.5"}, "flag provided but not defined: -sample"},
		{[]string{"-from", "none", "-every", "1m"}, "-from, -start, -old and -skew describe a move: name the family in it with -move NAME"},
		{[]string{"-family", "rev=seqnum:2", "-every", "1m"}, `sweep.New: ttl: invalid strategy: family "rev" (SequenceNumbers(2)): a sweep reports cells that expire at an instant`},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		stdout, stderr, code := cellttl(sweepArgs(tt.args...)...)
		assert.Equal(t, exitUsage, code, tt.args)
		assert.Empty(t, stdout, tt.args)
		assert.Contains(t, stderr, "cellttl sweep: "+tt.msg, tt.args)
	}
	_, stderr, code := cellttl(with("sweep")...)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "cellttl sweep: missing -family")
}

// unwarned is stderr without the warnings of families whose GC policy is
// not their spec's (the seeded table has no GC, which TestSweepWarnsPolicy
// checks).
func unwarned(stderr string) string {
	var keep []string
	for _, line := range strings.SplitAfter(stderr, "\n") {
		if !strings.HasPrefix(line, "cellttl sweep: warning: ") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "")
}
