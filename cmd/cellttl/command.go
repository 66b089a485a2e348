package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/move"
	"github.com/cellttl/ttl/policy"
)

// What every command shares: its shape, how its command line is parsed,
// how it fails, and its clients.

// A command is one of cellttl's subcommands.
type command struct {
	name string
	args string // what follows the common flags in a usage line
	help string // the paragraph "cellttl help NAME" and "cellttl NAME -h" print
	// flags defines the command's own flags, beyond the common ones.
	flags func(fs *flag.FlagSet, c *config)
	// positional names the one argument besides flags, if any.
	positional string
	// familiesOptional lets the command run without -family.
	familiesOptional bool
	// scans reports a command that reads a whole table.
	scans bool
	run   func(ctx context.Context, c *config, stdout, stderr io.Writer) int
}

// fail reports err from command name and returns its exit status: a
// strategy or option the library refuses is a bad command line; a table or
// family that does not exist, a policy that does not match or a change
// that would lose data is refused.
func fail(stderr io.Writer, name string, err error) int {
	errorLine(stderr, fmt.Sprintf("cellttl %s: %s", name, message(err)))
	return exitOf(err)
}

// exitOf returns the exit status of a command that failed with err.
func exitOf(err error) int {
	switch {
	case errors.Is(err, ttl.ErrInvalidStrategy) || errors.Is(err, ttl.ErrInvalidOption):
		return exitUsage
	case errors.Is(err, ttl.ErrUnknownFamily) || errors.Is(err, policy.ErrTableNotFound) ||
		errors.Is(err, policy.ErrFamilyMismatch) || errors.Is(err, policy.ErrDataLoss):
		return exitMismatch
	}
	return exitFailed
}

// message returns err as the command prints it: a refusal that a flag
// lifts (policy.OptionError) says the flag, not the library's option, and
// drops the Go names wrapped around it.
func message(err error) string {
	var oe *policy.OptionError
	if errors.As(err, &oe) {
		if flag, ok := optionFlags[oe.Option]; ok {
			return fmt.Sprintf("%v (allow it with %s)", oe.Err, flag)
		}
	}
	return err.Error()
}

// optionFlags are the flags that set the options a refusal names.
var optionFlags = map[policy.Option]string{
	policy.AllowDataLoss: "-allow-data-loss",
	move.Checkpoint:      "-checkpoint",
}

// adminClient connects to the instance's table admin API.
func adminClient(ctx context.Context, c *config) (*bigtable.AdminClient, error) {
	admin, err := bigtable.NewAdminClient(ctx, c.project, c.instance)
	if err != nil {
		return nil, clientError(c, err)
	}
	return admin, nil
}

// dataClient connects to the instance's data API, with the app profile
// -app-profile names. A command line tool exports no client-side metrics.
func dataClient(ctx context.Context, c *config) (*bigtable.Client, error) {
	client, err := bigtable.NewClientWithConfig(ctx, c.project, c.instance,
		bigtable.ClientConfig{AppProfile: c.appProfile, MetricsProvider: bigtable.NoopMetricsProvider{}})
	if err != nil {
		return nil, clientError(c, err)
	}
	return client, nil
}

// clients are what a command that reads a table works with: the admin
// client, the families reach found in the table, and the data client once
// opened. close closes both.
type clients struct {
	admin *bigtable.AdminClient
	data  *bigtable.Client // nil until openData
	found tableFamilies
}

// connect opens the admin client and reaches table (c's table, or its
// schedule table), so that a command's first error names the server, the
// table or its families.
func connect(ctx context.Context, c *config, table string) (*clients, error) {
	admin, err := adminClient(ctx, c)
	if err != nil {
		return nil, err
	}
	tc := *c
	tc.table = table
	found, err := reach(ctx, &tc, admin)
	if err != nil {
		admin.Close()
		return nil, err
	}
	return &clients{admin: admin, found: found}, nil
}

// connectFamilies connects to c's table, refuses names it lacks (naming
// the one it may have meant) and opens the data client: how the commands
// that read the families begin.
func connectFamilies(ctx context.Context, c *config, names []string) (*clients, error) {
	k, err := connect(ctx, c, c.table)
	if err != nil {
		return nil, err
	}
	err = k.found.unknown(c, names)
	if err == nil {
		err = k.openData(ctx, c)
	}
	if err != nil {
		k.close()
		return nil, err
	}
	return k, nil
}

// openData opens the data client.
func (k *clients) openData(ctx context.Context, c *config) error {
	client, err := dataClient(ctx, c)
	if err != nil {
		return err
	}
	k.data = client
	return nil
}

// close closes the clients.
func (k *clients) close() {
	if k.data != nil {
		k.data.Close()
	}
	k.admin.Close()
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
		"default:DURATION (48h, 90m, 30d), seqnum:VERSIONS or counter:SPEC; repeat for each family")
	fs.DurationVar(&c.timeout, "timeout", 0, "give up after this `duration` (default 0: no limit)")
	fs.DurationVar(&c.connectTimeout, "connect-timeout", defaultConnectTimeout, "give up when the server has not answered the first request within this\n"+
		"`duration`, naming the address tried (0: no limit)")
	fs.Var(&c.format, "format", "output `format`: text or json")
	if cmd.flags != nil {
		cmd.flags(fs, c)
	}
	return fs
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
	if err := negativeDurations(fs); err != nil {
		return nil, err
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

// errNegative reports a negative duration flag.
var errNegative = errors.New("a duration cannot be negative")

// negativeDurations refuses a negative value of any duration flag, naming
// the flag: no duration of cellttl's means anything below zero.
func negativeDurations(fs *flag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok || err != nil {
			return
		}
		if d, ok := g.Get().(time.Duration); ok && d < 0 {
			err = fmt.Errorf("-%s %v: %w", f.Name, d, errNegative)
		}
	})
	return err
}
