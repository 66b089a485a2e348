package ttltest_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
	"github.com/cellttl/ttl/ttltest"
)

// A session of 15 minutes: hidden from the Table's reads from its expiry
// on, still stored until GC has run, as in Bigtable. In a test, New(t, …)
// replaces Start and its error, and closes the Env when the test ends.
func Example() {
	ctx := context.Background()
	env, err := ttltest.Start(map[string]ttl.Strategy{"sess": ttl.OneSecond()})
	if err != nil {
		log.Fatal(err)
	}
	defer env.Close()

	m := ttl.NewMutation()
	m.Set("sess", "token", []byte("t0k3n"), ttl.For(15*time.Minute))
	if err := env.Table.Apply(ctx, "alice", m); err != nil {
		log.Fatal(err)
	}
	show := func(when string) {
		live, err := env.Table.ReadRow(ctx, "alice")
		if err != nil {
			log.Fatal(err)
		}
		raw, err := env.Raw.ReadRow(ctx, "alice")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-16s %s: %d live, %d stored\n", when, env.Now().Format("15:04"), len(live["sess"]), len(raw["sess"]))
	}
	show("at login")
	env.FastForward(14 * time.Minute)
	show("14 minutes later")
	env.FastForward(2 * time.Minute)
	show("16 minutes later")
	env.CollectGarbage()
	show("after GC")
	if err := env.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// at login         00:00: 1 live, 1 stored
	// 14 minutes later 00:14: 1 live, 1 stored
	// 16 minutes later 00:16: 0 live, 1 stored
	// after GC         00:16: 0 live, 0 stored
}

// A daily quota, counted in a counter family: each day's window expires
// at its midnight, and a week of FastForwards runs in milliseconds.
func Example_counter() {
	ctx := context.Background()
	env, err := ttltest.Start(map[string]ttl.Strategy{"hits": ttl.Counter(ttl.OneSecond())})
	if err != nil {
		log.Fatal(err)
	}
	defer env.Close()

	day := ttl.Window{Size: 24 * time.Hour}
	hit := ttl.NewMutation()
	hit.Add("hits", "day", 1, day)
	for d := 0; d < 3; d++ {
		for h := 0; h < 24; h += 8 { // three requests a day, 8 hours apart
			if err := env.Table.Apply(ctx, "alice", hit); err != nil {
				log.Fatal(err)
			}
			n, err := env.Table.SumCounter(ctx, "alice", "hits", "day", day, 1)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Printf("%s: %d today\n", env.Now().Format("Jan 2 15:04"), n)
			env.FastForward(8 * time.Hour)
		}
	}
	if err := env.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// Jan 1 00:00: 1 today
	// Jan 1 08:00: 2 today
	// Jan 1 16:00: 3 today
	// Jan 2 00:00: 1 today
	// Jan 2 08:00: 2 today
	// Jan 2 16:00: 3 today
	// Jan 3 00:00: 1 today
	// Jan 3 08:00: 2 today
	// Jan 3 16:00: 3 today
}

// A sweep on the Env's clock reports each session as it expires.
func Example_sweep() {
	ctx := context.Background()
	families := map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), time.Hour)}
	env, err := ttltest.Start(families)
	if err != nil {
		log.Fatal(err)
	}
	defer env.Close()

	sw, err := sweep.New(env.Admin, env.Raw, env.Name, families,
		sweep.Options{Since: env.Now(), Granularity: sweep.Row, Scan: scan.Options{Now: env.Now}})
	if err != nil {
		log.Fatal(err)
	}
	for i, user := range []string{"alice", "bob"} {
		m := ttl.NewMutation()
		m.Set("sess", "token", []byte("t"), ttl.For(time.Duration(i+1)*15*time.Minute))
		if err := env.Table.Apply(ctx, user, m); err != nil {
			log.Fatal(err)
		}
	}
	for range 4 { // a round every 10 minutes
		env.FastForward(10 * time.Minute)
		_, err := sw.Once(ctx, func(_ context.Context, events []sweep.Event) error {
			for _, e := range events {
				fmt.Printf("%s: %s logged out at %s\n", env.Now().Format("15:04"), e.Row, e.Expired.Format("15:04"))
			}
			return nil
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// 00:20: alice logged out at 00:15
	// 00:40: bob logged out at 00:30
}
