package bench_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
)

// The sliding-expiration pairs. KeepAlive's pairs compare a read with
// KeepAlive that has nothing to renew (impl=ttl-keepalive) with the same
// read without it (impl=ttl): the cells live for an hour, longer than
// benchIdle plus its slack, so none is due. Touch's pair compares
// Table.Touch with the read and the conditional write a careful engineer
// writes by hand (impl=raw).

// benchIdle is the idle time of the KeepAlive reads.
const benchIdle = 10 * time.Minute

var keepAliveImpls = []string{"ttl", "ttl-keepalive"}

// BenchmarkKeepAliveRow reads one row of 5 cells, none due for renewal.
func BenchmarkKeepAliveRow(b *testing.B) {
	forImpls(b, keepAliveImpls, func(b *testing.B, s *side) {
		s.write(b, "r", time.Hour)
		want := bigtable.Time(testkit.Base.Add(time.Hour))
		b.ReportAllocs()
		defer reportCPU(b)()
		b.ResetTimer()
		for range b.N {
			r := s.readRow(b, "r")
			if len(r[benchManaged]) != len(benchColumns) {
				b.Fatalf("read %d cells, want %d", len(r[benchManaged]), len(benchColumns))
			}
			for _, it := range r[benchManaged] {
				if it.Timestamp != want {
					b.Fatalf("%s has timestamp %d, want %d: a cell was renewed", it.Column, it.Timestamp, want)
				}
			}
		}
	})
}

// BenchmarkKeepAliveRows scans 500 rows of 5 cells, none due for renewal.
func BenchmarkKeepAliveRows(b *testing.B) {
	forImpls(b, keepAliveImpls, func(b *testing.B, s *side) {
		muts := make([]*ttl.Mutation, len(benchKeys))
		for i := range muts {
			muts[i] = ttlMutation(time.Hour)
		}
		if errs, err := s.tbl.ApplyBulk(context.Background(), benchKeys, muts); err != nil || errs != nil {
			b.Fatal(err, errs)
		}
		b.ReportAllocs()
		defer reportCPU(b)()
		b.ResetTimer()
		for range b.N {
			if rows, cells := s.scan(b); rows != benchRows || cells != benchRows*len(benchColumns) {
				b.Fatalf("read %d rows of %d cells, want %d of %d", rows, cells, benchRows, benchRows*len(benchColumns))
			}
		}
	})
}

// BenchmarkTouch gives one cell of a 5-cell row a new hour of life.
func BenchmarkTouch(b *testing.B) {
	ctx := context.Background()
	forImpls(b, []string{"raw", "ttl"}, func(b *testing.B, s *side) {
		s.write(b, "r", time.Hour)
		b.ReportAllocs()
		defer reportCPU(b)()
		b.ResetTimer()
		for range b.N {
			var touched bool
			var err error
			if s.tbl == nil {
				touched, err = handTouch(ctx, s.raw, s.clock.Now(), "r", "c0", time.Hour)
			} else {
				touched, err = s.tbl.Touch(ctx, "r", benchManaged, "c0", ttl.For(time.Hour))
			}
			if err != nil || !touched {
				b.Fatalf("touched %v, error %v; want a touch", touched, err)
			}
		}
	})
}

// handTouch is Touch written by hand on the raw client for the benchmark
// table: read the newest live cell of the column, then replace the column
// with its value stamped for life from now, only if that cell is still
// the newest live one with the same timestamp and value.
func handTouch(ctx context.Context, tbl *bigtable.Table, now time.Time, row, column string, life time.Duration) (bool, error) {
	live := bigtable.ChainFilters(
		bigtable.ColumnRangeFilter(benchManaged, column, column+"\x00"),
		bigtable.TimestampRangeFilterMicros(bigtable.Time(now)+1000, 0),
		bigtable.LatestNFilter(1))
	r, err := tbl.ReadRow(ctx, row, bigtable.RowFilter(live))
	if err != nil || len(r[benchManaged]) == 0 {
		return false, err
	}
	cell := r[benchManaged][0]
	same := bigtable.ChainFilters(live,
		bigtable.TimestampRangeFilterMicros(cell.Timestamp, cell.Timestamp+1000),
		bigtable.ValueRangeFilter(cell.Value, append(cell.Value[:len(cell.Value):len(cell.Value)], 0)))
	m := bigtable.NewMutation()
	m.DeleteCellsInColumn(benchManaged, column)
	m.Set(benchManaged, column, bigtable.Time(now.Add(life)), cell.Value)
	var wrote bool
	if err := tbl.Apply(ctx, row, bigtable.NewCondMutation(same, m, nil), bigtable.GetCondMutationResult(&wrote)); err != nil {
		return false, err
	}
	return wrote, nil
}
