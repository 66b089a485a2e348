package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
)

// TestAuditCounter: the windows of a counter family are cells like any
// other: live until their expiry, expired after it, with its grace
// deciding when GC may collect them.
func TestAuditCounter(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	fams := map[string]ttl.Strategy{"hits": ttl.Counter(ttl.Grace(ttl.OneSecond(), time.Hour))}
	if _, err := runEnsure(ctx, e.Admin, "t", e.Client.Open("t"), fams, policy.Options{Scan: scan.Options{Now: func() time.Time { return base }}}); err != nil {
		t.Fatal(err)
	}
	raw := e.Client.Open("t")
	w := ttl.Window{Size: time.Minute, Keep: 10 * time.Minute}
	// Three windows of one counter, written over three minutes: each is
	// one cell, whatever the number of increments.
	for i := range 3 {
		now := base.Add(time.Duration(i) * time.Minute)
		tbl, err := ttl.NewTable(raw, fams, ttl.WithClock(func() time.Time { return now }))
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			m := ttl.NewMutation()
			m.Add("hits", "req", 1, w)
			if err := tbl.Apply(ctx, "u", m); err != nil {
				t.Fatal(err)
			}
		}
	}
	// At base+12m the first window (expiry base+11m) has expired, the
	// others (base+12m, base+13m): the second at its expiry, the third not.
	now := base.Add(12 * time.Minute)
	report, err := runAudit(ctx, e.Admin, "t", raw, fams, audit.Options{Scan: scan.Options{Now: func() time.Time { return now }}})
	if err != nil {
		t.Fatal(err)
	}
	f := report.Families[0]
	if f.Live.Cells != 1 || f.Expired.Cells != 2 || f.Forever.Cells != 0 || f.Uncollectable.Cells != 0 {
		t.Errorf("live, expired, forever, uncollectable = %d, %d, %d, %d; want 1, 2, 0, 0",
			f.Live.Cells, f.Expired.Cells, f.Forever.Cells, f.Uncollectable.Cells)
	}
	if f.Policy != "maxage=1h" || f.Strategy != "Counter(Grace(OneSecond(), 1h0m0s))" {
		t.Errorf("policy %q, strategy %q", f.Policy, f.Strategy)
	}
	// GC may collect them an hour (the grace) after they expired: 59
	// minutes after the audit, and 60 (the next bucket's first instant).
	got := map[string]int64{}
	for _, b := range f.Collectable {
		if b.Cells > 0 {
			got[b.From.Sub(now).String()+".."+b.Until.Sub(now).String()] += b.Cells
		}
	}
	if len(got) != 2 || got["0s..1h0m0s"] != 1 || got["1h0m0s..24h0m0s"] != 1 {
		t.Errorf("collectable: %v, want one cell in each of the buckets from 0s and from 1h", got)
	}
}
