package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/cellttl/ttl/audit"
)

var statsCommand = &command{
	name: "stats",
	args: " [-move NAME -from SPEC|none -start TIME [-old RULE] [-skew DURATION]] [-values] [-schedule TABLE] [-now TIME] [-workers N] [-sample FRACTION] [-app-profile PROFILE] [-format json [-all-buckets]]",
	help: `Stats audits what the table holds, family by family: the cells reads return,
the expired cells still stored because GC lags, the cells that never expire,
and the expired cells the family's GC policy never deletes, with their
bytes; then when the live cells expire and when the expired ones become
collectable: the storage the table pays for, and when it is freed.

Families given with -family are judged by their strategy; the table's other
families as families without one. Values are stripped on the server, so
bytes count row keys, columns and timestamps, unless -values is given (it
reads the whole table's values). The table is read in shards, in parallel;
-sample reads a fraction of the table (two random key ranges of every shard)
for a labelled estimate with its 95% interval. A scan that does
not finish prints its partial counts as such and exits 1.

A family in a move is given as check and ensure take it (-family NAME=SPEC
with the strategy it moves to, and -from, -start, -old, -skew, -move): each
cell is then judged by its own side's rule, as reads judge it. A family
given with -family that the table does not have is refused (exit 3), with
the nearest name it has suggested.

-schedule TABLE counts the entries of the table's schedule table instead
(see "cellttl help sweep"), reading the schedule only: how many, how many
are due before -now (their cells have expired; GC deletes them after the
grace) and after it, and when they are due, in the same buckets.`,
	familiesOptional: true,
	scans:            true,
	flags: func(fs *flag.FlagSet, c *config) {
		scanFlags(fs, c)
		movingFlags(fs, c)
		nowFlag(fs, c)
		statsScheduleFlag(fs, c)
		fs.BoolVar(&c.values, "values", false, "read values too, so that bytes include them")
		fs.BoolVar(&c.allBuckets, "all-buckets", false, "list every bucket of the expiry histograms in -format json, empty ones too")
	},
	run: runStats,
}

func runStats(ctx context.Context, c *config, stdout, stderr io.Writer) int {
	strategies, err := c.strategies()
	if err != nil {
		fmt.Fprintf(stderr, "cellttl stats: %v\n", err)
		return exitUsage
	}
	if c.schedule != "" {
		return runStatsSchedule(ctx, c, strategies, stdout, stderr)
	}
	k, err := connectFamilies(ctx, c, c.families.Names())
	if err != nil {
		return fail(stderr, "stats", err)
	}
	defer k.close()
	progress := newProgress(c, stderr)
	auditor, err := audit.New(k.admin, k.data.Open(c.table), c.table, strategies, audit.Options{
		Values:     c.values,
		AllBuckets: c.allBuckets,
		Scan:       progress.options(c),
	})
	if err != nil {
		progress.end()
		return fail(stderr, "stats", err)
	}
	report, err := auditor.Run(ctx)
	progress.end()
	if report == nil {
		return fail(stderr, "stats", err)
	}
	return printStats(c, stdout, stderr, report, renderAudit, err)
}

// printStats prints what stats counted, then err, if the scan did not
// finish, saying that the counts printed are partial.
func printStats[R any](c *config, stdout, stderr io.Writer, report R, render func(io.Writer, R), err error) int {
	if code := printReport(c, stdout, stderr, "stats", report, render); code != exitOK {
		return code
	}
	if err != nil {
		fmt.Fprintf(stderr, "cellttl stats: %v\n", err)
		fmt.Fprintln(stderr, "cellttl stats: the scan did not finish: the counts above are partial")
		return exitFailed
	}
	return exitOK
}
