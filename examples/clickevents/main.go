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
	"os"
	"strings"
	"sync"
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
	target := btenv.RegisterFlags()
	flag.Parse()
	if err := run(*target); err != nil {
		fmt.Fprintln(os.Stderr, "clickevents:", err)
		os.Exit(1)
	}
}

func run(target btenv.Target) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	strategy := ttl.DefaultExpiration(48 * time.Hour)
	env, err := btenv.Open(ctx, target, "clickevents", map[string]ttl.Strategy{family: strategy})
	if err != nil {
		return err
	}
	defer env.Close()
	if err := env.DeleteRows(ctx, customers...); err != nil {
		return err
	}

	// The simulated clock starts at the real time, so that the emulator's
	// GC, which runs on the real clock, finds nothing to delete.
	w := time.Now().UTC().Truncate(time.Minute)
	clock := &fakeClock{t: w}
	tbl, err := ttl.NewTable(env.Table, map[string]ttl.Strategy{family: strategy},
		ttl.WithClock(clock.Now), ttl.OtherFamilies())
	if err != nil {
		return err
	}
	fmt.Printf("Table %s on %s\n", env.Name, env.Where)
	fmt.Printf("Family %q: %v, GC policy %v\n\n", family, strategy, strategy.GCPolicy())

	// Write: one click per customer, all at W, in one bulk call.
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

	fmt.Printf("Each customer clicked at W = %s (simulated clock).\n\n", w.Format(time.DateTime))
	fmt.Println("customer  lifetime      stored timestamp            expires (Table.ExpiresAt)")
	if err := tbl.ReadRows(ctx, bigtable.PrefixRange("c"), func(r bigtable.Row) bool {
		for _, item := range r[family] {
			ts := item.Timestamp.Time()
			exp, _ := tbl.ExpiresAt(item)
			fmt.Printf("%-8s  %-12v  %-6s %s  %-6s %s\n", r.Key(), lifetimes[r.Key()],
				relative(ts.Sub(w)), ts.UTC().Format(time.DateTime),
				relative(exp.Sub(w)), exp.UTC().Format(time.DateTime))
		}
		return true
	}); err != nil {
		return err
	}

	fmt.Println("\nCustomers a read returns as simulated time passes:")
	fmt.Println()
	fmt.Println("time       live  customers")
	steps := []struct {
		label string
		at    time.Duration
	}{
		{"W", 0},
		{"W+1h-1ms", time.Hour - time.Millisecond},
		{"W+1h", time.Hour},
		{"W+48h-1ms", 48*time.Hour - time.Millisecond},
		{"W+48h", 48 * time.Hour},
		{"W+72h-1ms", 72*time.Hour - time.Millisecond},
		{"W+72h", 72 * time.Hour},
	}
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
		fmt.Println(strings.TrimRight(line, " "))
	}

	stored := 0
	if err := env.Table.ReadRows(ctx, bigtable.PrefixRange("c"), func(bigtable.Row) bool {
		stored++
		return true
	}); err != nil {
		return err
	}
	fmt.Printf("\nA plain bigtable read (no filter) still returns %d rows: the Table's\n", stored)
	fmt.Println("filter hides expired cells; GC (MaxAge 48h, real clock) removes them later.")
	return nil
}

// relative formats an offset from W in whole hours, the only kind here:
// "W", "W+24h", "W-47h".
func relative(d time.Duration) string {
	h := d / time.Hour
	switch {
	case d%time.Hour != 0:
		return "W" + fmt.Sprintf("%+v", d)
	case h == 0:
		return "W"
	default:
		return fmt.Sprintf("W%+dh", h)
	}
}

// fakeClock is a clock that moves only when told to.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

// Now returns the clock's time; the Table calls it once per operation.
func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}
