package scan

import (
	"context"
	"encoding/json"

	"cloud.google.com/go/bigtable"
)

// Stats count what table-wide work read. The table is read shard by shard
// (see Shards) through one server-side filter, which usually strips values
// and returns only the cells the work needs; the server still reads every
// cell of each shard.
type Stats struct {
	// Reads is the number of ReadRows requests: one per shard read.
	Reads int `json:"reads"`
	// RowsSeen and CellsSeen are the rows and cells the server read, as
	// it reports them at the end of each shard's request.
	RowsSeen  int `json:"rows_seen"`
	CellsSeen int `json:"cells_seen"`
	// RowsReturned and CellsReturned are the rows and cells the filter
	// let through: what crossed the network. A cell that two branches of
	// the filter return is counted once.
	RowsReturned  int `json:"rows_returned"`
	CellsReturned int `json:"cells_returned"`
	// Shards is the number of shards the table was split into, and
	// ShardsRead how many were read to the end.
	Shards     int `json:"shards"`
	ShardsRead int `json:"shards_read"`
	// Sampled is, for work asked to read a sample (Options.Sample), the
	// number of shards in the sample; 0 otherwise.
	Sampled int `json:"sampled,omitempty"`
}

// Complete reports whether every shard was read: the counts are exact.
// Work that stopped early (an error, a timeout, a cancellation) has
// partial counts; work that read a sample has estimates.
func (s Stats) Complete() bool { return s.Sampled == 0 && s.ShardsRead == s.Shards }

// Estimate reports whether the work read the whole of a sample of the
// shards: its counts are estimates, scaled to the table.
func (s Stats) Estimate() bool { return s.Sampled > 0 && s.ShardsRead == s.Sampled }

// Planned is the number of shards the work meant to read: the sample's,
// or all of them.
func (s Stats) Planned() int {
	if s.Sampled > 0 {
		return s.Sampled
	}
	return s.Shards
}

// Stopped reports whether the work stopped before it read every shard it
// meant to: its counts are partial.
func (s Stats) Stopped() bool { return s.ShardsRead < s.Planned() }

// Add adds the reads, rows and cells of o, the stats of another shard,
// to s. Shards, ShardsRead and Sampled are the caller's to keep.
func (s *Stats) Add(o Stats) {
	s.Reads += o.Reads
	s.RowsSeen += o.RowsSeen
	s.CellsSeen += o.CellsSeen
	s.RowsReturned += o.RowsReturned
	s.CellsReturned += o.CellsReturned
}

// MarshalJSON encodes the stats with their verdict, for programs:
// complete (every shard read, the counts exact) and estimate (a sample,
// the counts scaled). Decoding ignores the two, which the counts imply.
func (s Stats) MarshalJSON() ([]byte, error) {
	type plain Stats // without this method
	return json.Marshal(struct {
		plain
		Complete bool `json:"complete"`
		Estimate bool `json:"estimate"`
	}{plain(s), s.Complete(), s.Estimate()})
}

// Scale returns the factor that scales counts of the shards read to the
// table, for a sample; 1 otherwise.
func (s Stats) Scale() float64 {
	if s.Sampled == 0 || s.ShardsRead == 0 {
		return 1
	}
	return float64(s.Shards) / float64(s.ShardsRead)
}

// ReadShard reads the rows of shard s of data through filter, calls each
// for every row returned, counts them in c (if not nil) as they come, and
// returns what was read. It stops at the first error each returns, and
// returns it.
func ReadShard(ctx context.Context, data bigtable.TableAPI, s Shard, filter bigtable.Filter, c *Counter, each func(bigtable.Row) error) (Stats, error) {
	if c == nil {
		c = new(Counter)
	}
	read := Stats{Reads: 1}
	stats := func(st *bigtable.FullReadStats) {
		read.RowsSeen += int(st.ReadIterationStats.RowsSeenCount)
		read.CellsSeen += int(st.ReadIterationStats.CellsSeenCount)
		c.rowsSeen.Add(st.ReadIterationStats.RowsSeenCount)
		c.cellsSeen.Add(st.ReadIterationStats.CellsSeenCount)
	}
	var failed error
	err := data.ReadRows(ctx, s.RowSet(), func(r bigtable.Row) bool {
		cells, size := rowSize(r)
		read.RowsReturned++
		read.CellsReturned += cells
		c.rows.Add(1)
		c.cells.Add(int64(cells))
		c.bytes.Add(size)
		failed = each(r)
		return failed == nil
	}, bigtable.RowFilter(filter), bigtable.WithFullReadStats(stats))
	if err == nil {
		err = failed
	}
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

// Table reads the whole of data through filter, shard by shard with Run
// (or a sample of the shards, with o.Sample), and returns what was read.
// Each shard's rows go to row with an accumulator of the shard's own from
// newAcc, both called in the worker goroutine that reads the shard (an
// accumulator is never shared); merge gets the accumulator of each shard
// read to the end, in the calling goroutine, so that merged counts are
// exact for the shards read.
// After an error the stats are not Complete.
func Table[A any](ctx context.Context, data bigtable.TableAPI, filter bigtable.Filter, o Options,
	newAcc func() A, row func(A, bigtable.Row), merge func(A)) (Stats, error) {

	var read Stats
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
		read Stats
	}
	_, err = Run(ctx, shards, o, func(ctx context.Context, s Shard, c *Counter) (shardResult, error) {
		acc := newAcc()
		r, err := ReadShard(ctx, data, s, filter, c, func(r bigtable.Row) error {
			row(acc, r)
			return nil
		})
		return shardResult{acc, r}, err
	}, func(_ int, res shardResult) error {
		merge(res.acc)
		read.Add(res.read)
		read.ShardsRead++
		return nil
	})
	return read, err
}

// Count is a number of cells and the bytes they take, as work over a
// table counts them: each cell's row key, column, 8 bytes for its
// timestamp and, where the work read values, its value.
type Count struct {
	// Cells is the number of cells.
	Cells int64 `json:"cells"`
	// Bytes is what they take.
	Bytes int64 `json:"bytes"`
}

// CountCell returns the count of one cell of the row with key.
func CountCell(key string, it bigtable.ReadItem) Count {
	return Count{Cells: 1, Bytes: int64(len(key)+len(it.Column)+8) + int64(len(it.Value))}
}

// Add adds o to c.
func (c *Count) Add(o Count) { c.Cells += o.Cells; c.Bytes += o.Bytes }
