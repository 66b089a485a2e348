package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
)

// cell is one cell of a row built by hand, as a read with values
// stripped returns it.
type cell struct {
	column string // family:qualifier
	ts     bigtable.Timestamp
}

// row builds a row as ReadRows returns it: each column's cells newest
// first, as given.
func row(key string, cells ...cell) bigtable.Row {
	r := bigtable.Row{}
	for _, c := range cells {
		family, _, _ := strings.Cut(c.column, ":")
		r[family] = append(r[family], bigtable.ReadItem{Row: key, Column: c.column, Timestamp: c.ts})
	}
	return r
}

// span is how far an instant is from base.
func span(d time.Duration) bigtable.Timestamp { return ms(base.Add(d)) }

// want is what one family is expected to hold, in cells.
type want struct {
	strategy, policy                      string
	live, expired, forever, uncollectable int64
	expiring, collectable                 map[string]int64 // by bucket, as buckets prints them
}

// histogram lists a histogram's non-empty buckets as "from..until",
// offsets from base.
func histogram(h []audit.Bucket) map[string]int64 {
	out := map[string]int64{}
	for _, b := range h {
		if b.Cells > 0 {
			out[b.From.Sub(base).String()+".."+b.Until.Sub(base).String()] += b.Cells
		}
	}
	return out
}

// check compares a report's families with want, and each family's bytes
// with its cells' count (cellBytes each: values stripped, one row key
// and one column length).
func check(t *testing.T, r *audit.Report, wants map[string]want) {
	t.Helper()
	if len(r.Families) != len(wants) {
		t.Errorf("%d families, want %d: %+v", len(r.Families), len(wants), r.Families)
	}
	for i, f := range r.Families {
		if i > 0 && r.Families[i-1].Family >= f.Family {
			t.Errorf("families not sorted by name: %q before %q", r.Families[i-1].Family, f.Family)
		}
		w, ok := wants[f.Family]
		if !ok {
			t.Errorf("family %q not expected", f.Family)
			continue
		}
		if f.Strategy != w.strategy || f.Policy != w.policy {
			t.Errorf("%s: strategy %q, policy %q; want %q, %q", f.Family, f.Strategy, f.Policy, w.strategy, w.policy)
		}
		got := [4]int64{f.Live.Cells, f.Expired.Cells, f.Forever.Cells, f.Uncollectable.Cells}
		if exp := [4]int64{w.live, w.expired, w.forever, w.uncollectable}; got != exp {
			t.Errorf("%s: live, expired, forever, uncollectable = %v, want %v", f.Family, got, exp)
		}
		one := int64(len("r") + len(f.Family) + len(":c") + 8)
		for name, c := range map[string]scan.Count{"live": f.Live, "expired": f.Expired, "forever": f.Forever, "uncollectable": f.Uncollectable} {
			if c.Bytes != c.Cells*one {
				t.Errorf("%s: %s %+v, want %d bytes a cell", f.Family, name, c, one)
			}
		}
		for name, h := range map[string][2]map[string]int64{
			"expiring":    {histogram(f.Expiring), w.expiring},
			"collectable": {histogram(f.Collectable), w.collectable},
		} {
			if fmt.Sprint(h[0]) != fmt.Sprint(h[1]) {
				t.Errorf("%s: %s %v, want %v", f.Family, name, h[0], h[1])
			}
		}
	}
}

// TestJudge checks how each kind of family's cells are counted, by the
// rules the package documents: the strategy decides live or expired, the
// GC policy when an expired cell is collectable (an age: that long after
// its timestamp; a version limit: at once for the versions past it;
// neither: never), and for a family without a strategy when its policy's
// age lets GC delete a cell (never without one).
func TestJudge(t *testing.T) {
	families := map[string]ttl.Strategy{
		"seq":     ttl.SequenceNumbers(2),
		"seqwide": ttl.SequenceNumbers(1),
		"seqaged": ttl.SequenceNumbers(1),
		"def":     ttl.DefaultExpiration(time.Hour),
		"gone":    ttl.OneSecond(),
	}
	policies := map[string]bigtable.GCPolicy{
		"seq":     bigtable.MaxVersionsPolicy(2),
		"seqwide": bigtable.MaxVersionsPolicy(3),
		"seqaged": bigtable.MaxAgePolicy(time.Hour),
		"def":     bigtable.MaxVersionsPolicy(1), // not its strategy's
		"aged":    bigtable.MaxAgePolicy(24 * time.Hour),
		"plain":   nil,
	}
	r, err := audit.NewReport("t", base, families, policies, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Filter().String(), bigtable.StripValueFilter().String(); got != want {
		t.Errorf("Filter() = %s, want %s", got, want)
	}
	hourForever := ttl.MaxTimestamp - bigtable.Timestamp(time.Hour/time.Microsecond) // DefaultExpiration(1h)'s Forever
	r.AddRow(row("r",
		cell{"seq:c", 3000}, cell{"seq:c", 2000}, cell{"seq:c", 1000},
		cell{"seqwide:c", 3000}, cell{"seqwide:c", 2000}, cell{"seqwide:c", 1000},
		cell{"seqaged:c", 2000}, cell{"seqaged:c", 1000},
		cell{"def:c", span(-30 * time.Minute)}, cell{"def:c", span(-2 * time.Hour)},
		cell{"def:d", span(-3 * time.Hour)},
		cell{"def:e", hourForever},
		cell{"gone:c", span(48 * time.Hour)}, cell{"gone:c", span(-time.Hour)},
		cell{"aged:c", span(-time.Hour)},
		cell{"plain:c", span(-time.Hour)},
		cell{"other:c", span(-time.Hour)},
	))
	now := "0s..1h0m0s"
	check(t, r, map[string]want{
		// The newest two live; the third past the limit, deleted now.
		"seq": {strategy: ttl.SequenceNumbers(2).String(), policy: "maxversions=2", live: 2, expired: 1, collectable: map[string]int64{now: 1}},
		// Versions past the newest but within the policy's three: GC
		// never deletes them.
		"seqwide": {strategy: ttl.SequenceNumbers(1).String(), policy: "maxversions=3", live: 1, expired: 2, uncollectable: 2},
		// An age deletes sequence numbers, stamped in 1970, at once.
		"seqaged": {strategy: ttl.SequenceNumbers(1).String(), policy: "maxage=1h", live: 1, expired: 1, collectable: map[string]int64{now: 1}},
		// Live for 30 more minutes; an expired second version deleted now
		// by the version limit; an expired newest version never; a Forever
		// cell.
		"def": {strategy: ttl.DefaultExpiration(time.Hour).String(), policy: "maxversions=1", live: 2, expired: 2, forever: 1, uncollectable: 1,
			expiring: map[string]int64{now: 1}, collectable: map[string]int64{now: 1}},
		// A managed family the table does not have: no GC at all.
		"gone": {strategy: ttl.OneSecond().String(), policy: "missing", live: 1, expired: 1, uncollectable: 1,
			expiring: map[string]int64{"24h0m0s..168h0m0s": 1}},
		// No strategy: live; GC deletes it 24h after its timestamp, in 23h.
		"aged": {policy: "maxage=1d", live: 1, expiring: map[string]int64{"1h0m0s..24h0m0s": 1}},
		// No strategy and no GC: never expires.
		"plain": {policy: "never", live: 1, forever: 1},
		// A family neither managed nor in the policies: no strategy, its
		// policy unknown, counted as never expiring.
		"other": {policy: "unknown", live: 1, forever: 1},
	})
}

// TestNewRefused checks the families and policies New refuses, with
// ErrInvalidStrategy and the family named.
func TestNewRefused(t *testing.T) {
	for _, tt := range []struct {
		name     string
		families map[string]ttl.Strategy
		policies map[string]bigtable.GCPolicy
		named    string
	}{
		{"nil strategy", map[string]ttl.Strategy{"f": nil}, nil, `"f"`},
		{"bad family name", map[string]ttl.Strategy{"bad name": ttl.OneSecond()}, nil, `"bad name"`},
		{"invalid strategy", map[string]ttl.Strategy{"f": ttl.SequenceNumbers(0)}, nil, `"f"`},
		{"bad name in the policies", nil, map[string]bigtable.GCPolicy{"-x": nil}, `"-x"`},
	} {
		r, err := audit.NewReport("t", base, tt.families, tt.policies, false)
		if !errors.Is(err, ttl.ErrInvalidStrategy) || r != nil {
			t.Errorf("%s: %v, %v; want ErrInvalidStrategy", tt.name, r, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.named) || !strings.Contains(err.Error(), "audit.NewReport: ") {
			t.Errorf("%s: %v does not name %s", tt.name, err, tt.named)
		}
	}
	// No family at all is an empty report, not an error.
	r, err := audit.NewReport("t", base, nil, nil, true)
	if err != nil || len(r.Families) != 0 || !r.Values || r.Filter().String() != bigtable.PassAllFilter().String() {
		t.Errorf("New without families: %+v, %v", r, err)
	}
}

// TestMerge checks that reports of parts of a table add up to the report
// of the whole, whether made by New or decoded from JSON, and that a
// report of another table, instant or kind of bytes is refused.
func TestMerge(t *testing.T) {
	families := map[string]ttl.Strategy{"f": ttl.OneSecond()}
	policies := map[string]bigtable.GCPolicy{"f": bigtable.MaxAgePolicy(time.Second), "g": nil}
	rows := []bigtable.Row{
		row("r", cell{"f:c", span(time.Hour)}, cell{"f:c", span(-time.Hour)}, cell{"g:c", 1000}),
		row("r", cell{"f:c", span(-2 * time.Hour)}, cell{"h:c", 1000}),
		row("r", cell{"f:c", span(48 * time.Hour)}, cell{"g:c", 2000}),
	}
	whole, err := audit.NewReport("t", base, families, policies, false)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := audit.NewReport("t", base, families, policies, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		whole.AddRow(r)
		part, err := audit.NewReport("t", base, families, policies, false)
		if err != nil {
			t.Fatal(err)
		}
		part.AddRow(r)
		part.Read = scan.Stats{Reads: 1, RowsReturned: 1, CellsReturned: 2, Shards: 3, ShardsRead: 1}
		if i == 2 { // sent as JSON
			b, err := json.Marshal(part)
			if err != nil {
				t.Fatal(err)
			}
			part = new(audit.Report)
			if err := json.Unmarshal(b, part); err != nil {
				t.Fatal(err)
			}
		}
		if err := sum.Merge(part); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := familiesJSON(t, sum), familiesJSON(t, whole); got != want {
		t.Errorf("merged\n%s\nwant\n%s", got, want)
	}
	if want := (scan.Stats{Reads: 3, RowsReturned: 3, CellsReturned: 6, ShardsRead: 3}); sum.Read != want {
		t.Errorf("merged read %+v, want %+v", sum.Read, want)
	}

	// A report that knows no family (the zero value, as a pipeline
	// starts its sum) takes the families of what it merges, their
	// strategies and policies.
	zero := &audit.Report{Table: "t", Now: base}
	if err := zero.Merge(whole); err != nil {
		t.Fatal(err)
	}
	if got, want := familiesJSON(t, zero), familiesJSON(t, whole); got != want {
		t.Errorf("merged into the zero report\n%s\nwant\n%s", got, want)
	}
	// A family without histograms (JSON that left them out) adds its
	// counts.
	if err := zero.Merge(&audit.Report{Table: "t", Now: base, Families: []audit.Family{{Family: "f", Live: scan.Count{Cells: 1, Bytes: 10}}}}); err != nil {
		t.Fatal(err)
	}
	if zero.Families[0].Live.Cells != whole.Families[0].Live.Cells+1 {
		t.Errorf("f live %+v after merging one more cell into %+v", zero.Families[0].Live, whole.Families[0].Live)
	}
	if err := zero.Merge(nil); err != nil {
		t.Errorf("Merge(nil) = %v", err)
	}

	before := familiesJSON(t, sum)
	for name, o := range map[string]*audit.Report{
		"another table":   {Table: "u", Now: base},
		"another instant": {Table: "t", Now: base.Add(time.Millisecond)},
		"values":          {Table: "t", Now: base, Values: true},
	} {
		o.Families = whole.Families
		if err := sum.Merge(o); !errors.Is(err, ttl.ErrInvalidOption) {
			t.Errorf("%s: %v, want ErrInvalidOption", name, err)
		}
	}
	if familiesJSON(t, sum) != before {
		t.Error("a refused merge changed the report")
	}
	// The same instant in another location is the same instant.
	if err := sum.Merge(&audit.Report{Table: "t", Now: base.In(time.FixedZone("CEST", 2*3600))}); err != nil {
		t.Errorf("the same instant elsewhere: %v", err)
	}
}

// familiesJSON prints a report's families as JSON, to compare them.
func familiesJSON(t *testing.T, r *audit.Report) string {
	t.Helper()
	b, err := json.MarshalIndent(r.Families, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReportString checks the report's one line: its families, what
// they hold, and whether the counts are partial or estimates.
func TestReportString(t *testing.T) {
	f := audit.Family{Family: "f", Live: scan.Count{Cells: 12}, Expired: scan.Count{Cells: 3}}
	g := audit.Family{Family: "g", Live: scan.Count{Cells: 1}, Expired: scan.Count{Cells: 1}}
	for _, tt := range []struct {
		r    audit.Report
		want string
	}{
		{audit.Report{Table: "events", Now: base, Families: []audit.Family{f, g}, Read: scan.Stats{Shards: 4, ShardsRead: 4}},
			`table "events" at 2030-04-30T09:00:00.000Z: 2 families, 13 cells live, 4 expired and still stored`},
		{audit.Report{Table: "events", Now: base, Families: []audit.Family{f}, Read: scan.Stats{Shards: 4, ShardsRead: 1}},
			`table "events" at 2030-04-30T09:00:00.000Z: 1 family, 12 cells live, 3 expired and still stored (partial: the scan stopped)`},
		{audit.Report{Table: "events", Now: base, Families: []audit.Family{f}, Read: scan.Stats{Shards: 4, ShardsRead: 2, Sampled: 2}},
			`table "events" at 2030-04-30T09:00:00.000Z: 1 family, 12 cells live, 3 expired and still stored (estimates from a sample)`},
		{audit.Report{Table: "events", Now: base, Read: scan.Stats{Shards: 4, ShardsRead: 1, Sampled: 2}},
			`table "events" at 2030-04-30T09:00:00.000Z: 0 families, 0 cells live, 0 expired and still stored (partial: the scan stopped)`},
	} {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("String()\n got %s\nwant %s", got, tt.want)
		}
	}
}

// TestTableRefused checks the arguments and options New (and Run, a nil
// context) refuse before reading anything, and a table that does not
// exist.
func TestTableRefused(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	families := map[string]ttl.Strategy{"f": ttl.OneSecond()}
	var noCtx context.Context
	var noTable *bigtable.Table
	for name, call := range map[string]func() (*audit.Report, error){
		"nil context": func() (*audit.Report, error) { return runAudit(noCtx, e.Admin, "t", raw, families, audit.Options{}) },
		"nil admin":   func() (*audit.Report, error) { return runAudit(ctx, nil, "t", raw, families, audit.Options{}) },
		"nil table":   func() (*audit.Report, error) { return runAudit(ctx, e.Admin, "t", nil, families, audit.Options{}) },
		"nil *Table": func() (*audit.Report, error) {
			return runAudit(ctx, e.Admin, "t", noTable, families, audit.Options{})
		},
	} {
		if r, err := call(); !errors.Is(err, ttl.ErrNilArgument) || r != nil {
			t.Errorf("%s: %v, %v; want ErrNilArgument", name, r, err)
		}
	}
	for _, o := range []scan.Options{{Workers: -1}, {Sample: 1}, {ProgressEvery: -time.Second}} {
		if r, err := runAudit(ctx, e.Admin, "t", raw, families, audit.Options{Scan: o}); !errors.Is(err, ttl.ErrInvalidOption) || r != nil ||
			!strings.HasPrefix(err.Error(), "audit.New: ") {
			t.Errorf("%+v: %v, %v; want ErrInvalidOption", o, r, err)
		}
	}
	r, err := runAudit(ctx, e.Admin, "nope", e.Client.Open("nope"), families, audit.Options{})
	if status.Code(err) != codes.NotFound || !errors.Is(err, policy.ErrTableNotFound) || r != nil || !strings.Contains(err.Error(), `table "nope" does not exist`) {
		t.Errorf("a missing table: %v, %v; want NotFound and policy.ErrTableNotFound", r, err)
	}
	if r, err := runAudit(ctx, e.Admin, "t", raw, map[string]ttl.Strategy{"f": nil}, audit.Options{}); !errors.Is(err, ttl.ErrInvalidStrategy) || r != nil {
		t.Errorf("a nil strategy: %v, %v; want ErrInvalidStrategy", r, err)
	}
	// The constructor refuses, before any call: a bad family and a nil
	// client name the constructor.
	if a, err := audit.New(e.Admin, raw, "t", map[string]ttl.Strategy{"f": ttl.SequenceNumbers(0)}, audit.Options{}); a != nil ||
		!errors.Is(err, ttl.ErrInvalidStrategy) || !strings.HasPrefix(err.Error(), "audit.New: ") {
		t.Errorf("a bad strategy: %v, %v; want audit.New's ErrInvalidStrategy", a, err)
	}
	if a, err := audit.New(nil, raw, "t", families, audit.Options{}); a != nil || !errors.Is(err, ttl.ErrNilArgument) || !strings.Contains(err.Error(), "audit.New: ") {
		t.Errorf("a nil admin client: %v, %v; want audit.New's ErrNilArgument", a, err)
	}
}

// TestAuditorRunsAgain checks that an auditor bound once runs as often as
// asked, each run a new scan at the clock's instant of that run.
func TestAuditorRunsAgain(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": bigtable.MaxAgePolicy(time.Second)})
	testkit.Put(t, raw, "f", testkit.Stored{Row: "r", Column: "a", TS: ms(base.Add(time.Hour))})
	clock := testkit.NewClock(base)
	auditor, err := audit.New(e.Admin, raw, "t", map[string]ttl.Strategy{"f": ttl.OneSecond()}, audit.Options{Scan: scan.Options{Now: clock.Now}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := auditor.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	clock.Set(base.Add(2 * time.Hour))
	second, err := auditor.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Now.Equal(base) || first.Families[0].Live.Cells != 1 || first.Families[0].Expired.Cells != 0 {
		t.Errorf("first run at %v: %+v; want the cell live at %v", first.Now, first.Families[0], base)
	}
	if !second.Now.Equal(base.Add(2*time.Hour)) || second.Families[0].Live.Cells != 0 || second.Families[0].Expired.Cells != 1 {
		t.Errorf("second run at %v: %+v; want the cell expired two hours on", second.Now, second.Families[0])
	}
}

// TestTableSampleAndValues checks an audit of a sample of the shards,
// whose counts are scaled to the table and rounded, and one that reads
// values, whose bytes include them.
func TestTableSampleAndValues(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	// 100 rows in 10 shards of 10: each row a live cell, and row r015,
	// in the second shard, an expired one too.
	rows := make([]string, 100)
	muts := make([]*bigtable.Mutation, len(rows))
	var keys []string
	for i := range rows {
		rows[i] = fmt.Sprintf("r%03d", i)
		muts[i] = bigtable.NewMutation()
		muts[i].Set("f", "live", span(time.Hour), []byte("value"))
		if i == 15 {
			muts[i].Set("f", "dead", span(-time.Hour), []byte("value"))
		}
		if i > 0 && i%10 == 0 {
			keys = append(keys, rows[i])
		}
	}
	errs, err := raw.ApplyBulk(ctx, rows, muts)
	if err != nil || errs != nil {
		t.Fatal(err, errs)
	}
	tbl := testkit.Tablets{TableAPI: raw, Keys: keys}
	families := map[string]ttl.Strategy{"f": ttl.OneSecond()}

	// Two of the 6 ranges of each of the 10 shards, picked at random:
	// every count is scaled by the estimate of the table's cells over the
	// cells read.
	r, err := runAudit(ctx, e.Admin, "t", tbl, families, audit.Options{Scan: scan.Options{Now: func() time.Time { return base }, Sample: 0.3}})
	if err != nil {
		t.Fatal(err)
	}
	est := r.Read.Estimates
	if r.Read.Shards != 10 || r.Read.Sampled != 20 || r.Read.ShardsRead != 20 || !r.Read.Estimate() || r.Read.Complete() || est == nil {
		t.Fatalf("read %+v, want an estimate from 2 ranges of each of 10 shards", r.Read)
	}
	cellBytes := int64(len("r000") + len("f:live") + 8) // values stripped
	f := r.Families[0]
	if got := f.Live.Cells + f.Expired.Cells; got < est.CellsSeen.Estimate-1 || got > est.CellsSeen.Estimate+1 {
		t.Errorf("live %+v and expired %+v, want the estimate of the cells seen, %+v", f.Live, f.Expired, est.CellsSeen)
	}
	if d := f.Live.Cells*cellBytes - f.Live.Bytes; d > cellBytes || d < -cellBytes {
		t.Errorf("live %+v: %d bytes a cell", f.Live, cellBytes)
	}
	if got := histogram(f.Expiring); len(got) != 1 || got["1h0m0s..24h0m0s"] != f.Live.Cells {
		t.Errorf("expiring %v, want the %d live cells in 1h..24h", got, f.Live.Cells)
	}
	if !strings.HasSuffix(r.String(), "(estimates from a sample)") {
		t.Errorf("String() = %s", r.String())
	}

	// Values read; no family managed: every cell of a family without a
	// strategy, judged at the real clock's now.
	before := time.Now()
	r, err = runAudit(ctx, e.Admin, "t", tbl, nil, audit.Options{Values: true})
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if r.Now.Before(before) || r.Now.After(after) {
		t.Errorf("judged at %v, not between %v and %v", r.Now, before, after)
	}
	f = r.Families[0]
	valueBytes := 101 * (cellBytes + int64(len("value")))
	if !r.Values || !r.Read.Complete() || f.Strategy != "" || f.Policy != "never" ||
		f.Live != (scan.Count{Cells: 101, Bytes: valueBytes}) || f.Forever != f.Live || f.Expired.Cells != 0 {
		t.Errorf("with values: %+v, family %+v", r, f)
	}
}
