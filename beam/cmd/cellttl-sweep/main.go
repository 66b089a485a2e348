// Command cellttl-sweep runs one round of a sweep (package sweep) with an
// Apache Beam pipeline: the events of the cells that expired after -from,
// up to -until (or -now less -margin), found by a runner's workers
// (Dataflow), or, without --runner, in this process (Prism), written to
// -output one JSON object a line, and with -delete the expired cells
// deleted once they are written. With -schedule, the round reads the
// table's schedule (package schedule) and only the rows it names. A job
// is one round: the caller keeps the watermark, which the command prints
// as the next round's -from. See ../../README.md.
//
//	cellttl-sweep -project P -instance I -table T -family NAME=SPEC... -from TIME
//	    [-until TIME | -now TIME -margin DURATION] [-granularity cell|column|row]
//	    [-delete] [-values] [-write-times] [-schedule TABLE] -output FILE [-report FILE]
//	    [-app-profile PROFILE] [--runner=dataflow --region R --staging_location gs://...]
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
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/cellttl/ttl/beam/cmd/internal/launch"
	"github.com/cellttl/ttl/beam/pipeline"
	"github.com/cellttl/ttl/spec"
	"github.com/cellttl/ttl/sweep"
)

// The flags every command takes (-instance, -table, -output, -now ...)
// are launch's; the round's are cellttl sweep's, but for -from and -until,
// which a job of one round takes instead of a checkpoint.
var (
	cmd         = launch.New("cellttl-sweep", usage, "the round's events (one object a line)")
	families    spec.Families
	from, until timeFlag
	margin      = flag.Duration("margin", sweep.DefaultMargin, "without -until, how far behind -now the round ends: a `duration` covering\n"+
		"the longest write and the skew between the writers' clocks and this one")
	granularity = sweep.Cell
	del         = flag.Bool("delete", false, "delete the expired cells reported, once their events are written")
	values      = flag.Bool("values", false, "put the expired cells' values in the events (not row events')")
	writeTimes  = flag.Bool("write-times", false, "the table records write times (ttl.RecordWriteTime): skip and delete\n"+
		"the companions with their cells")
	report = flag.String("report", "", "write the round's counts, as JSON, to this `file` (default: -output followed by .report.json)")
	sched  = flag.String("schedule", "", "read the round through the table's schedule, the `table` (same instance) writers\n"+
		"given ttl.WithSchedule fill, instead of the whole table; with -delete, delete its entries served")
)

func init() {
	flag.Var(&families, "family", "a family to sweep and its strategy, as `NAME=SPEC`: SPEC is onesecond,\n"+
		"default:DURATION (48h, 90m, 30d), or either after counter: or grace:DURATION:; repeat for each family (required)")
	flag.Var(&from, "from", "the round's start, the watermark: report what expired after this `time` (RFC 3339):\n"+
		"the -until of the last round that completed (required)")
	flag.Var(&until, "until", "the round's end: report what expired up to this `time` (RFC 3339)\n"+
		"(default: -now less -margin); it must not be after them")
	flag.Var(&granularity, "granularity", "what an event reports (`KIND`): cell, each expired cell; column or row,\n"+
		"one once nothing in it is live (default cell)")
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run runs the command with the arguments args, printing its result to
// stdout and reporting to stderr, and returns its exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if code := cmd.Parse(args, stderr); code >= 0 {
		return code
	}
	// On a worker, Init runs the worker and never returns: the checks
	// below are for the program that builds the job.
	if !beam.Initialized() {
		beam.Init()
	}

	cfg, err := config()
	if errors.Is(err, errNotYet) {
		return cmd.NotYet(stderr, err)
	}
	if err != nil {
		return cmd.UsageError(stderr, err)
	}
	reportFile := *report
	if reportFile == "" {
		reportFile = cfg.Output + ".report.json"
	}
	ctx := context.Background()
	if err := cmd.Reach(ctx, cfg.Table); err != nil {
		return cmd.Fail(stderr, err)
	}
	p, s := beam.NewPipelineWithRoot()
	col, err := pipeline.Sweep(ctx, s, cfg)
	if err != nil {
		return cmd.Fail(stderr, err)
	}
	pipeline.WriteJSON(s, reportFile, col)
	if err := beamx.Run(ctx, p); err != nil {
		return cmd.Fail(stderr, fmt.Errorf("the job failed: %w\nthe watermark stays at -from: run the round again with -from %s -until %s",
			err, cfg.From.UTC().Format(time.RFC3339Nano), cfg.Until.UTC().Format(time.RFC3339Nano)))
	}
	if *jobopts.Async {
		fmt.Fprintf(stderr, "cellttl-sweep: job submitted; it writes its events to %s, its counts to %s\n", cfg.Output, reportFile)
		return 0
	}
	var r pipeline.SweepResult
	if err := launch.ReadJSON(ctx, reportFile, &r); err != nil {
		return cmd.Fail(stderr, fmt.Errorf("reading the counts back from %s: %w", reportFile, err))
	}
	printResult(stdout, &r, reportFile)
	if !r.Complete() {
		return cmd.Fail(stderr, fmt.Errorf("read %d of %d shards: the round is not complete; run it again with the same -from and -until", r.Read.ShardsRead, r.Read.Shards))
	}
	return 0
}

// errNotYet reports a round that cannot run yet: its end, -now less
// -margin, is not after its start.
var errNotYet = errors.New("the round ends before it starts")

// config returns the round the flags describe, once they are parsed, or
// what is wrong with them.
func config() (pipeline.SweepConfig, error) {
	table, now, err := cmd.Table(launch.Required{Flag: "family", Value: families.String()},
		launch.Required{Flag: "from", Value: from.String()})
	if err != nil {
		return pipeline.SweepConfig{}, err
	}
	cfg := pipeline.SweepConfig{Table: table, Families: families.Specs, From: from.t, Until: until.t, Now: now, Margin: *margin,
		Granularity: granularity, Values: *values, WriteTimes: *writeTimes, Delete: *del, Schedule: *sched, Output: cmd.Output()}
	switch {
	case *margin <= 0:
		return cfg, fmt.Errorf("-margin %v: want a positive duration, covering the longest write and the clocks' skew", *margin)
	case *values && granularity == sweep.Row:
		return cfg, errors.New("-values: row events carry no value; use -granularity cell or column")
	}
	// The round's end, fixed now, so that the job and what it prints
	// agree on it.
	if cfg.Now.IsZero() {
		cfg.Now = time.Now()
	}
	if cfg.Until.IsZero() {
		cfg.Until = cfg.Now.Add(-*margin).Truncate(time.Millisecond)
	}
	if !cfg.Until.After(cfg.From) && !until.t.IsZero() {
		return cfg, fmt.Errorf("-until %s is not after -from %s: a round ends after it starts", &until, &from)
	}
	if !cfg.Until.After(cfg.From) {
		return cfg, fmt.Errorf("%w: -from %s is not before the round's end, %s: nothing has expired since; run the round later",
			errNotYet, &from, cfg.Until.UTC().Format(time.RFC3339Nano))
	}
	return cfg, nil
}

// printResult prints to w what the round did, summed up on one line as
// package sweep sums up a round, then where the events and counts went,
// what was read (as scan.Stats says it), and the next round's -from.
func printResult(w io.Writer, r *pipeline.SweepResult, reportFile string) {
	fmt.Fprintln(w, r.Report())
	fmt.Fprintf(w, "  events written to %s; expired: %s", r.Output, r.Expired)
	if r.Delete && r.Schedule != "" {
		fmt.Fprintf(w, "; entries of the schedule deleted: %d", r.EntriesDeleted)
	}
	through := ""
	if r.Schedule != "" {
		through = fmt.Sprintf(" through schedule table %q (its entries included)", r.Schedule)
	}
	fmt.Fprintf(w, "\n  read %s%s; counts in %s\n", r.Read, through, reportFile)
	if r.Complete() {
		fmt.Fprintf(w, "next round: -from %s\n", r.Until.UTC().Format(time.RFC3339Nano))
	}
}

// timeFlag is a flag of an RFC 3339 time; its zero value is not given.
type timeFlag struct{ t time.Time }

func (f *timeFlag) String() string {
	if f == nil || f.t.IsZero() {
		return ""
	}
	return f.t.UTC().Format(time.RFC3339Nano)
}

func (f *timeFlag) Set(v string) error {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return errors.New("want a time such as 2030-04-30T09:00:00Z")
	}
	f.t = t
	return nil
}

const usage = `usage: cellttl-sweep -project P -instance I -table T -family NAME=SPEC... -from TIME
	[-until TIME | -now TIME -margin DURATION] [-granularity cell|column|row]
	[-delete] [-values] [-write-times] [-schedule TABLE] -output FILE [-report FILE]
	[-app-profile PROFILE] [-bigtable-project P] [-connect-timeout DURATION]
	[--runner=dataflow --region R --staging_location gs://BUCKET/PATH ...]
cellttl-sweep -help lists every flag, Beam's too.
`
