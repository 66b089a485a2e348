// Revisions shows sequence numbers: a document column that keeps its three
// newest revisions.
//
// Under ttl.SequenceNumbers(3) a cell written as ttl.Version(n) is stamped
// n milliseconds after the Unix epoch, the family's GC policy is
// MaxVersions(3), and reads through the ttl.Table return the newest three
// versions of each column whether or not GC has run. The program writes
// five revisions, shows the five stored cells and what reads return, and
// on an emulator, whose GC runs every 0.5–1.5 s, waits (at most 10 s)
// until GC has left three cells; on Cloud Bigtable, where GC may take
// days, it does not wait.
//
// Run it with
//
//	go run ./examples/revisions
//
// which starts an in-process Bigtable emulator. To use another emulator,
// set BIGTABLE_EMULATOR_HOST; to use a real instance (with Application
// Default Credentials), pass -project and -instance. The table is named
// cellttl-example-revisions.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/examples/internal/btenv"
)

const (
	family = "rev"
	column = "body"
	doc    = "doc-1"
	keep   = 3
)

// revisions[i] is written as ttl.Version(i+1).
var revisions = []string{"outline", "first draft", "second draft", "reviewed", "published"}

// gcDeadline bounds the wait for the emulator's GC, from the last write.
const gcDeadline = 10 * time.Second

func main() {
	target := btenv.RegisterFlags(flag.CommandLine)
	flag.Parse()
	if err := run(os.Stdout, *target); err != nil {
		fmt.Fprintln(os.Stderr, "revisions:", err)
		os.Exit(1)
	}
}

// run opens the example's table on target and tells the story to out:
// the revisions written, the cells stored, what reads through the Table
// return, and what GC leaves.
func run(out io.Writer, target btenv.Target) error {
	strategy := ttl.SequenceNumbers(keep)
	ctx, env, err := btenv.Begin(target, "revisions", map[string]ttl.Strategy{family: strategy})
	if err != nil {
		return err
	}
	defer env.Close()
	if err := env.DeleteRows(ctx, doc); err != nil {
		return err
	}
	tbl, err := ttl.NewTable(env.Table, map[string]ttl.Strategy{family: strategy}, ttl.OtherFamilies())
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Table %s on %s\n", env.Name, env.Where)
	fmt.Fprintf(out, "Family %q: %v, GC policy %v\n\n", family, strategy, strategy.GCPolicy())

	if err := write(ctx, out, tbl); err != nil {
		return err
	}
	written := time.Now()
	stored, err := showStored(ctx, out, env.Table)
	if err != nil {
		return err
	}
	if err := showReads(ctx, out, tbl); err != nil {
		return err
	}
	return awaitGC(ctx, out, env.Table, env.Emulated, stored, written)
}

// write writes the revisions in order, revisions[i] as ttl.Version(i+1).
func write(ctx context.Context, out io.Writer, tbl *ttl.Table) error {
	for i, text := range revisions {
		m := ttl.NewMutation()
		m.Set(family, column, []byte(text), ttl.Version(int64(i+1)))
		if err := tbl.Apply(ctx, doc, m); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "Wrote %d revisions of %s, column %s:%s, as ttl.Version(1) to ttl.Version(%d).\n\n",
		len(revisions), doc, family, column, len(revisions))
	return nil
}

// showStored reads and prints the stored cells with the plain bigtable
// client, and returns the row. Call it straight after the writes: the
// emulator's GC may run any moment.
func showStored(ctx context.Context, out io.Writer, raw bigtable.TableAPI) (bigtable.Row, error) {
	r, err := raw.ReadRow(ctx, doc)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "Stored cells (plain bigtable client, no filter): %d\n", len(r[family]))
	if len(r[family]) < len(revisions) {
		fmt.Fprintln(out, "(the emulator's GC ran between the writes and this read)")
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "  version  timestamp (µs)  as a time (UTC)          value")
	for _, item := range r[family] {
		fmt.Fprintf(out, "  %-7d  %-14d  %s  %q\n", item.Timestamp/1000, item.Timestamp,
			item.Timestamp.Time().UTC().Format("2006-01-02 15:04:05.000"), item.Value)
	}
	return r, nil
}

// showReads prints what reads through the Table return: the newest keep
// versions, and with a filter of the caller's, fewer.
func showReads(ctx context.Context, out io.Writer, tbl *ttl.Table) error {
	r, err := tbl.ReadRow(ctx, doc)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nRead through the Table: the newest %d\n\n", keep)
	printVersions(out, r)

	r, err = tbl.ReadRow(ctx, doc, ttl.RowFilter(bigtable.LatestNFilter(1)))
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "\nWith ttl.RowFilter(bigtable.LatestNFilter(1)): the newest one")
	fmt.Fprintln(out)
	printVersions(out, r)
	return nil
}

// awaitGC shows what GC leaves of stored, the row as showStored read it.
// On an emulator it polls the stored cells until GC has left keep, and
// fails gcDeadline after written; on Cloud Bigtable, where GC may take
// days, it says so and does not wait.
func awaitGC(ctx context.Context, out io.Writer, raw bigtable.TableAPI, emulated bool, stored bigtable.Row, written time.Time) error {
	if !emulated {
		fmt.Fprintln(out, "\nOn Cloud Bigtable, GC is asynchronous and may take up to a week: not waiting for")
		fmt.Fprintln(out, "it. Until then the older cells are stored, and the Table never returns them.")
		return nil
	}

	fmt.Fprintf(out, "\nWaiting (at most %v) for the emulator's GC, a pass every 0.5–1.5 s, to leave %d...\n",
		gcDeadline, keep)
	for len(stored[family]) > keep {
		if time.Since(written) > gcDeadline {
			return fmt.Errorf("GC did not delete the older versions within %v of writing them", gcDeadline)
		}
		time.Sleep(50 * time.Millisecond)
		var err error
		if stored, err = raw.ReadRow(ctx, doc); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "\nStored cells %v after the last write: %d\n\n",
		time.Since(written).Round(100*time.Millisecond), len(stored[family]))
	printVersions(out, stored)
	return nil
}

// printVersions prints the row's cells, newest first, with the version
// each timestamp stands for.
func printVersions(out io.Writer, r bigtable.Row) {
	for _, item := range r[family] {
		fmt.Fprintf(out, "  version %d  %q\n", item.Timestamp/1000, item.Value)
	}
}
