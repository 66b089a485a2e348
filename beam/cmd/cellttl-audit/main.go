// Command cellttl-audit audits a Bigtable table with an Apache Beam
// pipeline: the counts of `cellttl stats`, read by a runner's workers
// (Dataflow), or, without --runner, in this process (Prism). With
// -schedule, it counts the entries of the table's schedule table instead:
// the counts of `cellttl stats -schedule`. See ../../README.md.
//
//	cellttl-audit -project P -instance I -table T [-family NAME=SPEC]... -output FILE
//	    [-values] [-app-profile PROFILE] [-now TIME] [--runner=dataflow --region R --staging_location gs://...]
//	cellttl-audit -project P -instance I -table T -schedule TABLE -output FILE [-now TIME] ...
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/cellttl/ttl/beam/cmd/internal/launch"
	"github.com/cellttl/ttl/beam/pipeline"
	"github.com/cellttl/ttl/spec"
)

// The flags every command takes (-instance, -table, -output, -now ...)
// are launch's.
var (
	cmd      = launch.New("cellttl-audit", usage, "the audit")
	families spec.Families
	values   = flag.Bool("values", false, "read values too, so that bytes include them")
	sched    = flag.String("schedule", "", "count the entries of this schedule `table` of the table, by when they are\n"+
		"due, instead of auditing the table (it reads the schedule only)")
)

func init() {
	flag.Var(&families, "family", "a managed family and its strategy, as `NAME=SPEC`: SPEC is onesecond,\n"+
		"default:DURATION (48h, 90m, 30d) or seqnum:VERSIONS; repeat for each family")
}

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

// run runs the command with the arguments args, reporting to stderr, and
// returns its exit status.
func run(args []string, stderr io.Writer) int {
	if code := cmd.Parse(args, stderr); code >= 0 {
		return code
	}
	// On a worker, Init runs the worker and never returns: the checks
	// below are for the program that builds the job.
	if !beam.Initialized() {
		beam.Init()
	}

	table, now, err := cmd.Table()
	if err != nil {
		return cmd.UsageError(stderr, err)
	}
	ctx := context.Background()
	if *sched != "" {
		return runSchedule(ctx, table, now, stderr)
	}
	cfg := pipeline.AuditConfig{Table: table, Families: families.Specs, Now: now, Values: *values}
	if err := cmd.Reach(ctx, table); err != nil {
		return cmd.Fail(stderr, err)
	}
	done, err := cmd.Run(ctx, stderr, func(ctx context.Context, s beam.Scope) (beam.PCollection, error) {
		return pipeline.Audit(ctx, s, cfg)
	})
	if err != nil {
		return cmd.Fail(stderr, err)
	}
	if done {
		fmt.Fprintf(stderr, "cellttl-audit: wrote the audit of table %q to %s\n", cfg.Table.Table, cmd.Output())
	}
	return 0
}

// runSchedule runs -schedule: the count of the entries of the table's
// schedule table (pipeline.AuditSchedule), which reads the schedule only.
func runSchedule(ctx context.Context, table pipeline.Table, now time.Time, stderr io.Writer) int {
	switch {
	case len(families.Specs) > 0:
		return cmd.UsageError(stderr, errors.New("-schedule counts the schedule's entries, which belong to no family: -family cannot go with it"))
	case *values:
		return cmd.UsageError(stderr, errors.New("-schedule reads the schedule's row keys only: -values cannot go with it"))
	}
	cfg := pipeline.AuditScheduleConfig{Table: table, Schedule: *sched, Now: now}
	if err := cmd.Reach(ctx, table); err != nil {
		return cmd.Fail(stderr, err)
	}
	done, err := cmd.Run(ctx, stderr, func(ctx context.Context, s beam.Scope) (beam.PCollection, error) {
		return pipeline.AuditSchedule(ctx, s, cfg)
	})
	if err != nil {
		return cmd.Fail(stderr, err)
	}
	if done {
		fmt.Fprintf(stderr, "cellttl-audit: wrote the count of schedule table %q of table %q to %s\n", cfg.Schedule, table.Table, cmd.Output())
	}
	return 0
}

const usage = `usage: cellttl-audit -project P -instance I -table T [-family NAME=SPEC]... -output FILE
	[-values] [-app-profile PROFILE] [-bigtable-project P] [-now TIME] [-connect-timeout DURATION]
	[--runner=dataflow --region R --staging_location gs://BUCKET/PATH ...]
   or: cellttl-audit -project P -instance I -table T -schedule TABLE -output FILE
	[-app-profile PROFILE] [-bigtable-project P] [-now TIME] [-connect-timeout DURATION] [--runner=...]
cellttl-audit -help lists every flag, Beam's too.
`
