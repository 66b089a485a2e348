package model_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
)

// This file checks the retention promise against a reference model: a
// seeded generator makes a list of operations (writes with every kind of
// lifetime, deletes, conditional and bulk writes, clock moves, reads with
// and without the caller's filters), and each is applied both to a Table
// on the bttest emulator and to an in-memory model of the semantics that
// DESIGN.md states. Every read must return exactly what the model says,
// and every few operations the raw table must hold exactly the cells the
// model stores, expired ones included.
//
// The model does not call the library: it keeps the stored cells (family,
// column, timestamp, value) as Bigtable does, with a second write at the
// same timestamp replacing the first, and decides visibility by DESIGN.md's
// rules alone: OneSecond iff ts > now, DefaultExpiration(d) iff ts + d >
// now, SequenceNumbers(n) iff among the newest n cells of its column, a
// family without a strategy always; the caller's filter after that; a
// conditional predicate on live cells only; Replace deleting the column
// first; ApplyBulk row by row. With WithReadMargin(m) the rules are applied
// at now + m and a write hidden at once is refused; with RecordWriteTime
// each managed cell has its companion, and reads with WithWriteTimes
// report the write time. Table.ExpiresAt of every cell read must be the
// model's expiry.
//
// Five table variants run: families undeclared, declared (two sharing a
// strategy), with a read margin and write times, and two with a single
// strategy (the bare filter; write times). The emulator takes a row's
// families in Go map order for CellsPerRowLimitFilter, so a read with one
// may return any of the results the family orders give.
//
// CELLTTL_MODEL_OPS sets the number of operations per table variant
// (default 1000, 250 with -short), CELLTTL_MODEL_SEED the seed (default:
// the time). A failing run prints the seed and the shortest list of
// operations it found that still fails.
//
// The model is spread over files that each hold one part of it:
//
//   - model_rules_test.go: DESIGN.md's write, read and expiry rules of each
//     strategy (model.timestamp, model.live, model.expiry), the one place
//     that says what a strategy does;
//   - model_reference_test.go: the model's stored cells, how mutations
//     change them and what a read returns;
//   - model_filters_test.go: the caller's filters the model can evaluate;
//   - model_ops_test.go: the operations of a run, as recipes that replay;
//   - model_gen_test.go: the seeded generator of runs;
//   - model_run_test.go: applying a run to a Table and to the model,
//     comparing the two, and shrinking a failing run;
//   - model_variants_test.go: the table configurations the runs use.

func envInt(t testing.TB, name string, def int64) int64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return n
}

// modelSettings returns the number of operations per variant and the seed
// of a model test: CELLTTL_MODEL_OPS (default 1000, 250 with -short) and
// CELLTTL_MODEL_SEED (default: the time), and logs them.
func modelSettings(t *testing.T) (int, uint64) {
	t.Helper()
	n := 1000
	if testing.Short() {
		n = 250
	}
	n = int(envInt(t, "CELLTTL_MODEL_OPS", int64(n)))
	seed := uint64(envInt(t, "CELLTTL_MODEL_SEED", time.Now().UnixNano()))
	t.Logf("CELLTTL_MODEL_SEED=%d CELLTTL_MODEL_OPS=%d", seed, n)
	return n, seed
}

// TestModel runs random operations on each variant of table and checks
// every outcome against the model: writes, conditions, reads, clock moves,
// and Touch and KeepAlive reads with another process's write between
// their requests (model_sliding_*_test.go).
func TestModel(t *testing.T) {
	n, seed := modelSettings(t)
	var sliding slideStats // over the variants
	for i := range modelVariants {
		v := &modelVariants[i]
		t.Run(v.name, func(t *testing.T) {
			e := emulator.StartForTest(t)
			ops := generate(v, seed+uint64(i), n)
			st := &runStats{sentinels: map[string]int{}}
			idx, msg := run(t, e, v, "t", ops, st)
			if idx < 0 {
				t.Log(st)
				if n >= 300 && (st.written < n/10 || st.refused < n/50 || st.reads < n/10 || st.hiding < n/50 || st.matched == 0 || st.unmatched == 0 ||
					st.sliding.touches < n/50 || st.sliding.keepAlives < n/50 || st.sliding.touched == 0 || st.sliding.renewed == 0) {
					t.Errorf("the run exercised too little: %v", st)
				}
				sliding.add(st.sliding)
				return
			}
			reportFailure(t, seed, ops, idx, msg, fmt.Sprintf("on table %q, from clock %v", v.name, testkit.Base.Format(time.RFC3339)),
				func(name string, ops []op) (int, string) { return run(t, e, v, name, ops, nil) })
		})
	}
	if !t.Failed() && n >= 1000 && (sliding.conflicts == 0 || sliding.lost == 0 || sliding.injectedBetween < n/100) {
		t.Errorf("the runs raced Touch and KeepAlive too little: %v", sliding)
	}
}

// gcCell is a cell the real-clock GC test wrote, in a column of its own
// (or, for sequence numbers, one column of versions). Its expiry lies in
// [lo, hi]: a For or Default write reads the real clock somewhere between
// the test's readings before and after it.
type gcCell struct {
	row, fam, col string
	lo, hi        time.Time // expiry bounds, for a cell that expires by time
	forever       bool
	version       int64 // for a sequence number, else 0
}

// gcWrite is one cell to write: life is For(after), Default (after is the
// default), Until(until), Forever or Version(version).
type gcWrite struct {
	fam     string
	life    ttl.Lifetime
	after   time.Duration
	until   time.Time
	version int64
}

// TestModelUnderGC runs the emulator's garbage collection, on the
// real clock, with each strategy's own GC policy on its family, over cells
// that live for a few hundred milliseconds: all the while, reads through
// the Table never return a cell at or after its expiry nor miss a live
// one, and GC never removes a live cell; in the end GC has removed every
// cell its policy allows it to, which shows that it ran.
func TestModelUnderGC(t *testing.T) {
	if testing.Short() {
		t.Skip("waits seconds for the emulator's GC on the real clock")
	}
	ctx := context.Background()
	t.Parallel()
	const (
		d          = 800 * time.Millisecond  // DefaultExpiration(d)
		gcInterval = 1500 * time.Millisecond // the longest wait between the emulator's GC passes
		slack      = time.Second             // for a loaded machine
		poll       = 40 * time.Millisecond
	)
	strategies := map[string]ttl.Strategy{"os": ttl.OneSecond(), "de": ttl.DefaultExpiration(d), "sn": ttl.SequenceNumbers(2)}
	fams := map[string]bigtable.GCPolicy{"un": nil}
	for f, s := range strategies {
		fams[f] = s.GCPolicy()
	}
	raw := emulator.StartForTest(t).TableForTest(t, "gc", fams)
	tbl, err := ttl.NewTable(raw, strategies, ttl.OtherFamilies("un"))
	if err != nil {
		t.Fatal(err)
	}

	cells := map[string]*gcCell{} // by value
	write := func(row string, ws ...gcWrite) {
		t.Helper()
		m := ttl.NewMutation()
		var written []*gcCell
		for _, w := range ws {
			v := fmt.Sprintf("%s.%d", w.fam, len(cells))
			c := &gcCell{row: row, fam: w.fam, col: v, version: w.version}
			if w.fam == "sn" {
				c.col = "versions"
			}
			m.Set(c.fam, c.col, []byte(v), w.life)
			cells[v] = c
			written = append(written, c)
		}
		before := time.Now()
		if err := tbl.Apply(ctx, row, m); err != nil {
			t.Fatal(err)
		}
		after := time.Now()
		for i, c := range written {
			switch w := ws[i]; {
			case w.life == ttl.Forever || w.fam == "un":
				c.forever = true
			case !w.until.IsZero():
				c.lo, c.hi = w.until, w.until
			case w.fam != "sn":
				c.lo = time.UnixMilli(floorMs(before.Add(w.after)))
				c.hi = time.UnixMilli(floorMs(after.Add(w.after)))
			}
		}
	}
	until := func(fam string, in time.Duration) gcWrite {
		at := time.UnixMilli(floorMs(time.Now().Add(in)))
		return gcWrite{fam: fam, life: ttl.Until(at), until: at}
	}
	wave := func(rows ...string) {
		for _, row := range rows {
			write(row,
				until("os", 150*time.Millisecond), until("os", 400*time.Millisecond), until("os", 700*time.Millisecond),
				until("os", time.Hour), gcWrite{fam: "os", life: ttl.Forever},
				gcWrite{fam: "os", life: ttl.For(250 * time.Millisecond), after: 250 * time.Millisecond},
				gcWrite{fam: "de", life: ttl.Default, after: d},
				gcWrite{fam: "de", life: ttl.For(300 * time.Millisecond), after: 300 * time.Millisecond},
				until("de", 600*time.Millisecond), until("de", time.Hour), gcWrite{fam: "de", life: ttl.Forever},
				gcWrite{fam: "un", life: ttl.Default},
			)
			for range 2 {
				write(row, gcWrite{fam: "sn", life: ttl.Version(int64(len(cells))), version: int64(len(cells))})
			}
		}
	}
	// gcDue is when GC may remove c, and must have by a GC pass later.
	gcDue := func(c *gcCell) (time.Time, bool) {
		switch {
		case c.forever || c.fam == "sn":
			return time.Time{}, false
		case c.fam == "os":
			return c.hi.Add(time.Second), true // MaxAge(1s) on the expiry itself
		}
		return c.hi, true // MaxAge(d) on expiry − d
	}
	// newest reports whether a sequence number is among the newest two
	// versions written to its column.
	newest := func(c *gcCell) bool {
		n := 0
		for _, o := range cells {
			if o.fam == "sn" && o.row == c.row && o.version > c.version {
				n++
			}
		}
		return n < 2
	}

	wave("r0", "r1")
	secondWave := time.Now().Add(500 * time.Millisecond)
	deadline := time.Now().Add(20 * time.Second)
	horizon := time.Now().Add(time.Minute) // the cells due before it are the short-lived ones
	var due time.Time
	for reads := 0; ; reads++ {
		if !secondWave.IsZero() && time.Now().After(secondWave) {
			wave("r1", "r2")
			secondWave = time.Time{}
		}

		// Through the table: nothing expired, nothing live missing.
		before := time.Now()
		seen := map[string]bool{}
		err := tbl.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
			for _, items := range r {
				for _, it := range items {
					seen[string(it.Value)] = true
				}
			}
			return true
		})
		after := time.Now()
		if err != nil {
			t.Fatal(err)
		}
		for v, c := range cells {
			switch {
			case c.fam == "sn":
				if seen[v] != newest(c) {
					t.Errorf("read %d: sequence number %s returned = %v, want %v", reads, v, seen[v], newest(c))
				}
			case c.forever:
				if !seen[v] {
					t.Errorf("read %d: %s, which never expires, is missing", reads, v)
				}
			case seen[v] && !c.hi.After(before):
				t.Errorf("read %d between %v and %v returned %s, which expired at %v", reads, before, after, v, c.hi)
			case !seen[v] && c.lo.After(after):
				t.Errorf("read %d between %v and %v missed %s, live until %v", reads, before, after, v, c.lo)
			}
		}
		for v := range seen {
			if cells[v] == nil {
				t.Errorf("read %d returned %q, which was never written", reads, v)
			}
		}

		// Raw: GC removed only expired cells, and by now every cell it
		// was due to remove a GC pass ago.
		before = time.Now()
		stored := map[string]bool{}
		err = raw.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
			for _, items := range r {
				for _, it := range items {
					stored[string(it.Value)] = true
				}
			}
			return true
		})
		after = time.Now()
		if err != nil {
			t.Fatal(err)
		}
		var pending []string
		for v, c := range cells {
			gcAt, collectable := gcDue(c)
			switch {
			case !stored[v] && (c.forever || c.fam == "sn" && newest(c) || c.lo.After(after)):
				t.Errorf("GC removed %s before %v, when it was live", v, after)
			case stored[v] && collectable && gcAt.Add(gcInterval+slack).Before(before):
				t.Errorf("GC has not removed %s, due at %v, by %v", v, gcAt, before)
			case stored[v] && (collectable && gcAt.Before(horizon) || c.fam == "sn" && !newest(c)):
				pending = append(pending, v)
			}
			if collectable && gcAt.Before(horizon) && gcAt.After(due) {
				due = gcAt
			}
		}
		if t.Failed() {
			return
		}
		if secondWave.IsZero() && len(pending) == 0 {
			t.Logf("%d reads; GC removed every expired cell %v after the last was due", reads+1, time.Since(due).Round(time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			sort.Strings(pending)
			t.Fatalf("GC has not removed %q", pending)
		}
		time.Sleep(poll)
	}
}
