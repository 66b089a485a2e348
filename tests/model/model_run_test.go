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
)

// Running a model: each operation applied to a Table on the emulator and
// to the model, the outcomes compared (errors, predicate results, the
// cells and expiries of reads, and now and then every stored cell), what a
// run exercised counted, and a failing run shrunk to a short one.

// flatRow flattens a row read through the table; write times come from
// ttl.WriteTime, and a cell read without them must carry no label.
func flatRow(r bigtable.Row, families []string) []flatCell {
	var out []flatCell
	for _, items := range r {
		for _, it := range items {
			fam, col, _ := strings.Cut(it.Column, ":")
			c := flatCell{fam, col, int64(it.Timestamp), string(it.Value), -1}
			if wt, ok := ttl.WriteTime(it); ok {
				c.WT = wt.UnixMicro()
			} else if len(it.Labels) > 0 {
				c.Value += fmt.Sprintf(" (labels %q)", it.Labels)
			}
			out = append(out, c)
		}
	}
	// Bigtable returns a family's cells in order: check it kept it.
	got := slices.Clone(out)
	sort.SliceStable(got, func(i, j int) bool { return got[i].Fam < got[j].Fam })
	sortFlat(out, families)
	if !slices.Equal(got, out) {
		return append(got, flatCell{Fam: "?", Col: "cells out of order", WT: -1})
	}
	return out
}

// run applies ops to a fresh table on e and to a model, and returns the
// index of the first operation whose outcome differs, with a description,
// or -1. Every rawEvery operations, and at the end, the raw table must
// store exactly the model's cells.
func run(t testing.TB, e *emulator.Emulator, v *variant, name string, ops []op, st *runStats) (int, string) {
	t.Helper()
	const rawEvery = 16
	clock := testkit.NewClock(testkit.Base)
	raw := v.newRaw(t, e, name)
	x := &injector{TableAPI: raw, other: v.open(t, raw, clock.Now)}
	tbl := v.open(t, x, clock.Now)
	m := newModel(v)
	for i, o := range ops {
		var msg string
		if o.slides() {
			msg = stepSliding(tbl, raw, x, m, o, st)
		} else {
			msg = step(tbl, clock, m, o, st)
		}
		if msg != "" {
			return i, msg
		}
		if i%rawEvery == rawEvery-1 || i == len(ops)-1 {
			if msg := checkRaw(raw, m); msg != "" {
				return i, msg
			}
		}
	}
	return -1, ""
}

// runStats counts what a run exercised, so that a generator that stops
// producing some kind of case is noticed.
type runStats struct {
	written, refused   int
	sentinels          map[string]int
	matched, unmatched int // conditional predicates
	reads, hiding      int // reads; reads of rows with stored cells that are not live
	orderDependent     int // reads whose result depends on the family order
	sliding            slideStats
}

func (st *runStats) outcome(err error) {
	if st == nil {
		return
	}
	if err == nil {
		st.written++
		return
	}
	st.refused++
	for _, s := range []error{ttl.ErrExpired, ttl.ErrOutOfRange, ttl.ErrLifetime, ttl.ErrInvalidMutation} {
		if errors.Is(err, s) {
			st.sentinels[strings.TrimPrefix(s.Error(), "ttl: ")]++
		}
	}
}

func (st *runStats) String() string {
	s := fmt.Sprintf("%d writes applied, %d refused %v; conditions %d matched, %d not; %d reads, %d of rows holding hidden cells, %d depending on family order",
		st.written, st.refused, st.sentinels, st.matched, st.unmatched, st.reads, st.hiding, st.orderDependent)
	if st.sliding.touches+st.sliding.keepAlives > 0 {
		s += fmt.Sprintf("; %v", st.sliding)
	}
	return s
}

func step(tbl *ttl.Table, clock *testkit.Clock, m *model, o op, st *runStats) string {
	ctx := context.Background()
	switch o.kind {
	case opClock:
		clock.Set(o.at)
		m.now = o.at
	case opApply:
		var matched bool
		var opts []bigtable.ApplyOption
		if o.mut.cond != nil {
			opts = append(opts, bigtable.GetCondMutationResult(&matched))
		}
		err := tbl.Apply(ctx, o.row, o.mut.mutation(), opts...)
		wantMatched, want := m.apply(o.row, o.mut, m.now)
		if msg := compareErr(err, want); msg != "" {
			return msg
		}
		if err == nil && o.mut.cond != nil && matched != wantMatched {
			return fmt.Sprintf("predicate matched = %v want %v", matched, wantMatched)
		}
		st.outcome(want)
		if st != nil && want == nil && o.mut.cond != nil {
			if matched {
				st.matched++
			} else {
				st.unmatched++
			}
		}
	case opBulk:
		muts := make([]*ttl.Mutation, len(o.muts))
		for i, s := range o.muts {
			muts[i] = s.mutation()
		}
		errs, err := tbl.ApplyBulk(ctx, o.rows, muts)
		if err != nil {
			return fmt.Sprintf("ApplyBulk failed as a whole: %v", err)
		}
		var want []error
		for i, row := range o.rows {
			var werr error
			if o.muts[i] != nil && o.muts[i].cond != nil {
				werr = ttl.ErrInvalidMutation // no conditional mutations in bulk
			} else {
				_, werr = m.apply(row, o.muts[i], m.now)
			}
			want = append(want, werr)
			st.outcome(werr)
		}
		if !slices.ContainsFunc(want, func(e error) bool { return e != nil }) {
			if errs != nil {
				return fmt.Sprintf("errs = %v want nil", errs)
			}
			break
		}
		if len(errs) != len(want) {
			return fmt.Sprintf("errs = %v want %v", errs, want)
		}
		for i := range want {
			if msg := compareErr(errs[i], want[i]); msg != "" {
				return fmt.Sprintf("row %d (%q): %s", i, o.rows[i], msg)
			}
		}
	case opReadRow, opReadRows:
		got, expiries, err := readThrough(tbl, m, o)
		if err != nil {
			return fmt.Sprintf("read failed: %v", err)
		}
		if len(expiries) > 0 {
			return strings.Join(expiries, "\n")
		}
		want := m.read(o.read, o.kind == opReadRow)
		if !want.matches(got) {
			return fmt.Sprintf("read at %v returned\n%s\nwant\n%v", m.now.UTC().Format(time.RFC3339Nano), formatResult(got), want)
		}
		if st != nil {
			st.reads++
			for _, k := range m.rowKeys() {
				if (o.kind == opReadRow && k == o.read.row || o.kind == opReadRows && o.read.rows.contains(k)) &&
					len(m.liveCells(k, m.now.Add(m.v.margin))) < m.stored(k) {
					st.hiding++
					break
				}
			}
			for _, k := range want.keys {
				if len(want.cells[k]) > 1 {
					st.orderDependent++
					break
				}
			}
		}
	}
	return ""
}

func compareErr(got, want error) string {
	switch {
	case want == nil && got != nil:
		return fmt.Sprintf("error %v, want none", got)
	case want != nil && !errors.Is(got, want):
		return fmt.Sprintf("error %v, want %v", got, want)
	}
	return ""
}

// checkRaw compares every cell the table stores with the model's.
func checkRaw(raw *bigtable.Table, m *model) string {
	ctx := context.Background()
	got := readResult{cells: map[string][]flatCell{}}
	err := raw.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		got.keys = append(got.keys, r.Key())
		got.cells[r.Key()] = flatRow(r, m.v.familyNames())
		return true
	})
	if err != nil {
		return fmt.Sprintf("raw read failed: %v", err)
	}
	want := readResult{keys: m.rowKeys(), cells: map[string][]flatCell{}}
	for _, k := range want.keys {
		want.cells[k] = m.rawCells(k)
	}
	if !got.equal(want) {
		return fmt.Sprintf("stored cells\n%s\nwant\n%s", formatResult(got), formatResult(want))
	}
	return ""
}

// formatResult prints what a read returned as expected prints what it may
// return.
func formatResult(r readResult) string {
	w := expected{keys: r.keys, cells: map[string][][]flatCell{}}
	for _, k := range r.keys {
		w.cells[k] = [][]flatCell{r.cells[k]}
	}
	return w.String()
}

// shrink returns a shorter list of operations that still fails, removing
// chunks of operations as delta debugging does and replaying each
// candidate on a fresh table, within a budget of replays.
func shrink[T any](ops []T, fails func([]T) (int, bool)) []T {
	budget := 400
	try := func(cand []T) bool {
		if budget == 0 {
			return false
		}
		budget--
		i, failed := fails(cand)
		if failed {
			ops = cand[:i+1]
		}
		return failed
	}
	for n := 2; len(ops) >= 2 && budget > 0; {
		chunk := (len(ops) + n - 1) / n
		removed := false
		for start := 0; start < len(ops); start += chunk {
			if try(slices.Concat(ops[:start:start], ops[min(start+chunk, len(ops)):])) {
				removed = true
				n = max(n-1, 2)
				break
			}
		}
		if !removed {
			if n >= len(ops) {
				break
			}
			n = min(2*n, len(ops))
		}
	}
	return ops
}

// reportFailure shrinks a run whose operation idx failed with msg,
// replaying each candidate on a fresh table named after the replay, and
// reports the shortest failing run found; where says what the run ran on.
func reportFailure[T fmt.Stringer](t *testing.T, seed uint64, ops []T, idx int, msg, where string, replay func(name string, ops []T) (int, string)) {
	t.Helper()
	tables := 0
	short := shrink(ops[:idx+1], func(cand []T) (int, bool) {
		tables++
		i, _ := replay(fmt.Sprintf("shrink%d", tables), cand)
		return i, i >= 0
	})
	_, shortMsg := replay("minimal", short)
	var b strings.Builder
	for _, o := range short {
		fmt.Fprintf(&b, "\n\t%v", o)
	}
	t.Errorf("CELLTTL_MODEL_SEED=%d: operation %d of %d, %v: %s\n"+
		"shortest failing run found (%d operations, %d replays) %s:%s\nwhere: %s",
		seed, idx, len(ops), ops[idx], msg, len(short), tables, where, b.String(), shortMsg)
}
