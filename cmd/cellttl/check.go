package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/policy"
)

var checkCommand = &command{
	name: "check",
	args: " [-move NAME -from SPEC|none -start TIME [-old RULE] [-skew DURATION]] [-schedule TABLE] [-terraform FILE] [-format json]",
	help: `Check reads the table's families and prints, for each family given with
-family, the GC policy it has and the one its strategy needs. It changes
nothing. It exits 3 when a family is missing or its policy differs in any
way, stricter or looser; "cellttl ensure" shows how it would fix them.

A family in a move ("cellttl help move") is given as the move commands take
it: -family NAME=SPEC with the strategy it moves to, and -from, -start, -old
and -skew, the same values; with several families, -move NAME says which
one. Its policy matches both during the move (the move's policy, set by
"cellttl move start") and once finished (SPEC's, set by "cellttl move
finish"); STATUS says which.
` + scheduleHelp + terraformCheckHelp,
	flags: func(fs *flag.FlagSet, c *config) {
		movingFlags(fs, c)
		scheduleFlag(fs, c)
		terraformCheckFlags(fs, c)
	},
	run: runCheck,
}

func runCheck(ctx context.Context, c *config, stdout, stderr io.Writer) int {
	strategies, err := c.strategies()
	if err != nil {
		fmt.Fprintf(stderr, "cellttl check: %v\n", err)
		return exitUsage
	}
	if c.terraformFile != "" {
		return checkTerraform(c, strategies, stdout, stderr)
	}
	if code := scheduleAhead(c, "check", strategies, stderr); code != exitOK {
		return code
	}
	k, err := connect(ctx, c, c.table)
	if err != nil {
		return fail(stderr, "check", err)
	}
	defer k.close()
	tool, err := policy.New(k.admin, nil, c.table, strategies, policy.Options{})
	if err != nil {
		return fail(stderr, "check", err)
	}
	statuses, err := tool.Check(ctx)
	if statuses == nil {
		return fail(stderr, "check", err)
	}
	sched, serr := checkSchedule(ctx, c, tool)
	if serr != nil {
		return fail(stderr, "check", serr)
	}
	if c.format.json {
		if err := printJSON(stdout, struct {
			Table    string          `json:"table"`
			Families []policy.Status `json:"families"`
			Schedule *scheduleCheck  `json:"schedule,omitempty"`
		}{c.table, statuses, sched}); err != nil {
			return fail(stderr, "check", err)
		}
	} else {
		renderCheck(stdout, c.table, statuses)
		if sched != nil {
			renderScheduleCheck(stdout, c.table, sched)
		}
	}
	schedBad := sched.report(stderr)
	if errors.Is(err, policy.ErrFamilyMismatch) {
		checkMismatch(c, k.found, statuses, stderr)
		return exitMismatch
	}
	if err != nil {
		return fail(stderr, "check", err)
	}
	if schedBad {
		return exitMismatch
	}
	return exitOK
}

// checkMismatch says on stderr what check found wrong, one line a fault,
// since stdout has the table: a table that does not exist, each family it
// does not have (with the nearest name it has), each policy that differs.
func checkMismatch(c *config, found tableFamilies, statuses []policy.Status, stderr io.Writer) {
	if !found.exists {
		fmt.Fprintf(stderr, "cellttl check: %v; \"cellttl ensure -create\" creates it\n", found.unknown(c, nil))
		return
	}
	for _, s := range statuses {
		switch {
		case !s.Exists:
			fmt.Fprintf(stderr, "cellttl check: table %q has no family %q%s\n", c.table, s.Family, found.suggest(s.Family))
		case !s.Matches:
			fmt.Fprintf(stderr, "cellttl check: table %q: %v; \"cellttl ensure\" shows what it would change\n", c.table, s)
		}
	}
}

// renderCheck prints the statuses as a table, one family a line, saying
// for a family in a move whether it is in the move or finished.
func renderCheck(w io.Writer, table string, statuses []policy.Status) {
	fmt.Fprintf(w, "table %q\n", table)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FAMILY\tSTRATEGY\tFOUND\tWANT\tSTATUS")
	for _, s := range statuses {
		found, want, status := policy.Describe(s.Found), policy.Describe(s.Want), "ok"
		switch {
		case !s.Exists:
			status = "missing"
		case !s.Matches:
			status = "mismatch"
		}
		if s.Finished != nil {
			finished := policy.Describe(s.Finished)
			same := finished == want
			if !same {
				want += " or " + finished
			}
			switch {
			case !s.Matches:
			case same:
				status += " (in a move, or finished)"
			case found == finished:
				status += " (move finished)"
			default:
				status += " (in a move)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Family, s.Strategy, found+kindNote(s.Type), want+kindNote(s.WantType), status)
	}
	tw.Flush()
}

// kindNote names a kind of cell beside a policy, where it is not plain:
// " (counter)", " (aggregate)".
func kindNote(t bigtable.Type) string {
	kind := policy.DescribeType(t)
	if kind == policy.DescribeType(nil) {
		return ""
	}
	return " (" + kind + ")"
}
