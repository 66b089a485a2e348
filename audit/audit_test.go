package audit_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/scan"
)

var base = testkit.Base

// ms is the Bigtable timestamp of t.
var ms = testkit.MS

// TestAuditTable audits a table with a family of each kind and checks every
// count, the buckets the cells fall in, and the bytes, values stripped.
func TestAuditTable(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{
		"sess":   bigtable.MaxAgePolicy(time.Second),
		"clicks": nil, // no GC: its expired cells are never collected
		"rev":    nil,
		"meta":   nil,
	})
	put := func(row, family, column string, ts bigtable.Timestamp) {
		t.Helper()
		m := bigtable.NewMutation()
		m.Set(family, column, ts, []byte("12345"))
		if err := raw.Apply(ctx, row, m); err != nil {
			t.Fatal(err)
		}
	}
	put("a", "sess", "live", ms(base.Add(time.Hour)))  // expires in 1h
	put("a", "sess", "dead", ms(base.Add(-time.Hour))) // expired an hour ago, collectable 1s later
	put("a", "sess", "keep", ttl.MaxTimestamp)         // Forever
	put("b", "clicks", "c", ms(base))                  // expires in 48h
	put("b", "clicks", "c", ms(base.Add(-72*time.Hour)))
	for v := int64(1); v <= 3; v++ {
		put("c", "rev", "v", bigtable.Timestamp(v*1000))
	}
	put("c", "meta", "m", ms(base))

	families := map[string]ttl.Strategy{"sess": ttl.OneSecond(), "clicks": ttl.DefaultExpiration(48 * time.Hour), "rev": ttl.SequenceNumbers(2)}
	report, err := runAudit(ctx, e.Admin, "t", raw, families, audit.Options{Scan: scan.Options{Now: func() time.Time { return base }}})
	if err != nil {
		t.Fatal(err)
	}
	cell := func(row, column string) int64 { return int64(len(row) + len(column) + 8) } // values stripped
	want := map[string]struct {
		live, expired, forever, uncollectable int64 // cells
		liveBytes                             int64
	}{
		"clicks": {1, 1, 0, 1, cell("b", "clicks:c")},
		"meta":   {1, 0, 1, 0, cell("c", "meta:m")},
		"rev":    {2, 1, 0, 1, 2 * cell("c", "rev:v")},
		"sess":   {2, 1, 1, 0, cell("a", "sess:live") + cell("a", "sess:keep")},
	}
	if len(report.Families) != len(want) {
		t.Fatalf("%d families audited, want %d:\n%v", len(report.Families), len(want), report)
	}
	buckets := func(h []audit.Bucket) map[string]int64 {
		out := map[string]int64{}
		for _, b := range h {
			if b.Cells > 0 {
				out[b.From.Sub(base).String()+".."+b.Until.Sub(base).String()] += b.Cells
			}
		}
		return out
	}
	for _, f := range report.Families {
		w := want[f.Family]
		got := [4]int64{f.Live.Cells, f.Expired.Cells, f.Forever.Cells, f.Uncollectable.Cells}
		if got != [4]int64{w.live, w.expired, w.forever, w.uncollectable} || f.Live.Bytes != w.liveBytes {
			t.Errorf("%s: live, expired, forever, uncollectable = %v, live bytes %d; want %v, %d",
				f.Family, got, f.Live.Bytes, [4]int64{w.live, w.expired, w.forever, w.uncollectable}, w.liveBytes)
		}
		switch f.Family {
		case "sess":
			if got := buckets(f.Expiring); len(got) != 1 || got["1h0m0s..24h0m0s"] != 1 {
				t.Errorf("sess expiring: %v", got)
			}
			if got := buckets(f.Collectable); len(got) != 1 || got["-1h0m0s..0s"] != 1 {
				t.Errorf("sess collectable: %v", got)
			}
			if f.Policy != "maxage=1s" || f.Strategy != "OneSecond()" {
				t.Errorf("sess: %q %q", f.Strategy, f.Policy)
			}
		case "clicks":
			if got := buckets(f.Expiring); len(got) != 1 || got["24h0m0s..168h0m0s"] != 1 {
				t.Errorf("clicks expiring: %v", got)
			}
		case "meta":
			if f.Strategy != "" || f.Policy != "never" {
				t.Errorf("meta: %q %q", f.Strategy, f.Policy)
			}
		}
	}
	if !report.Read.Complete() || report.Read.RowsReturned != 3 || report.Read.CellsReturned != 9 {
		t.Errorf("read %+v", report.Read)
	}

	// The JSON says it is complete and decodes back to counts that merge.
	b, err := json.Marshal(report)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc["read"]), `"complete":true`) {
		t.Errorf("JSON without complete in read: %s", b)
	}
	for _, key := range []string{"scan", "complete", "estimate"} {
		if _, ok := doc[key]; ok {
			t.Errorf("JSON with a top-level %q: %s", key, b)
		}
	}
	var back audit.Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Merge(report); err != nil {
		t.Fatal(err)
	}
	if len(back.Families) != len(report.Families) {
		t.Fatalf("merged %d families, want %d", len(back.Families), len(report.Families))
	}
	for i, f := range back.Families {
		if f.Live.Cells != 2*report.Families[i].Live.Cells || f.Collectable[4].Cells != 2*report.Families[i].Collectable[4].Cells {
			t.Errorf("%s: merged %+v", f.Family, f)
		}
	}
	if got, want := report.String(), `table "t" at 2030-04-30T09:00:00.000Z: 4 families, 6 cells live, 3 expired and still stored`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
