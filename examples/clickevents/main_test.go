package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/examples/internal/btenv"
	"github.com/cellttl/ttl/examples/internal/faulty"
	"github.com/cellttl/ttl/examples/internal/programtest"
	"github.com/cellttl/ttl/internal/emulator"
)

// w is the instant of the clicks in the tests: in the future, where the
// emulator's GC, on the real clock, cannot reach them.
var w = time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)

// story is what the program prints with its clicks at w: c03's click
// stored 47h before it and gone at W+1h, the default ones at W+48h, c07's
// stored 24h after it and gone at W+72h; and all ten rows still stored.
const story = `Table cellttl-example-clickevents on an in-process bttest emulator
Family "clicks": DefaultExpiration(48h0m0s), GC policy age() > 2d

Each customer clicked at W = 2030-04-30 09:00:00 (simulated clock).

customer  lifetime      stored timestamp            expires (Table.ExpiresAt)
c00       Default       W      2030-04-30 09:00:00  W+48h  2030-05-02 09:00:00
c01       Default       W      2030-04-30 09:00:00  W+48h  2030-05-02 09:00:00
c02       Default       W      2030-04-30 09:00:00  W+48h  2030-05-02 09:00:00
c03       For(1h0m0s)   W-47h  2030-04-28 10:00:00  W+1h   2030-04-30 10:00:00
c04       Default       W      2030-04-30 09:00:00  W+48h  2030-05-02 09:00:00
c05       Default       W      2030-04-30 09:00:00  W+48h  2030-05-02 09:00:00
c06       Default       W      2030-04-30 09:00:00  W+48h  2030-05-02 09:00:00
c07       For(72h0m0s)  W+24h  2030-05-01 09:00:00  W+72h  2030-05-03 09:00:00
c08       Default       W      2030-04-30 09:00:00  W+48h  2030-05-02 09:00:00
c09       Default       W      2030-04-30 09:00:00  W+48h  2030-05-02 09:00:00

Customers a read returns as simulated time passes:

time       live  customers
W            10  c00 c01 c02 c03 c04 c05 c06 c07 c08 c09
W+1h-1ms     10  c00 c01 c02 c03 c04 c05 c06 c07 c08 c09
W+1h          9  c00 c01 c02     c04 c05 c06 c07 c08 c09
W+48h-1ms     9  c00 c01 c02     c04 c05 c06 c07 c08 c09
W+48h         1                              c07
W+72h-1ms     1                              c07
W+72h         0

A plain bigtable read (no filter) still returns 10 rows: the Table's
filter hides expired cells; GC (MaxAge 48h, real clock) removes them later.
`

// clickEvents is the program at w.
func clickEvents(out io.Writer, target btenv.Target) error { return run(out, target, w) }

// TestRun runs the program on its in-process emulator and checks every
// line it prints.
func TestRun(t *testing.T) { programtest.Prints(t, clickEvents, story) }

// TestRunAgain: a run on an emulator that an earlier run wrote to deletes
// the earlier clicks first, and tells the same story of its own.
func TestRunAgain(t *testing.T) {
	_, target, want := programtest.OnEmulator(t, story)
	var out bytes.Buffer
	if err := run(&out, target, w); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != want {
		t.Errorf("the first run printed\n%s\nwant\n%s", got, want)
	}

	// A minute later: every time of the story (all on the hour) a minute
	// later, and no cell of the first run left.
	out.Reset()
	if err := run(&out, target, w.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	want = strings.ReplaceAll(want, ":00:00", ":01:00")
	if got := out.String(); got != want {
		t.Errorf("the second run printed\n%s\nwant\n%s", got, want)
	}
}

// TestRunFails: a bad target is reported, and nothing printed.
func TestRunFails(t *testing.T) { programtest.RefusesHalfTarget(t, clickEvents) }

// TestRunReportsFailures: when any call the program makes fails, it
// stops and reports the error.
func TestRunReportsFailures(t *testing.T) {
	calls := faulty.EveryCall(t, 0, func(addr string) error {
		t.Setenv("BIGTABLE_EMULATOR_HOST", addr)
		return run(io.Discard, btenv.Target{}, w)
	})
	// Open: 4 admin calls; DeleteRows, the bulk write and 9 reads.
	if calls < 10 {
		t.Errorf("the program made %d calls", calls)
	}
}

// TestClickRefused: a click the table refuses is reported with the
// customer's name.
func TestClickRefused(t *testing.T) {
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"other": nil}) // no family clicks
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{family: ttl.DefaultExpiration(48 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	err = click(context.Background(), tbl)
	if err == nil || !strings.HasPrefix(err.Error(), "writing c00: ") || !strings.Contains(err.Error(), `unknown family "clicks"`) {
		t.Errorf("click into a table without the family: %v", err)
	}
}

// TestRelative checks the offsets from W of the stored timestamps and
// expiries.
func TestRelative(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                 "W",
		24 * time.Hour:    "W+24h",
		-47 * time.Hour:   "W-47h",
		90 * time.Minute:  "W+1h30m0s",
		-time.Millisecond: "W-1ms",
	} {
		if got := relative(d); got != want {
			t.Errorf("relative(%v) = %q, want %q", d, got, want)
		}
	}
}
