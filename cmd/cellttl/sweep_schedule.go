package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/sweep"
)

// sweep -schedule TABLE and -reconcile: a round reads the schedule's
// entries of the seconds it covers and only the rows they name, instead
// of the whole table; a reconcile sweep scans the table and reports only
// what was written without entries.

// sweepScheduleHelp is the paragraph sweep's help gives -schedule.
const sweepScheduleHelp = `
Schedule. A round filters by timestamp on the server, but the server still
reads the whole table: Bigtable has no index by timestamp. With -schedule
TABLE, the table's schedule (the index of its rows by expiry that writers
given ttl.WithSchedule fill beside the data, set up with "cellttl ensure
-schedule TABLE -create -apply"), a round reads instead the entries of the
seconds it covers and only the rows they name: it costs what expires, not
the table, and reports what a scanning round reports of those rows. A cell
written without an entry (by cbt, another language, an import) is not
reported: run, beside it, a sweep with -reconcile, with a -checkpoint of
its own and a long -every (a day) within the families' grace, which scans
the table and reports only the events the schedule holds no entry for,
counted in its report ("N with no entry in the schedule"; JSON
"unscheduled"). A schedule named as the table, or -reconcile without
-schedule, is a bad command line (exit 2); a schedule table that does not
exist, lacks its family or keeps entries shorter than the families keep
expired cells is a mismatch (exit 3).`

// sweepScheduleFlags defines sweep's -schedule and -reconcile.
func sweepScheduleFlags(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.schedule, "schedule", "", "the table's schedule `table`: a round reads the entries of the seconds it\n"+
		"covers and only the rows they name, instead of the whole table")
	fs.BoolVar(&c.sweep.reconcile, "reconcile", false, "with -schedule: scan the table and report only what has no entry in the\n"+
		"schedule (written without one), counted as unscheduled")
}

// sweepSchedule sets the schedule in the sweep's options, refusing
// -reconcile without -schedule. It returns exitOK, or the status of the
// refusal it printed.
func sweepSchedule(c *config, client *bigtable.Client, o *sweep.Options, stderr io.Writer) int {
	if c.sweep.reconcile && c.schedule == "" {
		fmt.Fprintln(stderr, "cellttl sweep: -reconcile reports what has no entry in the schedule: give the schedule with -schedule TABLE")
		return exitUsage
	}
	if c.schedule != "" {
		o.Schedule, o.ScheduleTable, o.Reconcile = client.Open(c.schedule), c.schedule, c.sweep.reconcile
	}
	return exitOK
}

// sweepScheduleExists refuses, before the first round, a schedule table
// that does not exist or lacks its family. It returns exitOK, or the
// status of the refusal it printed.
func sweepScheduleExists(ctx context.Context, c *config, admin *bigtable.AdminClient, stderr io.Writer) int {
	hint := fmt.Sprintf("refused, nothing read; \"cellttl ensure -schedule %s -create -apply\" sets it up", c.schedule)
	return scheduleExists(ctx, c, admin, "sweep", hint, stderr)
}

// reconcileRound ends a reconcile round as round does, and says what the
// events it delivered mean: cells written without an entry.
func reconcileRound(c *config, stderr io.Writer, round func(*sweep.Report, error)) func(*sweep.Report, error) {
	if !c.sweep.reconcile {
		return round
	}
	return func(r *sweep.Report, err error) {
		round(r, err)
		if r != nil && r.Unscheduled > 0 {
			fmt.Fprintf(stderr, "cellttl sweep: %s no entry in schedule table %q: some writer writes without ttl.WithSchedule (cbt, another language, an import); a scheduled sweep does not report them\n",
				text.Plural(int(r.Unscheduled), "event had", "events had"), c.schedule)
		}
	}
}
