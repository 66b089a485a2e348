package testkit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
)

// TestNewTable writes through the Table it makes, at its clock, to a
// managed family, and raw to another family, and reads both back raw.
func TestNewTable(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, raw := testkit.NewTable(t, clock, map[string]ttl.Strategy{"f": ttl.OneSecond()}, []string{"o"})
	if err := tbl.Apply(ctx, "r", testkit.Set("f", "c", "v", ttl.For(time.Hour))); err != nil {
		t.Fatal(err)
	}
	testkit.Put(t, raw, "o", testkit.Stored{Row: "r", Column: "c", TS: 1000})
	got := fmt.Sprint(testkit.Cells(testkit.RawRow(t, raw, "r")))
	want := fmt.Sprint([]testkit.Cell{{Column: "f:c", Value: "v", TS: testkit.MS(testkit.Base.Add(time.Hour))}, {Column: "o:c", Value: "v", TS: 1000}})
	if got != want {
		t.Errorf("cells = %s want %s", got, want)
	}
	if clock.Reads() == 0 {
		t.Error("the table did not read its clock")
	}
}

// TestRecorder sends each call a Recorder passes on and checks that it
// recorded them, in order, and that they reached the table.
func TestRecorder(t *testing.T) {
	ctx := context.Background()
	_, rec, raw := testkit.RecordedTable(t)
	m := bigtable.NewMutation()
	m.Set("f", "c", 1000, []byte("v"))
	if err := rec.Apply(ctx, "a", m); err != nil {
		t.Fatal(err)
	}
	if errs, err := rec.ApplyBulk(ctx, []string{"b", "c"}, []*bigtable.Mutation{m, m}); err != nil || errs != nil {
		t.Fatal(errs, err)
	}
	rmw := bigtable.NewReadModifyWrite()
	rmw.Increment("f", "n", 1)
	if _, err := rec.ApplyReadModifyWrite(ctx, "d", rmw); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.ReadRow(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	var rows []string
	if err := rec.ReadRows(ctx, bigtable.RowRange{}, func(r bigtable.Row) bool { rows = append(rows, r.Key()); return true }); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.SampleRowKeys(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"Apply", "ApplyBulk(2)", "ApplyReadModifyWrite", "ReadRow", "ReadRows", "SampleRowKeys"}
	if got := rec.Calls(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Calls() = %v want %v", got, want)
	}
	if fmt.Sprint(rows) != "[a b c d]" {
		t.Errorf("rows = %v want [a b c d]", rows)
	}
	if len(testkit.RawRow(t, raw, "a")) == 0 {
		t.Error("Apply did not reach the table")
	}
}

// TestHooked checks that Before runs before each Apply reaches the table:
// it sees the row still empty.
func TestHooked(t *testing.T) {
	ctx := context.Background()
	_, _, raw := testkit.RecordedTable(t)
	var seen []int
	h := testkit.Hooked{TableAPI: raw, Before: func() { seen = append(seen, len(testkit.RawRow(t, raw, "r"))) }}
	m := bigtable.NewMutation()
	m.Set("f", "c", 1000, []byte("v"))
	for range 2 {
		if err := h.Apply(ctx, "r", m); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(seen) != "[0 1]" {
		t.Errorf("Before saw rows of %v families want [0 1]", seen)
	}
}

// TestCPUTime checks that the process's CPU time, where it is measured,
// does not run backwards across some work.
func TestCPUTime(t *testing.T) {
	before, ok := testkit.CPUTime(t)
	if !ok {
		t.Skip("CPU time not measured on this system")
	}
	x := 0
	for i := range 10_000_000 {
		x += i % 7
	}
	after, _ := testkit.CPUTime(t)
	if after < before || x == 0 {
		t.Errorf("CPU time went from %v to %v", before, after)
	}
}

// TestWrappersThatSendNothing checks Nop, Captured and FailFirst: Nop
// succeeds and reads an empty row; Captured keeps what it is handed, in
// order; FailFirst fails its first ApplyBulk whole, then succeeds, and
// counts each call's rows.
func TestWrappersThatSendNothing(t *testing.T) {
	ctx := context.Background()
	mut := bigtable.NewMutation()
	mut.DeleteRow()
	raw := bigtable.NewMutation()
	raw.Set("f", "c", 1000, []byte("v"))

	var nop testkit.Nop
	if err := nop.Apply(ctx, "r", raw); err != nil {
		t.Error(err)
	}
	if errs, err := nop.ApplyBulk(ctx, []string{"r"}, []*bigtable.Mutation{raw}); errs != nil || err != nil {
		t.Error(errs, err)
	}
	if row, err := nop.ReadRow(ctx, "r"); row != nil || err != nil {
		t.Error(row, err)
	}

	var c testkit.Captured
	_ = c.Apply(ctx, "a", raw)
	_, _ = c.ApplyBulk(ctx, []string{"b", "c"}, []*bigtable.Mutation{mut, raw})
	if fmt.Sprint(c.Rows) != "[a b c]" || len(c.Muts) != 3 || c.Muts[1] != mut {
		t.Errorf("Captured kept rows %v, %d mutations", c.Rows, len(c.Muts))
	}

	var f testkit.FailFirst
	if _, err := f.ApplyBulk(ctx, []string{"a", "b"}, nil); err == nil {
		t.Error("the first ApplyBulk succeeded")
	}
	if errs, err := f.ApplyBulk(ctx, []string{"c"}, nil); errs != nil || err != nil {
		t.Error("the second ApplyBulk failed:", errs, err)
	}
	if fmt.Sprint(f.Calls) != "[2 1]" {
		t.Errorf("Calls = %v want [2 1]", f.Calls)
	}
}

// TestRecorderReset checks that Reset forgets the calls recorded so far,
// and that later calls are recorded again.
func TestRecorderReset(t *testing.T) {
	_, rec, _ := testkit.RecordedTable(t)
	_, _ = rec.ReadRow(context.Background(), "r")
	rec.Reset()
	if got := rec.Calls(); len(got) != 0 {
		t.Errorf("after Reset, Calls() = %v", got)
	}
	_, _ = rec.ReadRow(context.Background(), "r")
	if got := rec.Calls(); fmt.Sprint(got) != "[ReadRow]" {
		t.Errorf("Calls() = %v want [ReadRow]", got)
	}
}

// TestAdd writes an Add through a Table of a counter family, which
// refuses anything but an Add, to a Captured: one row, one mutation.
func TestAdd(t *testing.T) {
	var c testkit.Captured
	tbl, err := ttl.NewTable(&c, map[string]ttl.Strategy{"h": ttl.Counter(ttl.OneSecond())}, ttl.WithClock(testkit.NewClock(testkit.Base).Now))
	if err != nil {
		t.Fatal(err)
	}
	w := ttl.Window{Size: time.Minute, Keep: time.Hour}
	if err := tbl.Apply(context.Background(), "r", testkit.Add("h", "n", 2, w)); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(c.Rows) != "[r]" || len(c.Muts) != 1 {
		t.Fatalf("handed over rows %v, %d mutations", c.Rows, len(c.Muts))
	}
}
