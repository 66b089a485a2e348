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
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/gcpopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/cellttl/ttl/beam/pipeline"
)

// The -project flag is Beam's own (gcpopts.Project): the project the job
// runs in, and by default the one the table is in.
var (
	bigtableProject = flag.String("bigtable-project", "", "the Google Cloud `project` of the Bigtable instance (default: -project)")
	instance        = flag.String("instance", "", "Bigtable `instance` ID (required)")
	table           = flag.String("table", "", "`table` ID (required)")
	appProfile      = flag.String("app-profile", "", "the app `profile` to read with, such as one that routes to a cluster\n"+
		"that serves no application traffic (default: the instance's default profile)")
	values = flag.Bool("values", false, "read values too, so that bytes include them")
	output = flag.String("output", "", "write the audit, as JSON, to this `file` (a gs:// path on Dataflow; required)")
	now    = flag.String("now", "", "judge cells at this `time`, RFC 3339 (default: when the job is built)")
)

// familiesFlag collects -family NAME=SPEC; the pipeline parses the specs.
type familiesFlag map[string]string

func (f familiesFlag) String() string {
	parts := make([]string, 0, len(f))
	for name, spec := range f {
		parts = append(parts, name+"="+spec)
	}
	return strings.Join(parts, ",")
}

func (f familiesFlag) Set(v string) error {
	name, spec, ok := strings.Cut(v, "=")
	switch {
	case !ok || name == "":
		return errors.New("want NAME=onesecond, NAME=default:DURATION or NAME=seqnum:VERSIONS")
	case f[name] != "":
		return fmt.Errorf("family %q given twice", name)
	}
	f[name] = spec
	return nil
}

func main() {
	families := familiesFlag{}
	flag.Var(families, "family", "a managed family and its strategy, as `NAME=SPEC`: SPEC is onesecond,\n"+
		"default:DURATION (48h, 90m, 30d) or seqnum:VERSIONS; repeat for each family")
	flag.Parse()
	// On a worker, Init runs the worker and never returns: the checks
	// below are for the program that builds the job.
	beam.Init()

	cfg, err := config(families)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cellttl-audit: %v\n%s", err, usage)
		os.Exit(2)
	}
	ctx := context.Background()
	p, s := beam.NewPipelineWithRoot()
	audit, err := pipeline.Audit(ctx, s, cfg)
	if err != nil {
		fail(err)
	}
	pipeline.WriteAudit(s, *output, audit)
	if err := beamx.Run(ctx, p); err != nil {
		fail(fmt.Errorf("the job failed: %w", err))
	}
	fmt.Fprintf(os.Stderr, "cellttl-audit: wrote the audit of table %q to %s\n", cfg.Table.Table, *output)
}

// fail reports err and exits 1. (Beam takes over the log package's
// output, and would print it as information.)
func fail(err error) {
	fmt.Fprintf(os.Stderr, "cellttl-audit: %v\n", err)
	os.Exit(1)
}

const usage = `usage: cellttl-audit -project P -instance I -table T [-family NAME=SPEC]... -output FILE
	[-values] [-app-profile PROFILE] [-bigtable-project P] [-now TIME]
	[--runner=dataflow --region R --staging_location gs://BUCKET/PATH ...]
cellttl-audit -help lists every flag, Beam's too.
`

// config returns the audit the flags ask for.
func config(families familiesFlag) (pipeline.AuditConfig, error) {
	cfg := pipeline.AuditConfig{
		Table: pipeline.Table{Project: *bigtableProject, Instance: *instance, Table: *table,
			AppProfile: *appProfile},
		Families: families,
		Values:   *values,
	}
	if cfg.Table.Project == "" {
		cfg.Table.Project = *gcpopts.Project
	}
	var missing []string
	for _, f := range []struct{ name, value string }{{"project", cfg.Table.Project}, {"instance", *instance},
		{"table", *table}, {"output", *output}} {
		if f.value == "" {
			missing = append(missing, "-"+f.name)
		}
	}
	if len(missing) > 0 {
		return cfg, fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	if *now != "" {
		t, err := time.Parse(time.RFC3339Nano, *now)
		if err != nil {
			return cfg, fmt.Errorf("-now %q: want a time such as 2030-04-30T09:00:00Z", *now)
		}
		cfg.Now = t
	}
	return cfg, nil
}
