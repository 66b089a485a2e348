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
	"github.com/cellttl/ttl/sweep"
)

// day is the simulated day of the tests: in the future, where the
// emulator's GC, on the real clock, cannot reach its cells.
var day = time.Date(2030, 4, 30, 0, 0, 0, 0, time.UTC)

// output is what the program prints, whatever the day: the family created
// with its grace; carol's reads renewing her session every other minute;
// alice's session reported at 09:06 and its cell deleted, while bob's and
// carol's, saved until 09:05 too but renewed, are not; erin's second
// session reported, her first not, dave's never; each event once; and
// only frank's live cell left at the end.
const output = `Table cellttl-example-sessionexpiry on an in-process bttest emulator
policy.Ensure: table "cellttl-example-sessionexpiry": 1 family created or changed
  family "sess" (Grace(OneSecond(), 1h0m0s)): create, with GC policy maxage=1h, done: true

Sessions saved at 09:00:00 (simulated clock), one cell each in sess:token:

  alice  For(5m0s)    expires 09:05:00
  bob    For(5m0s)    expires 09:05:00
  carol  For(5m0s)    expires 09:05:00
  dave   For(5m0s)    expires 09:05:00
  erin   For(5m0s)    expires 09:05:00
  frank  For(1h0m0s)  expires 10:00:00

Every minute: the users' steps, then one round of the sweep (row events,
margin 10s, deleting what it reports), whose consumer logs each event.

09:01:00  carol reads her session with KeepAlive(5m0s): renewed, expires 09:07:15
09:01:00  sweep: expiries after 09:00:00 up to 09:00:50: no event
09:02:00  carol reads her session with KeepAlive(5m0s): nothing due, expires 09:07:15
09:02:00  dave logs out: his row is deleted
09:02:00  sweep: expiries after 09:00:50 up to 09:01:50: no event
09:03:00  carol reads her session with KeepAlive(5m0s): renewed, expires 09:09:15
09:03:00  erin signs in again: Replace with token e-2, For(5m0s), expires 09:08:00
09:03:00  sweep: expiries after 09:01:50 up to 09:02:50: no event
09:04:00  carol reads her session with KeepAlive(5m0s): nothing due, expires 09:09:15
09:04:00  bob's session: Touch with For(5m0s), expires 09:09:00
09:04:00  sweep: expiries after 09:02:50 up to 09:03:50: no event
09:05:00  carol reads her session with KeepAlive(5m0s): renewed, expires 09:11:15
09:05:00  sweep: expiries after 09:03:50 up to 09:04:50: no event
09:06:00  carol reads her session with KeepAlive(5m0s): nothing due, expires 09:11:15
09:06:00  raw read, no filter, before the round: 5 cells
            alice  a-1  expires 09:05:00  expired, stored until GC or a sweep deletes it
            bob    b-1  expires 09:09:00  live
            carol  c-1  expires 09:11:15  live
            erin   e-2  expires 09:08:00  live
            frank  f-1  expires 10:00:00  live
09:06:00  session alice expired at 09:05:00
09:06:00  sweep: expiries after 09:04:50 up to 09:05:50: 1 event, 1 expired cell, deleted in 1 row
09:06:00  raw read, no filter, after the round: 4 cells
            bob    b-1  expires 09:09:00  live
            carol  c-1  expires 09:11:15  live
            erin   e-2  expires 09:08:00  live
            frank  f-1  expires 10:00:00  live
09:07:00  sweep: expiries after 09:05:50 up to 09:06:50: no event
09:08:00  sweep: expiries after 09:06:50 up to 09:07:50: no event
09:09:00  session erin expired at 09:08:00
09:09:00  sweep: expiries after 09:07:50 up to 09:08:50: 1 event, 1 expired cell, deleted in 1 row
09:10:00  session bob expired at 09:09:00
09:10:00  sweep: expiries after 09:08:50 up to 09:09:50: 1 event, 1 expired cell, deleted in 1 row
09:11:00  sweep: expiries after 09:09:50 up to 09:10:50: no event
09:12:00  session carol expired at 09:11:15
09:12:00  sweep: expiries after 09:10:50 up to 09:11:50: 1 event, 1 expired cell, deleted in 1 row
09:12:00  raw read, no filter, at the end: 1 cell
            frank  f-1  expires 10:00:00  live

session  saved until  what happened                         event
alice    09:05:00     left alone                            expired at 09:05:00, logged at 09:06:00
bob      09:05:00     Touch at 09:04, For(5m)               expired at 09:09:00, logged at 09:10:00
carol    09:05:00     read with KeepAlive(5m) 09:01–09:06   expired at 09:11:15, logged at 09:12:00
dave     09:05:00     logged out at 09:02                   none: deleted before it expired
erin     09:05:00     replaced at 09:03, For(5m)            expired at 09:08:00, logged at 09:09:00
frank    10:00:00     left alone                            none yet: live

Table cellttl-example-sessionexpiry deleted.
`

// sessionExpiry is the program on day.
func sessionExpiry(out io.Writer, target btenv.Target) error { return run(out, target, day) }

// TestRun runs the program on its in-process emulator and checks every
// line it prints.
func TestRun(t *testing.T) { programtest.Prints(t, sessionExpiry, output) }

// TestRunAgain: the program deletes its table, so a second run on the
// same emulator, on another day, tells the same story.
func TestRunAgain(t *testing.T) {
	nextDay := func(out io.Writer, target btenv.Target) error { return run(out, target, day.AddDate(0, 0, 1)) }
	programtest.PrintsEachTime(t, output, sessionExpiry, nextDay)
}

// TestRunLeftBehind: a table left by a run that was killed, with its
// family, is refused and kept, as the doc comment says.
func TestRunLeftBehind(t *testing.T) {
	programtest.RefusesLeftBehind(t, sessionExpiry, func(e *emulator.Emulator) {
		e.TableForTest(t, "cellttl-example-sessionexpiry", map[string]bigtable.GCPolicy{family: strategy.GCPolicy()})
	}, `exists with family "sess"`)
}

// TestRunFails: a bad target is reported, and nothing printed.
func TestRunFails(t *testing.T) { programtest.RefusesHalfTarget(t, sessionExpiry) }

// oneShard is a table whose SampleRowKeys reports one tablet. The
// emulator's SampleRowKeys picks a row in a hundred at random as a
// boundary, and the sweep reads each shard with a request of its own, so
// the program's calls would vary from run to run. The sample is still
// requested, so that its failure is one of the calls failed.
type oneShard struct{ bigtable.TableAPI }

func (t oneShard) SampleRowKeys(ctx context.Context) ([]string, error) {
	_, err := t.TableAPI.SampleRowKeys(ctx)
	return nil, err
}

// TestRunReportsFailures: when any call the program makes fails, from
// opening its table to deleting it, it stops and reports the error.
func TestRunReportsFailures(t *testing.T) {
	calls := faulty.EveryCall(t, 0, func(addr string) error {
		t.Setenv("BIGTABLE_EMULATOR_HOST", addr)
		ctx := context.Background()
		env, err := btenv.Open(ctx, btenv.Target{}, "sessionexpiry", nil)
		if err != nil {
			return err
		}
		defer env.Close()
		env.Table = oneShard{env.Table}
		return tell(ctx, io.Discard, env, day.Add(9*time.Hour))
	})
	// Open, Ensure and the table's deletion; the saves; carol's reads and
	// renewals, the others' steps; the raw reads; a round a minute (the
	// policies, the sample, the read, and a deletion when it reports).
	if calls < 60 {
		t.Errorf("the program made %d calls", calls)
	}
}

// newStory returns a story on a table of its own emulator, on a clock at
// 09:00 of day, with a sweep from then on.
func newStory(t *testing.T, out io.Writer) *story {
	t.Helper()
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{family: strategy.GCPolicy()})
	clock := btenv.NewClock(day.Add(9 * time.Hour))
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{family: strategy}, ttl.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	env := &btenv.Env{Admin: e.Admin, Client: e.Client, Table: raw, Name: "t"}
	s := &story{out: out, tbl: tbl, raw: raw, clock: clock, t0: clock.Now()}
	if s.sweeper, err = newSweeper(env, map[string]ttl.Strategy{family: strategy}, clock); err != nil {
		t.Fatal(err)
	}
	s.log = newConsumer(out, clock)
	return s
}

// TestStepsOnNoSession: a step on a session that is not there is an
// error, not a story that did not happen.
func TestStepsOnNoSession(t *testing.T) {
	s := newStory(t, io.Discard)
	ctx := context.Background()
	if err := s.touch(ctx); err == nil || err.Error() != "bob's session was not live to touch" {
		t.Errorf("touch: %v", err)
	}
	if err := s.keepAlive(ctx); err == nil || err.Error() != "carol's session is not live" {
		t.Errorf("keepAlive: %v", err)
	}
}

// TestRoundIncomplete: a round that GC may have overtaken (here, one that
// starts two hours back, twice the grace) is an error, and says why.
func TestRoundIncomplete(t *testing.T) {
	s := newStory(t, io.Discard)
	env := &btenv.Env{Table: s.raw, Name: "t"}
	back := btenv.NewClock(s.t0.Add(-2 * time.Hour))
	var err error
	if s.sweeper, err = newSweeper(env, map[string]ttl.Strategy{family: strategy}, back); err != nil {
		t.Fatal(err)
	}
	back.Set(s.t0)
	err = s.round(context.Background())
	if err == nil || !strings.Contains(err.Error(), "the sweep's round is not complete") ||
		!strings.Contains(err.Error(), `GC may have deleted some expired cells of family "`+family+`" first`) {
		t.Errorf("a round behind the grace: %v", err)
	}
}

// TestSummaryMissingEvent: a session that expired without an event is an
// error.
func TestSummaryMissingEvent(t *testing.T) {
	s := newStory(t, io.Discard)
	if err := s.summary(); err == nil || err.Error() != "session alice expired, and the consumer logged no event for it" {
		t.Errorf("summary without events: %v", err)
	}
}

// TestConsumerRepeats: an event delivered again, as a resumed sweep
// delivers the batch it stopped in, is logged once.
func TestConsumerRepeats(t *testing.T) {
	var out bytes.Buffer
	clock := btenv.NewClock(day.Add(9*time.Hour + 6*time.Minute))
	c := newConsumer(&out, clock)
	e := sweep.Event{Kind: sweep.Row, Table: "t", Row: "alice", Family: family, Column: column,
		Timestamp: bigtable.Time(day.Add(9*time.Hour + 5*time.Minute)), Expired: day.Add(9*time.Hour + 5*time.Minute)}
	for range 2 {
		if err := c.deliver(context.Background(), []sweep.Event{e}); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := out.String(), "09:06:00  session alice expired at 09:05:00\n"; got != want {
		t.Errorf("logged %q, want %q", got, want)
	}
}

// TestPlural checks the counts of the sweep's lines.
func TestPlural(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{{0, "0 events"}, {1, "1 event"}, {2, "2 events"}} {
		if got := plural(tt.n, "event"); got != tt.want {
			t.Errorf("plural(%d, event) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
