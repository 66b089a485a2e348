package main

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/examples/internal/btenv"
	"github.com/cellttl/ttl/examples/internal/faulty"
	"github.com/cellttl/ttl/examples/internal/programtest"
	"github.com/cellttl/ttl/internal/emulator"
)

// base is where the tests' clocks start: in the future, where the
// emulator's GC, on the real clock, cannot reach the cells they write.
var base = time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)

// fakeClock is a simulated clock: each reading moves it on by step, as
// time passes while the program works, and Sleep moves it on at once.
type fakeClock struct {
	mu      sync.Mutex
	t, last time.Time
	step    time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	c.last = c.t
	return c.t
}

func (c *fakeClock) Last() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

func (c *fakeClock) Sleep(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.t = c.t.Add(d)
	}
}

// peek returns the time without moving the clock.
func (c *fakeClock) peek() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// newDemo returns a demo that prints to out, on a table of its own
// emulator, on a simulated clock from base moving step a reading.
func newDemo(t *testing.T, out io.Writer, step time.Duration) (*demo, *fakeClock) {
	raw := emulator.StartForTest(t).TableForTest(t, "t", map[string]bigtable.GCPolicy{family: ttl.OneSecond().GCPolicy()})
	return demoOn(t, raw, out, step)
}

// demoOn returns a demo on raw.
func demoOn(t *testing.T, raw bigtable.TableAPI, out io.Writer, step time.Duration) (*demo, *fakeClock) {
	clock := &fakeClock{t: base, step: step}
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{family: ttl.OneSecond()}, ttl.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	return &demo{out: out, tbl: tbl, raw: raw, clock: clock}, clock
}

// story is what the program tells on a simulated clock that moves 300µs
// a reading, as on Cloud Bigtable (no wait for GC): alice and bob are
// returned until their expiries and not from them on, while their cells
// stay stored; carol's session is renewed by every other read and
// outlives dave's, which goes a second after it was saved.
const story = `Sessions written at T = 09:00:00.000 (real clock):

session  lifetime  stored timestamp = expiry
alice    For(1s)   09:00:01.000  T+1s
bob      For(2s)   09:00:02.000  T+2s
service  Forever   MaxTimestamp  never

Reads through the Table, polled around each expiry, at the clock readings
the Table filtered with:

session  last returned at  first not returned at
alice    expiry-100µs      expiry+200µs
bob      expiry-100µs      expiry+200µs
service  still returned at T+2s

Raw read at T+1s, plain bigtable client, no filter (expired cells stay stored):

  alice    09:00:01.000  expired
  bob      09:00:02.000  live
  service  MaxTimestamp  live

On Cloud Bigtable, GC is asynchronous and may take up to a week: not waiting for
it. Until then the expired cells are stored, and the Table never returns them.

Sliding expiration: ttl.KeepAlive(1s), whose slack is 250ms (idle/4)

carol and dave saved at T = 09:00:02.000 with For(1s), then read every 200ms for 2.8s:
carol with ttl.KeepAlive(1s), dave with plain reads.

  T+0.20s  carol read: renewed      expires T+1.45s, the read + 1.251s
  T+0.40s  carol read: nothing due  expires T+1.45s, the read + 1.051s
  T+0.60s  carol read: renewed      expires T+1.85s, the read + 1.251s
  T+0.80s  carol read: nothing due  expires T+1.85s, the read + 1.051s
  T+1.00s  carol read: renewed      expires T+2.25s, the read + 1.251s
  T+1.00s  dave read: gone (saved for 1s, and plain reads do not renew)
  T+1.20s  carol read: nothing due  expires T+2.25s, the read + 1.051s
  T+1.40s  carol read: renewed      expires T+2.65s, the read + 1.251s
  T+1.60s  carol read: nothing due  expires T+2.65s, the read + 1.051s
  T+1.80s  carol read: renewed      expires T+3.05s, the read + 1.251s
  T+2.00s  carol read: nothing due  expires T+3.05s, the read + 1.051s
  T+2.20s  carol read: renewed      expires T+3.45s, the read + 1.251s
  T+2.40s  carol read: nothing due  expires T+3.45s, the read + 1.051s
  T+2.60s  carol read: renewed      expires T+3.85s, the read + 1.251s
  T+2.80s  carol read: nothing due  expires T+3.85s, the read + 1.051s

Last read of carol at T+2.80s; from then on, plain reads only:

  last returned at      the last read + 1.051s
  first not returned at the last read + 1.051s

carol expired 1.051s after her last read: at least idle (1s), at most idle + slack (1.25s).
`

// TestStory tells the story on the simulated clock and checks every line.
func TestStory(t *testing.T) {
	var out bytes.Buffer
	d, _ := newDemo(t, &out, 300*time.Microsecond)
	if err := d.tell(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != story {
		t.Errorf("told\n%s\nwant\n%s", got, story)
	}
}

// collected is a raw table as the emulator's GC leaves it on the
// simulated clock: each row of gone vanishes from reads once the clock has
// passed its instant.
type collected struct {
	bigtable.TableAPI
	clock *fakeClock
	gone  map[string]time.Time
}

func (c collected) ReadRows(ctx context.Context, rows bigtable.RowSet, f func(bigtable.Row) bool, opts ...bigtable.ReadOption) error {
	return c.TableAPI.ReadRows(ctx, rows, func(r bigtable.Row) bool {
		if at, ok := c.gone[r.Key()]; ok && !c.clock.peek().Before(at) {
			return true
		}
		return f(r)
	}, opts...)
}

// writeSessions writes the sessions on d and reads back their expiries.
func writeSessions(t *testing.T, d *demo) {
	t.Helper()
	ctx := context.Background()
	if err := d.write(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.showExpiries(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestWaitForGC checks the wait for the emulator's GC, which deletes
// alice's cell 1.4s after her expiry and bob's 1.1s after his, as in a
// run of the program: each is reported once, when a poll finds it gone,
// and the last raw read finds the Forever session only.
func TestWaitForGC(t *testing.T) {
	var out bytes.Buffer
	d, clock := newDemo(t, &out, 300*time.Microsecond)
	writeSessions(t, d)
	d.raw = collected{d.raw, clock, map[string]time.Time{
		"alice": d.expiry["alice"].Add(1400 * time.Millisecond),
		"bob":   d.expiry["bob"].Add(1100 * time.Millisecond),
	}}
	out.Reset()
	if err := d.waitForGC(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := `
Waiting (at most 10s) for the emulator's GC, a pass every 0.5–1.5 s, to delete
the cells that expired more than 1s ago:

  T+2.4s  alice's cell is gone, 1.4s after its expiry
  T+3.1s  bob's cell is gone, 1.1s after its expiry

Raw read at T+3.1s:

  service  MaxTimestamp  live
`
	if got := out.String(); got != want {
		t.Errorf("printed\n%s\nwant\n%s", got, want)
	}
}

// TestWaitForGCFails: the wait gives up gcDeadline after the sessions
// were written, and stops at a failed read.
func TestWaitForGCFails(t *testing.T) {
	d, _ := newDemo(t, io.Discard, 300*time.Microsecond)
	writeSessions(t, d)
	err := d.waitForGC(context.Background())
	if err == nil || err.Error() != "GC did not delete the expired cells within 10s of writing them" {
		t.Errorf("with no GC: %v", err)
	}

	d, _ = newDemo(t, io.Discard, 300*time.Microsecond)
	writeSessions(t, d)
	d.raw = emulator.StartForTest(t).Client.Open("missing")
	if err := d.waitForGC(context.Background()); err == nil || !strings.Contains(err.Error(), "NotFound") {
		t.Errorf("with the table gone: %v", err)
	}
}

// TestWatchGivesUp: a session still returned 2s after its expiry is an
// error, not a wait without end.
func TestWatchGivesUp(t *testing.T) {
	d, clock := newDemo(t, io.Discard, 100*time.Millisecond)
	writeSessions(t, d)
	_, _, err := d.watch(context.Background(), "service", clock.peek())
	if err == nil || !strings.HasPrefix(err.Error(), "service was still returned 2.") {
		t.Errorf("watching the Forever session: %v", err)
	}
}

// TestTellReportsFailures: when any call the program makes fails, from
// opening its table to the last read, it stops and reports the error.
func TestTellReportsFailures(t *testing.T) {
	calls := faulty.EveryCall(t, 0, func(addr string) error {
		t.Setenv("BIGTABLE_EMULATOR_HOST", addr)
		env, err := btenv.Open(context.Background(), btenv.Target{}, "sessions",
			map[string]ttl.Strategy{family: ttl.OneSecond()})
		if err != nil {
			return err
		}
		defer env.Close()
		d, _ := demoOn(t, env.Table, io.Discard, 2*time.Millisecond)
		return d.tell(context.Background(), false)
	})
	if calls < 30 {
		t.Errorf("the program made %d calls", calls)
	}
}

// TestRunFails: a bad target is reported, and nothing printed.
func TestRunFails(t *testing.T) { programtest.RefusesHalfTarget(t, run) }

// onRealClock is the shape of what the program prints on the real clock
// and its in-process emulator, as a pattern: … stands for a time or a
// duration, ␣ for the spaces that pad one, ⋮ for the reads of the sliding
// sessions.
const onRealClock = `Table cellttl-example-sessions on an in-process bttest emulator
Family "sessions": OneSecond(), GC policy age() > 1000000 (µs, so 1s)

Sessions written at T = … (real clock):

session  lifetime  stored timestamp = expiry
alice    For(1s)   …  T+1s
bob      For(2s)   …  T+2s
service  Forever   MaxTimestamp  never

Reads through the Table, polled around each expiry, at the clock readings
the Table filtered with:

session  last returned at  first not returned at
alice    expiry-…␣expiry+…
bob      expiry-…␣expiry+…
service  still returned at T+…

Raw read at T+…, plain bigtable client, no filter (expired cells stay stored):

  alice    …  expired
  bob      …  live
  service  MaxTimestamp  live

Waiting (at most 10s) for the emulator's GC, a pass every 0.5–1.5 s, to delete
the cells that expired more than 1s ago:

  T+…␣alice's cell is gone, … after its expiry
  T+…␣bob's cell is gone, … after its expiry

Raw read at T+…:

  service  MaxTimestamp  live

Sliding expiration: ttl.KeepAlive(1s), whose slack is 250ms (idle/4)

carol and dave saved at T = … with For(1s), then read every 200ms for 2.8s:
carol with ttl.KeepAlive(1s), dave with plain reads.

⋮
Last read of carol at T+…; from then on, plain reads only:

  last returned at      the last read + …
  first not returned at the last read + …

carol expired … after her last read: at least idle (1s), at most idle + slack (1.25s).
`

// TestRun runs the program as it runs, on the real clock and its
// in-process emulator, waiting for the emulator's GC: about 7 seconds.
// It checks the shape of every line; TestStory checks their content on a
// simulated clock.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs on the real clock for about 7 seconds")
	}
	t.Setenv("BIGTABLE_EMULATOR_HOST", "")
	var out bytes.Buffer
	if err := run(&out, btenv.Target{}); err != nil {
		t.Fatal(err)
	}
	pattern := strings.NewReplacer(
		"…", `\S+`,
		"␣", " +",
		"⋮", `(?:  T\+\S+  (?:carol read: (?:renewed    |nothing due)  expires T\+\S+, the read \+ \S+|dave read: gone \(saved for 1s, and plain reads do not renew\))\n)+`,
	).Replace(regexp.QuoteMeta(onRealClock))
	got := out.String()
	if !regexp.MustCompile("^" + pattern + "$").MatchString(got) {
		t.Errorf("the program printed\n%s\nwhich is not of the shape\n%s", got, onRealClock)
	}
	if n := strings.Count(got, "carol read: "); n != 14 {
		t.Errorf("carol read %d times, want 14 (every 200ms for 2.8s)", n)
	}
	if n := strings.Count(got, "dave read: gone"); n != 1 {
		t.Errorf("dave's session went %d times, want once", n)
	}
}
