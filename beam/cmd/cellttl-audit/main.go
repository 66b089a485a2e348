// Command cellttl-audit audits a Bigtable table with an Apache Beam
// pipeline: the counts of `cellttl stats`, read by a runner's workers
// (Dataflow), or, without --runner, in this process (Prism). See
// ../../README.md.
//
//	cellttl-audit -project P -instance I -table T [-family NAME=SPEC]... -output FILE
//	    [-values] [-app-profile PROFILE] [-now TIME] [--runner=dataflow --region R --staging_location gs://...]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

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
	cfg := pipeline.AuditConfig{Table: table, Families: families.Specs, Now: now, Values: *values}
	ctx := context.Background()
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

const usage = `usage: cellttl-audit -project P -instance I -table T [-family NAME=SPEC]... -output FILE
	[-values] [-app-profile PROFILE] [-bigtable-project P] [-now TIME] [-connect-timeout DURATION]
	[--runner=dataflow --region R --staging_location gs://BUCKET/PATH ...]
cellttl-audit -help lists every flag, Beam's too.
`
