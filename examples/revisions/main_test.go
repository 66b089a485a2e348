package main

import (
	"bytes"
	"context"
	"io"
	"regexp"
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

// The parts of the story the program prints, in order.
const (
	header = `Table cellttl-example-revisions on an in-process bttest emulator
Family "rev": SequenceNumbers(3), GC policy versions() > 3

`
	wrote = `Wrote 5 revisions of doc-1, column rev:body, as ttl.Version(1) to ttl.Version(5).

`
	// Each version n is stamped n ms after the epoch.
	stored = `Stored cells (plain bigtable client, no filter): 5

  version  timestamp (µs)  as a time (UTC)          value
  5        5000            1970-01-01 00:00:00.005  "published"
  4        4000            1970-01-01 00:00:00.004  "reviewed"
  3        3000            1970-01-01 00:00:00.003  "second draft"
  2        2000            1970-01-01 00:00:00.002  "first draft"
  1        1000            1970-01-01 00:00:00.001  "outline"
`
	// Whether or not GC has run, the Table returns the newest three.
	reads = `
Read through the Table: the newest 3

  version 5  "published"
  version 4  "reviewed"
  version 3  "second draft"

With ttl.RowFilter(bigtable.LatestNFilter(1)): the newest one

  version 5  "published"
`
	// GC leaves the newest three, after a time the test does not check.
	gc = `
Waiting (at most 10s) for the emulator's GC, a pass every 0.5–1.5 s, to leave 3...

Stored cells (some time) after the last write: 3

  version 5  "published"
  version 4  "reviewed"
  version 3  "second draft"
`
)

// TestRun runs the program on its in-process emulator, whose GC runs on
// the real clock (the run waits for it: a second or two), and checks what
// it prints.
func TestRun(t *testing.T) {
	t.Setenv("BIGTABLE_EMULATOR_HOST", "")
	var out bytes.Buffer
	if err := run(&out, btenv.Target{}); err != nil {
		t.Fatal(err)
	}
	got := regexp.MustCompile(`Stored cells \S+ after`).ReplaceAllString(out.String(), "Stored cells (some time) after")
	// The stored cells are read at once, yet GC may have run: TestShowStored
	// checks them.
	from, to := strings.Index(got, "Stored cells (plain"), strings.Index(got, "\nRead through the Table")
	if from < 0 || to < from {
		t.Fatalf("no stored cells, or no reads, in\n%s", got)
	}
	if got, want := got[:from]+got[to:], header+wrote+reads+gc; got != want {
		t.Errorf("the program printed\n%s\nwant\n%s", got, want)
	}
}

// newTable returns a Table on a table of the test's emulator with family
// rev without a GC policy, where all versions stay stored; and the table
// itself.
func newTable(t *testing.T) (*ttl.Table, bigtable.TableAPI) {
	raw := emulator.StartForTest(t).TableForTest(t, "t", map[string]bigtable.GCPolicy{family: nil})
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{family: ttl.SequenceNumbers(keep)})
	if err != nil {
		t.Fatal(err)
	}
	return tbl, raw
}

// TestShowStored checks the writes and the stored cells, all five of them
// where GC has not run, and the note when it has.
func TestShowStored(t *testing.T) {
	ctx := context.Background()
	tbl, raw := newTable(t)
	var out bytes.Buffer
	if err := write(ctx, &out, tbl); err != nil {
		t.Fatal(err)
	}
	r, err := showStored(ctx, &out, raw)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != wrote+stored {
		t.Errorf("printed\n%s\nwant\n%s", got, wrote+stored)
	}
	if len(r[family]) != 5 {
		t.Errorf("returned %d cells, want 5", len(r[family]))
	}

	// As GC leaves them.
	m := bigtable.NewMutation()
	m.DeleteTimestampRange(family, column, 0, 3000)
	if err := raw.Apply(ctx, doc, m); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if _, err := showStored(ctx, &out, raw); err != nil {
		t.Fatal(err)
	}
	want := `Stored cells (plain bigtable client, no filter): 3
(the emulator's GC ran between the writes and this read)

  version  timestamp (µs)  as a time (UTC)          value
  5        5000            1970-01-01 00:00:00.005  "published"
  4        4000            1970-01-01 00:00:00.004  "reviewed"
  3        3000            1970-01-01 00:00:00.003  "second draft"
`
	if got := out.String(); got != want {
		t.Errorf("after GC, printed\n%s\nwant\n%s", got, want)
	}
}

// TestAwaitGC checks the ends of the wait that a run on the emulator does
// not show: on Cloud Bigtable it does not wait (nor read); on an emulator
// it gives up gcDeadline after the writes, and stops at a failed read.
func TestAwaitGC(t *testing.T) {
	ctx := context.Background()
	var out bytes.Buffer
	if err := awaitGC(ctx, &out, nil, false, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	cloud := `
On Cloud Bigtable, GC is asynchronous and may take up to a week: not waiting for
it. Until then the older cells are stored, and the Table never returns them.
`
	if got := out.String(); got != cloud {
		t.Errorf("on Cloud Bigtable, printed\n%s\nwant\n%s", got, cloud)
	}

	tbl, raw := newTable(t)
	if err := write(ctx, io.Discard, tbl); err != nil {
		t.Fatal(err)
	}
	r, err := raw.ReadRow(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	err = awaitGC(ctx, io.Discard, raw, true, r, time.Now().Add(-gcDeadline-time.Millisecond))
	if err == nil || err.Error() != "GC did not delete the older versions within 10s of writing them" {
		t.Errorf("with GC late: %v", err)
	}

	// A poll that fails ends the wait (after one pause of 50 ms).
	missing := emulator.StartForTest(t).Client.Open("missing")
	if err := awaitGC(ctx, io.Discard, missing, true, r, time.Now()); err == nil || !strings.Contains(err.Error(), "NotFound") {
		t.Errorf("with the table gone: %v", err)
	}
}

// TestRunFails: a bad target is reported, and nothing printed.
func TestRunFails(t *testing.T) { programtest.RefusesHalfTarget(t, run) }

// TestRunReportsFailures: when any call the program makes before it waits
// for GC fails, it stops and reports the error. (A failure of call n
// during the wait would cost n polls, 50 ms each: the first 13 calls are
// those before it, as the program makes them today: Open's 4, DeleteRows,
// 5 writes and 3 reads.)
func TestRunReportsFailures(t *testing.T) {
	calls := faulty.EveryCall(t, 13, func(addr string) error {
		t.Setenv("BIGTABLE_EMULATOR_HOST", addr)
		return run(io.Discard, btenv.Target{})
	})
	if calls < 13 {
		t.Errorf("the program made %d calls, want at least 13", calls)
	}
}
