package scan_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/scan"
)

// loaded returns a table on a new emulator holding rows "r00".."r(n-1)",
// each with cells "f:a" and "f:b" of value "vvv" stamped base, and, in
// every row whose number is even, an older version of "f:a" stamped an
// hour before.
func loaded(t *testing.T, n int) *bigtable.Table {
	t.Helper()
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	rows := make([]string, n)
	muts := make([]*bigtable.Mutation, n)
	for i := range rows {
		rows[i] = fmt.Sprintf("r%02d", i)
		muts[i] = bigtable.NewMutation()
		muts[i].Set("f", "a", testkit.MS(testkit.Base), []byte("vvv"))
		muts[i].Set("f", "b", testkit.MS(testkit.Base), []byte("vvv"))
		if i%2 == 0 {
			muts[i].Set("f", "a", testkit.MS(testkit.Base.Add(-time.Hour)), []byte("vvv"))
		}
	}
	errs, err := raw.ApplyBulk(context.Background(), rows, muts)
	if err != nil || errs != nil {
		t.Fatal(err, errs)
	}
	return raw
}

// TestReadShard checks that a shard's rows are read through the filter,
// within the shard only, and counted: what the server read and what it
// returned, a cell that two branches of an interleave return counted once.
func TestReadShard(t *testing.T) {
	ctx := context.Background()
	raw := loaded(t, 20)
	latest := bigtable.LatestNFilter(1)
	var keys []string
	read, err := scan.ReadShard(ctx, raw, scan.Shard{Start: "r05", End: "r10"}, latest, nil, func(r bigtable.Row) error {
		keys = append(keys, r.Key())
		if n := len(r["f"]); n != 2 {
			t.Errorf("row %s: %d cells through the filter, want 2", r.Key(), n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"r05", "r06", "r07", "r08", "r09"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("rows %q, want %q", keys, want)
	}
	// r06 and r08 hold an older version: 2 + 3 + 2 + 3 + 2 cells stored.
	want := scan.Stats{Reads: 1, RowsSeen: 5, CellsSeen: 12, RowsReturned: 5, CellsReturned: 10}
	if read != want {
		t.Errorf("read %+v, want %+v", read, want)
	}

	// To the table's end; an interleave returns each cell twice, one
	// after the other: each is one cell.
	twice := bigtable.InterleaveFilters(latest, latest)
	read, err = scan.ReadShard(ctx, raw, scan.Shard{Start: "r18"}, twice, nil, func(r bigtable.Row) error {
		if n := len(r["f"]); n != 4 {
			t.Errorf("row %s: %d items through the interleave, want each of 2 cells twice", r.Key(), n)
		}
		return nil
	})
	want = scan.Stats{Reads: 1, RowsSeen: 2, CellsSeen: 5, RowsReturned: 2, CellsReturned: 4}
	if err != nil || read != want {
		t.Errorf("read %+v, %v; want %+v", read, err, want)
	}
}

// TestReadShardStops checks that the first error the callback returns
// stops the read and is returned, with the rows read until then.
func TestReadShardStops(t *testing.T) {
	raw := loaded(t, 10)
	full := errors.New("full")
	calls := 0
	read, err := scan.ReadShard(context.Background(), raw, scan.Shard{}, bigtable.PassAllFilter(), nil, func(r bigtable.Row) error {
		calls++
		if calls == 3 {
			return full
		}
		return nil
	})
	if !errors.Is(err, full) {
		t.Fatalf("err = %v, want the callback's", err)
	}
	if calls != 3 || read.RowsReturned != 3 || read.Reads != 1 {
		t.Errorf("%d calls, read %+v; want 3 rows, then the stop", calls, read)
	}

	// A cancelled context is the read's error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := scan.ReadShard(ctx, raw, scan.Shard{}, bigtable.PassAllFilter(), nil, func(bigtable.Row) error { return nil }); err == nil {
		t.Error("a read on a cancelled context succeeded")
	}
}

// TestReadTable checks a whole-table read shard by shard: each shard's rows
// go to an accumulator of its own, each shard read is merged once, the
// counts add up, and the progress counts what was returned.
func TestReadTable(t *testing.T) {
	ctx := context.Background()
	raw := loaded(t, 20)
	tbl := testkit.Tablets{TableAPI: raw, Keys: []string{"r05", "r10", "r15"}}
	type acc struct{ rows []string }
	var made atomic.Int32 // newAcc runs in the workers
	var merged [][]string
	var last scan.Progress
	read, err := scan.ReadTable(ctx, tbl, bigtable.StripValueFilter(), scan.Options{Workers: 2, Progress: func(p scan.Progress) { last = p }},
		func() *acc { made.Add(1); return new(acc) },
		func(a *acc, r bigtable.Row) { a.rows = append(a.rows, r.Key()) },
		func(a *acc) { merged = append(merged, a.rows) })
	if err != nil {
		t.Fatal(err)
	}
	want := scan.Stats{Reads: 4, RowsSeen: 20, CellsSeen: 50, RowsReturned: 20, CellsReturned: 50, Shards: 4, ShardsRead: 4}
	if read != want {
		t.Errorf("read %+v, want %+v", read, want)
	}
	if made.Load() != 4 || len(merged) != 4 {
		t.Fatalf("%d accumulators, %d merged; want one per shard", made.Load(), len(merged))
	}
	seen := map[string]int{}
	for _, rows := range merged {
		if len(rows) != 5 {
			t.Errorf("a shard's accumulator holds %q, want the 5 rows of one shard", rows)
		}
		for _, r := range rows {
			seen[r]++
		}
	}
	if len(seen) != 20 {
		t.Errorf("%d rows merged, want 20: %v", len(seen), seen)
	}
	// Values stripped: each cell's row key, column and timestamp, as
	// CountCell counts them.
	bytes := int64(50 * (len("r00") + len("f:a") + 8))
	if last.ShardsDone != 4 || last.Shards != 4 || last.Rows != 20 || last.Cells != 50 || last.Bytes != bytes ||
		last.RowsSeen != 20 || last.CellsSeen != 50 {
		t.Errorf("final progress %+v, want every row and cell, %d bytes", last, bytes)
	}

	// A sample of a quarter reads two of the eight ranges of each
	// shard, and says so, with estimates whose intervals hold what the
	// sample read.
	read, err = scan.ReadTable(ctx, tbl, bigtable.StripValueFilter(), scan.Options{Sample: 0.25},
		func() int { return 0 }, func(int, bigtable.Row) {}, func(int) {})
	if err != nil {
		t.Fatal(err)
	}
	e := read.Estimates
	// A seed picks the same ranges every time.
	for range 3 {
		again, err := scan.ReadTable(ctx, tbl, bigtable.StripValueFilter(), scan.Options{Sample: 0.25, Seed: 7},
			func() int { return 0 }, func(int, bigtable.Row) {}, func(int) {})
		if err != nil {
			t.Fatal(err)
		}
		first, err := scan.ReadTable(ctx, tbl, bigtable.StripValueFilter(), scan.Options{Sample: 0.25, Seed: 7},
			func() int { return 0 }, func(int, bigtable.Row) {}, func(int) {})
		if err != nil || *first.Estimates != *again.Estimates || first.RowsSeen != again.RowsSeen {
			t.Errorf("seed 7 read %+v then %+v (%v)", first, again, err)
		}
	}
	if read.Shards != 4 || read.Sampled != 8 || read.ShardsRead != 8 || read.Reads != 8 || !read.Estimate() || e == nil {
		t.Fatalf("sampled read %+v", read)
	}
	if c := e.CellsSeen; c.Low < int64(read.CellsSeen) || c.Low > c.Estimate || c.Estimate > c.High || read.Scale() != e.Scale {
		t.Errorf("sampled read %+v: estimates %+v", read, e)
	}
}

// TestTableStops checks that a read that fails stops the work: the
// shards read are counted, the stats are not complete, and the error
// names the shard.
func TestTableStops(t *testing.T) {
	raw := loaded(t, 20)
	tbl := brokenShard{testkit.Tablets{TableAPI: raw, Keys: []string{"r05", "r10", "r15"}}}
	merged := 0
	read, err := scan.ReadTable(context.Background(), tbl, bigtable.PassAllFilter(), scan.Options{Workers: 1},
		func() int { return 0 }, func(int, bigtable.Row) {}, func(int) { merged++ })
	if !errors.Is(err, errBroken) || !strings.Contains(err.Error(), `["r15", end)`) {
		t.Fatalf("err = %v, want the broken shard's", err)
	}
	if read.Complete() || !read.Stopped() || read.ShardsRead != 3 || merged != 3 || read.RowsReturned != 15 || read.Shards != 4 {
		t.Errorf("read %+v, %d merged; want the 3 shards before the broken one", read, merged)
	}

	// A table that cannot be split is not read.
	if _, err := scan.ReadTable(context.Background(), unsampled{raw}, bigtable.PassAllFilter(), scan.Options{},
		func() int { return 0 }, func(int, bigtable.Row) {}, func(int) { t.Error("merged") }); !errors.Is(err, errBroken) {
		t.Errorf("err = %v, want SampleRowKeys'", err)
	}
}

var errBroken = errors.New("broken")

// brokenShard fails the read of the last shard, from "r15" on.
type brokenShard struct{ testkit.Tablets }

func (b brokenShard) ReadRows(ctx context.Context, rs bigtable.RowSet, f func(bigtable.Row) bool, opts ...bigtable.ReadOption) error {
	if reflect.DeepEqual(rs, bigtable.InfiniteRange("r15")) {
		return errBroken
	}
	return b.Tablets.ReadRows(ctx, rs, f, opts...)
}

// unsampled is a table whose SampleRowKeys fails.
type unsampled struct{ bigtable.TableAPI }

func (unsampled) SampleRowKeys(context.Context) ([]string, error) { return nil, errBroken }

// TestShards checks the split on a table's tablets and the refusals.
func TestShards(t *testing.T) {
	ctx := context.Background()
	shards, err := scan.Shards(ctx, testkit.Tablets{Keys: []string{"m", "", "c", "m"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []scan.Shard{{End: "c"}, {Start: "c", End: "m"}, {Start: "m"}}; !reflect.DeepEqual(shards, want) {
		t.Errorf("Shards = %v, want %v", shards, want)
	}
	var noCtx context.Context
	var noTable *bigtable.Table
	for name, call := range map[string]func() error{
		"nil context":   func() error { _, err := scan.Shards(noCtx, testkit.Tablets{}); return err },
		"nil table":     func() error { _, err := scan.Shards(ctx, nil); return err },
		"nil *Table":    func() error { _, err := scan.Shards(ctx, noTable); return err },
		"nil in a view": func() error { _, err := scan.Shards(ctx, (*view)(nil)); return err },
	} {
		if err := call(); !errors.Is(err, ttl.ErrNilArgument) {
			t.Errorf("%s: %v, want ErrNilArgument", name, err)
		}
	}
	if _, err := scan.Shards(ctx, unsampled{}); !errors.Is(err, errBroken) || !strings.HasPrefix(err.Error(), "scan: ") {
		t.Errorf("SampleRowKeys failing: %v", err)
	}
}

// view is a bigtable.TableAPI of the caller's, as a pointer.
type view struct{ bigtable.TableAPI }

// TestShardRowSet checks a shard's rows and how it prints.
func TestShardRowSet(t *testing.T) {
	for _, tt := range []struct {
		s    scan.Shard
		rows bigtable.RowSet
		text string
	}{
		{scan.Shard{}, bigtable.InfiniteRange(""), `["", end)`},
		{scan.Shard{End: "user#5"}, bigtable.NewRange("", "user#5"), `["", "user#5")`},
		{scan.Shard{Start: "user#5"}, bigtable.InfiniteRange("user#5"), `["user#5", end)`},
		{scan.Shard{Start: "a", End: "b"}, bigtable.NewRange("a", "b"), `["a", "b")`},
	} {
		if got := tt.s.RowSet(); !reflect.DeepEqual(got, tt.rows) {
			t.Errorf("%+v.RowSet() = %v, want %v", tt.s, got, tt.rows)
		}
		if got := tt.s.String(); got != tt.text {
			t.Errorf("%+v.String() = %s, want %s", tt.s, got, tt.text)
		}
	}
}

// TestStats checks the verdicts on what was read: complete, stopped, a
// sample read in full or not, and the factor a sample scales by.
func TestStats(t *testing.T) {
	for _, tt := range []struct {
		s                        scan.Stats
		complete, estimate, stop bool
		planned                  int
		scale                    float64
		json                     string
	}{
		{scan.Stats{Shards: 8, ShardsRead: 8}, true, false, false, 8, 1, `"complete":true,"estimate":false`},
		{scan.Stats{Shards: 8, ShardsRead: 3}, false, false, true, 8, 1, `"complete":false,"estimate":false`},
		{scan.Stats{Shards: 8, ShardsRead: 2, Sampled: 2}, false, true, false, 2, 4, `"complete":false,"estimate":true`},
		{scan.Stats{Shards: 8, ShardsRead: 1, Sampled: 2}, false, false, true, 2, 8, `"complete":false,"estimate":false`},
		{scan.Stats{Shards: 8, Sampled: 2}, false, false, true, 2, 1, `"complete":false,"estimate":false`},
		{scan.Stats{}, true, false, false, 0, 1, `"complete":true,"estimate":false`},
	} {
		s := tt.s
		if s.Complete() != tt.complete || s.Estimate() != tt.estimate || s.Stopped() != tt.stop || s.Planned() != tt.planned || s.Scale() != tt.scale {
			t.Errorf("%+v: complete %v, estimate %v, stopped %v, planned %d, scale %v; want %v, %v, %v, %d, %v", s,
				s.Complete(), s.Estimate(), s.Stopped(), s.Planned(), s.Scale(), tt.complete, tt.estimate, tt.stop, tt.planned, tt.scale)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), tt.json) {
			t.Errorf("%+v: JSON %s, want %s in it", s, b, tt.json)
		}
		// The counts decode back; the verdicts follow from them.
		var back scan.Stats
		if err := json.Unmarshal(b, &back); err != nil || back != s {
			t.Errorf("%s decodes to %+v, %v; want %+v", b, back, err, s)
		}
	}

	b, err := json.Marshal(scan.Stats{Reads: 1, RowsSeen: 2, CellsSeen: 3, RowsReturned: 4, CellsReturned: 5, Shards: 6, ShardsRead: 6})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"reads":1,"rows_seen":2,"cells_seen":3,"rows_returned":4,"cells_returned":5,"shards":6,"shards_read":6,"complete":true,"estimate":false}`
	if string(b) != want {
		t.Errorf("JSON %s\nwant %s", b, want)
	}
	// Inside another value too, as reports embed it.
	b, err = json.Marshal(struct {
		Read scan.Stats `json:"read"`
	}{scan.Stats{Shards: 2, ShardsRead: 1}})
	if err != nil || !strings.Contains(string(b), `"read":{"reads":0,`) || !strings.Contains(string(b), `"complete":false`) {
		t.Errorf("embedded: %s, %v", b, err)
	}

	// Add adds the reads, rows and cells; the shards are the caller's.
	s := scan.Stats{Reads: 1, RowsSeen: 10, CellsSeen: 20, RowsReturned: 3, CellsReturned: 4, Shards: 8, ShardsRead: 1, Sampled: 2}
	s.Add(scan.Stats{Reads: 2, RowsSeen: 1, CellsSeen: 2, RowsReturned: 3, CellsReturned: 4, Shards: 9, ShardsRead: 9, Sampled: 9})
	if want := (scan.Stats{Reads: 3, RowsSeen: 11, CellsSeen: 22, RowsReturned: 6, CellsReturned: 8, Shards: 8, ShardsRead: 1, Sampled: 2}); s != want {
		t.Errorf("Add: %+v, want %+v", s, want)
	}
}

// TestCount checks the count of a cell: its row key, column, 8 bytes of
// timestamp and its value.
func TestCount(t *testing.T) {
	c := scan.CountCell("row", bigtable.ReadItem{Row: "row", Column: "f:col", Timestamp: 1000, Value: []byte("12345")})
	if want := (scan.Count{Cells: 1, Bytes: 3 + 5 + 8 + 5}); c != want {
		t.Errorf("CountCell = %+v, want %+v", c, want)
	}
	stripped := scan.CountCell("row", bigtable.ReadItem{Row: "row", Column: "f:col", Timestamp: 1000})
	c.Add(stripped)
	if want := (scan.Count{Cells: 2, Bytes: 21 + 16}); c != want {
		t.Errorf("Add = %+v, want %+v", c, want)
	}
}

// TestCountString spells a count as reports do, the cells and their bytes.
func TestCountString(t *testing.T) {
	for c, want := range map[scan.Count]string{
		{}:                        "0 cells (0 B)",
		{Cells: 1, Bytes: 21}:     "1 cell (21 B)",
		{Cells: 3, Bytes: 1536}:   "3 cells (1.5 KiB)",
		{Cells: 1880, Bytes: 5e6}: "1880 cells (4.8 MiB)",
	} {
		if got := c.String(); got != want {
			t.Errorf("%+v: %q, want %q", c, got, want)
		}
	}
}

// TestStatsString says what was read, and whether the counts are exact,
// partial or estimates.
func TestStatsString(t *testing.T) {
	for _, tt := range []struct {
		s    scan.Stats
		want string
	}{
		{scan.Stats{Shards: 64, ShardsRead: 64, Reads: 70, RowsSeen: 2000, CellsSeen: 3000, CellsReturned: 1880},
			"64 shards, 70 reads, 2000 rows and 3000 cells seen, 1880 cells returned"},
		{scan.Stats{Shards: 1, ShardsRead: 1, Reads: 1, RowsSeen: 1, CellsSeen: 1, CellsReturned: 1},
			"1 shard, 1 read, 1 row and 1 cell seen, 1 cell returned"},
		{scan.Stats{Shards: 64, ShardsRead: 12, Reads: 12}, "12 of 64 shards read (partial), 12 reads, 0 rows and 0 cells seen, 0 cells returned"},
		{scan.Stats{Shards: 8, Sampled: 2, ShardsRead: 2, Reads: 2}, "a sample of 2 ranges of 8 shards (estimates: counts ×4.0), 2 reads, 0 rows and 0 cells seen, 0 cells returned"},
		{scan.Stats{Shards: 8, Sampled: 2, ShardsRead: 1, Reads: 1}, "1 of a sample of 2 ranges of 8 shards read (partial), 1 read, 0 rows and 0 cells seen, 0 cells returned"},
	} {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("%+v:\n%q, want\n%q", tt.s, got, tt.want)
		}
	}
}
