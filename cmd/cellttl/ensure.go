package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/cellttl/ttl/policy"
)

var ensureCommand = &command{
	name:  "ensure",
	args:  " [-schedule TABLE] [-apply] [-create] [-allow-data-loss] [-ignore-warnings] [-workers N] [-sample FRACTION] [-now TIME] [-app-profile PROFILE] [-move NAME -from SPEC|none -start TIME [-old RULE] [-skew DURATION]] [-format json|terraform [-terraform-table NAME]]",
	scans: true,
	help: `Ensure makes each family's GC policy the one its strategy needs: it creates
the table if it does not exist, creates missing families, and changes
mismatched policies. Families not given with -family are left alone.
Creating a family, or the table, needs -create: without it, a family the
table does not have is refused (exit 3, nothing changed), with the nearest
name it has suggested, so that a misspelled name creates nothing.

It is a dry run unless -apply is given: it prints the plan and changes
nothing. Before changing a family it scans it (values stripped, at most one
cell per row) for cells the change would delete or hide: past timestamps
under onesecond, cells older than a new, shorter default (or expired ones
a grace keeps, which a sweep has yet to read), live cells whose expiries a
shorter default moves earlier, real-time timestamps under seqnum, sequence
numbers under an age-based policy, more versions than seqnum keeps. It
refuses such a change, changing nothing and exiting 3, unless
-allow-data-loss is given. Taking a grace off onesecond moves no live
cell's expiry: its live cells are listed as "not lost", collected sooner
once expired.

The scan reads the table once for every family to change, in shards read in
parallel (-workers), with progress on stderr. -sample reads a fraction of
the table (two random key ranges of every shard) for a labelled estimate
with its 95% interval, and decides nothing (it cannot be used
with -apply). A scan that fails, times out or is interrupted changes
nothing, labels its counts partial and exits 1.

A family in a move ("cellttl help move") is given as the move commands take
it: -family NAME=SPEC with the strategy it moves to, and -from, -start, -old
and -skew, the same values; with several families, -move NAME says which
one. It is kept with the move's policy or, once finished, SPEC's; any other
policy is changed to the move's, which deletes and hides no cell either of
its rules keeps live: the cells stamped on the wrong side of its boundary
are "cellttl move start"'s to find and rewrite.
` + scheduleHelp + `

With -schedule, ensure sets up the schedule table once the table's plan
went through, scanning it before a change that would delete entries (a
shorter grace), and prints both plans (JSON: {"table": PLAN, "schedule":
PLAN}; with -format terraform, the schedule's resource after the table's);
creating the schedule table, or its family, needs -create too.` + terraformEnsureHelp,
	flags: func(fs *flag.FlagSet, c *config) {
		scanFlags(fs, c)
		movingFlags(fs, c)
		nowFlag(fs, c)
		scheduleFlag(fs, c)
		terraformEnsureFlags(fs, c)
		fs.BoolVar(&c.apply, "apply", false, "make the changes (without it, a dry run)")
		fs.BoolVar(&c.create, "create", false, "create the families the table does not have, and the table if it does\n"+
			"not exist (without it, they are refused)")
		fs.BoolVar(&c.allowDataLoss, "allow-data-loss", false, "make changes even if they delete or hide existing cells")
		fs.BoolVar(&c.ignoreWarnings, "ignore-warnings", false, "pass Bigtable's IgnoreWarnings with each GC policy change,\n"+
			"needed to relax GC on a replicated table")
	},
	run: runEnsure,
}

// runEnsure runs ensure: it binds the policy tool, plans (and unless -dry-run
// applies) the table's policies, then the schedule's, and prints the plan.
// It is long because it is the command's one straight path, flag checks to
// exit status, read top to bottom; its steps are each a call.
func runEnsure(ctx context.Context, c *config, stdout, stderr io.Writer) int {
	if c.apply && c.sample > 0 {
		fmt.Fprintln(stderr, "cellttl ensure: -sample gives estimates, which cannot decide a change; drop -apply or -sample")
		return exitUsage
	}
	strategies, err := c.strategies()
	if err != nil {
		fmt.Fprintf(stderr, "cellttl ensure: %v\n", err)
		return exitUsage
	}
	if code := terraformUsage(c, strategies, stderr); code != exitOK {
		return code
	}
	if code := scheduleAhead(c, "ensure", strategies, stderr); code != exitOK {
		return code
	}
	k, err := connect(ctx, c, c.table)
	if err != nil {
		return fail(stderr, "ensure", err)
	}
	defer k.close()
	admin := k.admin
	if err := k.found.unknown(c, c.families.Names()); err != nil && !c.create {
		fmt.Fprintf(stderr, "cellttl ensure: %v\n", err)
		fmt.Fprintln(stderr, "cellttl ensure: refused, nothing changed; give -create to create it (check the name first)")
		return exitMismatch
	}
	if code := scheduleToCreate(ctx, c, admin, stderr); code != exitOK {
		return code
	}
	if err := k.openData(ctx, c); err != nil {
		return fail(stderr, "ensure", err)
	}
	client := k.data
	progress := newProgress(c, stderr)
	tool, err := policy.New(admin, client.Open(c.table), c.table, strategies, policy.Options{
		DryRun:         !c.apply,
		AllowDataLoss:  c.allowDataLoss,
		IgnoreWarnings: c.ignoreWarnings,
		Scan:           progress.options(c),
	})
	if err != nil {
		return fail(stderr, "ensure", err)
	}
	plan, err := tool.Ensure(ctx)
	progress.end()
	if c.format.terraform {
		return ensureTerraform(ctx, c, k, strategies, plan, err, stdout, stderr)
	}
	if c.schedule != "" {
		return ensureSchedule(ctx, c, admin, client, strategies, plan, err, stdout, stderr)
	}
	if plan != nil {
		if code := printReport(c, stdout, stderr, "ensure", plan, renderPlan); code != exitOK {
			return code
		}
	}
	return ensureStatus(c, plan, err, stdout, stderr)
}

// ensureStatus says what became of ensure, and returns its exit status.
func ensureStatus(c *config, plan *policy.Plan, err error, stdout, stderr io.Writer) int {
	switch {
	case errors.Is(err, policy.ErrDataLoss):
		fmt.Fprintf(stderr, "cellttl ensure: %s\n", message(err))
		fmt.Fprintln(stderr, "cellttl ensure: refused, nothing changed; run again with -allow-data-loss to accept the loss")
		fmt.Fprintln(stderr, "cellttl ensure: to change the strategy of a family that holds data without losing any, move it online:")
		fmt.Fprintln(stderr, "  \"cellttl help move\", and the guide docs/moves.md")
		return exitMismatch
	case err != nil && plan != nil && plan.Read.Stopped():
		fmt.Fprintf(stderr, "cellttl ensure: %v\n", err)
		fmt.Fprintln(stderr, "cellttl ensure: the scan did not finish: nothing was decided or changed, the counts above are partial")
		return exitFailed
	case err != nil:
		return fail(stderr, "ensure", err)
	}
	if plan.DryRun && !c.format.json {
		for _, f := range plan.Families {
			if !f.Matches {
				if plan.Read.Estimate() {
					fmt.Fprintln(stdout, "estimate: run again without -sample to decide")
				} else {
					fmt.Fprintln(stdout, "dry run: nothing changed; run again with -apply to make these changes")
				}
				break
			}
		}
	}
	return exitOK
}
