package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
)

// TestTimedCellsOnTheEmulator replays the time strategies' figures on the
// Bigtable emulator: each cell is stored with the timestamp drawn, and
// reads return it up to the last millisecond before the drawn expiry and
// not from it on.
func TestTimedCellsOnTheEmulator(t *testing.T) {
	for _, w := range []timedWrites{oneSecondWrite, defaultWrites} {
		cells, err := w.cells()
		if err != nil {
			t.Fatalf("%v: %v", w.strategy, err)
		}
		for i, c := range cells {
			now := c.written
			tbl := emulatorTable(t, w.strategy, func() time.Time { return now })
			m := ttl.NewMutation()
			m.Set(family, "c", []byte("v"), c.life)
			if err := tbl.Apply(context.Background(), "r", m); err != nil {
				t.Fatalf("%v, %v: %v", w.strategy, c.life, err)
			}
			for _, at := range []time.Time{c.written, c.expiry.Add(-time.Millisecond), c.expiry} {
				now = at
				got := readStamps(t, tbl)
				var want []bigtable.Timestamp
				if at.Before(c.expiry) {
					want = []bigtable.Timestamp{bigtable.Time(c.stamp)}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%v, cell %d (%v): read at %v returns timestamps %v, the figure says %v",
						w.strategy, i, c.life, at.Format(time.RFC3339Nano), got, want)
				}
			}
		}
	}
}

// TestTimedCellsGC checks the GC instants drawn against the rule Bigtable
// applies under MaxAge(a): a cell may go once its timestamp is before
// now − a, and never while reads return it.
func TestTimedCellsGC(t *testing.T) {
	for _, w := range []timedWrites{oneSecondWrite, defaultWrites} {
		cells, err := w.cells()
		if err != nil {
			t.Fatal(err)
		}
		maxAge := time.Duration(w.strategy.GCPolicy().(bigtable.MaxAgeGCPolicy))
		for _, c := range cells {
			mayRemove := func(now time.Time) bool { return c.stamp.Before(now.Add(-maxAge)) }
			if mayRemove(c.gcAfter) || !mayRemove(c.gcAfter.Add(time.Millisecond)) {
				t.Errorf("%v, %v: GC drawn from %v, but the MaxAge rule says otherwise", w.strategy, c.life, c.gcAfter)
			}
			if mayRemove(c.expiry.Add(-time.Millisecond)) {
				t.Errorf("%v, %v: GC may remove the cell before its expiry %v", w.strategy, c.life, c.expiry)
			}
		}
	}
}

// TestVersionsOnTheEmulator replays the sequence-number figure: whatever
// the clock says when each version is written, each is stored at its
// number in milliseconds, and reads return the versions drawn as returned.
func TestVersionsOnTheEmulator(t *testing.T) {
	vs, _, err := versions(seqnumStrategy, seqnumWritten)
	if err != nil {
		t.Fatal(err)
	}
	var now time.Time
	tbl := emulatorTable(t, seqnumStrategy, func() time.Time { return now })
	var want []bigtable.Timestamp
	for _, v := range vs {
		now = v.written
		m := ttl.NewMutation()
		m.Set(family, "c", []byte("v"), ttl.Version(v.seq))
		if err := tbl.Apply(context.Background(), "r", m); err != nil {
			t.Fatalf("version %d: %v", v.seq, err)
		}
		if v.stamp != bigtable.Timestamp(v.seq*1000) {
			t.Errorf("version %d drawn at timestamp %d, want %d", v.seq, v.stamp, v.seq*1000)
		}
		if v.returned {
			want = append([]bigtable.Timestamp{v.stamp}, want...) // newest first
		}
	}
	for _, at := range []time.Time{now, now.AddDate(100, 0, 0)} {
		now = at
		if got := readStamps(t, tbl); !slices.Equal(got, want) {
			t.Errorf("read at %v returns timestamps %v, the figure says %v", at.Format(time.RFC3339), got, want)
		}
	}
}

// emulatorTable returns a ttl.Table with s on family, on a fresh emulator
// table whose family has no GC policy: the emulator's GC runs on the real
// clock, which these tests keep out of.
func emulatorTable(t *testing.T, s ttl.Strategy, now func() time.Time) *ttl.Table {
	t.Helper()
	raw := emulator.StartForTest(t).TableForTest(t, "t", map[string]bigtable.GCPolicy{family: nil})
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{family: s}, ttl.WithClock(now), ttl.OtherFamilies())
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// readStamps reads row "r" through tbl and returns its cells' timestamps,
// newest first.
func readStamps(t *testing.T, tbl *ttl.Table) []bigtable.Timestamp {
	t.Helper()
	row, err := tbl.ReadRow(context.Background(), "r")
	if err != nil {
		t.Fatal(err)
	}
	var out []bigtable.Timestamp
	for _, it := range row[family] {
		out = append(out, it.Timestamp)
	}
	return out
}
