// Package ttltest runs the code of a cellttl user against an in-process
// Bigtable emulator on a fake clock, so that a test of expiry, sliding
// expiration, counters or sweeps runs in milliseconds, with no sleep: as
// miniredis's FastForward does for Redis users, and bttest alone cannot
// (its garbage collection runs on the real clock).
//
//	func TestSession(t *testing.T) {
//		env := ttltest.New(t, map[string]ttl.Strategy{"sess": ttl.OneSecond()})
//		store := NewStore(env.Table) // or a ttl.Table of the store's own, with ttl.WithClock(env.Now)
//		store.Login(ctx, "alice")    // a session of 15 minutes
//		env.FastForward(16 * time.Minute)
//		if store.LoggedIn(ctx, "alice") {
//			t.Fatal("the session outlived its 15 minutes")
//		}
//	}
//
// One call, [New], starts the emulator (stopped when the test ends),
// creates a table whose managed families have the GC policies their
// strategies need (a ttl.Counter family as an aggregate of int64 sums),
// plus any family of [WithFamily], and returns an [Env]: the [ttl.Table]
// on the Env's clock, the raw table, the clients, and the clock. The
// clock starts at a fixed instant, [DefaultStart] (1 January 2100), and
// moves only when the test calls [Env.FastForward]. Code under test that
// builds its own ttl.Table passes ttl.WithClock(env.Now); a sweep,
// sweep.Options{Scan: scan.Options{Now: env.Now}}, run with Once after each FastForward
// (Every waits between rounds on the real clock). Outside a test
// (examples, TestMain),
// [Start] returns the Env and its errors, and the caller closes it.
//
// # Garbage collection, and why it lags
//
// Bigtable deletes expired cells late: its garbage collection runs in the
// background, in production up to a week after a cell becomes
// collectable. A reader that reads raw and counts on GC to have removed
// what expired is wrong, and a test environment that removed every
// collectable cell at once would hide that bug for any test that moves
// the clock past the GC age: the forgotten filter would see nothing
// expired, as if it worked. So FastForward removes only what GC must have
// removed by the new instant: every cell that its family's GC policy has
// let GC delete for at least the GC lag, [DefaultGCLag] (a week) unless
// [WithGCLag] says otherwise. A session that expired a minute ago is
// still stored, as it may be in Bigtable, and code that reads it raw
// finds it: the test that says the session is gone fails. Through the
// library's reads it is gone at once.
//
// [Env.CollectGarbage] is the other extreme: it removes everything GC may
// remove at the clock's now, for tests of physical deletion (what cbt or
// an export sees once GC has run, what a sweep that falls behind its
// grace misses). Code that is right passes whichever has happened; a
// test of it can call both.
//
// What GC may delete is Bigtable's rule for each family's policy as the
// table has it when the collection runs (so a test that changes a
// policy is honoured): under MaxAge(a) a cell whose timestamp is before
// now − a; under MaxVersions(n) every version of a column but its newest
// n; under a union what any of its rules may delete, under an
// intersection what all of them may (the emulator ignores
// intersections; the Env does not). For the lag the Env needs to know
// since when a cell has been collectable: it records when it first saw
// each cell stored, reading the table at each FastForward before the
// clock moves, which is the instant the cell was written (the clock moves
// only there). A version becomes collectable under MaxVersions(n) once n
// newer versions are stored; a cell under MaxAge, once it is old enough
// and stored.
//
// # The emulator's own GC
//
// bttest runs a GC loop on the real clock, every 0.5 to 1.5 s, which
// could delete cells behind the test's back at moments no test controls.
// It starts the loop only when a column family is modified by a call of
// its own (creating a family or setting its GC policy on an existing
// table); the Env creates the table with all its families in one call,
// so the loop never starts and the only GC is the Env's. A test that
// modifies a family through the admin client starts it: from then on it
// removes excess versions on its own, and removes by age only cells
// stamped before the real clock's now less the age, which the default
// start, far ahead of the real clock, keeps out of reach.
package ttltest
