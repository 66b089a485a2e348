package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/cellttl/ttl"
)

var ensureCommand = &command{
	name: "ensure",
	args: " [-apply] [-allow-data-loss] [-ignore-warnings]",
	help: `Ensure makes each family's GC policy the one its strategy needs: it creates
the table if it does not exist, creates missing families, and changes
mismatched policies. Families not given with -family are left alone.

It is a dry run unless -apply is given: it prints the plan and changes
nothing. Before changing a family it scans it (values stripped, at most one
cell per row) for cells the change would delete or hide: past timestamps
under onesecond, cells older than a new, shorter default, live cells whose
expiries a shorter age (a shorter default, or onesecond after an age
policy) moves earlier, real-time timestamps under seqnum, sequence numbers
under an age-based policy, more versions than seqnum keeps. It refuses
such a change, changing nothing and exiting 3, unless -allow-data-loss is
given.`,
	flags: func(fs *flag.FlagSet, c *config) {
		fs.BoolVar(&c.apply, "apply", false, "make the changes (without it, a dry run)")
		fs.BoolVar(&c.allowDataLoss, "allow-data-loss", false, "make changes even if they delete or hide existing cells")
		fs.BoolVar(&c.ignoreWarnings, "ignore-warnings", false, "pass Bigtable's IgnoreWarnings with each GC policy change,\n"+
			"needed to relax GC on a replicated table")
	},
	run: runEnsure,
}

func runEnsure(ctx context.Context, c *config, stdout, stderr io.Writer) int {
	admin, err := adminClient(ctx, c)
	if err != nil {
		return fail(stderr, "ensure", err)
	}
	defer admin.Close()
	client, err := dataClient(ctx, c)
	if err != nil {
		return fail(stderr, "ensure", err)
	}
	defer client.Close()
	plan, err := ttl.EnsureFamilies(ctx, admin, c.table, client.Open(c.table), c.families.strategies, ttl.EnsureOptions{
		DryRun:         !c.apply,
		AllowDataLoss:  c.allowDataLoss,
		IgnoreWarnings: c.ignoreWarnings,
	})
	if plan != nil {
		fmt.Fprint(stdout, plan)
	}
	switch {
	case errors.Is(err, ttl.ErrDataLoss):
		fmt.Fprintf(stderr, "cellttl ensure: %v\n", err)
		fmt.Fprintln(stderr, "cellttl ensure: refused, nothing changed; run again with -allow-data-loss to accept the loss")
		return exitMismatch
	case err != nil:
		return fail(stderr, "ensure", err)
	}
	if plan.DryRun {
		for _, f := range plan.Families {
			if !f.Matches() {
				fmt.Fprintln(stdout, "dry run: run again with -apply to make these changes")
				break
			}
		}
	}
	return exitOK
}
