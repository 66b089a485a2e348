package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/examples/internal/btenv"
	"github.com/cellttl/ttl/examples/internal/faulty"
	"github.com/cellttl/ttl/examples/internal/programtest"
	"github.com/cellttl/ttl/internal/emulator"
)

// day1 is the simulated day 1 of the tests: in the future, where the
// emulator's GC, on the real clock, cannot reach its cells.
var day1 = time.Date(2030, 4, 30, 0, 0, 0, 0, time.UTC)

// story is what the program prints, whatever day 1 is: the counter family
// created as an aggregate; bob refused by the minute limit, then allowed
// once his oldest window has slid out of the minute; carol refused by the
// daily quota, then allowed after midnight; alice's windows expiring 50s
// after they close, as each leaves the sum; and the table deleted.
const story = `Table cellttl-example-ratelimit on an in-process bttest emulator
policy.Ensure: table "cellttl-example-ratelimit": 1 family created or changed
  family "hits" (Counter(OneSecond())): create, with maxage=1s and counter cells (an aggregate of int64 sums), done: true
policy.Check: family "hits" (Counter(OneSecond())): maxage=1s, as wanted; its cells: counter

Per user: at most 100 requests in a sliding minute (the sum of the last 6
windows of 10s, each kept 50s after it closes) and 250 a day (a window
of a day, from midnight UTC). Each request adds 1 to both counters (one
blind write), then reads both sums (one SumCounter each), itself included,
and is decided on them: a refused request counts too.

Day 1
time      user   sent  decisions                       minute sum  day sum
23:55:00  alice    30  30 allowed                      1–30        1–30
23:55:00  bob      80  80 allowed                      1–80        1–80
23:55:00  carol    90  90 allowed                      1–90        1–90
23:55:30  bob      40  20 allowed                      81–100      81–100
                       20 refused by the minute limit  101–120     101–120
23:56:00  carol    90  90 allowed                      1–90        91–180
23:56:05  bob      30  30 allowed                      41–70       121–150
23:57:00  carol    90  70 allowed                      1–70        181–250
                       20 refused by the daily quota   71–90       251–270
23:57:00  alice    10  10 allowed                      1–10        31–40
23:57:20  alice    10  10 allowed                      11–20       41–50
23:57:40  alice    10  10 allowed                      21–30       51–60

At 23:56:05 the sliding minute is the windows from 23:55:10 on: bob's 80 of
23:55:00 have left it, his 20 refused at 23:55:30 still count.

Alice's minute counter as the clock moves on: ReadCounter lists the live
windows, newest first; SumCounter sums the last 6. Each window's cell
expires 50s after the window closes, as it leaves the sum.
at 23:57:40: sum 30, 3 windows live
  23:57:40 to 23:57:50: 10, expires 23:58:40
  23:57:20 to 23:57:30: 10, expires 23:58:20
  23:57:00 to 23:57:10: 10, expires 23:58:00
at 23:58:00: sum 20, 2 windows live
  23:57:40 to 23:57:50: 10, expires 23:58:40
  23:57:20 to 23:57:30: 10, expires 23:58:20
at 23:58:20: sum 10, 1 window live
  23:57:40 to 23:57:50: 10, expires 23:58:40
at 23:58:40: sum 0, no window live

Carol's daily counter, before and after midnight:
at 23:59:59.999: sum 270, 1 window live
  00:00:00 to day 2 00:00:00: 270, expires day 2 00:00:00
at day 2 00:00:00: sum 0, no window live

Day 2: a new daily window, and carol is allowed again.
time      user   sent  decisions                       minute sum  day sum
00:00:00  carol    10  10 allowed                      1–10        1–10

Table cellttl-example-ratelimit deleted.
`

// rateLimit is the program on day1.
func rateLimit(out io.Writer, target btenv.Target) error { return run(out, target, day1) }

// TestRun runs the program on its in-process emulator and checks every
// line it prints.
func TestRun(t *testing.T) { programtest.Prints(t, rateLimit, story) }

// TestRunAgain: the program deletes its table, so a second run on the
// same emulator, on another day, tells the same story.
func TestRunAgain(t *testing.T) {
	day2 := func(out io.Writer, target btenv.Target) error { return run(out, target, day1.AddDate(0, 0, 1)) }
	programtest.PrintsEachTime(t, story, rateLimit, day2)
}

// TestRunLeftBehind: a table left by a run that was killed, with its
// counter family, is refused and kept, as the doc comment says.
func TestRunLeftBehind(t *testing.T) {
	sum := bigtable.AggregateType{Input: bigtable.Int64Type{}, Aggregator: bigtable.SumAggregator{}}
	programtest.RefusesLeftBehind(t, rateLimit, func(e *emulator.Emulator) {
		if err := e.Admin.CreateTableFromConf(context.Background(), &bigtable.TableConf{
			TableID: "cellttl-example-ratelimit", ColumnFamilies: map[string]bigtable.Family{family: {ValueType: sum}},
		}); err != nil {
			t.Fatal(err)
		}
	}, `exists with family "hits"`)
}

// TestRunFails: a bad target is reported, and nothing printed.
func TestRunFails(t *testing.T) { programtest.RefusesHalfTarget(t, rateLimit) }

// TestRunReportsFailures: when a call the program makes fails, it stops
// and reports the error. Failing each call in turn would take as many
// runs as calls (about 1,500: three a request), so the first calls are
// failed in turn (Open's, Ensure's, Check's, the first request's), and
// then those of the end that a different code path makes: the reads of
// the windows shown, the last request, and the deletion of the table.
func TestRunReportsFailures(t *testing.T) {
	prog := func(addr string) error {
		t.Setenv("BIGTABLE_EMULATOR_HOST", addr)
		return run(io.Discard, btenv.Target{}, day1)
	}
	calls := faulty.EveryCall(t, 10, prog)
	// From the end: the table's deletion; the day-2 burst (10 requests, 3
	// calls each); carol's window at two instants, then alice's at four
	// (a SumCounter and a ReadCounter each).
	for _, n := range []int{calls, calls - 1, calls - 31, calls - 32, calls - 35} {
		s, err := faulty.Start(n)
		if err != nil {
			t.Fatal(err)
		}
		err = prog(s.Addr)
		s.Close()
		if err == nil || !strings.Contains(err.Error(), faulty.Message) {
			t.Errorf("with call %d of %d failing: %v", n, calls, err)
		}
	}
}

// TestSpan checks the formatting of the sums a group was decided on.
func TestSpan(t *testing.T) {
	if got := span(7, 7); got != "7" {
		t.Errorf("span(7, 7) = %q", got)
	}
	if got := span(1, 30); got != "1–30" {
		t.Errorf("span(1, 30) = %q", got)
	}
}
