// Package launch is what the commands that launch this module's jobs
// share: the flags naming the table, -output, -now and -connect-timeout,
// their checks, reaching the server, and running a job whose result is
// written to -output as JSON.
package launch

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/gcpopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/cellttl/ttl/beam/pipeline"
)

// A Command launches one job. The -project flag is Beam's own
// (gcpopts.Project): the project the job runs in, and by default the one
// the table is in.
type Command struct {
	name, usage string

	bigtableProject, instance, table, appProfile, output, now *string
	connectTimeout                                            *time.Duration
}

// New defines the flags every command takes on the command line: output
// says what -output receives, usage is the command's usage message.
func New(name, usage, output string) *Command {
	return &Command{
		name:            name,
		usage:           usage,
		bigtableProject: flag.String("bigtable-project", "", "the Google Cloud `project` of the Bigtable instance (default: -project)"),
		instance:        flag.String("instance", "", "Bigtable `instance` ID (required)"),
		table:           flag.String("table", "", "`table` ID (required)"),
		appProfile: flag.String("app-profile", "", "the app `profile` to read (and write) with, such as one that routes to a\n"+
			"cluster that serves no application traffic (default: the instance's default profile)"),
		output: flag.String("output", "", "write "+output+", as JSON, to this `file` (a gs:// path on Dataflow; required)"),
		now: flag.String("now", "", "judge the cells at this `time` (RFC 3339) instead of the clock's now\n"+
			"(default: when the job is built)"),
		connectTimeout: flag.Duration("connect-timeout", DefaultConnectTimeout, "give up when Bigtable has not answered the first request within this\n"+
			"`duration`, naming the address tried (0: no limit)"),
	}
}

// A Required is a flag the command needs, and its value ("" when not
// given).
type Required struct{ Flag, Value string }

// Table returns the table the flags name and the instant of -now (zero
// when not given), once the flags are parsed; it reports the missing
// flags, required included.
func (c *Command) Table(required ...Required) (pipeline.Table, time.Time, error) {
	t := pipeline.Table{Project: *c.bigtableProject, Instance: *c.instance, Table: *c.table, AppProfile: *c.appProfile}
	if t.Project == "" {
		t.Project = *gcpopts.Project
	}
	var missing []string
	for _, f := range append([]Required{{"project", t.Project}, {"instance", t.Instance}, {"table", t.Table},
		{"output", *c.output}}, required...) {
		if f.Value == "" {
			missing = append(missing, "-"+f.Flag)
		}
	}
	if len(missing) > 0 {
		return t, time.Time{}, fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	if err := negativeDurations(flag.CommandLine); err != nil {
		return t, time.Time{}, err
	}
	var now time.Time
	if *c.now != "" {
		var err error
		if now, err = time.Parse(time.RFC3339Nano, *c.now); err != nil {
			return t, now, fmt.Errorf("-now %q: want a time such as 2030-04-30T09:00:00Z", *c.now)
		}
	}
	return t, now, nil
}

// Parse parses args, the command line but the program's name, into the
// flags, Beam's included; it reports errors and -help's listing to
// stderr. It returns -1 when the flags parsed, or else the exit status:
// 0 after -help, 2 for a bad flag.
func (c *Command) Parse(args []string, stderr io.Writer) int {
	flag.CommandLine.Init(flag.CommandLine.Name(), flag.ContinueOnError)
	flag.CommandLine.SetOutput(stderr)
	switch err := flag.CommandLine.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		return 2
	}
	return -1
}

// Reach reports an error unless the table's server answers a first
// request within -connect-timeout, naming the server and where its
// address came from.
func (c *Command) Reach(ctx context.Context, t pipeline.Table) error {
	return Reach(ctx, t, *c.connectTimeout)
}

// Output is -output.
func (c *Command) Output() string { return *c.output }

// UsageError reports a bad command line to w, with the usage, and
// returns the exit status, 2.
func (c *Command) UsageError(w io.Writer, err error) int {
	fmt.Fprintf(w, "%s: %v\n%s", c.name, err, c.usage)
	return 2
}

// NotYet reports to w a job that cannot run before an instant, such as a
// rewrite before the move's start, and returns the exit status, 4,
// cellttl's not-ready status: run it again later.
func (c *Command) NotYet(w io.Writer, err error) int {
	fmt.Fprintf(w, "%s: not yet: %v\n", c.name, err)
	return 4
}

// Fail reports err to w and returns the exit status, 1. (Beam takes over
// the log package's output, and would print it as information.)
func (c *Command) Fail(w io.Writer, err error) int {
	fmt.Fprintf(w, "%s: %v\n", c.name, err)
	return 1
}

// Run builds the job with build, writes its result to -output
// (pipeline.WriteJSON), and runs it on the runner the flags name (Prism,
// in this process, by default); it returns an error if the job cannot be
// built or fails. It reports whether the job has finished: false when it
// was only submitted (--async), which it reports to stderr.
func (c *Command) Run(ctx context.Context, stderr io.Writer, build func(context.Context, beam.Scope) (beam.PCollection, error)) (bool, error) {
	p, s := beam.NewPipelineWithRoot()
	col, err := build(ctx, s)
	if err != nil {
		return false, err
	}
	pipeline.WriteJSON(s, *c.output, col)
	if err := beamx.Run(ctx, p); err != nil {
		return false, fmt.Errorf("the job failed: %w", err)
	}
	if *jobopts.Async {
		fmt.Fprintf(stderr, "%s: job submitted; it writes its result to %s\n", c.name, *c.output)
		return false, nil
	}
	return true, nil
}

// ReadOutput decodes the result a finished job wrote to -output (a path
// Beam's filesystems know, gs:// included) into v.
func (c *Command) ReadOutput(ctx context.Context, v any) error {
	return ReadJSON(ctx, *c.output, v)
}

// ReadJSON decodes the JSON file filename (a path Beam's filesystems
// know, gs:// included) into v.
func ReadJSON(ctx context.Context, filename string, v any) error {
	fs, err := filesystem.New(ctx, filename)
	if err != nil {
		return err
	}
	defer fs.Close()
	b, err := filesystem.Read(ctx, fs, filename)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
