// Ratelimit shows counters that expire: a per-user rate limit of 100
// requests in a sliding minute and a daily quota of 250 requests, kept in
// Bigtable with one blind write and two reads per request.
//
// Each user's row holds two counters of the family "hits", a ttl.Counter
// family that policy.Tool.Ensure creates as an aggregate of int64 sums: the
// column "minute" counts in windows of 10 seconds, and the limit is the
// sum of the last 6 of them; the column "day" counts in windows of a day,
// from midnight UTC, and the quota is the sum of the current one. Every
// window is one cell, stamped with its expiry, to which Bigtable adds each
// increment; the cell expires on its own Keep after its window closes.
//
// Three users send requests at fixed instants of a simulated clock, from
// 23:55 on a day 1: alice a few, bob bursts that the minute limit refuses
// until his oldest window slides out of the minute, carol more than her
// daily quota. The program prints each decision with the sums it was
// taken on; then alice's minute windows as the clock moves on and each
// expires, carol's daily window before and after midnight, and carol
// allowed again on day 2. Every instant is fixed (the simulated day 1 is
// the day after the real one, so that the emulator's garbage collection,
// on the real clock, removes nothing), and so is the output.
//
// Run it with
//
//	go run ./examples/ratelimit
//
// which starts an in-process Bigtable emulator. To use another emulator,
// set BIGTABLE_EMULATOR_HOST; to use a real instance (with Application
// Default Credentials), pass -project and -instance. The table,
// cellttl-example-ratelimit, is created for the run and deleted at its
// end; one left behind by a run that was killed must be deleted by hand
// (cbt deletetable cellttl-example-ratelimit) before the next run.
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
)

const family = "hits"

// strategy is the counter family's: Counter(OneSecond()), which stamps
// each window's cell with its expiry, the window's end plus its Keep.
// Counter(DefaultExpiration(d)) would stamp it d earlier (with d = Size +
// Keep, at the window's start, which readers of the raw cells may like),
// but this family counts in two windows whose lives differ, 60s and a
// day, and no one d suits both. DefaultExpiration's own advantages do not
// apply to counters: no cell is stamped with its write time, and a counter
// family is always a new one, never an existing family migrated. And
// OneSecond's sharp edge, a cell stamped by the server expiring at once,
// cannot cut: an Add is never stamped by the server.
var strategy = ttl.Counter(ttl.OneSecond())

// The limits, per user.
const (
	limit = 100 // requests in a sliding minute
	quota = 250 // requests in a day, from midnight UTC
)

// The counters: one column each, in the family, and the windows they
// count in (a column counts in one window, so the two are two columns).
const (
	minuteCol     = "minute"
	minuteWindows = 6
	dayCol        = "day"
)

var (
	// minute counts in windows of 10 s; the limit is the sum of the last
	// 6, a span that slides with the clock and is 50 to 60 s long.
	// SumCounter needs each window summed to be live: Keep at least
	// (6−1) × 10 s. With exactly that, a window's cell expires as the
	// window leaves the sum.
	minute = ttl.Window{Size: 10 * time.Second, Keep: 50 * time.Second}
	// day counts in windows of a day, from midnight UTC; the quota is the
	// current one's sum, so nothing is kept after it closes.
	day = ttl.Window{Size: 24 * time.Hour}
)

func main() {
	target := btenv.RegisterFlags(flag.CommandLine)
	flag.Parse()
	if err := run(os.Stdout, *target, btenv.Tomorrow()); err != nil {
		fmt.Fprintln(os.Stderr, "ratelimit:", err)
		os.Exit(1)
	}
}

// run opens the example's table on target and tells the story to out, on
// a simulated clock whose day 1 starts at day1, a midnight UTC.
func run(out io.Writer, target btenv.Target, day1 time.Time) (err error) {
	// The table is opened without families, since btenv would create a
	// plain family (and a family's kind of cell cannot be changed once
	// created): policy.Tool.Ensure creates the counter family, as an aggregate.
	// btenv refuses a table with a family it was not given, so the table
	// is deleted at the end, for the next run.
	ctx, env, err := btenv.Begin(target, "ratelimit", nil)
	if err != nil {
		return err
	}
	defer env.Close()
	defer env.DeleteTable(ctx, out, &err)
	fmt.Fprintf(out, "Table %s on %s\n", env.Name, env.Where)
	families := map[string]ttl.Strategy{family: strategy}
	if err := ensure(ctx, out, env, families); err != nil {
		return err
	}

	clock := btenv.NewClock(day1)
	tbl, err := ttl.NewTable(env.Table, families, ttl.WithClock(clock.Now), ttl.OtherFamilies())
	if err != nil {
		return err
	}
	l := newLimiter(tbl, clock, out, day1)
	return l.tell(ctx)
}

// ensure creates the counter family with policy.Tool.Ensure and checks it
// with policy.Tool.Check, printing what each says.
func ensure(ctx context.Context, out io.Writer, env *btenv.Env, families map[string]ttl.Strategy) error {
	tool, err := policy.New(env.Admin, env.Table, env.Name, families, policy.Options{})
	if err != nil {
		return err
	}
	plan, err := tool.Ensure(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "policy.Ensure: %v\n", plan)
	for _, f := range plan.Families {
		fmt.Fprintf(out, "  family %q (%s): %s, with %s and %s cells (an aggregate of int64 sums), done: %v\n",
			f.Family, f.Strategy, f.Action, policy.Describe(f.Want), policy.DescribeType(f.WantType), f.Done)
	}
	statuses, err := tool.Check(ctx)
	if err != nil {
		return err
	}
	for _, s := range statuses {
		fmt.Fprintf(out, "policy.Check: %s; its cells: %s\n", s, policy.DescribeType(s.Type))
	}
	return nil
}
