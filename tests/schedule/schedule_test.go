package schedule_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/schedule"
)

// WithSchedule: the entries every write path writes, before its data, and
// the options NewTable refuses.

// scheduled is the managed families of the schedule tests: all that can
// be scheduled (a time rule, its Grace and Counter forms, a move to one)
// and one that cannot.
var scheduled = map[string]ttl.Strategy{
	"sess":  ttl.OneSecond(),
	"dflt":  ttl.DefaultExpiration(time.Hour),
	"grace": ttl.Grace(ttl.OneSecond(), time.Hour),
	"cnt":   ttl.Counter(ttl.OneSecond()),
	"mv":    ttl.Move{To: ttl.OneSecond(), Start: testkit.Base.Add(-time.Hour)},
	"seq":   ttl.SequenceNumbers(2),
}

// callLog records, in order, the calls the data table and the schedule
// receive, as "data:Apply" or "sched:ApplyBulk(3)".
type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) add(call string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, call)
}

// take returns the calls recorded since the last take.
func (l *callLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.calls
	l.calls = nil
	return c
}

// logged is a bigtable.TableAPI that records its calls in a log, and
// refuses every write with fail when fail is set.
type logged struct {
	bigtable.TableAPI
	name string
	log  *callLog
	fail error
}

func (l *logged) ReadRow(ctx context.Context, row string, opts ...bigtable.ReadOption) (bigtable.Row, error) {
	l.log.add(l.name + ":ReadRow")
	return l.TableAPI.ReadRow(ctx, row, opts...)
}

func (l *logged) Apply(ctx context.Context, row string, m *bigtable.Mutation, opts ...bigtable.ApplyOption) error {
	l.log.add(l.name + ":Apply")
	if l.fail != nil {
		return l.fail
	}
	return l.TableAPI.Apply(ctx, row, m, opts...)
}

func (l *logged) ApplyBulk(ctx context.Context, rows []string, muts []*bigtable.Mutation, opts ...bigtable.ApplyOption) ([]error, error) {
	l.log.add(fmt.Sprintf("%s:ApplyBulk(%d)", l.name, len(rows)))
	if l.fail != nil {
		return nil, l.fail
	}
	return l.TableAPI.ApplyBulk(ctx, rows, muts, opts...)
}

// schedFixture is a Table of the scheduled families (and an unmanaged
// "raw") with a schedule, both tables logged in one log.
type schedFixture struct {
	tbl         *ttl.Table
	clock       *testkit.Clock
	data, sched *logged
	log         *callLog
}

func newSchedFixture(t *testing.T, families ...string) *schedFixture {
	t.Helper()
	return newSchedFixtureWith(t, nil, families...)
}

// newSchedFixtureWith is newSchedFixture with more options for NewTable.
func newSchedFixtureWith(t *testing.T, opts []ttl.Option, families ...string) *schedFixture {
	t.Helper()
	e := emulator.StartForTest(t)
	sum := bigtable.AggregateType{Input: bigtable.Int64Type{}, Aggregator: bigtable.SumAggregator{}}
	fams := map[string]bigtable.Family{"raw": {}, "cnt": {ValueType: sum}}
	for f := range scheduled {
		if f != "cnt" {
			fams[f] = bigtable.Family{}
		}
	}
	if err := e.Admin.CreateTableFromConf(ctx, &bigtable.TableConf{TableID: "t", ColumnFamilies: fams}); err != nil {
		t.Fatal(err)
	}
	log := &callLog{}
	x := &schedFixture{
		clock: testkit.NewClock(testkit.Base),
		data:  &logged{TableAPI: e.Client.Open("t"), name: "data", log: log},
		sched: &logged{TableAPI: e.TableForTest(t, "s", map[string]bigtable.GCPolicy{schedule.Family: schedule.Policy(0)}), name: "sched", log: log},
		log:   log,
	}
	var err error
	opts = append(opts, ttl.WithClock(x.clock.Now), ttl.OtherFamilies("raw"), ttl.WithSchedule(x.sched, families...))
	x.tbl, err = ttl.NewTable(x.data, scheduled, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// entries returns the schedule's entries, as "row@expiry second", sorted,
// checking that each is a valid key stamped at the end of its slot.
func (x *schedFixture) entries(t *testing.T) []string {
	t.Helper()
	var out []string
	err := x.sched.TableAPI.ReadRows(context.Background(), bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		e, err := schedule.Parse(r.Key())
		if err != nil {
			t.Error(err)
			return true
		}
		if cells := r[schedule.Family]; len(cells) != 1 || cells[0].Timestamp != schedule.Timestamp(e.Slot) {
			t.Errorf("entry %q: cells %v, want one stamped %v", r.Key(), cells, schedule.Timestamp(e.Slot))
		}
		out = append(out, entryOf(e.Row, e.Slot))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// entryOf spells the entry of row's cells expiring at exp as entries does.
func entryOf(row string, exp time.Time) string {
	return fmt.Sprintf("%s@%d", row, schedule.SlotOf(exp))
}

// wantEntries compares the schedule's entries with want, in any order.
func (x *schedFixture) wantEntries(t *testing.T, want ...string) {
	t.Helper()
	sort.Strings(want)
	if got := x.entries(t); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("entries:\n got %q\nwant %q", got, want)
	}
}

// wantCalls compares the calls made since the last check with want.
func (x *schedFixture) wantCalls(t *testing.T, want ...string) {
	t.Helper()
	if got := x.log.take(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("calls = %q, want %q", got, want)
	}
}

func TestScheduleApply(t *testing.T) {
	x := newSchedFixture(t)
	m := ttl.NewMutation()
	m.Set("sess", "a", []byte("1"), ttl.For(time.Hour))
	m.Set("sess", "b", []byte("1"), ttl.For(time.Hour+300*time.Millisecond)) // the same second
	m.Set("dflt", "a", []byte("1"), ttl.Default)                             // an hour: the same second
	m.Set("grace", "a", []byte("1"), ttl.For(2*time.Hour))
	m.Replace("mv", "a", []byte("1"), ttl.For(3*time.Hour))
	m.Set("sess", "c", []byte("1"), ttl.Forever)
	m.Set("seq", "a", []byte("1"), ttl.Version(7))
	m.Set("raw", "a", []byte("1"), ttl.Default)
	m.DeleteCellsInColumn("sess", "old")
	if err := x.tbl.Apply(ctx, "r1", m); err != nil {
		t.Fatal(err)
	}
	x.wantCalls(t, "sched:ApplyBulk(3)", "data:Apply")
	x.wantEntries(t, entryOf("r1", testkit.Base.Add(time.Hour)), entryOf("r1", testkit.Base.Add(2*time.Hour)), entryOf("r1", testkit.Base.Add(3*time.Hour)))

	// Cells that do not expire, or deletes, need no entry and no request.
	m = ttl.NewMutation()
	m.Set("sess", "c", []byte("2"), ttl.Forever)
	m.Set("seq", "a", []byte("2"), ttl.Version(8))
	m.DeleteRow()
	if err := x.tbl.Apply(ctx, "r2", m); err != nil {
		t.Fatal(err)
	}
	x.wantCalls(t, "data:Apply")

	// One entry: one Apply to the schedule.
	if err := x.tbl.Apply(ctx, "r3", testkit.Set("sess", "a", "1", ttl.For(time.Minute))); err != nil {
		t.Fatal(err)
	}
	x.wantCalls(t, "sched:Apply", "data:Apply")

	// An invalid mutation writes nothing at all.
	bad := ttl.NewMutation()
	bad.Set("sess", "a", []byte("1"), ttl.For(time.Minute))
	bad.Set("sess", "b", []byte("1"), ttl.Default)
	if err := x.tbl.Apply(ctx, "r4", bad); !errors.Is(err, ttl.ErrLifetime) {
		t.Fatalf("Apply of an invalid mutation = %v, want ErrLifetime", err)
	}
	x.wantCalls(t)
	x.wantEntries(t, entryOf("r1", testkit.Base.Add(time.Hour)), entryOf("r1", testkit.Base.Add(2*time.Hour)), entryOf("r1", testkit.Base.Add(3*time.Hour)),
		entryOf("r3", testkit.Base.Add(time.Minute)))
}

// With write-time companions and a read margin, the writers take their
// other ways (a change at a time, the strategy's own stamp): the same
// entries.
func TestScheduleOtherWays(t *testing.T) {
	x := newSchedFixtureWith(t, []ttl.Option{ttl.RecordWriteTime(), ttl.WithReadMargin(time.Second)})
	m := ttl.NewMutation()
	m.Set("sess", "a", []byte("1"), ttl.For(time.Hour))
	m.Replace("dflt", "a", []byte("1"), ttl.Until(testkit.Base.Add(2*time.Hour)))
	if err := x.tbl.Apply(ctx, "r", m); err != nil {
		t.Fatal(err)
	}
	err := x.tbl.ApplyRow(ctx, "s", func(w ttl.RowWriter) {
		w.Set("sess", "a", nil, ttl.For(3*time.Hour))
		w.Set("seq", "a", nil, ttl.Version(1))
	})
	if err != nil {
		t.Fatal(err)
	}
	x.wantCalls(t, "sched:ApplyBulk(2)", "data:Apply", "sched:Apply", "data:Apply")
	x.wantEntries(t, entryOf("r", testkit.Base.Add(time.Hour)), entryOf("r", testkit.Base.Add(2*time.Hour)), entryOf("s", testkit.Base.Add(3*time.Hour)))
}

// A conditional mutation writes the entries of both branches: which one
// applies is known only on the server.
func TestScheduleConditional(t *testing.T) {
	x := newSchedFixture(t)
	yes := testkit.Set("sess", "a", "yes", ttl.For(time.Hour))
	no := testkit.Set("dflt", "a", "no", ttl.For(5*time.Hour))
	var matched bool
	if err := x.tbl.Apply(ctx, "r", ttl.NewCondMutation(bigtable.PassAllFilter(), yes, no), bigtable.GetCondMutationResult(&matched)); err != nil {
		t.Fatal(err)
	}
	x.wantCalls(t, "sched:ApplyBulk(2)", "data:Apply")
	x.wantEntries(t, entryOf("r", testkit.Base.Add(time.Hour)), entryOf("r", testkit.Base.Add(5*time.Hour)))

	// One branch only.
	if err := x.tbl.Apply(ctx, "s", ttl.NewCondMutation(nil, nil, testkit.Set("sess", "a", "no", ttl.For(2*time.Hour)))); err != nil {
		t.Fatal(err)
	}
	x.wantCalls(t, "sched:Apply", "data:Apply")
}

// ApplyBulk writes every row's entries in one request, before any row;
// a row refused has none.
func TestScheduleApplyBulk(t *testing.T) {
	x := newSchedFixture(t)
	const n = 500
	rows := make([]string, n)
	muts := make([]*ttl.Mutation, n)
	var want []string
	for i := range rows {
		rows[i] = fmt.Sprintf("row%03d", i)
		life := time.Duration(1+i%3) * time.Hour
		muts[i] = ttl.NewMutation()
		muts[i].Set("sess", "a", []byte("1"), ttl.For(life))
		muts[i].Set("grace", "a", []byte("1"), ttl.For(life))
		switch i {
		case 7:
			muts[i].Set("sess", "b", []byte("1"), ttl.Default) // refused
			continue
		case 8:
			muts[i] = ttl.NewCondMutation(nil, muts[i], nil) // refused in bulk
			continue
		}
		want = append(want, entryOf(rows[i], testkit.Base.Add(life)))
	}
	errs, err := x.tbl.ApplyBulk(ctx, rows, muts)
	if err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		if (err != nil) != (i == 7 || i == 8) {
			t.Errorf("row %d: %v", i, err)
		}
	}
	x.wantCalls(t, fmt.Sprintf("sched:ApplyBulk(%d)", n-2), fmt.Sprintf("data:ApplyBulk(%d)", n-2))
	x.wantEntries(t, want...)
}

func TestScheduleApplyRowAndBatch(t *testing.T) {
	x := newSchedFixture(t)
	err := x.tbl.ApplyRow(ctx, "r", func(w ttl.RowWriter) {
		w.Set("sess", "a", []byte("1"), ttl.For(time.Hour))
		w.Set("sess", "b", []byte("1"), ttl.For(time.Hour))
		w.Replace("dflt", "a", []byte("1"), ttl.For(2*time.Hour))
		w.Set("raw", "a", []byte("1"), ttl.Default)
	})
	if err != nil {
		t.Fatal(err)
	}
	x.wantCalls(t, "sched:ApplyBulk(2)", "data:Apply")
	x.wantEntries(t, entryOf("r", testkit.Base.Add(time.Hour)), entryOf("r", testkit.Base.Add(2*time.Hour)))

	// An invalid row writes nothing.
	err = x.tbl.ApplyRow(ctx, "bad", func(w ttl.RowWriter) {
		w.Set("sess", "a", []byte("1"), ttl.For(time.Hour))
		w.Set("sess", "b", []byte("1"), ttl.Default)
	})
	if !errors.Is(err, ttl.ErrLifetime) {
		t.Fatalf("ApplyRow of an invalid row = %v, want ErrLifetime", err)
	}
	x.wantCalls(t)

	rows := []string{"b0", "b1", "b2", "b3"}
	errs, err := x.tbl.ApplyBatch(ctx, rows, func(i int, w ttl.RowWriter) {
		w.Set("sess", "a", []byte("1"), ttl.For(time.Duration(i+1)*time.Minute))
		switch i {
		case 1:
			w.Set("sess", "b", []byte("1"), ttl.Default) // refused: no entry
		case 2:
			w.Set("sess", "b", []byte("1"), ttl.For(time.Duration(i+1)*time.Minute+time.Second))
		}
	})
	if err != nil || len(errs) != 4 || errs[1] == nil || errs[0] != nil || errs[2] != nil || errs[3] != nil {
		t.Fatalf("ApplyBatch = %v, %v; want row 1 refused", errs, err)
	}
	x.wantCalls(t, "sched:ApplyBulk(4)", "data:ApplyBulk(3)")
	x.wantEntries(t, entryOf("r", testkit.Base.Add(time.Hour)), entryOf("r", testkit.Base.Add(2*time.Hour)),
		entryOf("b0", testkit.Base.Add(time.Minute)), entryOf("b2", testkit.Base.Add(3*time.Minute)), entryOf("b2", testkit.Base.Add(3*time.Minute+time.Second)),
		entryOf("b3", testkit.Base.Add(4*time.Minute)))
}

// A counter's Add is scheduled at its window's expiry: its end plus Keep.
func TestScheduleCounters(t *testing.T) {
	x := newSchedFixture(t)
	x.clock.Set(testkit.Base.Add(25 * time.Second))
	w := ttl.Window{Size: time.Minute, Keep: 10 * time.Minute}
	m := ttl.NewMutation()
	m.Add("cnt", "hits", 1, w)
	m.Add("cnt", "misses", 2, w)
	if err := x.tbl.Apply(ctx, "c1", m); err != nil {
		t.Fatal(err)
	}
	if err := x.tbl.ApplyRow(ctx, "c2", func(r ttl.RowWriter) { r.Add("cnt", "hits", 3, w) }); err != nil {
		t.Fatal(err)
	}
	end := testkit.Base.Truncate(time.Minute).Add(time.Minute + 10*time.Minute)
	x.wantEntries(t, entryOf("c1", end), entryOf("c2", end))
	counts, err := x.tbl.ReadCounter(ctx, "c1", "cnt", "hits", w)
	if err != nil || len(counts) != 1 || !counts[0].Expires.Equal(end) {
		t.Errorf("ReadCounter = %v, %v; want one window expiring at %v", counts, err, end)
	}
}

// Touch and KeepAlive's renewals write the entry of the new expiry,
// before the rewrite.
func TestScheduleTouchAndKeepAlive(t *testing.T) {
	x := newSchedFixture(t)
	if err := x.tbl.Apply(ctx, "r", testkit.Set("sess", "a", "1", ttl.For(time.Hour))); err != nil {
		t.Fatal(err)
	}
	x.log.take()
	touched, err := x.tbl.Touch(ctx, "r", "sess", "a", ttl.For(5*time.Hour))
	if err != nil || !touched {
		t.Fatalf("Touch = %v, %v", touched, err)
	}
	x.wantCalls(t, "data:ReadRow", "sched:Apply", "data:Apply")
	x.wantEntries(t, entryOf("r", testkit.Base.Add(time.Hour)), entryOf("r", testkit.Base.Add(5*time.Hour)))

	// A Touch that finds nothing writes nothing.
	if touched, err := x.tbl.Touch(ctx, "none", "sess", "a", ttl.For(5*time.Hour)); err != nil || touched {
		t.Fatalf("Touch of nothing = %v, %v", touched, err)
	}
	x.wantCalls(t, "data:ReadRow")

	// A Touch to Forever needs no entry.
	if err := x.tbl.Apply(ctx, "f", testkit.Set("sess", "a", "1", ttl.For(time.Hour))); err != nil {
		t.Fatal(err)
	}
	x.log.take()
	if touched, err := x.tbl.Touch(ctx, "f", "sess", "a", ttl.Forever); err != nil || !touched {
		t.Fatalf("Touch to Forever = %v, %v", touched, err)
	}
	x.wantCalls(t, "data:ReadRow", "data:Apply")

	// KeepAlive renews both due cells of "k" in a request of entries.
	m := ttl.NewMutation()
	m.Set("sess", "a", []byte("1"), ttl.For(time.Minute))
	m.Set("sess", "b", []byte("1"), ttl.For(2*time.Minute))
	if err := x.tbl.Apply(ctx, "k", m); err != nil {
		t.Fatal(err)
	}
	x.log.take()
	row, err := x.tbl.ReadRow(ctx, "k", ttl.KeepAlive(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	x.wantCalls(t, "data:ReadRow", "sched:Apply", "data:Apply", "data:Apply")
	var want []string
	for i, it := range row["sess"] {
		exp, ok := x.tbl.ExpiresAt(it)
		if !ok || !exp.After(testkit.Base.Add(time.Hour)) {
			t.Fatalf("%s was not renewed: expires %v", it.Column, exp)
		}
		if i == 0 { // both renewed to the same expiry: one entry
			want = append(want, entryOf("k", exp))
		} else if e := entryOf("k", exp); e != want[0] {
			t.Errorf("renewed to %s and %s, want one expiry", want[0], e)
		}
	}
	x.wantEntries(t, append(want, entryOf("r", testkit.Base.Add(time.Hour)), entryOf("r", testkit.Base.Add(5*time.Hour)),
		entryOf("f", testkit.Base.Add(time.Hour)), entryOf("k", testkit.Base.Add(time.Minute)), entryOf("k", testkit.Base.Add(2*time.Minute)))...)
}

// Only the families named are scheduled.
func TestScheduleFamiliesNamed(t *testing.T) {
	x := newSchedFixture(t, "dflt", "cnt")
	m := ttl.NewMutation()
	m.Set("sess", "a", []byte("1"), ttl.For(time.Hour))
	m.Set("dflt", "a", []byte("1"), ttl.For(2*time.Hour))
	if err := x.tbl.Apply(ctx, "r", m); err != nil {
		t.Fatal(err)
	}
	if err := x.tbl.Apply(ctx, "s", testkit.Set("sess", "a", "1", ttl.For(time.Hour))); err != nil {
		t.Fatal(err)
	}
	x.wantCalls(t, "sched:Apply", "data:Apply", "data:Apply")
	x.wantEntries(t, entryOf("r", testkit.Base.Add(2*time.Hour)))

	// A Touch in a family not scheduled writes no entry.
	if touched, err := x.tbl.Touch(ctx, "s", "sess", "a", ttl.For(3*time.Hour)); err != nil || !touched {
		t.Fatalf("Touch = %v, %v", touched, err)
	}
	x.wantCalls(t, "data:ReadRow", "data:Apply")

	// A bulk call with no valid row writes nothing.
	errs, err := x.tbl.ApplyBulk(ctx, []string{"a", "b"}, []*ttl.Mutation{nil, testkit.Set("dflt", "a", "1", ttl.For(-time.Hour))})
	if err != nil || len(errs) != 2 || errs[0] == nil || errs[1] == nil {
		t.Fatalf("ApplyBulk of invalid rows = %v, %v", errs, err)
	}
	x.wantCalls(t)
	x.wantEntries(t, entryOf("r", testkit.Base.Add(2*time.Hour)))
}

// A call of more entries than a pooled batch keeps writes them all, in
// one request.
func TestScheduleLargeBatch(t *testing.T) {
	x := newSchedFixture(t, "sess")
	rows := make([]string, 5000)
	want := make([]string, len(rows))
	for i := range rows {
		rows[i] = fmt.Sprintf("row%04d", i)
		want[i] = entryOf(rows[i], testkit.Base.Add(time.Hour))
	}
	errs, err := x.tbl.ApplyBatch(ctx, rows, func(i int, w ttl.RowWriter) { w.Set("sess", "a", nil, ttl.For(time.Hour)) })
	if errs != nil || err != nil {
		t.Fatalf("ApplyBatch = %v, %v", errs, err)
	}
	x.wantCalls(t, "sched:ApplyBulk(5000)", "data:ApplyBulk(5000)")
	x.wantEntries(t, want...)
}

// A schedule that fails makes every write path send no data and return
// an error wrapping ErrSchedule and the schedule's error.
func TestScheduleFailureWritesNoData(t *testing.T) {
	x := newSchedFixture(t)
	if err := x.tbl.Apply(ctx, "old", testkit.Set("sess", "a", "1", ttl.For(time.Minute))); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("schedule unavailable")
	x.sched.fail = boom
	x.log.take()
	check := func(what string, err error, want ...string) {
		t.Helper()
		if !errors.Is(err, ttl.ErrSchedule) || !errors.Is(err, boom) || !strings.Contains(err.Error(), "not written") {
			t.Errorf("%s: %v, want an error wrapping ErrSchedule and the schedule's, saying the data was not written", what, err)
		}
		x.wantCalls(t, want...)
	}
	m := ttl.NewMutation()
	m.Set("sess", "a", []byte("1"), ttl.For(time.Hour))
	m.Set("sess", "b", []byte("1"), ttl.For(2*time.Hour))
	check("Apply", x.tbl.Apply(ctx, "r", m), "sched:ApplyBulk(2)")
	check("ApplyRow", x.tbl.ApplyRow(ctx, "r", func(w ttl.RowWriter) { w.Set("sess", "a", nil, ttl.For(time.Hour)) }), "sched:Apply")

	rows := make([]string, 500)
	muts := make([]*ttl.Mutation, len(rows))
	for i := range rows {
		rows[i], muts[i] = fmt.Sprint("b", i), testkit.Set("sess", "a", "1", ttl.For(time.Hour))
	}
	errs, err := x.tbl.ApplyBulk(ctx, rows, muts)
	check("ApplyBulk", err, "sched:ApplyBulk(500)")
	for i, err := range errs {
		if !errors.Is(err, boom) {
			t.Fatalf("ApplyBulk: row %d: %v, want the schedule's error", i, err)
		}
	}
	_, err = x.tbl.ApplyBatch(ctx, rows[:3], func(i int, w ttl.RowWriter) { w.Set("sess", "a", nil, ttl.For(time.Hour)) })
	check("ApplyBatch", err, "sched:ApplyBulk(3)")

	_, err = x.tbl.Touch(ctx, "old", "sess", "a", ttl.For(time.Hour))
	check("Touch", err, "data:ReadRow", "sched:Apply")
	row, err := x.tbl.ReadRow(ctx, "old", ttl.KeepAlive(time.Hour))
	if !errors.Is(err, ttl.ErrRenewal) || len(row["sess"]) != 1 {
		t.Errorf("KeepAlive: %v, %v; want the row and ErrRenewal", row, err)
	}
	check("KeepAlive", err, "data:ReadRow", "sched:Apply")

	// Nothing was written: "old" keeps its cell, stamped as before.
	if got := testkit.RawRow(t, x.data.TableAPI.(*bigtable.Table), "old")["sess"]; len(got) != 1 || got[0].Timestamp != testkit.MS(testkit.Base.Add(time.Minute)) {
		t.Errorf("old: %v, want its one cell unchanged", got)
	}
	var n int
	err = x.data.TableAPI.ReadRows(ctx, bigtable.InfiniteRange(""), func(bigtable.Row) bool { n++; return true })
	if err != nil || n != 1 {
		t.Errorf("the data table holds %d rows (%v), want only \"old\"", n, err)
	}
}

func TestScheduleConcurrent(t *testing.T) {
	x := newSchedFixture(t)
	const goroutines, each = 8, 25
	var wg sync.WaitGroup
	var want []string
	for g := range goroutines {
		for i := range each {
			want = append(want, entryOf(fmt.Sprintf("g%d-%d", g, i), testkit.Base.Add(time.Duration(1+i%4)*time.Hour)))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				row, life := fmt.Sprintf("g%d-%d", g, i), time.Duration(1+i%4)*time.Hour
				var err error
				switch i % 3 {
				case 0:
					err = x.tbl.Apply(ctx, row, testkit.Set("sess", "a", "1", ttl.For(life)))
				case 1:
					err = x.tbl.ApplyRow(ctx, row, func(w ttl.RowWriter) { w.Set("sess", "a", nil, ttl.For(life)) })
				default:
					_, err = x.tbl.ApplyBulk(ctx, []string{row}, []*ttl.Mutation{testkit.Set("grace", "a", "1", ttl.For(life))})
				}
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	x.wantEntries(t, want...)
}

// unhashable is a TableAPI whose values cannot be compared with ==.
type unhashable struct {
	bigtable.TableAPI
	_ []string
}

func TestWithScheduleRefusals(t *testing.T) {
	e := emulator.StartForTest(t)
	data := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"sess": nil, "seq": nil, "raw": nil, "mv": nil})
	sched := e.TableForTest(t, "s", map[string]bigtable.GCPolicy{schedule.Family: nil})
	fams := map[string]ttl.Strategy{
		"sess": ttl.OneSecond(),
		"seq":  ttl.SequenceNumbers(2),
		"mv":   ttl.Move{To: ttl.SequenceNumbers(2), Start: testkit.Base}, // never expires by time
	}
	for _, c := range []struct {
		name  string
		fams  map[string]ttl.Strategy
		opts  []ttl.Option
		want  []error
		words string
	}{
		{"nil table", fams, []ttl.Option{ttl.WithSchedule(nil)}, []error{ttl.ErrNilArgument}, "nil bigtable.TableAPI"},
		{"nil *bigtable.Table", fams, []ttl.Option{ttl.WithSchedule((*bigtable.Table)(nil))}, []error{ttl.ErrNilArgument}, "nil"},
		{"unknown family", fams, []ttl.Option{ttl.WithSchedule(sched, "sess", "nope")}, []error{ttl.ErrInvalidOption, ttl.ErrUnknownFamily}, `"nope"`},
		{"unmanaged family", fams, []ttl.Option{ttl.OtherFamilies("raw"), ttl.WithSchedule(sched, "raw")}, []error{ttl.ErrInvalidOption, ttl.ErrUnknownFamily}, `"raw"`},
		{"sequence numbers", fams, []ttl.Option{ttl.WithSchedule(sched, "seq")}, []error{ttl.ErrInvalidOption}, `"seq" (SequenceNumbers(2))`},
		{"a move that never expires", fams, []ttl.Option{ttl.WithSchedule(sched, "mv")}, []error{ttl.ErrInvalidOption}, `"mv"`},
		{"named twice", fams, []ttl.Option{ttl.WithSchedule(sched, "sess", "sess")}, []error{ttl.ErrInvalidOption}, `"sess" is named twice`},
		{"the data table", fams, []ttl.Option{ttl.WithSchedule(data)}, []error{ttl.ErrInvalidOption}, "the table given to NewTable"},
		{"given twice", fams, []ttl.Option{ttl.WithSchedule(sched), ttl.WithSchedule(sched)}, []error{ttl.ErrInvalidOption}, "twice"},
		{"nothing expires", map[string]ttl.Strategy{"seq": ttl.SequenceNumbers(2), "mv": fams["mv"]}, []ttl.Option{ttl.WithSchedule(sched)},
			[]error{ttl.ErrInvalidOption}, `no managed family expires cells by time (families ["mv" "seq"])`},
	} {
		tbl, err := ttl.NewTable(data, c.fams, c.opts...)
		if tbl != nil || err == nil || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%s: NewTable = %v, %v; want an error saying %s", c.name, tbl, err, c.words)
		}
		for _, want := range c.want {
			if !errors.Is(err, want) {
				t.Errorf("%s: %v, want it to wrap %v", c.name, err, want)
			}
		}
	}
	// Values of a type == cannot compare are not compared (== would
	// panic): they are taken as different tables.
	u := unhashable{TableAPI: data}
	if _, err := ttl.NewTable(u, fams, ttl.WithSchedule(unhashable{TableAPI: data})); err != nil {
		t.Errorf("an incomparable TableAPI: %v", err)
	}
	if _, err := ttl.NewTable(data, fams, ttl.WithSchedule(sched)); err != nil {
		t.Errorf("a schedule of the time families: %v", err)
	}
}

// ApplyBulk with a schedule holds its rows until the entries are written,
// then sends them in the client's groups as it would without one.
func TestScheduleApplyBulkGroups(t *testing.T) {
	data := &testkit.FailFirst{}
	sched := &logged{TableAPI: testkit.Nop{}, name: "sched", log: &callLog{}}
	tbl, err := ttl.NewTable(data, map[string]ttl.Strategy{"f": ttl.OneSecond()}, ttl.WithClock(testkit.NewClock(testkit.Base).Now), ttl.WithSchedule(sched))
	if err != nil {
		t.Fatal(err)
	}
	m := testkit.Set("f", "c", "v", ttl.For(time.Hour))
	rows, muts := make([]string, 100_002), make([]*ttl.Mutation, 100_002)
	for i := range rows {
		rows[i], muts[i] = fmt.Sprint("r", i%3), m
	}
	muts[7] = ttl.NewMutation() // invalid: not sent, its own error
	errs, err := tbl.ApplyBulk(ctx, rows, muts)
	if err != nil {
		t.Fatalf("one group of two succeeded, yet %v", err)
	}
	if got := sched.log.take(); strings.Join(got, " ") != "sched:ApplyBulk(3)" {
		t.Errorf("schedule calls = %q, want one of the 3 rows' entries", got)
	}
	if fmt.Sprint(data.Calls) != "[100000 1]" {
		t.Errorf("groups = %v, want [100000 1]", data.Calls)
	}
	if len(errs) != len(rows) || !errors.Is(errs[7], ttl.ErrInvalidMutation) || errs[0] == nil || errs[100_000] == nil || errs[len(rows)-1] != nil {
		t.Errorf("errs: %d, [7] %v, [0] %v, [100000] %v, [last] %v", len(errs), errs[7], errs[0], errs[100_000], errs[len(rows)-1])
	}
}
