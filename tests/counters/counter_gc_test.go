package counters_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/policy"
)

// gcCounterWindow is a counter window TestCounterGC writes, in a column of its
// own.
type gcCounterWindow struct {
	fam, col string
	w        ttl.Window
	sum      int64
	ts       bigtable.Timestamp // its cell's
	expiry   time.Time
	gcAt     time.Time // from when the family's GC policy deletes it
}

func (g *gcCounterWindow) String() string {
	return fmt.Sprintf("%s:%s (%v, expiring %s)", g.fam, g.col, g.w, g.expiry.UTC().Format(time.RFC3339Nano))
}

// TestCounterGC is the counters' test on the real clock: with the GC
// policies policy.Ensure gives counter families, the emulator's GC loop
// (every 0.5 to 1.5 s) physically removes every expired window, and never
// a live one. Windows are written by two Tables whose clocks stand still,
// one 4 s before the test's start and one at it, so that their expiries
// lie in the real near past and near future (and hours and days ahead); the table is created with its families in one call, which does
// not start the GC loop, so every window is first seen stored. Then the
// loop is started, and until every short window is gone, raw reads
// without a filter find no window removed before its expiry, and reads
// through a Table on the real clock return each window until its expiry
// and never from it on.
func TestCounterGC(t *testing.T) {
	if testing.Short() {
		t.Skip("waits a few seconds for the emulator's GC on the real clock")
	}
	t.Parallel()
	const (
		gcInterval = 1500 * time.Millisecond // the longest wait between the emulator's GC passes
		slack      = 2 * time.Second         // for a loaded machine
		poll       = 50 * time.Millisecond
	)
	ctx := context.Background()
	e := emulator.StartForTest(t)
	fams := map[string]ttl.Strategy{
		"hits":   ttl.Counter(ttl.OneSecond()),                        // MaxAge(1s), on the expiry
		"clicks": ttl.Counter(ttl.DefaultExpiration(2 * time.Second)), // MaxAge(2s), on the expiry less 2s
	}
	offset := map[string]time.Duration{"hits": 0, "clicks": 2 * time.Second}
	// GC deletes the cells stamped before now − MaxAge: a window from its
	// expiry plus MaxAge less the offset on.
	gcAfter := map[string]time.Duration{"hits": time.Second, "clicks": 0}
	tool, err := policy.New(e.Admin, e.Client.Open("gc"), "gc", fams, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tool.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	raw := e.Client.Open("gc")

	start := time.Now()
	writers := map[time.Duration]*ttl.Table{} // by their clocks' offsets from start
	for _, d := range []time.Duration{-4 * time.Second, 0} {
		at := start.Add(d)
		tbl, err := ttl.NewTable(raw, fams, ttl.WithClock(func() time.Time { return at }))
		if err != nil {
			t.Fatal(err)
		}
		writers[d] = tbl
	}
	var windows []*gcCounterWindow
	for _, fam := range []string{"hits", "clicks"} {
		for _, x := range []struct {
			writer time.Duration
			w      ttl.Window
		}{
			{-4 * time.Second, ttl.Window{Size: time.Second}},                                           // expired 3 to 4 s ago
			{-4 * time.Second, ttl.Window{Size: time.Second, Keep: 2 * time.Second}},                    // 1 to 2 s ago
			{-4 * time.Second, ttl.Window{Size: 500 * time.Millisecond, Keep: 3500 * time.Millisecond}}, // up to 0.5 s ago
			{0, ttl.Window{Size: 250 * time.Millisecond, Keep: 750 * time.Millisecond}},                 // expires in 0.75 to 1 s
			{0, ttl.Window{Size: time.Second, Keep: time.Second}},                                       // in 1 to 2 s
			{0, ttl.Window{Size: 500 * time.Millisecond, Keep: 2500 * time.Millisecond}},                // in 2.5 to 3 s
			{0, ttl.Window{Size: time.Hour, Keep: time.Hour}},
			{0, ttl.Window{Size: 24 * time.Hour, Keep: 24 * time.Hour}},
		} {
			g := &gcCounterWindow{fam: fam, col: fmt.Sprintf("c%d", len(windows)), w: x.w}
			for delta := int64(1); delta <= 3; delta++ {
				m := ttl.NewMutation()
				m.Add(g.fam, g.col, delta, g.w)
				if err := writers[x.writer].Apply(ctx, "u", m); err != nil {
					t.Fatalf("%v: %v", g, err)
				}
				g.sum += delta
			}
			at := start.Add(x.writer)
			ms := at.UnixMilli() - at.UnixMilli()%x.w.Size.Milliseconds()
			g.expiry = time.UnixMilli(ms).Add(x.w.Size + x.w.Keep)
			g.ts = bigtable.Time(g.expiry.Add(-offset[fam]))
			g.gcAt = g.expiry.Add(gcAfter[fam])
			windows = append(windows, g)
		}
	}

	// stored reads every cell of the row, without a filter, by column.
	stored := func() map[string][]bigtable.ReadItem {
		r, err := raw.ReadRow(ctx, "u")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]bigtable.ReadItem{}
		for _, items := range r {
			for _, it := range items {
				out[it.Column] = append(out[it.Column], it)
			}
		}
		return out
	}
	check := func(cells map[string][]bigtable.ReadItem) {
		t.Helper()
		for col, items := range cells {
			var g *gcCounterWindow
			for _, w := range windows {
				if w.fam+":"+w.col == col {
					g = w
				}
			}
			if g == nil {
				t.Fatalf("stored %s: %v, which was never written", col, items)
			}
			if len(items) != 1 || items[0].Timestamp != g.ts || string(items[0].Value) != string(binary.BigEndian.AppendUint64(nil, uint64(g.sum))) {
				t.Fatalf("stored %s: %v, want one cell stamped %d holding %d", col, items, g.ts, g.sum)
			}
		}
	}
	cells := stored()
	check(cells)
	if len(cells) != len(windows) {
		t.Fatalf("stored %d windows before GC ran, want %d: %v", len(cells), len(windows), cells)
	}

	// Start the emulator's GC loop: it starts at the first change of a
	// family by a call of its own.
	if err := e.Admin.CreateColumnFamily(ctx, "gc", "other"); err != nil {
		t.Fatal(err)
	}
	gcStart := time.Now()
	reader, err := ttl.NewTable(raw, fams) // on the real clock
	if err != nil {
		t.Fatal(err)
	}
	horizon := start.Add(time.Minute) // the windows expiring before it are the short ones
	deadline := time.Now().Add(20 * time.Second)
	for polls := 0; ; polls++ {
		before := time.Now()
		cells := stored()
		check(cells)
		var pending []string
		for _, g := range windows {
			_, kept := cells[g.fam+":"+g.col]
			switch {
			case !kept && g.expiry.After(before):
				t.Fatalf("poll %d at %v: GC removed %v, live", polls, before.UTC().Format(time.RFC3339Nano), g)
			case kept && laterOf(g.gcAt, gcStart).Add(gcInterval+slack).Before(before):
				t.Fatalf("poll %d at %v: GC has not removed %v, due from %v", polls, before.UTC().Format(time.RFC3339Nano), g,
					laterOf(g.gcAt, gcStart).UTC().Format(time.RFC3339Nano))
			case kept && g.expiry.Before(horizon):
				pending = append(pending, g.String())
			}
		}

		// Through a Table on the real clock: each window until its
		// expiry, with its sum, and never from it on.
		for _, g := range windows {
			before := time.Now()
			got, err := reader.ReadCounter(ctx, "u", g.fam, g.col, g.w)
			after := time.Now()
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case len(got) > 0 && !g.expiry.After(before):
				t.Fatalf("poll %d: ReadCounter between %v and %v returned %v", polls, before.UTC().Format(time.RFC3339Nano),
					after.UTC().Format(time.RFC3339Nano), g)
			case len(got) == 0 && g.expiry.After(after):
				t.Fatalf("poll %d: ReadCounter between %v and %v missed %v", polls, before.UTC().Format(time.RFC3339Nano),
					after.UTC().Format(time.RFC3339Nano), g)
			case len(got) > 0 && (len(got) != 1 || got[0].Sum != g.sum || !got[0].Expires.Equal(g.expiry)):
				t.Fatalf("poll %d: ReadCounter of %v = %v, want its sum %d", polls, g, got, g.sum)
			}
		}

		if len(pending) == 0 { // and each expired before it was removed
			t.Logf("%d polls; GC removed every short window %v after the start", polls+1, time.Since(start).Round(time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			sort.Strings(pending)
			t.Fatalf("GC has not removed %q after 20 s", pending)
		}
		time.Sleep(poll)
	}
	// What is left is the live windows, of hours and of days.
	var left, want []string
	for col := range stored() {
		left = append(left, col)
	}
	for _, g := range windows {
		if !g.expiry.Before(horizon) {
			want = append(want, g.fam+":"+g.col)
		}
	}
	sort.Strings(left)
	sort.Strings(want)
	if len(want) != 4 || !slices.Equal(left, want) {
		t.Errorf("left stored: %v, want the live windows %v", left, want)
	}
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
