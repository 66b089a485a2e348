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
	"io"
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
	target := btenv.RegisterFlags(flag.CommandLine)
	flag.Parse()
	if err := run(os.Stdout, *target); err != nil {
		fmt.Fprintln(os.Stderr, "sessions:", err)
		os.Exit(1)
	}
}

// run opens the example's table on target and tells the story to out, on
// the real clock.
func run(out io.Writer, target btenv.Target) error {
	strategy := ttl.OneSecond()
	ctx, env, err := btenv.Begin(target, "sessions", map[string]ttl.Strategy{family: strategy})
	if err != nil {
		return err
	}
	defer env.Close()
	if err := env.DeleteRows(ctx, append(sessionRows(), slidingRows...)...); err != nil {
		return err
	}

	clock := new(recordingClock)
	tbl, err := ttl.NewTable(env.Table, map[string]ttl.Strategy{family: strategy},
		ttl.WithClock(clock.Now), ttl.OtherFamilies())
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Table %s on %s\n", env.Name, env.Where)
	fmt.Fprintf(out, "Family %q: %v, GC policy %v (µs, so 1s)\n\n", family, strategy, strategy.GCPolicy())
	d := &demo{out: out, tbl: tbl, raw: env.Table, clock: clock}
	return d.tell(ctx, env.Emulated)
}

// A demo is the story as it is told: where it prints, the table it reads
// (through the library and raw), the clock, and what it has learned.
type demo struct {
	out   io.Writer
	tbl   *ttl.Table        // the sessions' table, read through the library
	raw   bigtable.TableAPI // the same table, read with the plain client
	clock clock             // the Table's clock

	t0     time.Time            // when the sessions were written
	expiry map[string]time.Time // each expiring session's expiry, as the Table reads it
}

// tell writes the sessions, shows each vanish from reads at its expiry
// while its cell stays stored, then (on an emulator) GC deleting the
// cells, and then sliding expiration.
func (d *demo) tell(ctx context.Context, emulated bool) error {
	if err := d.write(ctx); err != nil {
		return err
	}
	if err := d.showExpiries(ctx); err != nil {
		return err
	}
	if err := d.watchExpiries(ctx); err != nil {
		return err
	}
	if !emulated {
		fmt.Fprintln(d.out, "\nOn Cloud Bigtable, GC is asynchronous and may take up to a week: not waiting for")
		fmt.Fprintln(d.out, "it. Until then the expired cells are stored, and the Table never returns them.")
	} else if err := d.waitForGC(ctx); err != nil {
		return err
	}
	return d.slide(ctx)
}

// write writes the sessions, each with its lifetime, in one bulk call,
// at T (d.t0).
func (d *demo) write(ctx context.Context) error {
	muts := make([]*ttl.Mutation, len(sessions))
	for i, s := range sessions {
		muts[i] = ttl.NewMutation()
		muts[i].Set(family, "user", []byte(s.id), s.life)
	}
	errs, err := d.tbl.ApplyBulk(ctx, sessionRows(), muts)
	if err != nil {
		return err
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	d.t0 = d.clock.Last()
	return nil
}

// showExpiries reads the sessions back, prints each one's stored
// timestamp, which is its expiry, and keeps the expiries in d.expiry.
func (d *demo) showExpiries(ctx context.Context) error {
	d.expiry = map[string]time.Time{}
	fmt.Fprintf(d.out, "Sessions written at T = %s (real clock):\n\n", clockTime(d.t0))
	fmt.Fprintln(d.out, "session  lifetime  stored timestamp = expiry")
	return d.tbl.ReadRows(ctx, bigtable.RowList(sessionRows()), func(r bigtable.Row) bool {
		item := r[family][0]
		rel := "never"
		if exp, ok := d.tbl.ExpiresAt(item); ok {
			d.expiry[r.Key()] = exp
			// Rounded: the expiry is T+d floored to the millisecond.
			rel = "T+" + exp.Sub(d.t0).Round(10*time.Millisecond).String()
		}
		fmt.Fprintf(d.out, "%-7s  %-8v  %-12s  %s\n", r.Key(), lifeOf(r.Key()), stamp(item.Timestamp), rel)
		return true
	})
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

// A clock is what the story runs on: the real clock when the program
// runs (recordingClock), a simulated one in its tests.
type clock interface {
	Now() time.Time      // the time; the Table reads it once an operation
	Last() time.Time     // what Now last returned
	Sleep(time.Duration) // waits
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

// Sleep is time.Sleep.
func (*recordingClock) Sleep(d time.Duration) { time.Sleep(d) }
