package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cellttl/ttl/internal/spec"
	"github.com/cellttl/ttl/scan"
)

// config is a parsed command line.
type config struct {
	project, instance, table string
	families                 spec.Families
	others                   listFlag
	timeout                  time.Duration
	format                   formatFlag

	// commands that read data
	appProfile string

	// commands that read a whole table
	workers  int
	sample   float64
	progress bool

	// ensure
	apply, allowDataLoss, ignoreWarnings bool

	// stats
	values bool

	// move; check and ensure for a family in a move
	moving     string // check, ensure: the family in a move
	from       fromFlag
	start      timeFlag
	old        oldFlag
	skew       time.Duration
	checkpoint string

	// inspect
	at         timeFlag
	writeTimes bool
	margin     time.Duration
	row        string
}

// newFlagSet defines the flags of cmd on c: the common ones, then the
// command's own. It prints nothing: parse errors are returned.
func newFlagSet(cmd *command, c *config) *flag.FlagSet {
	fs := flag.NewFlagSet("cellttl "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&c.project, "project", "", "Google Cloud `project` ID (required)")
	fs.StringVar(&c.instance, "instance", "", "Bigtable `instance` ID (required)")
	fs.StringVar(&c.table, "table", "", "`table` ID (required)")
	fs.Var(&c.families, "family", "a managed family and its strategy, as `NAME=SPEC`: SPEC is onesecond,\n"+
		"default:DURATION (48h, 90m, 30d) or seqnum:VERSIONS; repeat for each family")
	fs.DurationVar(&c.timeout, "timeout", 0, "give up after this `duration` (default: no limit)")
	fs.Var(&c.format, "format", "output `format`: text or json")
	if cmd.flags != nil {
		cmd.flags(fs, c)
	}
	return fs
}

// dataFlags defines the flags of a command that reads data.
func dataFlags(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.appProfile, "app-profile", "", "the app `profile` to read with, such as one that routes to a cluster\n"+
		"that serves no application traffic (default: the instance's default profile)")
}

// scanFlags defines the flags of a command that reads a whole table and
// can estimate from a sample of it.
func scanFlags(fs *flag.FlagSet, c *config) {
	workerFlags(fs, c)
	fs.Float64Var(&c.sample, "sample", 0, "read only this `fraction` of the table's shards, spread evenly, for a fast\n"+
		"estimate (clearly labelled; it decides and changes nothing)")
}

// workerFlags defines the flags of a command that reads a whole table.
func workerFlags(fs *flag.FlagSet, c *config) {
	dataFlags(fs, c)
	fs.IntVar(&c.workers, "workers", scan.DefaultWorkers, "read `N` shards of the table at once")
	fs.BoolVar(&c.progress, "progress", true, "report progress on stderr: a live line on a terminal, a line every\n"+
		"10s otherwise")
}

// parse parses a command's arguments. Flags may come before or after the
// positional arguments; "--" ends the flags.
func parse(cmd *command, args []string) (*config, error) {
	c := &config{}
	fs := newFlagSet(cmd, c)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if consumed := args[:len(args)-len(rest)]; len(consumed) > 0 && consumed[len(consumed)-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	var missing []string
	for _, f := range []struct{ name, value string }{{"project", c.project}, {"instance", c.instance}, {"table", c.table}} {
		if f.value == "" {
			missing = append(missing, "-"+f.name)
		}
	}
	if len(c.families.Strategies) == 0 && !cmd.familiesOptional {
		missing = append(missing, "-family")
	}
	switch {
	case len(missing) > 0:
		return nil, fmt.Errorf("missing %s", strings.Join(missing, ", "))
	case cmd.positional != "" && len(positional) == 0:
		return nil, fmt.Errorf("missing %s", cmd.positional)
	case cmd.positional != "" && len(positional) > 1:
		return nil, fmt.Errorf("unexpected argument %q after %s", positional[1], cmd.positional)
	case cmd.positional == "" && len(positional) > 0:
		return nil, fmt.Errorf("unexpected argument %q", positional[0])
	}
	switch {
	case c.workers < 0 || c.workers == 0 && cmd.scans:
		return nil, fmt.Errorf("-workers %d: want 1 or more", c.workers)
	case c.sample < 0 || c.sample >= 1:
		return nil, fmt.Errorf("-sample %v: want a fraction from 0 (every shard) to below 1", c.sample)
	}
	if cmd.positional != "" {
		c.row = positional[0]
	}
	return c, nil
}

// formatFlag is -format: text (the zero value) or json.
type formatFlag struct{ json bool }

func (f *formatFlag) String() string {
	if f != nil && f.json {
		return "json"
	}
	return "text"
}

func (f *formatFlag) Set(v string) error {
	switch v {
	case "text", "json":
		f.json = v == "json"
		return nil
	}
	return errors.New("want text or json")
}

// listFlag collects the values of a repeated flag.
type listFlag []string

func (l *listFlag) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, ",")
}

func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// timeFlag is an instant given as RFC 3339; the zero value means now.
type timeFlag struct{ t time.Time }

func (f *timeFlag) String() string {
	if f == nil || f.t.IsZero() {
		return ""
	}
	return f.t.Format(time.RFC3339Nano)
}

func (f *timeFlag) Set(v string) error {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return fmt.Errorf("want a time such as 2030-04-30T09:00:00Z")
	}
	f.t = t
	return nil
}
