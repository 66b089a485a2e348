package ttltest_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
	"github.com/cellttl/ttl/ttltest"
)

// The scenarios are users' tests, written as a user would write them,
// against the user code of users_test.go: each runs on the real t, and
// on a recorder against the code that forgets the read filter, which it
// must catch.

// sessionTest is a user's test of a 15-minute session renewed by use.
func sessionTest(t testing.TB, forget bool) {
	ctx := context.Background()
	env := ttltest.New(t, map[string]ttl.Strategy{"sess": ttl.OneSecond()})
	s := sessions{tbl: env.Table, raw: env.Raw, forget: forget}
	loggedIn := func(want bool, when string) {
		t.Helper()
		_, ok, err := s.token(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if ok != want {
			t.Fatalf("%s: logged in %v, want %v", when, ok, want)
		}
	}

	if err := s.login(ctx, "alice", "t0k3n"); err != nil {
		t.Fatal(err)
	}
	env.FastForward(10 * time.Minute)
	if ok, err := s.use(ctx, "alice"); err != nil || !ok {
		t.Fatalf("use after 10 minutes: renewed %v, %v; want the session renewed", ok, err)
	}
	env.FastForward(14 * time.Minute)
	loggedIn(true, "24 minutes after the login, 14 after the last use")
	env.FastForward(time.Minute + time.Millisecond)
	loggedIn(false, "15 minutes after the last use")
	if ok, err := s.use(ctx, "alice"); err != nil || ok {
		t.Fatalf("use after expiry: renewed %v, %v; want nothing to renew", ok, err)
	}
	env.FastForward(time.Hour)
	loggedIn(false, "an hour later")
}

// rateLimitTest is a user's test of a rate limit over a day: ten a
// minute, fifty a day, reset at midnight.
func rateLimitTest(t testing.TB, forget bool) {
	ctx := context.Background()
	env := ttltest.New(t, map[string]ttl.Strategy{"hits": ttl.Counter(ttl.OneSecond())})
	l := limiter{tbl: env.Table, raw: env.Raw, forget: forget}
	burst := func(n int) (allowed int) {
		t.Helper()
		for range n {
			ok, err := l.allow(ctx, "alice")
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				allowed++
			}
		}
		return allowed
	}
	// Midnight: ten allowed, the eleventh refused.
	if got := burst(11); got != perMinute {
		t.Fatalf("a burst of 11 at midnight: %d allowed, want %d", got, perMinute)
	}
	// A minute later the minute is clear.
	env.FastForward(time.Minute)
	if got := burst(5); got != 5 {
		t.Fatalf("5 requests a minute later: %d allowed, want 5", got)
	}
	// Every hour 5 more. The day has counted 16 (a refused request
	// counts too), so 34 more are allowed: all the bursts of the first 6
	// hours, 4 of the seventh's, none after.
	allowed := 0
	for h := 1; h <= 12; h++ {
		env.FastForward(time.Hour)
		allowed += burst(5)
	}
	if want := perDay - 16; allowed != want {
		t.Fatalf("12 hourly bursts of 5: %d allowed, want the rest of the day's quota, %d", allowed, want)
	}
	// The next day the quota is back.
	env.FastForward(12 * time.Hour)
	if got := burst(3); got != 3 {
		t.Fatalf("3 requests the next day: %d allowed, want 3", got)
	}
}

// sweepTest is a user's test of the events of a sweep: who logged out,
// when, with sessions renewed in between.
func sweepTest(t testing.TB) {
	ctx := context.Background()
	families := map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), time.Hour)}
	env := ttltest.New(t, families)
	s := sessions{tbl: env.Table, raw: env.Raw}
	sw, err := sweep.New(env.Admin, env.Raw, env.Name, families,
		sweep.Options{Since: env.Now(), Granularity: sweep.Row, Margin: time.Second, Scan: scan.Options{Now: env.Now}})
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	round := func() {
		t.Helper()
		var got []string // the emulator's shards come in any order
		rep, err := sw.Once(ctx, func(_ context.Context, es []sweep.Event) error {
			for _, e := range es {
				got = append(got, e.Row+"@"+e.Expired.Sub(ttltest.DefaultStart).String())
			}
			return nil
		})
		sort.Strings(got)
		events = append(events, got...)
		if err != nil || !rep.Complete() || len(rep.Missed) > 0 {
			t.Fatalf("sweep round: %v, %v", rep, err)
		}
	}
	for _, u := range []string{"alice", "bob", "carol"} {
		if err := s.login(ctx, u, "t"); err != nil {
			t.Fatal(err)
		}
	}
	env.FastForward(10 * time.Minute)
	if _, err := s.use(ctx, "bob"); err != nil { // bob's session now ends at 25m
		t.Fatal(err)
	}
	round()
	env.FastForward(10 * time.Minute) // 20m: alice and carol expired at 15m
	round()
	env.FastForward(10 * time.Minute) // 30m: bob expired at 25m
	round()
	env.FastForward(30 * time.Minute) // nothing more expires
	round()
	want := "alice@15m0s carol@15m0s bob@25m0s"
	if got := strings.Join(events, " "); got != want {
		t.Fatalf("sweep events: %s, want %s", got, want)
	}
}

func TestSession(t *testing.T) { sessionTest(t, false) }

func TestRateLimitOverADay(t *testing.T) { rateLimitTest(t, false) }

func TestSweepEvents(t *testing.T) { sweepTest(t) }

// TestForgottenFilterFails: the same users' tests fail against code that
// reads raw and counts on GC, because FastForward leaves expired cells
// stored as a late GC does.
func TestForgottenFilterFails(t *testing.T) {
	for name, test := range map[string]func(testing.TB, bool){"session": sessionTest, "rate limit": rateLimitTest} {
		r := record(t, func(tb testing.TB) { test(tb, true) })
		if !r.Failed() {
			t.Errorf("%s: the test passed against code that forgets the read filter", name)
		}
		t.Logf("%s: the forgotten filter fails the test: %v", name, r.failures())
	}
}

// TestNoLagHidesForgottenFilter shows why FastForward lags: with GC at
// once (WithGCLag(0)), a raw read after expiry finds nothing either, and
// the forgotten filter would pass the session test.
func TestNoLagHidesForgottenFilter(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		lag    time.Duration
		stored bool
	}{{ttltest.DefaultGCLag, true}, {0, false}} {
		env := ttltest.New(t, map[string]ttl.Strategy{"sess": ttl.OneSecond()}, ttltest.WithGCLag(c.lag))
		s := sessions{tbl: env.Table, raw: env.Raw, forget: true}
		if err := s.login(ctx, "alice", "t"); err != nil {
			t.Fatal(err)
		}
		env.FastForward(sessionLife + time.Minute)
		if _, ok, err := s.token(ctx, "alice"); err != nil || ok != c.stored {
			t.Errorf("lag %v: a raw read 16 minutes after login finds the session %v, %v; want %v", c.lag, ok, err, c.stored)
		}
	}
}

// TestKeepAlive: reads with KeepAlive keep a session alive across
// FastForwards; once the reads stop it expires.
func TestKeepAlive(t *testing.T) {
	ctx := context.Background()
	env := ttltest.New(t, map[string]ttl.Strategy{"sess": ttl.OneSecond()})
	s := sessions{tbl: env.Table, raw: env.Raw}
	if err := s.login(ctx, "alice", "t"); err != nil {
		t.Fatal(err)
	}
	for range 6 { // an hour of reads, each 10 minutes after the last
		env.FastForward(10 * time.Minute)
		row, err := env.Table.ReadRow(ctx, "alice", ttl.KeepAlive(sessionLife))
		if err != nil || len(row["sess"]) != 1 {
			t.Fatalf("%v: read with KeepAlive: %v, %v", env.Now().Sub(ttltest.DefaultStart), row, err)
		}
	}
	env.FastForward(sessionLife + sessionLife/4 + time.Second)
	if _, ok, err := s.token(ctx, "alice"); err != nil || ok {
		t.Fatalf("after the reads stopped: logged in %v, %v", ok, err)
	}
	// Stored, and gone once GC has run: MaxAge(1s) lets GC delete the
	// cell from a second after its expiry.
	env.FastForward(time.Second)
	if row, err := env.Raw.ReadRow(ctx, "alice"); err != nil || len(row["sess"]) == 0 {
		t.Fatalf("raw, before GC: %v, %v; want the expired cell stored", row, err)
	}
	env.CollectGarbage()
	if row, err := env.Raw.ReadRow(ctx, "alice"); err != nil || len(row) != 0 {
		t.Fatalf("raw, after GC: %v, %v; want nothing", row, err)
	}
}

// TestSweepMissesPastGrace: a sweep that runs later than the grace after
// GC has run reports what it may have missed, as on Bigtable.
func TestSweepMissesPastGrace(t *testing.T) {
	ctx := context.Background()
	families := map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), time.Hour)}
	env := ttltest.New(t, families)
	sw, err := sweep.New(env.Admin, env.Raw, env.Name, families, sweep.Options{Since: env.Now(), Scan: scan.Options{Now: env.Now}})
	if err != nil {
		t.Fatal(err)
	}
	if err := (sessions{tbl: env.Table}).login(ctx, "alice", "t"); err != nil {
		t.Fatal(err)
	}
	env.FastForward(3 * time.Hour)
	env.CollectGarbage()
	if row, err := env.Raw.ReadRow(ctx, "alice"); err != nil || len(row) != 0 {
		t.Fatalf("raw after GC: %v, %v; want the cell collected past its grace", row, err)
	}
	var n int
	rep, err := sw.Once(ctx, func(_ context.Context, es []sweep.Event) error { n += len(es); return nil })
	if err != nil || n != 0 || len(rep.Missed) != 1 || rep.Complete() {
		t.Fatalf("a sweep 3h late: %d events, report %v, %v; want none, and the span missed reported", n, rep, err)
	}
}

// TestOwnClient: code under test that makes its own client, from
// BIGTABLE_EMULATOR_HOST, reaches the Env's table, and FastForward
// collects what it writes.
func TestOwnClient(t *testing.T) {
	ctx := context.Background()
	env := ttltest.New(t, map[string]ttl.Strategy{"sess": ttl.OneSecond()}, ttltest.WithGCLag(0))
	t.Setenv("BIGTABLE_EMULATOR_HOST", env.Addr)
	client, err := bigtable.NewClientWithConfig(ctx, ttltest.Project, ttltest.Instance,
		bigtable.ClientConfig{MetricsProvider: bigtable.NoopMetricsProvider{}})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	tbl, err := ttl.NewTable(client.Open(env.Name), map[string]ttl.Strategy{"sess": ttl.OneSecond()}, ttl.WithClock(env.Now))
	if err != nil {
		t.Fatal(err)
	}
	if err := (sessions{tbl: tbl}).login(ctx, "alice", "t"); err != nil {
		t.Fatal(err)
	}
	if row, err := env.Table.ReadRow(ctx, "alice"); err != nil || len(row) != 1 {
		t.Fatalf("the Env's Table reads %v, %v; want the session of the other client", row, err)
	}
	env.FastForward(sessionLife + time.Second + time.Millisecond)
	if row, err := env.Raw.ReadRow(ctx, "alice"); err != nil || len(row) != 0 {
		t.Fatalf("raw after expiry and GC: %v, %v; want nothing", row, err)
	}
}
