// Clickevents shows default expiration: a family of click events kept 48
// hours by default, with a shorter or a longer lifetime for some customers.
//
// Ten customers click at the same instant W of a simulated clock. Customer
// c03 asked for its clicks to be kept only 1h, c07's are kept 72h, the
// others get the family's default. The program prints each stored cell's
// timestamp (the write time for a default write, earlier for a shorter
// lifetime, later for a longer one) and expiry, then which customers a
// read returns as the simulated clock moves past each expiry.
//
// Run it with
//
//	go run ./examples/clickevents
//
// which starts an in-process Bigtable emulator. To use another emulator,
// set BIGTABLE_EMULATOR_HOST; to use a real instance (with Application
// Default Credentials), pass -project and -instance. The table is named
// cellttl-example-clickevents.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/examples/internal/btenv"
)

const family = "clicks"

// customers are the row keys; lifetimes holds the exceptions to Default.
var (
	customers = []string{"c00", "c01", "c02", "c03", "c04", "c05", "c06", "c07", "c08", "c09"}
	lifetimes = map[string]ttl.Lifetime{
		"c03": ttl.For(time.Hour),
		"c07": ttl.For(72 * time.Hour),
	}
)

func main() {
	target := btenv.RegisterFlags(flag.CommandLine)
	flag.Parse()
	// The simulated clock starts at the real time, so that the emulator's
	// GC, which runs on the real clock, finds nothing to delete.
	w := time.Now().UTC().Truncate(time.Minute)
	if err := run(os.Stdout, *target, w); err != nil {
		fmt.Fprintln(os.Stderr, "clickevents:", err)
		os.Exit(1)
	}
}

// run opens the example's table on target and tells the story to out:
// the clicks, all at w on the simulated clock, what is stored, and what
// reads return as the clock moves on.
func run(out io.Writer, target btenv.Target, w time.Time) error {
	strategy := ttl.DefaultExpiration(48 * time.Hour)
	ctx, env, err := btenv.Begin(target, "clickevents", map[string]ttl.Strategy{family: strategy})
	if err != nil {
		return err
	}
	defer env.Close()
	if err := env.DeleteRows(ctx, customers...); err != nil {
		return err
	}

	clock := btenv.NewClock(w)
	tbl, err := ttl.NewTable(env.Table, map[string]ttl.Strategy{family: strategy},
		ttl.WithClock(clock.Now), ttl.OtherFamilies())
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Table %s on %s\n", env.Name, env.Where)
	fmt.Fprintf(out, "Family %q: %v, GC policy %v\n\n", family, strategy, strategy.GCPolicy())

	if err := click(ctx, tbl); err != nil {
		return err
	}
	fmt.Fprintf(out, "Each customer clicked at W = %s (simulated clock).\n\n", w.Format(time.DateTime))
	if err := showStored(ctx, out, tbl, w); err != nil {
		return err
	}
	if err := showLive(ctx, out, tbl, clock, w); err != nil {
		return err
	}
	return showRaw(ctx, out, env.Table)
}

// click writes one click per customer, each with its lifetime, in one
// bulk call.
func click(ctx context.Context, tbl *ttl.Table) error {
	muts := make([]*ttl.Mutation, len(customers))
	for i, c := range customers {
		muts[i] = ttl.NewMutation()
		muts[i].Set(family, "page", []byte("/pricing"), lifetimes[c])
	}
	errs, err := tbl.ApplyBulk(ctx, customers, muts)
	if err != nil {
		return err
	}
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("writing %s: %w", customers[i], err)
		}
	}
	return nil
}

// showStored prints each customer's stored cell: its timestamp and its
// expiry, as offsets from w and as times.
func showStored(ctx context.Context, out io.Writer, tbl *ttl.Table, w time.Time) error {
	fmt.Fprintln(out, "customer  lifetime      stored timestamp            expires (Table.ExpiresAt)")
	return tbl.ReadRows(ctx, bigtable.PrefixRange("c"), func(r bigtable.Row) bool {
		for _, item := range r[family] {
			ts := item.Timestamp.Time()
			exp, _ := tbl.ExpiresAt(item)
			fmt.Fprintf(out, "%-8s  %-12v  %-6s %s  %-6s %s\n", r.Key(), lifetimes[r.Key()],
				relative(ts.Sub(w)), ts.UTC().Format(time.DateTime),
				relative(exp.Sub(w)), exp.UTC().Format(time.DateTime))
		}
		return true
	})
}

// steps are the instants of the simulated clock at which showLive reads:
// W, and each expiry and a millisecond before it.
var steps = []struct {
	label string
	at    time.Duration // after W
}{
	{"W", 0},
	{"W+1h-1ms", time.Hour - time.Millisecond},
	{"W+1h", time.Hour},
	{"W+48h-1ms", 48*time.Hour - time.Millisecond},
	{"W+48h", 48 * time.Hour},
	{"W+72h-1ms", 72*time.Hour - time.Millisecond},
	{"W+72h", 72 * time.Hour},
}

// showLive moves the simulated clock through steps and prints, at each,
// which customers a read through the Table returns.
func showLive(ctx context.Context, out io.Writer, tbl *ttl.Table, clock *btenv.Clock, w time.Time) error {
	fmt.Fprintln(out, "\nCustomers a read returns as simulated time passes:")
	fmt.Fprintln(out)
	fmt.Fprintln(out, "time       live  customers")
	for _, s := range steps {
		clock.Set(w.Add(s.at))
		live := map[string]bool{}
		if err := tbl.ReadRows(ctx, bigtable.PrefixRange("c"), func(r bigtable.Row) bool {
			live[r.Key()] = true
			return true
		}); err != nil {
			return err
		}
		// Each customer keeps its column, so the one who left leaves a gap.
		cols := make([]string, len(customers))
		for i, c := range customers {
			cols[i] = "   "
			if live[c] {
				cols[i] = c
			}
		}
		line := fmt.Sprintf("%-9s  %4d  %s", s.label, len(live), strings.Join(cols, " "))
		fmt.Fprintln(out, strings.TrimRight(line, " "))
	}
	return nil
}

// showRaw counts the rows a plain bigtable read returns: all of them, the
// expired ones included.
func showRaw(ctx context.Context, out io.Writer, raw bigtable.TableAPI) error {
	stored := 0
	if err := raw.ReadRows(ctx, bigtable.PrefixRange("c"), func(bigtable.Row) bool {
		stored++
		return true
	}); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nA plain bigtable read (no filter) still returns %d rows: the Table's\n", stored)
	fmt.Fprintln(out, "filter hides expired cells; GC (MaxAge 48h, real clock) removes them later.")
	return nil
}

// relative formats an offset from W in whole hours, the only kind here:
// "W", "W+24h", "W-47h"; any other as a Duration prints: "W+1h30m0s".
func relative(d time.Duration) string {
	h := d / time.Hour
	switch {
	case d%time.Hour > 0:
		return "W+" + d.String()
	case d%time.Hour < 0:
		return "W" + d.String()
	case h == 0:
		return "W"
	default:
		return fmt.Sprintf("W%+dh", h)
	}
}
