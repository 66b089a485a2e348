package ttl

import (
	"context"

	"cloud.google.com/go/bigtable"
)

// A Scan counts what was read to find the cells a change of one family's
// GC policy affects. The family is read with one server-side filter that
// strips values and returns at most one cell per row and kind of cell (up
// to n+1 per column when a change to SequenceNumbers(n) must count
// versions). The server still reads every cell of the table: the filter
// selects the family, not a row range.
type Scan struct {
	// Reads is the number of ReadRows requests.
	Reads int
	// RowsSeen and CellsSeen are the rows and cells the server read, as
	// it reports them: every row and cell of the table.
	RowsSeen  int
	CellsSeen int
	// RowsReturned and CellsReturned are the rows and cells the filter
	// let through: what crossed the network, values stripped.
	RowsReturned  int
	CellsReturned int
}

// scanRows reads every row of data through filter, calls each for every
// row the filter returns, and adds what was read to read.
func scanRows(ctx context.Context, data bigtable.TableAPI, filter bigtable.Filter, each func(bigtable.Row), read *Scan) error {
	stats := func(s *bigtable.FullReadStats) {
		read.RowsSeen += int(s.ReadIterationStats.RowsSeenCount)
		read.CellsSeen += int(s.ReadIterationStats.CellsSeenCount)
	}
	read.Reads++
	return data.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		read.RowsReturned++
		for _, items := range r {
			read.CellsReturned += len(items)
		}
		each(r)
		return true
	}, bigtable.RowFilter(filter), bigtable.WithFullReadStats(stats))
}
