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
	target := btenv.RegisterFlags()
	flag.Parse()
	if err := run(*target); err != nil {
		fmt.Fprintln(os.Stderr, "revisions:", err)
		os.Exit(1)
	}
}

func run(target btenv.Target) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	strategy := ttl.SequenceNumbers(keep)
	env, err := btenv.Open(ctx, target, "revisions", map[string]ttl.Strategy{family: strategy})
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
	fmt.Printf("Table %s on %s\n", env.Name, env.Where)
	fmt.Printf("Family %q: %v, GC policy %v\n\n", family, strategy, strategy.GCPolicy())

	for i, text := range revisions {
		m := ttl.NewMutation()
		m.Set(family, column, []byte(text), ttl.Version(int64(i+1)))
		if err := tbl.Apply(ctx, doc, m); err != nil {
			return err
		}
	}
	written := time.Now()
	fmt.Printf("Wrote %d revisions of %s, column %s:%s, as ttl.Version(1) to ttl.Version(%d).\n\n",
		len(revisions), doc, family, column, len(revisions))

	// Read the raw cells at once: the emulator's GC may run any moment.
	raw, err := env.Table.ReadRow(ctx, doc)
	if err != nil {
		return err
	}
	fmt.Printf("Stored cells (plain bigtable client, no filter): %d\n", len(raw[family]))
	if len(raw[family]) < len(revisions) {
		fmt.Println("(the emulator's GC ran between the writes and this read)")
	}
	fmt.Println()
	fmt.Println("  version  timestamp (µs)  as a time (UTC)          value")
	for _, item := range raw[family] {
		fmt.Printf("  %-7d  %-14d  %s  %q\n", item.Timestamp/1000, item.Timestamp,
			item.Timestamp.Time().UTC().Format("2006-01-02 15:04:05.000"), item.Value)
	}

	r, err := tbl.ReadRow(ctx, doc)
	if err != nil {
		return err
	}
	fmt.Printf("\nRead through the Table: the newest %d\n\n", keep)
	printVersions(r)

	r, err = tbl.ReadRow(ctx, doc, ttl.RowFilter(bigtable.LatestNFilter(1)))
	if err != nil {
		return err
	}
	fmt.Println("\nWith ttl.RowFilter(bigtable.LatestNFilter(1)): the newest one")
	fmt.Println()
	printVersions(r)

	if !env.Emulated {
		fmt.Println("\nOn Cloud Bigtable, GC is asynchronous and may take up to a week: not waiting for")
		fmt.Println("it. Until then the older cells are stored, and the Table never returns them.")
		return nil
	}

	fmt.Printf("\nWaiting (at most %v) for the emulator's GC, a pass every 0.5–1.5 s, to leave %d...\n",
		gcDeadline, keep)
	for len(raw[family]) > keep {
		if time.Since(written) > gcDeadline {
			return fmt.Errorf("GC did not delete the older versions within %v of writing them", gcDeadline)
		}
		time.Sleep(50 * time.Millisecond)
		if raw, err = env.Table.ReadRow(ctx, doc); err != nil {
			return err
		}
	}
	fmt.Printf("\nStored cells %v after the last write: %d\n\n",
		time.Since(written).Round(100*time.Millisecond), len(raw[family]))
	printVersions(raw)
	return nil
}

// printVersions prints the row's cells, newest first, with the version
// each timestamp stands for.
func printVersions(r bigtable.Row) {
	for _, item := range r[family] {
		fmt.Printf("  version %d  %q\n", item.Timestamp/1000, item.Value)
	}
}
