// Package ttl gives Cloud Bigtable cells a time to live of their own.
//
// Bigtable garbage-collects only per column family (a maximum age, a
// maximum number of versions), asynchronously — in production up to a week
// late — and never filters reads by its GC policy. Its documentation
// describes three workarounds that encode a cell's lifetime in its
// timestamp. This package implements them as strategies that cannot be
// misused, and reads and conditionally writes through a filter that hides
// every expired cell at once.
//
// # The model
//
// A cell's expiry is the instant from which it must never be returned. A
// [Strategy] maps a [Lifetime] to the cell's timestamp on write and back to
// a timestamp filter on read; the family's GC policy physically removes,
// later, what the filter already hides.
//
//	strategy               family GC policy   timestamp written            visible at now iff
//	OneSecond()            MaxAge(1s)         expiry                       ts > now
//	DefaultExpiration(d)   MaxAge(d)          expiry − d (Default: now)    ts + d > now
//	SequenceNumbers(n)     MaxVersions(n)     seq × 1000 µs                among the newest n of its column
//
// Timestamps are microseconds with millisecond granularity. Expiries are
// rounded down to the millisecond: a cell may be hidden up to 1ms before
// its requested expiry, never after it, and from its expiry on. A write
// whose cell would be born expired is refused with [ErrExpired]. Under both
// time strategies GC only ever removes expired cells.
//
// # Quick start
//
// Give each managed family its strategy's GC policy (policy.Tool.Check and
// policy.Tool.Ensure in github.com/cellttl/ttl/policy, or the cellttl command),
// wrap the table, and write through recipes. A recipe ([Mutation],
// [ReadModifyWrite]) records a row's changes with their lifetimes and
// computes nothing: the timestamps are computed when it is applied, at the
// call's one reading of the clock, and a recipe with any bad change is
// refused whole before anything is sent.
//
//	tbl, err := ttl.NewTable(client.Open("events"), map[string]ttl.Strategy{
//		"clicks": ttl.DefaultExpiration(48 * time.Hour),
//		"sess":   ttl.OneSecond(),
//	}, ttl.OtherFamilies("meta"))
//	…
//	m := ttl.NewMutation()
//	m.Set("clicks", "home", []byte("1"), ttl.Default)          // lives 48h
//	m.Set("sess", "token", []byte("abc"), ttl.For(time.Hour)) // lives 1h
//	err = tbl.Apply(ctx, "customer#42", m)
//	…
//	row, err := tbl.ReadRow(ctx, "customer#42") // live cells only
//
// Or write without a recipe, each change built as it is written at the
// call's one reading of the clock: [Table.ApplyRow] for a row,
// [Table.ApplyBatch] for rows in a loop. They cost what building the
// mutations by hand costs; a recipe costs its memory, which matters where
// many are kept (ApplyBulk) or a row's cells each have their own lifetime:
//
//	err = tbl.ApplyRow(ctx, "customer#42", func(r ttl.RowWriter) {
//		r.Set("sess", "token", token, ttl.For(15*time.Minute))
//		r.Set("sess", "refresh", refresh, ttl.For(30*24*time.Hour))
//	})
//
// # Choosing a strategy
//
// OneSecond gives every cell any lifetime, but a cell stamped with the
// server's clock, or by a client that does not know the rule, expires at
// once, and switching a family with ordinary timestamps to it deletes its
// data. DefaultExpiration keeps ordinary write timestamps for plain writes,
// so existing data and other writers stay meaningful, and shifts the
// timestamp only for cells with another lifetime; it is the one to migrate
// an existing family to, and the only managed family where
// read-modify-write is safe. SequenceNumbers keeps the newest n versions of
// each column, whatever the time.
//
// # Pitfalls this package removes
//
//   - Expired cells in reads: every read passes the expiry filter; the
//     caller's filter ([RowFilter]) is chained after it, so LatestNFilter
//     and per-row limits see live cells only, and a bigtable.RowFilter that
//     would replace it is refused.
//   - Expired cells in conditional writes: [NewCondMutation]'s predicate is
//     chained after the expiry filter, so an expired lock can be taken.
//   - A resurfacing older value: under the time strategies a newer write
//     with a shorter lifetime has a smaller timestamp; [Mutation.Replace]
//     deletes the column and sets the new cell atomically.
//   - Server timestamps that expire at once: read-modify-write is refused
//     where it would break the strategy ([ErrServerTimestamp]), and an
//     expired counter restarts instead of resurfacing.
//   - Millisecond granularity and range: every timestamp is aligned and
//     checked; nothing wraps or rounds late.
//   - GC policies that delete existing data: policy.Tool.Ensure refuses such
//     changes unless explicitly allowed.
//
// # Clock skew
//
// Expiry is judged by the reading client's clock. A reader whose clock
// lags the writers' by s sees cells up to s after their expiry; give such
// readers [WithReadMargin] of at least s. [WithClock] replaces time.Now,
// for tests or a corrected clock.
//
// # Expiry events at any table size
//
// Bigtable has no index by timestamp: a sweep (package sweep) that looks
// for expired cells reads the whole table. [WithSchedule] makes the table
// write, before each call's data, an entry per row and second of expiry
// in a second table (laid out by package schedule), which a sweep given
// it reads instead: one more request per write call, never per cell.
//
// # Wire format
//
// Other readers (cbt, other clients, Dataflow, BigQuery) see the raw cells,
// so the timestamps are a public contract: OneSecond stores the expiry
// itself; DefaultExpiration(d) stores expiry − d; SequenceNumbers stores
// seq milliseconds after the Unix epoch; [Forever] is stored at
// [MaxTimestamp] (OneSecond) or MaxTimestamp − d (DefaultExpiration).
// [Table.ReadFilter] returns the filter another reader can apply to see
// what a Table sees. [RecordWriteTime] adds companion cells, described
// there.
package ttl

// The README's timeline figures are drawn from the library itself.
//go:generate go run ./cmd/timeline -out docs
