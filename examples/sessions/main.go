// Sessions shows one-second expiration on the real clock: sessions that
// expire in one and two seconds, and one that never does; then sliding
// expiration, a session that lives as long as it is read.
//
// Under ttl.OneSecond a cell's timestamp is its expiry and the family's GC
// policy is MaxAge(1s). The program writes the sessions, polls reads
// through the ttl.Table around each expiry to show that a session is
// returned until its expiry and never from it on, then reads the raw cells
// with the plain bigtable client: an expired cell stays stored until
// garbage collection removes it. On an emulator, whose GC runs every
// 0.5–1.5 s, it waits (at most 10 s) until GC has removed the expired
// cells; on Cloud Bigtable, where GC may take days, it does not wait.
//
// Then it saves two sessions for one second and reads both five times a
// second for 2.8 s: carol with ttl.KeepAlive(1s), which renews her session
// when it would expire within a second of the read (to 1.25 s after it),
// dave with plain reads. Dave's session expires a second after it was
// saved; carol's lives while she is read, and expires at least 1 s and at
// most 1.25 s (idle + slack) after her last read, which the program checks.
//
// Run it with
//
//	go run ./examples/sessions
//
// which starts an in-process Bigtable emulator. To use another emulator,
// set BIGTABLE_EMULATOR_HOST; to use a real instance (with Application
// Default Credentials), pass -project and -instance. The table is named
// cellttl-example-sessions.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/examples/internal/btenv"
)

const family = "sessions"

// The sessions, in order of expiry.
var sessions = []struct {
	id   string
	life ttl.Lifetime
}{
	{"alice", ttl.For(time.Second)},
	{"bob", ttl.For(2 * time.Second)},
	{"service", ttl.Forever},
}

// gcDeadline bounds the wait for the emulator's GC, from the write.
const gcDeadline = 10 * time.Second

func main() {
	target := btenv.RegisterFlags()
	flag.Parse()
	if err := run(*target); err != nil {
		fmt.Fprintln(os.Stderr, "sessions:", err)
		os.Exit(1)
	}
}

func run(target btenv.Target) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	strategy := ttl.OneSecond()
	env, err := btenv.Open(ctx, target, "sessions", map[string]ttl.Strategy{family: strategy})
	if err != nil {
		return err
	}
	defer env.Close()
	rows := make([]string, len(sessions))
	for i, s := range sessions {
		rows[i] = s.id
	}
	if err := env.DeleteRows(ctx, append(rows, slidingRows...)...); err != nil {
		return err
	}

	clock := new(recordingClock)
	tbl, err := ttl.NewTable(env.Table, map[string]ttl.Strategy{family: strategy},
		ttl.WithClock(clock.Now), ttl.OtherFamilies())
	if err != nil {
		return err
	}
	fmt.Printf("Table %s on %s\n", env.Name, env.Where)
	fmt.Printf("Family %q: %v, GC policy %v (µs, so 1s)\n\n", family, strategy, strategy.GCPolicy())

	muts := make([]*ttl.Mutation, len(sessions))
	for i, s := range sessions {
		muts[i] = ttl.NewMutation()
		muts[i].Set(family, "user", []byte(s.id), s.life)
	}
	errs, err := tbl.ApplyBulk(ctx, rows, muts)
	if err != nil {
		return err
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	t0 := clock.Last()

	// The expiries, as the Table reads them back.
	expiry := map[string]time.Time{}
	fmt.Printf("Sessions written at T = %s (real clock):\n\n", clockTime(t0))
	fmt.Println("session  lifetime  stored timestamp = expiry")
	if err := tbl.ReadRows(ctx, bigtable.RowList(rows), func(r bigtable.Row) bool {
		item := r[family][0]
		rel := "never"
		if exp, ok := tbl.ExpiresAt(item); ok {
			expiry[r.Key()] = exp
			// Rounded: the expiry is T+d floored to the millisecond.
			rel = "T+" + exp.Sub(t0).Round(10*time.Millisecond).String()
		}
		fmt.Printf("%-7s  %-8v  %-12s  %s\n", r.Key(), lifeOf(r.Key()), stamp(item.Timestamp), rel)
		return true
	}); err != nil {
		return err
	}

	// Watch each expiring session vanish; read the raw cells once the
	// first has, while GC cannot have removed it yet (not before its
	// expiry + 1s).
	type watched struct{ lastSeen, firstHidden time.Time }
	var (
		seen  = map[string]watched{}
		raw   []bigtable.Row
		rawAt time.Time
	)
	for _, s := range sessions {
		exp, ok := expiry[s.id]
		if !ok {
			continue
		}
		last, first, err := watch(ctx, tbl, clock, s.id, exp)
		if err != nil {
			return err
		}
		seen[s.id] = watched{last, first}
		if raw == nil {
			rawAt = time.Now()
			if raw, err = readRaw(ctx, env.Table, rows); err != nil {
				return err
			}
		}
	}
	r, err := tbl.ReadRow(ctx, "service")
	if err != nil {
		return err
	}
	serviceAt := clock.Last()

	fmt.Println("\nReads through the Table, polled around each expiry, at the clock readings")
	fmt.Println("the Table filtered with:")
	fmt.Println()
	fmt.Println("session  last returned at  first not returned at")
	for _, s := range sessions {
		if w, ok := seen[s.id]; ok {
			fmt.Printf("%-7s  expiry%-10s  expiry%s\n", s.id, signed(w.lastSeen.Sub(expiry[s.id])), signed(w.firstHidden.Sub(expiry[s.id])))
		}
	}
	if len(r) > 0 {
		fmt.Printf("%-7s  still returned at T+%v\n", "service", serviceAt.Sub(t0).Round(100*time.Millisecond))
	} else {
		return errors.New("the Forever session was not returned")
	}

	fmt.Printf("\nRaw read at T+%v, plain bigtable client, no filter (expired cells stay stored):\n\n",
		rawAt.Sub(t0).Round(100*time.Millisecond))
	printRaw(raw, expiry, rawAt)

	if !env.Emulated {
		fmt.Println("\nOn Cloud Bigtable, GC is asynchronous and may take up to a week: not waiting for")
		fmt.Println("it. Until then the expired cells are stored, and the Table never returns them.")
	} else if err := waitForGC(ctx, env.Table, rows, expiry, t0); err != nil {
		return err
	}
	return slide(ctx, tbl, clock)
}

// waitForGC polls the raw cells of rows until the emulator's GC has
// deleted every expired one, printing when each goes, and fails after
// gcDeadline from t0.
func waitForGC(ctx context.Context, data bigtable.TableAPI, rows []string, expiry map[string]time.Time, t0 time.Time) error {
	fmt.Printf("\nWaiting (at most %v) for the emulator's GC, a pass every 0.5–1.5 s, to delete\n", gcDeadline)
	fmt.Println("the cells that expired more than 1s ago:")
	fmt.Println()
	gone := map[string]bool{}
	var (
		raw   []bigtable.Row
		rawAt time.Time
		err   error
	)
	for len(gone) < len(expiry) {
		if time.Since(t0) > gcDeadline {
			return fmt.Errorf("GC did not delete the expired cells within %v of writing them", gcDeadline)
		}
		time.Sleep(50 * time.Millisecond)
		if raw, err = readRaw(ctx, data, rows); err != nil {
			return err
		}
		rawAt = time.Now()
		stored := map[string]bool{}
		for _, r := range raw {
			stored[r.Key()] = true
		}
		for _, s := range sessions {
			if _, expires := expiry[s.id]; expires && !stored[s.id] && !gone[s.id] {
				gone[s.id] = true
				fmt.Printf("  T+%-4v  %s's cell is gone, %v after its expiry\n", rawAt.Sub(t0).Round(100*time.Millisecond),
					s.id, rawAt.Sub(expiry[s.id]).Round(100*time.Millisecond))
			}
		}
	}
	fmt.Printf("\nRaw read at T+%v:\n\n", rawAt.Sub(t0).Round(100*time.Millisecond))
	printRaw(raw, expiry, rawAt)
	return nil
}

// watch reads row through tbl, back to back from shortly before exp, until
// a read no longer returns it, and returns the clock readings of the last
// read that returned it and the first that did not.
func watch(ctx context.Context, tbl *ttl.Table, clock *recordingClock, row string, exp time.Time) (lastSeen, firstHidden time.Time, err error) {
	time.Sleep(time.Until(exp.Add(-10 * time.Millisecond)))
	for {
		r, err := tbl.ReadRow(ctx, row)
		if err != nil {
			return lastSeen, firstHidden, err
		}
		at := clock.Last()
		if len(r) == 0 {
			return lastSeen, at, nil
		}
		lastSeen = at
		if at.Sub(exp) > 2*time.Second {
			return lastSeen, firstHidden, fmt.Errorf("%s was still returned %v after its expiry", row, at.Sub(exp))
		}
	}
}

// readRaw reads every stored cell of rows with the plain bigtable client.
func readRaw(ctx context.Context, tbl bigtable.TableAPI, rows []string) ([]bigtable.Row, error) {
	var out []bigtable.Row
	err := tbl.ReadRows(ctx, bigtable.RowList(rows), func(r bigtable.Row) bool {
		out = append(out, r)
		return true
	})
	return out, err
}

// printRaw prints one line per stored cell, and whether it had expired at
// the time of the read.
func printRaw(raw []bigtable.Row, expiry map[string]time.Time, at time.Time) {
	for _, r := range raw {
		for _, item := range r[family] {
			state := "live"
			if exp, ok := expiry[r.Key()]; ok && !at.Before(exp) {
				state = "expired"
			}
			fmt.Printf("  %-7s  %-12s  %s\n", r.Key(), stamp(item.Timestamp), state)
		}
	}
}

// lifeOf returns the lifetime session id was written with.
func lifeOf(id string) ttl.Lifetime {
	for _, s := range sessions {
		if s.id == id {
			return s.life
		}
	}
	return ttl.Default
}

// stamp formats a stored timestamp as a UTC time of day, or as
// "MaxTimestamp" for a Forever cell.
func stamp(ts bigtable.Timestamp) string {
	if ts == ttl.MaxTimestamp {
		return "MaxTimestamp"
	}
	return clockTime(ts.Time())
}

func clockTime(t time.Time) string { return t.UTC().Format("15:04:05.000") }

// signed formats d to the microsecond with its sign: "+87µs", "-153µs".
func signed(d time.Duration) string {
	d = d.Round(time.Microsecond)
	if d >= 0 {
		return "+" + d.String()
	}
	return d.String()
}

// recordingClock is the real clock, remembering the last time it was
// read, so that the program can print the instant a read was made at.
type recordingClock struct {
	mu   sync.Mutex
	last time.Time
}

// Now returns time.Now(); the Table calls it once per operation.
func (c *recordingClock) Now() time.Time {
	t := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = t
	return t
}

// Last returns what Now last returned.
func (c *recordingClock) Last() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}
