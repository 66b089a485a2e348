package testkit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
)

// TestBase: the fake clocks start in the future, where the emulator's GC
// (on the real clock) cannot reach a cell written in a test. When this
// fails, move Base on.
func TestBase(t *testing.T) {
	if !testkit.Base.After(time.Now().AddDate(0, 0, 1)) {
		t.Errorf("Base %v is not in the future", testkit.Base)
	}
	if !testkit.Base.Equal(testkit.Base.Truncate(time.Millisecond)) {
		t.Errorf("Base %v is not on a whole millisecond", testkit.Base)
	}
}

// TestClock checks that a Clock moves only when told to, and counts its
// readings.
func TestClock(t *testing.T) {
	c := testkit.NewClock(testkit.Base)
	if got := c.Reads(); got != 0 {
		t.Errorf("Reads of a new clock = %d", got)
	}
	if got := c.Now(); !got.Equal(testkit.Base) {
		t.Errorf("Now = %v, want %v", got, testkit.Base)
	}
	if got := c.Now(); !got.Equal(testkit.Base) {
		t.Errorf("Now, read again = %v, want it unchanged", got)
	}
	later := testkit.Base.Add(time.Hour)
	c.Set(later)
	if got := c.Now(); !got.Equal(later) {
		t.Errorf("Now after Set = %v, want %v", got, later)
	}
	c.Advance(90 * time.Second) // reads the clock once
	if got := c.Now(); !got.Equal(later.Add(90 * time.Second)) {
		t.Errorf("Now after Advance = %v, want %v", got, later.Add(90*time.Second))
	}
	if got := c.Reads(); got != 5 {
		t.Errorf("Reads = %d, want 5 (four Now, one Advance)", got)
	}
}

// TestClockConcurrent: simultaneous use counts every reading, and the race
// detector sees no race.
func TestClockConcurrent(t *testing.T) {
	c := testkit.NewClock(testkit.Base)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				c.Set(c.Now().Add(time.Millisecond))
				c.Reads()
			}
		}()
	}
	wg.Wait()
	if got := c.Reads(); got != 800 {
		t.Errorf("Reads = %d, want 800", got)
	}
	if got := c.Now(); got.Before(testkit.Base.Add(100*time.Millisecond)) || got.After(testkit.Base.Add(800*time.Millisecond)) {
		t.Errorf("Now = %v, want Base + 100ms to 800ms", got)
	}
}

// TestMS: a time's Bigtable timestamp, in microseconds since the epoch;
// MS does not round, which is why tests keep their times on whole
// milliseconds.
func TestMS(t *testing.T) {
	for _, at := range []time.Time{testkit.Base, testkit.Base.Add(-47 * time.Hour), testkit.Base.Add(1999 * time.Microsecond)} {
		if got, want := testkit.MS(at), bigtable.Timestamp(at.UnixMicro()); got != want {
			t.Errorf("MS(%v) = %d, want %d", at, got, want)
		}
	}
}

// TestWriteAndRead checks Set (through a Table, which stamps the cell by
// the lifetime), Put (raw, with its own timestamps) and RawRow, Cells and
// Values, which read back every stored cell, sorted by column then newest
// first.
func TestWriteAndRead(t *testing.T) {
	ctx := context.Background()
	raw := emulator.StartForTest(t).TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil, "g": nil})
	clock := testkit.NewClock(testkit.Base)
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(48 * time.Hour)},
		ttl.WithClock(clock.Now), ttl.OtherFamilies())
	if err != nil {
		t.Fatal(err)
	}
	// Default is stamped with the write time; For(1h) 47 hours before it.
	if err := tbl.Apply(ctx, "r", testkit.Set("f", "a", "kept", ttl.Default)); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Apply(ctx, "r", testkit.Set("f", "b", "short", ttl.For(time.Hour))); err != nil {
		t.Fatal(err)
	}
	testkit.Put(t, raw, "g",
		testkit.Stored{Row: "r", Column: "x", TS: testkit.MS(testkit.Base.Add(-time.Hour))},
		testkit.Stored{Row: "r", Column: "x", TS: testkit.MS(testkit.Base)},
		testkit.Stored{Row: "r", Column: "a", TS: testkit.MS(testkit.Base.Add(-2 * time.Hour))},
		testkit.Stored{Row: "other", Column: "x", TS: 1000},
	)

	r := testkit.RawRow(t, raw, "r")
	got := testkit.Cells(r)
	want := []testkit.Cell{
		{"f:a", "kept", testkit.MS(testkit.Base)},
		{"f:b", "short", testkit.MS(testkit.Base.Add(-47 * time.Hour))},
		{"g:a", "v", testkit.MS(testkit.Base.Add(-2 * time.Hour))},
		{"g:x", "v", testkit.MS(testkit.Base)},
		{"g:x", "v", testkit.MS(testkit.Base.Add(-time.Hour))},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Cells =\n%v\nwant\n%v", got, want)
	}
	if got, want := strings.Join(testkit.Values(r), " "), "f:a=kept f:b=short g:a=v g:x=v g:x=v"; got != want {
		t.Errorf("Values = %q, want %q", got, want)
	}
	if got := testkit.Cells(testkit.RawRow(t, raw, "missing")); got != nil {
		t.Errorf("Cells of a row not stored = %v, want none", got)
	}
}

// TestCellsOrder: Cells sorts by column, then newest first, whatever the
// order of the row's families and cells.
func TestCellsOrder(t *testing.T) {
	r := bigtable.Row{
		"z": {{Row: "r", Column: "z:a", Timestamp: 1000, Value: []byte("1")}},
		"a": {
			{Row: "r", Column: "a:b", Timestamp: 1000, Value: []byte("2")},
			{Row: "r", Column: "a:a", Timestamp: 1000, Value: []byte("3")},
			{Row: "r", Column: "a:b", Timestamp: 3000, Value: []byte("4")},
		},
	}
	if got, want := fmt.Sprint(testkit.Cells(r)), "[{a:a 3 1000} {a:b 4 3000} {a:b 2 1000} {z:a 1 1000}]"; got != want {
		t.Errorf("Cells = %s, want %s", got, want)
	}
	if got, want := strings.Join(testkit.Values(r), " "), "a:a=3 a:b=4 a:b=2 z:a=1"; got != want {
		t.Errorf("Values = %q, want %q", got, want)
	}
}

// TestTablets: SampleRowKeys returns the fixed keys; every other call
// goes to the table.
func TestTablets(t *testing.T) {
	ctx := context.Background()
	raw := emulator.StartForTest(t).TableForTest(t, "t", map[string]bigtable.GCPolicy{"g": nil})
	testkit.Put(t, raw, "g", testkit.Stored{Row: "r", Column: "x", TS: 1000})

	split := testkit.Tablets{TableAPI: raw, Keys: []string{"b", "m"}}
	keys, err := split.SampleRowKeys(ctx)
	if err != nil || fmt.Sprint(keys) != "[b m]" {
		t.Errorf("SampleRowKeys = %v, %v; want [b m]", keys, err)
	}
	whole := testkit.Tablets{TableAPI: raw}
	if keys, err := whole.SampleRowKeys(ctx); err != nil || keys != nil {
		t.Errorf("SampleRowKeys without keys = %v, %v; want none", keys, err)
	}
	if got := testkit.Values(testkit.RawRow(t, split, "r")); fmt.Sprint(got) != "[g:x=v]" {
		t.Errorf("a read through Tablets = %v, want [g:x=v]", got)
	}
}

// fakeTB records a helper's Fatal, which ends the calling goroutine as
// testing's does.
type fakeTB struct {
	testing.TB
	fatal string
}

func (*fakeTB) Helper()             { /* nothing to mark */ }
func (f *fakeTB) Fatal(args ...any) { f.fatal = fmt.Sprint(args...); runtime.Goexit() }

// fails runs fn as a test would, and returns what it failed with.
func fails(fn func(testing.TB)) string {
	var tb fakeTB
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(&tb)
	}()
	<-done
	return tb.fatal
}

// TestHelpersFail: Put and RawRow fail the test on an error, and do not
// return.
func TestHelpersFail(t *testing.T) {
	raw := emulator.StartForTest(t).TableForTest(t, "t", map[string]bigtable.GCPolicy{"g": nil})
	if got := fails(func(tb testing.TB) {
		testkit.Put(tb, raw, "nofamily", testkit.Stored{Row: "r", Column: "x", TS: 1000})
		t.Error("Put to a missing family returned")
	}); !strings.Contains(got, "nofamily") {
		t.Errorf("Put to a missing family: fatal %q", got)
	}
	missing := emulator.StartForTest(t).Client.Open("missing")
	if got := fails(func(tb testing.TB) {
		testkit.RawRow(tb, missing, "r")
		t.Error("RawRow of a missing table returned")
	}); !strings.Contains(got, "NotFound") {
		t.Errorf("RawRow of a missing table: fatal %q", got)
	}
}

// TestPick checks that Pick returns each of its choices and nothing else.
func TestPick(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[string]int{}
	for range 300 {
		seen[testkit.Pick(r, "a", "b", "c")]++
	}
	if len(seen) != 3 || seen["a"] == 0 || seen["b"] == 0 || seen["c"] == 0 {
		t.Errorf("Pick over a, b, c 300 times chose %v, want each of the three", seen)
	}
}
