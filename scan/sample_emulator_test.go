package scan_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/scan"
)

// TestSampleEmulator is the sample's measured run (docs/table-wide.md):
// a table of CELLTTL_SAMPLE_ROWS rows (row000000000 on) of 5 cells each,
// 1M cells by default, on an in-process emulator, whose SampleRowKeys
// picks one row in a hundred at random as a tablet boundary, as gcloud's
// cbtemulator does. Several runs of a 5% sample must each give a 95%
// interval no wider than ±10% that holds the true count. It runs only
// with CELLTTL_SAMPLE_EMULATOR=1 (loading the table takes a few seconds):
//
//	CELLTTL_SAMPLE_EMULATOR=1 go test ./scan -run TestSampleEmulator -v
func TestSampleEmulator(t *testing.T) {
	if os.Getenv("CELLTTL_SAMPLE_EMULATOR") != "1" {
		t.Skip("a measurement: set CELLTTL_SAMPLE_EMULATOR=1 to run it")
	}
	rows := 200_000
	if s := os.Getenv("CELLTTL_SAMPLE_ROWS"); s != "" {
		var err error
		if rows, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	e := emulator.StartForTest(t)
	tbl := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	const batch = 10_000
	for first := 0; first < rows; first += batch {
		n := min(batch, rows-first)
		keys := make([]string, n)
		muts := make([]*bigtable.Mutation, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("row%09d", first+i)
			muts[i] = bigtable.NewMutation()
			for c := range 5 {
				muts[i].Set("f", fmt.Sprintf("c%d", c), 1000, []byte("v"))
			}
		}
		if errs, err := tbl.ApplyBulk(ctx, keys, muts); err != nil || errs != nil {
			t.Fatal(err, errs)
		}
	}
	cells := int64(5 * rows)
	for run := range 5 {
		read, err := scan.ReadTable(ctx, tbl, bigtable.StripValueFilter(), scan.Options{Sample: 0.05},
			func() int { return 0 }, func(int, bigtable.Row) {}, func(int) {})
		if err != nil {
			t.Fatal(err)
		}
		c := read.Estimates.CellsSeen
		t.Logf("run %d: %d shards, %d ranges read, %d cells read; estimate %d, 95%% interval %d to %d (±%.1f%%), true %d",
			run+1, read.Shards, read.ShardsRead, read.CellsSeen, c.Estimate, c.Low, c.High, 100*c.Margin(), cells)
		if c.Low > cells || c.High < cells || c.Margin() > 0.10 {
			t.Errorf("run %d: the interval %d to %d (±%.1f%%) for %d cells", run+1, c.Low, c.High, 100*c.Margin(), cells)
		}
	}
}
