// Sessionexpiry shows expiry as an event: sessions that expire, and a
// consumer that logs "session … expired" once for each, from a sweep.
//
// Six sessions are saved for five minutes at 09:00 of a simulated clock,
// in the family "sess", which policy.Tool.Ensure creates for
// ttl.Grace(ttl.OneSecond(), 1h): each cell's timestamp is its expiry,
// and GC keeps expired cells an hour longer, for the sweep to find. Then
// the clock moves on a minute at a time. Alice leaves her session alone;
// bob's is renewed once with Table.Touch; carol reads hers every minute
// until 09:06 with ttl.KeepAlive, which renews it whenever it would expire
// within five minutes; dave logs out at 09:02 (his row is deleted); erin's
// session is replaced at 09:03 by a new one (Mutation.Replace); frank's
// was saved for an hour.
//
// After each minute's steps, one round of a sweep.Sweeper of row events
// (sweep.Row) reports the sessions whose last live cell expired after the
// previous round and up to its margin (10s) before now, and the consumer
// prints "session <id> expired at <time>" for each. Bob and carol, saved
// until 09:05 like alice, produce no event then: a renewed session has no
// event until it really expires. Dave's session never expires, and erin's
// first one is not reported: both were deleted before they expired. The
// sweep deletes what it reports (sweep.Options.Delete): a raw read with
// the plain bigtable client, no filter, shows alice's expired cell stored
// before the round of 09:06 and gone after it, and at the end only frank's
// live cell left.
//
// A program drives a sweep with Sweeper.Every, which sleeps on the real
// clock; this one calls Sweeper.Once at each minute of its simulated
// clock instead. Every instant is fixed (the simulated day is the day
// after the real one, so that the emulator's garbage collection, on the
// real clock, removes nothing), and so is the output.
//
// Run it with
//
//	go run ./examples/sessionexpiry
//
// which starts an in-process Bigtable emulator. To use another emulator,
// set BIGTABLE_EMULATOR_HOST; to use a real instance (with Application
// Default Credentials), pass -project and -instance. The table,
// cellttl-example-sessionexpiry, is created for the run and deleted at its
// end; one left behind by a run that was killed must be deleted by hand
// (cbt deletetable cellttl-example-sessionexpiry) before the next run.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/examples/internal/btenv"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
)

// The sessions' family and column: one cell per session, its token.
const (
	family = "sess"
	column = "token"
)

// grace is how long GC keeps a session's cell after its expiry: at least
// as long as the sweep may fall behind, in whole seconds (Bigtable's GC
// ages are in seconds).
const grace = time.Hour

// strategy stamps each cell with its expiry, and keeps it stored grace
// after it.
var strategy = ttl.Grace(ttl.OneSecond(), grace)

func main() {
	target := btenv.RegisterFlags(flag.CommandLine)
	flag.Parse()
	if err := run(os.Stdout, *target, btenv.Tomorrow()); err != nil {
		fmt.Fprintln(os.Stderr, "sessionexpiry:", err)
		os.Exit(1)
	}
}

// run opens the example's table on target and tells the story to out, on
// a simulated clock that starts at 09:00 of day, a midnight UTC.
func run(out io.Writer, target btenv.Target, day time.Time) error {
	// The table is opened without families, since policy.Tool.Ensure creates
	// the family; btenv refuses a table with a family it was not given,
	// so tell deletes the table at the end, for the next run.
	ctx, env, err := btenv.Begin(target, "sessionexpiry", nil)
	if err != nil {
		return err
	}
	defer env.Close()
	return tell(ctx, out, env, day.Add(9*time.Hour))
}

// tell creates the sessions' family in env's table with policy.Tool.Ensure,
// tells the story from t0 on the simulated clock, and deletes the table.
func tell(ctx context.Context, out io.Writer, env *btenv.Env, t0 time.Time) (err error) {
	defer env.DeleteTable(ctx, out, &err)
	fmt.Fprintf(out, "Table %s on %s\n", env.Name, env.Where)

	clock := btenv.NewClock(t0)
	families := map[string]ttl.Strategy{family: strategy}
	tool, err := policy.New(env.Admin, env.Table, env.Name, families, policy.Options{Scan: scan.Options{Now: clock.Now}})
	if err != nil {
		return err
	}
	plan, err := tool.Ensure(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "policy.Ensure: %v\n", plan)
	for _, f := range plan.Families {
		fmt.Fprintf(out, "  family %q (%s): %s, with GC policy %s, done: %v\n", f.Family, f.Strategy, f.Action, policy.Describe(f.Want), f.Done)
	}

	tbl, err := ttl.NewTable(env.Table, families, ttl.WithClock(clock.Now))
	if err != nil {
		return err
	}
	s := &story{out: out, tbl: tbl, raw: env.Table, clock: clock, t0: t0, log: newConsumer(out, clock)}
	if s.sweeper, err = newSweeper(env, families, clock); err != nil {
		return err
	}
	return s.tell(ctx)
}
