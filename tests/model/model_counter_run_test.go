package model_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/policy"
)

// Running the counter model (TestModelCounters): each operation applied
// to a Table on the emulator and to the model, the outcomes compared, the
// raw table compared with the model's cells, what a run exercised
// counted, and a failing segment shrunk to a short run.

// ctrRunner runs a segment on a Table and on the model.
type ctrRunner struct {
	tbl, ahead        *ttl.Table // ahead's clock runs ahead of tbl's
	raw               *bigtable.Table
	clock, aheadClock *testkit.Clock
	m                 *ctrModel
	muts              map[*ctrMut]*ttl.Mutation
	gcAges            map[string]time.Duration // the families' MaxAge, as found
	st                *ctrStats                // nil: not counted
}

// ctrRun applies a segment's operations to a fresh table named name on e
// and to a model, and returns the index of the first operation whose
// outcome differs, with a description, or -1. Every 16 operations, and
// at the end, the raw table must store exactly the model's cells.
func ctrRun(t testing.TB, e *emulator.Emulator, v ctrVariant, name string, seg ctrSegment, st *ctrStats) (int, string) {
	t.Helper()
	ctx := context.Background()
	fams := ctrStrategies()
	tool, err := policy.New(e.Admin, e.Client.Open(name), name, fams, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tool.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := e.Admin.DeleteTable(ctx, name); err != nil {
			t.Error(err)
		}
	}()
	r := &ctrRunner{raw: e.Client.Open(name), clock: testkit.NewClock(seg.start), aheadClock: testkit.NewClock(seg.start),
		m: newCtrModel(v, seg.start), muts: map[*ctrMut]*ttl.Mutation{}, st: st}
	if r.tbl, err = ttl.NewTable(r.raw, fams, v.options(r.clock.Now)...); err != nil {
		t.Fatal(err)
	}
	if r.ahead, err = ttl.NewTable(r.raw, fams, v.options(r.aheadClock.Now)...); err != nil {
		t.Fatal(err)
	}
	if msg := r.policies(ctx, e.Admin, name); msg != "" {
		return 0, msg
	}
	for i, o := range seg.ops {
		if msg := r.step(o); msg != "" {
			return i, msg
		}
		if i%16 == 15 || i == len(seg.ops)-1 {
			if msg := r.checkRaw(); msg != "" {
				return i, msg
			}
		}
	}
	return -1, ""
}

// mutation returns the Mutation of spec, the same each time.
func (r *ctrRunner) mutation(spec *ctrMut) *ttl.Mutation {
	if spec == nil {
		return nil
	}
	if m, ok := r.muts[spec]; ok {
		if r.st != nil {
			r.st.reused++
		}
		return m
	}
	m := ttl.NewMutation()
	for _, a := range spec.adds {
		if a.set {
			m.Set(a.fam, a.col, []byte(a.value), ttl.For(a.life))
		} else {
			m.Add(a.fam, a.col, a.delta, a.w)
		}
	}
	r.muts[spec] = m
	return m
}

func (r *ctrRunner) step(o ctrOp) string {
	ctx := context.Background()
	m, now := r.m, r.m.now
	r.st.op(o)
	switch o.kind {
	case ctrClock:
		if r.st != nil && slices.ContainsFunc(m.hides(nil), o.at.Equal) {
			r.st.atHide++
		}
		r.clock.Set(o.at)
		m.now = o.at
	case ctrApply:
		tbl := r.tbl
		if o.ahead > 0 {
			now, tbl = now.Add(o.ahead), r.ahead
			r.aheadClock.Set(now)
		}
		if o.cond {
			var matched bool
			err := tbl.Apply(ctx, o.row, ttl.NewCondMutation(nil, r.mutation(o.mut), r.mutation(o.orElse)), bigtable.GetCondMutationResult(&matched))
			want, errs := m.applyCond(o.row, o.mut, o.orElse, now)
			if msg := ctrCompareErr(err, errs); msg != "" {
				return msg
			}
			if len(errs) == 0 && matched != want {
				return fmt.Sprintf("predicate matched = %v, want %v", matched, want)
			}
			r.st.applied(errs, o.mut.adds)
			if st := r.st; st != nil && len(errs) == 0 && want {
				st.matched++
			} else if st != nil && len(errs) == 0 {
				st.unmatched++
			}
			return ""
		}
		err := tbl.Apply(ctx, o.row, r.mutation(o.mut))
		errs := m.apply(o.row, o.mut, now)
		r.st.applied(errs, o.mut.adds)
		return ctrCompareErr(err, errs)
	case ctrBulk:
		muts := make([]*ttl.Mutation, len(o.muts))
		for i, s := range o.muts {
			muts[i] = r.mutation(s)
		}
		errs, err := r.tbl.ApplyBulk(ctx, o.rows, muts)
		if err != nil {
			return fmt.Sprintf("ApplyBulk failed as a whole: %v", err)
		}
		refused := false
		for i, row := range o.rows {
			want := m.apply(row, o.muts[i], now)
			r.st.applied(want, o.muts[i].adds)
			var got error
			if errs != nil {
				got = errs[i]
			}
			if msg := ctrCompareErr(got, want); msg != "" {
				return fmt.Sprintf("row %d (%q): %s", i, row, msg)
			}
			refused = refused || len(want) > 0
		}
		if !refused && errs != nil {
			return fmt.Sprintf("errs = %v, want nil: every row was written", errs)
		}
	case ctrReadCounter:
		got, err := r.tbl.ReadCounter(ctx, o.row, o.fam, o.col, o.w)
		c := ctrCol{o.row, o.fam, o.col}
		want, errs := m.readCounter(c, o.w, now)
		r.st.read(o, c, m, errs)
		if msg := ctrCompareErr(err, errs); msg != "" {
			return msg
		}
		if len(errs) > 0 {
			return ""
		}
		if !slices.EqualFunc(got, want, ctrSameWindow) {
			return fmt.Sprintf("ReadCounter at %v returned\n\t%s\nwant\n\t%s", now.Format(time.RFC3339Nano), ctrWindowsString(got), ctrWindowsString(want))
		}
		if st := r.st; st != nil {
			st.windows += len(got)
			if len(got) > 0 && got[0].Start.UnixMilli() > ctrStart(o.w, now) {
				st.future++
			}
		}
	case ctrSumCounter:
		got, err := r.tbl.SumCounter(ctx, o.row, o.fam, o.col, o.w, o.n)
		c := ctrCol{o.row, o.fam, o.col}
		want, errs, broken := m.sumCounter(c, o.w, o.n, now)
		r.st.read(o, c, m, errs)
		if broken != "" {
			return "DESIGN.md's promise 3: " + broken
		}
		if msg := ctrCompareErr(err, errs); msg != "" {
			return msg
		}
		if len(errs) == 0 && got != want {
			return fmt.Sprintf("SumCounter at %v = %d, want %d", now.Format(time.RFC3339Nano), got, want)
		}
	case ctrGC:
		if err := r.gc(ctx, now); err != nil {
			return fmt.Sprintf("GC by hand failed: %v", err)
		}
		stored := len(m.rowCells("", now))
		if broken := m.gc(now); broken != "" {
			return fmt.Sprintf("DESIGN.md's promise 2: GC with the family's policy deletes %s, live at %v", broken, now.Format(time.RFC3339Nano))
		}
		if st := r.st; st != nil {
			st.collected += stored - len(m.rowCells("", now))
		}
		return r.checkRaw()
	case ctrReadRow:
		var opts []ttl.ReadOption
		if m.writeTimes {
			opts = append(opts, ttl.WithWriteTimes())
		}
		row, err := r.tbl.ReadRow(ctx, o.row, opts...)
		if err != nil {
			return fmt.Sprintf("ReadRow failed: %v", err)
		}
		var got []string
		for _, items := range row {
			for _, it := range items {
				fam, col, _ := strings.Cut(it.Column, ":")
				c := ctrCol{o.row, fam, col}
				got = append(got, ctrCellString(c, int64(it.Timestamp), it.Value))
				wt, ok := ttl.WriteTime(it)
				if want, wantOK := m.writeTime(c, int64(it.Timestamp)); ok != wantOK || !wt.Equal(want) {
					return fmt.Sprintf("WriteTime(%s@%d) = %v, %v want %v, %v", it.Column, it.Timestamp, wt, ok, want, wantOK)
				}
				at, ok := r.tbl.ExpiresAt(it)
				if want := ctrExpiry(ctrFamilyNamed(fam), int64(it.Timestamp)); !ok || !at.Equal(want) {
					return fmt.Sprintf("ExpiresAt(%s@%d) = %v, %v want %v", it.Column, it.Timestamp, at, ok, want)
				}
			}
		}
		sort.Strings(got)
		if want := m.rowCells(o.row, now); !slices.Equal(got, want) {
			return fmt.Sprintf("ReadRow at %v returned\n\t%s\nwant\n\t%s", now.Format(time.RFC3339Nano), strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
		}
	}
	return ""
}

// policies checks the families policy.Ensure made: aggregate families
// of int64 sums for the counters (policy.Check), and the GC policy each
// strategy needs, which the GC steps apply.
func (r *ctrRunner) policies(ctx context.Context, admin *bigtable.AdminClient, table string) string {
	tool, err := policy.New(admin, nil, table, ctrStrategies(), policy.Options{})
	if err != nil {
		return err.Error()
	}
	statuses, err := tool.Check(ctx)
	if err != nil {
		return fmt.Sprintf("policy.Check after policy.Ensure: %v", err)
	}
	for _, s := range statuses {
		if want := map[bool]string{true: "counter", false: "plain"}[ctrFamilyNamed(s.Family).counter]; policy.DescribeType(s.Type) != want {
			return fmt.Sprintf("family %q is a %s family, want %s", s.Family, policy.DescribeType(s.Type), want)
		}
	}
	found, err := tool.Policies(ctx)
	if err != nil {
		return err.Error()
	}
	r.gcAges = map[string]time.Duration{}
	for _, f := range ctrFamilies {
		age, ok := found[f.name].(bigtable.MaxAgeGCPolicy)
		if !ok || time.Duration(age) != f.gc {
			return fmt.Sprintf("family %q has GC policy %v, want MaxAge(%v)", f.name, found[f.name], f.gc)
		}
		r.gcAges[f.name] = time.Duration(age)
	}
	return ""
}

// gc deletes, raw, the cells the families' GC policies let Bigtable
// delete at the clock's instant: those stamped before now less MaxAge.
func (r *ctrRunner) gc(ctx context.Context, now time.Time) error {
	var rows []string
	var muts []*bigtable.Mutation
	err := r.raw.ReadRows(ctx, bigtable.InfiniteRange(""), func(row bigtable.Row) bool {
		mut := bigtable.NewMutation()
		n := 0
		for fam, items := range row {
			for _, it := range items {
				if int64(it.Timestamp) < now.UnixMicro()-r.gcAges[fam].Microseconds() {
					_, col, _ := strings.Cut(it.Column, ":")
					mut.DeleteTimestampRange(fam, col, it.Timestamp, it.Timestamp+1000)
					n++
				}
			}
		}
		if n > 0 {
			rows, muts = append(rows, row.Key()), append(muts, mut)
		}
		return true
	})
	if err != nil || len(rows) == 0 {
		return err
	}
	errs, err := r.raw.ApplyBulk(ctx, rows, muts)
	if err == nil && errs != nil {
		err = errors.Join(errs...)
	}
	return err
}

// checkRaw compares every cell the table stores, read without a filter,
// with the model's.
func (r *ctrRunner) checkRaw() string {
	var got []string
	err := r.raw.ReadRows(context.Background(), bigtable.InfiniteRange(""), func(row bigtable.Row) bool {
		for _, items := range row {
			for _, it := range items {
				fam, col, _ := strings.Cut(it.Column, ":")
				got = append(got, ctrCellString(ctrCol{row.Key(), fam, col}, int64(it.Timestamp), it.Value))
			}
		}
		return true
	})
	if err != nil {
		return fmt.Sprintf("raw read failed: %v", err)
	}
	sort.Strings(got)
	if want := r.m.rowCells("", r.m.now); !slices.Equal(got, want) {
		return fmt.Sprintf("stored cells\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	return ""
}

// ctrCompareErr compares an error with the ones the model allows: none,
// or any one of want.
func ctrCompareErr(got error, want []error) string {
	if len(want) == 0 {
		if got != nil {
			return fmt.Sprintf("error %v, want none", got)
		}
		return ""
	}
	for _, w := range want {
		if errors.Is(got, w) {
			return ""
		}
	}
	return fmt.Sprintf("error %v, want one of %v", got, want)
}

func ctrSameWindow(a, b ttl.WindowCount) bool {
	return a.Start.Equal(b.Start) && a.End.Equal(b.End) && a.Expires.Equal(b.Expires) && a.Sum == b.Sum
}

func ctrWindowsString(ws []ttl.WindowCount) string {
	var parts []string
	for _, w := range ws {
		parts = append(parts, fmt.Sprintf("[%s, %s) expires %s: %d", w.Start.UTC().Format(time.RFC3339Nano), w.End.UTC().Format(time.RFC3339Nano),
			w.Expires.UTC().Format(time.RFC3339Nano), w.Sum))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "\n\t")
}

// ctrStats counts what a run exercised, so that a generator that stops
// producing some case is noticed.
type ctrStats struct {
	ops                  [len(ctrKindNames)]int
	written, refused     int // mutations (bulk: rows)
	sentinels            map[error]int
	increments, sets     int // Adds and Sets written
	reused               int // applications of a Mutation applied before
	ahead                int // writes by the Table whose clock runs ahead
	matched, unmatched   int // conditional mutations
	atHide               int // clock moves to the very instant a stored window is hidden
	windows              int // windows ReadCounter returned
	hiding               int // counter reads of a column holding hidden windows
	future               int // ReadCounter returning a window after the current one
	otherWindow, onNone  int // counter reads with another Window; refused as its cells fall on none
	sumRefused, sumsRead int
	collected            int // cells GC steps deleted
}

func newCtrStats() *ctrStats { return &ctrStats{sentinels: map[error]int{}} }

func (st *ctrStats) op(o ctrOp) {
	if st == nil {
		return
	}
	st.ops[o.kind]++
	if o.ahead > 0 {
		st.ahead++
	}
}

func (st *ctrStats) applied(errs []error, adds []ctrAdd) {
	switch {
	case st == nil:
	case len(errs) == 0:
		st.written++
		for _, a := range adds {
			if a.set {
				st.sets++
			} else {
				st.increments++
			}
		}
	default:
		st.refused++
		for _, e := range errs {
			st.sentinels[e]++
		}
	}
}

func (st *ctrStats) read(o ctrOp, c ctrCol, m *ctrModel, errs []error) {
	if st == nil {
		return
	}
	if m.hidden(c, m.now) > 0 {
		st.hiding++
	}
	if !o.ownWindow {
		st.otherWindow++
		if slices.Contains(errs, ttl.ErrCounter) && ctrFamilyNamed(c.fam).counter {
			st.onNone++
		}
	}
	if o.kind == ctrSumCounter {
		if slices.Contains(errs, ttl.ErrInvalidOption) {
			st.sumRefused++
		} else if len(errs) == 0 {
			st.sumsRead++
		}
	}
}

func (st *ctrStats) String() string {
	var ops []string
	for k, n := range st.ops {
		ops = append(ops, fmt.Sprintf("%d %s", n, ctrKindNames[k]))
	}
	return fmt.Sprintf("%s; %d mutations written (%d increments, %d sets), %d refused %v, %d applied again, %d by a clock ahead, conditions %d matched, %d not; "+
		"%d clock moves to the instant a window hides; %d windows read, %d reads of columns holding hidden windows, %d returning a future window, "+
		"%d with another Window (%d on no window); %d sums read, %d refused; %d cells collected",
		strings.Join(ops, ", "), st.written, st.increments, st.sets, st.refused, st.sentinels, st.reused, st.ahead, st.matched, st.unmatched,
		st.atHide, st.windows, st.hiding, st.future, st.otherWindow, st.onNone, st.sumsRead, st.sumRefused, st.collected)
}

// tooLittle says what a run of n operations exercised too little, or "".
func (st *ctrStats) tooLittle(n int, v ctrVariant) string {
	var low []string
	expired := 0
	if v.margin > 0 {
		expired = n / 1000
	}
	for _, c := range []struct {
		what     string
		got, min int
	}{
		{"increments", st.increments, n / 4},
		{"sets beside increments", st.sets, n / 50},
		{"refusals", st.refused, n / 200},
		{"Adds refused with ErrCounter", st.sentinels[ttl.ErrCounter], n / 1000},
		{"Adds refused with ErrLifetime", st.sentinels[ttl.ErrLifetime], n / 1000},
		{"Adds refused with ErrExpired", st.sentinels[ttl.ErrExpired], expired},
		{"mutations applied again", st.reused, n / 100},
		{"writes by a clock ahead", st.ahead, n / 100},
		{"matched conditions", st.matched, 1},
		{"unmatched conditions", st.unmatched, 1},
		{"clock moves to a hiding instant", st.atHide, n / 200},
		{"windows read", st.windows, n / 20},
		{"reads of hidden windows", st.hiding, n / 20},
		{"future windows read", st.future, 1},
		{"reads on no window", st.onNone, 1},
		{"sums refused", st.sumRefused, n / 200},
		{"sums read", st.sumsRead, n / 20},
		{"cells collected", st.collected, n / 100},
	} {
		if c.got < c.min {
			low = append(low, fmt.Sprintf("%s: %d < %d", c.what, c.got, c.min))
		}
	}
	return strings.Join(low, ", ")
}

// ctrReport shrinks the failing segment and reports it.
func ctrReport(t *testing.T, e *emulator.Emulator, seed uint64, v ctrVariant, s int, seg ctrSegment, idx int, msg string) {
	t.Helper()
	replays := 0
	replay := func(ops []ctrOp) (int, string) {
		replays++
		name := fmt.Sprintf("seg%d-replay%d", s, replays)
		return ctrRun(t, e, v, name, ctrSegment{start: seg.start, ops: ops}, nil)
	}
	short := shrink(seg.ops[:idx+1], func(cand []ctrOp) (int, bool) {
		i, _ := replay(cand)
		return i, i >= 0
	})
	_, shortMsg := replay(short)
	var b strings.Builder
	for _, o := range short {
		fmt.Fprintf(&b, "\n\t%v", o)
	}
	t.Errorf("CELLTTL_COUNTER_SEED=%d: variant %q, segment %d (operations from %d), operation %d of %d (%d of the variant's run): %v:\n%s\n"+
		"shortest failing run found (%d operations, %d replays), from clock %v:%s\n%s\n"+
		"reproduce, up to this operation: CELLTTL_COUNTER_SEED=%[1]d CELLTTL_COUNTER_OPS=%[15]d go test -run '^%[16]s$' .",
		seed, v.name, s, s*ctrSegmentLen, idx, len(seg.ops), s*ctrSegmentLen+idx, seg.ops[idx], msg,
		len(short), replays, seg.start.Format(time.RFC3339Nano), b.String(), shortMsg,
		len(ctrVariants)*(s*ctrSegmentLen+idx+1), t.Name())
}
