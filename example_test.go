package ttl_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
)

// exampleTable starts an in-process emulator with a table "t" that has the
// given families and no GC policy, and returns it with a function that
// stops the emulator.
func exampleTable(families ...string) (*bigtable.Table, func()) {
	e, err := emulator.Start()
	if err != nil {
		log.Fatal(err)
	}
	fams := map[string]bigtable.GCPolicy{}
	for _, f := range families {
		fams[f] = nil
	}
	raw, err := e.CreateTable(context.Background(), "t", fams)
	if err != nil {
		log.Fatal(err)
	}
	return raw, func() { e.Close() }
}

// printRow prints a row's cells, one per line.
func printRow(r bigtable.Row) {
	if r == nil {
		fmt.Println("  (no live cells)")
	}
	for _, c := range cells(r) {
		fmt.Printf("  %s = %s\n", c.Column, c.Value)
	}
}

// Example shows the whole round trip: cells with different lifetimes in a
// default-expiration family and a one-second family, read as a simulated
// clock passes their expiries.
func Example() {
	raw, stop := exampleTable("clicks", "sess")
	defer stop()
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{
		"clicks": ttl.DefaultExpiration(48 * time.Hour),
		"sess":   ttl.OneSecond(),
	}, ttl.OtherFamilies(), ttl.WithClock(func() time.Time { return now }))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	m := ttl.NewMutation()
	m.Set("clicks", "home", []byte("kept 48h"), ttl.Default)
	m.Set("clicks", "cart", []byte("kept 1h"), ttl.For(time.Hour))
	m.Set("sess", "token", []byte("until 09:30"), ttl.Until(now.Add(30*time.Minute)))
	if err := tbl.Apply(ctx, "customer#42", m); err != nil {
		log.Fatal(err)
	}
	for _, after := range []time.Duration{0, 30 * time.Minute, time.Hour, 48 * time.Hour} {
		now = time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC).Add(after)
		row, err := tbl.ReadRow(ctx, "customer#42")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("after %v:\n", after)
		printRow(row)
	}
	// Output:
	// after 0s:
	//   clicks:cart = kept 1h
	//   clicks:home = kept 48h
	//   sess:token = until 09:30
	// after 30m0s:
	//   clicks:cart = kept 1h
	//   clicks:home = kept 48h
	// after 1h0m0s:
	//   clicks:home = kept 48h
	// after 48h0m0s:
	//   (no live cells)
}

// ExampleOneSecond shows the one-second rule: the timestamp is the expiry
// itself, rounded down to the millisecond, and the filter passes the
// timestamps after now.
func ExampleOneSecond() {
	s := ttl.OneSecond()
	now := time.Date(2030, 4, 30, 8, 0, 0, 0, time.UTC)
	ts, _ := s.Timestamp(now, ttl.Until(time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)))
	fmt.Println(ts.Time().UTC())
	fmt.Println(s.Filter(now))
	fmt.Println(s.GCPolicy())
	_, err := s.Timestamp(now, ttl.Default)
	fmt.Println(err)
	// Output:
	// 2030-04-30 09:00:00 +0000 UTC
	// timestamp_range(1903766400001000,0)
	// age() > 1000000
	// ttl: lifetime not supported by the family: OneSecond() has no default lifetime; use For or Until
}

// ExampleDefaultExpiration shows the default-expiration rule: a plain
// write keeps its write time, a shorter lifetime an earlier timestamp, a
// longer one a later timestamp.
func ExampleDefaultExpiration() {
	s := ttl.DefaultExpiration(48 * time.Hour)
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	for _, life := range []ttl.Lifetime{ttl.Default, ttl.For(time.Hour), ttl.For(72 * time.Hour)} {
		ts, _ := s.Timestamp(now, life)
		fmt.Printf("%-11v stamped %v\n", life, ts.Time().UTC().Format(time.DateTime))
	}
	fmt.Println(s.GCPolicy())
	// Output:
	// Default     stamped 2030-04-30 09:00:00
	// For(1h0m0s) stamped 2030-04-28 10:00:00
	// For(72h0m0s) stamped 2030-05-01 09:00:00
	// age() > 2d
}

// ExampleSequenceNumbers shows five versions of a document under a
// three-version policy: reads return the newest three.
func ExampleSequenceNumbers() {
	raw, stop := exampleTable("rev")
	defer stop()
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"rev": ttl.SequenceNumbers(3)}, ttl.OtherFamilies())
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	for v := int64(1); v <= 5; v++ {
		m := ttl.NewMutation()
		m.Set("rev", "body", []byte(fmt.Sprintf("draft %d", v)), ttl.Version(v))
		if err := tbl.Apply(ctx, "doc", m); err != nil {
			log.Fatal(err)
		}
	}
	row, err := tbl.ReadRow(ctx, "doc")
	if err != nil {
		log.Fatal(err)
	}
	for _, it := range row["rev"] {
		fmt.Printf("%s at %d µs\n", it.Value, it.Timestamp)
	}
	// Output:
	// draft 5 at 5000 µs
	// draft 4 at 4000 µs
	// draft 3 at 3000 µs
}

// ExampleMutation_Replace shows why Replace exists: a newer write with a
// shorter lifetime has a smaller timestamp, so Set lets the older value
// win; Replace deletes it in the same atomic mutation.
func ExampleMutation_Replace() {
	raw, stop := exampleTable("prefs")
	defer stop()
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"prefs": ttl.DefaultExpiration(24 * time.Hour)},
		ttl.OtherFamilies(), ttl.WithClock(func() time.Time { return now }))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	latest := ttl.RowFilter(bigtable.LatestNFilter(1))
	for _, row := range []string{"with-set", "with-replace"} {
		m := ttl.NewMutation()
		m.Set("prefs", "theme", []byte("dark, for a week"), ttl.For(7*24*time.Hour))
		if err := tbl.Apply(ctx, row, m); err != nil {
			log.Fatal(err)
		}
		m = ttl.NewMutation()
		if row == "with-set" {
			m.Set("prefs", "theme", []byte("light, for an hour"), ttl.For(time.Hour))
		} else {
			m.Replace("prefs", "theme", []byte("light, for an hour"), ttl.For(time.Hour))
		}
		if err := tbl.Apply(ctx, row, m); err != nil {
			log.Fatal(err)
		}
		r, err := tbl.ReadRow(ctx, row, latest)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s\n", row, r["prefs"][0].Value)
	}
	// Output:
	// with-set: dark, for a week
	// with-replace: light, for an hour
}

// ExampleNewCondMutation takes a lock whose holder's cell has expired: the
// predicate sees live cells only.
func ExampleNewCondMutation() {
	raw, stop := exampleTable("lock")
	defer stop()
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"lock": ttl.OneSecond()},
		ttl.OtherFamilies(), ttl.WithClock(func() time.Time { return now }))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	take := func(who string) {
		m := ttl.NewMutation()
		m.Set("lock", "owner", []byte(who), ttl.For(10*time.Second))
		var held bool
		if err := tbl.Apply(ctx, "job", ttl.NewCondMutation(nil, nil, m), bigtable.GetCondMutationResult(&held)); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s takes the lock: %v\n", who, !held)
	}
	take("ann")
	now = now.Add(5 * time.Second)
	take("bob")
	now = now.Add(5 * time.Second) // ann's cell expires, still stored
	take("bob")
	// Output:
	// ann takes the lock: true
	// bob takes the lock: false
	// bob takes the lock: true
}

// ExampleOtherFamilies shows the read filters of a table whose families
// are declared, and of one whose families are not: only the latter needs a
// regular expression, evaluated for every cell.
func ExampleOtherFamilies() {
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	managed := map[string]ttl.Strategy{"sess": ttl.OneSecond()}
	var api bigtable.TableAPI = &bigtable.Table{} // never called: ReadFilter only prints
	for _, opts := range [][]ttl.Option{{ttl.OtherFamilies()}, {ttl.OtherFamilies("meta")}, nil} {
		tbl, err := ttl.NewTable(api, managed, opts...)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(tbl.ReadFilter(now))
	}
	// Output:
	// timestamp_range(1903770000001000,0)
	// ((columnRangeFilter(sess,,) | timestamp_range(1903770000001000,0)) + columnRangeFilter(meta,,))
	// ((columnRangeFilter(sess,,) | timestamp_range(1903770000001000,0)) + col((?:|[^s](?s:.*)|s(?:|[^e](?s:.*)|e(?:|[^s](?s:.*)|s(?:|[^s](?s:.*)|s(?:(?s:.+)))))):))
}

// ExampleWithReadMargin hides cells a minute before their expiry, for
// readers whose clocks may lag the writers' by up to a minute.
func ExampleWithReadMargin() {
	raw, stop := exampleTable("sess")
	defer stop()
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"sess": ttl.OneSecond()}, ttl.OtherFamilies(),
		ttl.WithReadMargin(time.Minute), ttl.WithClock(func() time.Time { return now }))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	m := ttl.NewMutation()
	m.Set("sess", "token", []byte("abc"), ttl.For(10*time.Minute))
	if err := tbl.Apply(ctx, "u1", m); err != nil {
		log.Fatal(err)
	}
	now = now.Add(9 * time.Minute)
	row, err := tbl.ReadRow(ctx, "u1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("live cells one minute before expiry:", len(row))
	m = ttl.NewMutation()
	m.Set("sess", "token", []byte("abc"), ttl.For(30*time.Second))
	fmt.Println(tbl.Apply(ctx, "u1", m) != nil)
	// Output:
	// live cells one minute before expiry: 0
	// true
}

// ExampleRecordWriteTime keeps each cell's real write time, which the
// timestamp no longer is, and reads it back like Cassandra's WRITETIME().
func ExampleRecordWriteTime() {
	raw, stop := exampleTable("sess")
	defer stop()
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"sess": ttl.OneSecond()}, ttl.OtherFamilies(),
		ttl.RecordWriteTime(), ttl.WithClock(func() time.Time { return now }))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	m := ttl.NewMutation()
	m.Set("sess", "token", []byte("abc"), ttl.For(time.Hour))
	if err := tbl.Apply(ctx, "u1", m); err != nil {
		log.Fatal(err)
	}
	row, err := tbl.ReadRow(ctx, "u1", ttl.WithWriteTimes())
	if err != nil {
		log.Fatal(err)
	}
	cell := row["sess"][0]
	written, _ := ttl.WriteTime(cell)
	expires, _ := tbl.ExpiresAt(cell)
	fmt.Println("cells:", len(row["sess"]))
	fmt.Println("written:", written.UTC().Format(time.TimeOnly))
	fmt.Println("expires:", expires.UTC().Format(time.TimeOnly))
	// Output:
	// cells: 1
	// written: 09:00:00
	// expires: 10:00:00
}

// ExampleRowFilter applies the caller's filter after expiry filtering: a
// limit of one cell per row returns the first live cell, where applied
// before expiry filtering it would take the expired one and return
// nothing.
func ExampleRowFilter() {
	raw, stop := exampleTable("status")
	defer stop()
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"status": ttl.OneSecond()},
		ttl.OtherFamilies(), ttl.WithClock(func() time.Time { return now }))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	m := ttl.NewMutation()
	m.Set("status", "a", []byte("for a minute"), ttl.For(time.Minute))
	m.Set("status", "b", []byte("for an hour"), ttl.For(time.Hour))
	if err := tbl.Apply(ctx, "r", m); err != nil {
		log.Fatal(err)
	}
	now = now.Add(time.Minute)
	row, err := tbl.ReadRow(ctx, "r", ttl.RowFilter(bigtable.CellsPerRowLimitFilter(1)))
	if err != nil {
		log.Fatal(err)
	}
	printRow(row)
	// Output:
	//   status:b = for an hour
}

// ExampleTable_Touch keeps a session alive by touching it on each request:
// it expires 30 minutes after the last touch. A touch never brings back an
// expired session, and loses to a save made between its read and its
// write, even one made in the same millisecond, which has the same
// timestamp: Touch compares the value too.
func ExampleTable_Touch() {
	raw, stop := exampleTable("sess")
	defer stop()
	start := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	now := start
	clock := ttl.WithClock(func() time.Time { return now })
	families := map[string]ttl.Strategy{"sess": ttl.OneSecond()}
	// To show a conflict, another client saves the session between
	// Touch's read and its write: testkit.Hooked is a
	// bigtable.TableAPI that calls its function before each Apply.
	var race func()
	tbl, err := ttl.NewTable(testkit.Hooked{TableAPI: raw, Before: func() {
		if r := race; r != nil {
			race = nil
			r()
		}
	}}, families, ttl.OtherFamilies(), clock)
	if err != nil {
		log.Fatal(err)
	}
	other, err := ttl.NewTable(raw, families, ttl.OtherFamilies(), clock)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	save := func(tbl *ttl.Table, cart string) {
		m := ttl.NewMutation()
		m.Replace("sess", "cart", []byte(cart), ttl.For(30*time.Minute))
		if err := tbl.Apply(ctx, "u1", m); err != nil {
			log.Fatal(err)
		}
	}
	show := func() {
		row, err := tbl.ReadRow(ctx, "u1")
		if err != nil {
			log.Fatal(err)
		}
		if row == nil {
			fmt.Println("  stored: nothing live")
			return
		}
		exp, _ := tbl.ExpiresAt(row["sess"][0])
		fmt.Printf("  stored: %s, expires %s\n", row["sess"][0].Value, exp.Format("15:04"))
	}
	touch := func(after time.Duration) {
		now = start.Add(after)
		touched, err := tbl.Touch(ctx, "u1", "sess", "cart", ttl.For(30*time.Minute))
		fmt.Printf("%s touched: %v, error: %v\n", now.Format("15:04"), touched, err)
		if errors.Is(err, ttl.ErrConflict) {
			fmt.Println("  a conflict: the save stands")
		}
		show()
	}

	save(tbl, "1 book")
	fmt.Println("09:00 saved")
	show()
	touch(20 * time.Minute)
	touch(45 * time.Minute)
	touch(75 * time.Minute) // 30 minutes after the last touch: expired idle

	now = start.Add(80 * time.Minute)
	save(tbl, "2 books")
	race = func() { save(other, "3 books") } // at the same instant: the same timestamp
	fmt.Println("10:20 saved, then touched while another client saves")
	touch(80 * time.Minute)
	// Output:
	// 09:00 saved
	//   stored: 1 book, expires 09:30
	// 09:20 touched: true, error: <nil>
	//   stored: 1 book, expires 09:50
	// 09:45 touched: true, error: <nil>
	//   stored: 1 book, expires 10:15
	// 10:15 touched: false, error: <nil>
	//   stored: nothing live
	// 10:20 saved, then touched while another client saves
	// 10:20 touched: false, error: ttl: the cell changed between the read and the write: Touch of row "u1" (family "sess", column "cart")
	//   a conflict: the save stands
	//   stored: 3 books, expires 10:50
}

// ExampleKeepAlive keeps a session alive while it is read: each read with
// KeepAlive(20m) leaves it live for at least 20 minutes, renewing it only
// when it would expire sooner, to 20m plus a slack of 5m (idle/4), so that
// a session read again and again is rewritten at most once per 5 minutes.
// Once the reads stop, it expires between 20 and 25 minutes after the last
// one.
func ExampleKeepAlive() {
	raw, stop := exampleTable("sess")
	defer stop()
	start := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	now := start
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"sess": ttl.OneSecond()},
		ttl.OtherFamilies(), ttl.WithClock(func() time.Time { return now }))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	m := ttl.NewMutation()
	m.Replace("sess", "token", []byte("abc"), ttl.For(20*time.Minute))
	if err := tbl.Apply(ctx, "u1", m); err != nil {
		log.Fatal(err)
	}
	fmt.Println("09:00 saved, expires 09:20")

	expires := start.Add(20 * time.Minute)
	read := func(after time.Duration, opts ...ttl.ReadOption) {
		now = start.Add(after)
		row, err := tbl.ReadRow(ctx, "u1", opts...)
		if err != nil {
			log.Fatal(err)
		}
		at := now.Format("15:04")
		if row == nil {
			fmt.Printf("%s read nothing: expired idle\n", at)
			return
		}
		exp, _ := tbl.ExpiresAt(row["sess"][0]) // a renewed cell carries its new timestamp
		renewed := ""
		if !exp.Equal(expires) {
			renewed = " (renewed)"
		}
		expires = exp
		fmt.Printf("%s read %s, expires %s%s\n", at, row["sess"][0].Value, exp.Format("15:04"), renewed)
	}
	// A read every 3 minutes. At 09:03 the session would expire before
	// 09:23: it is renewed, to 09:03 + 25m. At 09:06 it lives past 09:26:
	// nothing is due, and the read sends only what a plain read sends. At
	// 09:09 it would expire before 09:29: renewed again.
	for _, after := range []time.Duration{3, 6, 9} {
		read(after*time.Minute, ttl.KeepAlive(20*time.Minute))
	}
	// No more reads with KeepAlive: plain reads do not renew.
	read(29 * time.Minute) // 20 minutes after the last read
	read(34 * time.Minute) // 25 minutes after it
	// Output:
	// 09:00 saved, expires 09:20
	// 09:03 read abc, expires 09:28 (renewed)
	// 09:06 read abc, expires 09:28
	// 09:09 read abc, expires 09:34 (renewed)
	// 09:29 read abc, expires 09:34
	// 09:34 read nothing: expired idle
}

// ExampleTable_ApplyRow writes a session's token and its refresh token,
// each with its own lifetime, built as they are written: no recipe.
func ExampleTable_ApplyRow() {
	raw, stop := exampleTable("sess")
	defer stop()
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"sess": ttl.OneSecond()},
		ttl.WithClock(func() time.Time { return now }))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	err = tbl.ApplyRow(ctx, "user#42", func(r ttl.RowWriter) {
		r.Set("sess", "token", []byte("t-1"), ttl.For(15*time.Minute))
		r.Set("sess", "refresh", []byte("r-1"), ttl.For(30*24*time.Hour))
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, at := range []time.Duration{0, 20 * time.Minute} {
		now = time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC).Add(at)
		row, err := tbl.ReadRow(ctx, "user#42")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("after %v:\n", at)
		printRow(row)
	}
	// Output:
	// after 0s:
	//   sess:refresh = r-1
	//   sess:token = t-1
	// after 20m0s:
	//   sess:refresh = r-1
}

// ExampleTable_ApplyBatch writes rows in a loop, each built as it is
// written; an invalid row is reported at its index and not sent.
func ExampleTable_ApplyBatch() {
	raw, stop := exampleTable("events")
	defer stop()
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"events": ttl.OneSecond()},
		ttl.WithClock(func() time.Time { return now }))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	retention := map[string]time.Duration{"click": 24 * time.Hour, "purchase": 90 * 24 * time.Hour, "bogus": -time.Hour}
	kinds := []string{"click", "purchase", "bogus"}
	rows := make([]string, len(kinds))
	for i, kind := range kinds {
		rows[i] = "event#" + kind
	}
	errs, err := tbl.ApplyBatch(ctx, rows, func(i int, w ttl.RowWriter) {
		w.Set("events", "kind", []byte(kinds[i]), ttl.For(retention[kinds[i]]))
	})
	if err != nil {
		log.Fatal(err)
	}
	for i, kind := range kinds {
		if errs != nil && errs[i] != nil {
			fmt.Printf("%s: %v\n", kind, errs[i])
		}
	}
	err = tbl.ReadRows(ctx, bigtable.PrefixRange("event#"), func(r bigtable.Row) bool {
		fmt.Println(r.Key())
		return true
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// bogus: ttl: cell would be born expired: For(-1h0m0s) under OneSecond() expires at 2030-04-30T08:00:00Z, not after now (2030-04-30T09:00:00Z) (family "events", column "kind")
	// event#click
	// event#purchase
}
