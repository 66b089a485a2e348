package ttl

import (
	"context"

	"cloud.google.com/go/bigtable"
)

// A Scan counts what table-wide work read. The table is read shard by
// shard (see Shards) through one server-side filter, which strips values
// and returns only the cells the work needs; the server still reads every
// cell of each shard.
type Scan struct {
	// Reads is the number of ReadRows requests: one per shard read.
	Reads int `json:"reads"`
	// RowsSeen and CellsSeen are the rows and cells the server read, as
	// it reports them at the end of each shard's request.
	RowsSeen  int `json:"rows_seen"`
	CellsSeen int `json:"cells_seen"`
	// RowsReturned and CellsReturned are the rows and cells the filter
	// let through: what crossed the network, values stripped. A cell that
	// two branches of the filter return is counted once.
	RowsReturned  int `json:"rows_returned"`
	CellsReturned int `json:"cells_returned"`
	// Shards is the number of shards the table was split into, and
	// ShardsRead how many were read to the end.
	Shards     int `json:"shards"`
	ShardsRead int `json:"shards_read"`
	// Sampled is, for work asked to read a sample (ScanOptions.Sample),
	// the number of shards in the sample; 0 otherwise.
	Sampled int `json:"sampled,omitempty"`
}

// Complete reports whether every shard was read: the counts are exact.
// A scan that stopped early (an error, a timeout, a cancellation) has
// partial counts; one that read a sample has estimates.
func (s Scan) Complete() bool { return s.Sampled == 0 && s.ShardsRead == s.Shards }

// Estimate reports whether the scan read the whole of a sample of the
// shards: its counts are estimates, scaled to the table.
func (s Scan) Estimate() bool { return s.Sampled > 0 && s.ShardsRead == s.Sampled }

// planned is the number of shards the scan meant to read: the sample's, or
// all of them.
func (s Scan) planned() int {
	if s.Sampled > 0 {
		return s.Sampled
	}
	return s.Shards
}

// add adds the counts of a shard's scan to s.
func (s *Scan) add(o Scan) {
	s.Reads += o.Reads
	s.RowsSeen += o.RowsSeen
	s.CellsSeen += o.CellsSeen
	s.RowsReturned += o.RowsReturned
	s.CellsReturned += o.CellsReturned
}

// scale returns the factor that scales counts of the shards read to the
// table, for a sample; 1 otherwise.
func (s Scan) scale() float64 {
	if s.Sampled == 0 || s.ShardsRead == 0 {
		return 1
	}
	return float64(s.Shards) / float64(s.ShardsRead)
}

// readShard reads the rows of shard s through filter, calls each for every
// row returned, counts them in c as they come, and returns what was read.
func readShard(ctx context.Context, data bigtable.TableAPI, s Shard, filter bigtable.Filter, c *shardCounter, each func(bigtable.Row)) (Scan, error) {
	read := Scan{Reads: 1}
	stats := func(st *bigtable.FullReadStats) {
		read.RowsSeen += int(st.ReadIterationStats.RowsSeenCount)
		read.CellsSeen += int(st.ReadIterationStats.CellsSeenCount)
		c.rowsSeen.Add(st.ReadIterationStats.RowsSeenCount)
		c.cellsSeen.Add(st.ReadIterationStats.CellsSeenCount)
	}
	err := data.ReadRows(ctx, s.RowSet(), func(r bigtable.Row) bool {
		cells, size := rowSize(r)
		read.RowsReturned++
		read.CellsReturned += cells
		c.rows.Add(1)
		c.cells.Add(int64(cells))
		c.bytes.Add(size)
		each(r)
		return true
	}, bigtable.RowFilter(filter), bigtable.WithFullReadStats(stats))
	return read, err
}

// rowSize returns the distinct cells of a row (an interleave returns a
// cell that two of its branches pass twice, one after the other) and the
// bytes they took: the row key once, and each cell's column, timestamp and
// value.
func rowSize(r bigtable.Row) (cells int, size int64) {
	size = int64(len(r.Key()))
	for _, items := range r {
		for i, it := range items {
			if i > 0 && it.Column == items[i-1].Column && it.Timestamp == items[i-1].Timestamp {
				continue
			}
			cells++
			size += int64(len(it.Column)) + 8 + int64(len(it.Value))
		}
	}
	return cells, size
}

// scanTable reads the whole of data through filter, shard by shard with
// the engine (or a sample of the shards), and returns what was read. Each
// shard's rows go to row with an accumulator of the shard's own from
// newAcc; merge gets the accumulator of each shard read to the end, in the
// calling goroutine, so that merged counts are exact for the shards read.
// After an error the scan is not Complete.
func scanTable[A any](ctx context.Context, data bigtable.TableAPI, filter bigtable.Filter, o ScanOptions,
	newAcc func() A, row func(A, bigtable.Row), merge func(A)) (Scan, error) {

	var read Scan
	shards, err := Shards(ctx, data)
	if err != nil {
		return read, err
	}
	read.Shards = len(shards)
	if o.Sample > 0 {
		shards = sample(shards, o.Sample)
		read.Sampled = len(shards)
	}
	type shardResult struct {
		acc  A
		read Scan
	}
	_, err = runShards(ctx, shards, o, func(ctx context.Context, s Shard, c *shardCounter) (shardResult, error) {
		acc := newAcc()
		r, err := readShard(ctx, data, s, filter, c, func(r bigtable.Row) { row(acc, r) })
		return shardResult{acc, r}, err
	}, func(_ int, res shardResult) error {
		merge(res.acc)
		read.add(res.read)
		read.ShardsRead++
		return nil
	})
	return read, err
}
