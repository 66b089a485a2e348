// Command cellttl-move-rewrite rewrites the old cells of a strategy move
// (ttl.Move) in the new encoding with an Apache Beam pipeline: the work of
// `cellttl move rewrite -apply`, done by a runner's workers (Dataflow),
// or, without --runner, in this process (Prism). See ../../README.md.
//
//	cellttl-move-rewrite -project P -instance I -table T -family NAME=SPEC -from SPEC|none
//	    -start TIME [-old RULE] [-skew DURATION] -output FILE [-dry-run]
//	    [-schedule TABLE] [-app-profile PROFILE] [-now TIME] [--runner=dataflow --region R --staging_location gs://...]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/cellttl/ttl/beam/cmd/internal/launch"
	"github.com/cellttl/ttl/beam/pipeline"
	"github.com/cellttl/ttl/spec"
)

// The flags every command takes (-instance, -table, -output, -now ...)
// are launch's; the move's are cellttl move's.
var (
	cmd       = launch.New("cellttl-move-rewrite", usage, "the rewrite's counts")
	family    = struct{ name, to string }{}
	from      string
	start     time.Time
	startFlag string // -start as given
	old       = "default"
	skew      = flag.Duration("skew", 0, "the most two processes' clocks differ by, a `DURATION`")
	dryRun    = flag.Bool("dry-run", false, "count what the rewrite would do, and change nothing")
	sched     = flag.String("schedule", "", "the schedule `table` of the table, in its instance: every cell rewritten\n"+
		"gets its entry, a row's written before its cells")
)

func init() {
	flag.Func("family", "the family and the strategy it moves to, as `NAME=SPEC`: SPEC is onesecond\n"+
		"or default:DURATION (48h, 90m, 30d) (required)", func(v string) error {
		name, to, ok := strings.Cut(v, "=")
		switch {
		case !ok || name == "":
			return errors.New("want NAME=onesecond or NAME=default:DURATION")
		case family.name != "":
			return errors.New("give the one family to move")
		}
		if _, err := spec.Parse(to); err != nil {
			return err
		}
		family.name, family.to = name, to
		return nil
	})
	flag.Func("from", "the family's strategy before the move: `SPEC`, or none for real timestamps (required)", func(v string) error {
		_, err := spec.ParseFrom(v)
		from = v
		return err
	})
	flag.Func("start", "the move's start: `TIME` (RFC 3339), when writers switched (required)", func(v string) error {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return errors.New("want a time such as 2030-04-30T09:00:00Z")
		}
		start, startFlag = t, v
		return nil
	})
	flag.Func("old", "what the cells written before the start live by (`RULE`): default (their\n"+
		"old rule), for:DURATION, until:TIME or forever (default: default)", func(v string) error {
		_, err := spec.ParseOld(v)
		old = v
		return err
	})
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

	table, now, err := cmd.Table(launch.Required{Flag: "family", Value: family.name},
		launch.Required{Flag: "from", Value: from}, launch.Required{Flag: "start", Value: startFlag})
	if err != nil {
		return cmd.UsageError(stderr, err)
	}
	if now.IsZero() {
		now = time.Now()
	}
	if err := notYet(now, start); err != nil {
		return cmd.NotYet(stderr, err)
	}
	cfg := pipeline.RewriteConfig{Table: table, Family: family.name, To: family.to, From: from, Old: old,
		Start: start, Skew: *skew, Now: now, DryRun: *dryRun, Schedule: *sched}
	ctx := context.Background()
	if err := cmd.Reach(ctx, table); err != nil {
		return cmd.Fail(stderr, err)
	}
	done, err := cmd.Run(ctx, stderr, func(ctx context.Context, s beam.Scope) (beam.PCollection, error) {
		return pipeline.Rewrite(ctx, s, cfg)
	})
	if err != nil {
		return cmd.Fail(stderr, err)
	}
	if !done {
		return 0
	}
	var r pipeline.RewriteResult
	if err := cmd.ReadOutput(ctx, &r); err != nil {
		return cmd.Fail(stderr, fmt.Errorf("reading the counts back from %s: %w", cmd.Output(), err))
	}
	report(stdout, &r)
	if !r.Complete() {
		return cmd.Fail(stderr, fmt.Errorf("read %d of %d shards", r.Read.ShardsRead, r.Read.Shards))
	}
	return 0
}

// notYet reports a rewrite judged at now, before the move's start: the
// old encoding is still written until then.
func notYet(now, start time.Time) error {
	if now.Before(start) {
		return fmt.Errorf("the move starts at %s (-start), it is %s (-now): run the rewrite after the start",
			start.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// report prints to w what the rewrite did: the old cells' counts, as
// move.Counts has them.
func report(w io.Writer, r *pipeline.RewriteResult) {
	rewritten := "rewritten in the new encoding"
	if r.DryRun {
		rewritten = "that would be rewritten in the new encoding"
	}
	fmt.Fprintf(w, "table %q family %q, %s at %s: old cells %s: %d; left (changed meanwhile, or below a newer cell): %d; already expired: %d\n",
		r.Table, r.Family, r.Move, r.Now.UTC().Format(time.RFC3339Nano), rewritten, r.Rewritten, r.Kept, r.Expired)
	if r.DryRun {
		fmt.Fprintln(w, "dry run: nothing changed; run again without -dry-run")
		return
	}
	if r.Schedule != "" {
		fmt.Fprintf(w, "the entries of the rewritten cells were written to schedule table %q, each row's before its cells\n", r.Schedule)
	}
	fmt.Fprintln(w, "if the runner retried a shard, these counts may be low; `cellttl move status` counts the old cells left")
}

const usage = `usage: cellttl-move-rewrite -project P -instance I -table T -family NAME=SPEC -from SPEC|none
	-start TIME [-old RULE] [-skew DURATION] -output FILE [-dry-run]
	[-schedule TABLE] [-app-profile PROFILE] [-bigtable-project P] [-now TIME] [-connect-timeout DURATION]
	[--runner=dataflow --region R --staging_location gs://BUCKET/PATH ...]
cellttl-move-rewrite -help lists every flag, Beam's too.
`
