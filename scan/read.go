package scan

import (
	"context"
	"fmt"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/text"
)

// ReadShard reads the rows of shard s of data through filter, calls each
// for every row returned, counts them in c (if not nil) as they come, and
// returns what was read, by the counting rules (see Stats). It stops at
// the first error each returns, and returns it.
func ReadShard(ctx context.Context, data bigtable.TableAPI, s Shard, filter bigtable.Filter, c *ShardProgress, each func(bigtable.Row) error) (Stats, error) {
	return ReadSet(ctx, data, s.RowSet(), filter, c, each)
}

// ReadSet is ReadShard for any set of rows, such as a bigtable.RowList of
// the rows an index names: it reads them in one request, counted as
// ReadShard counts a shard's.
func ReadSet(ctx context.Context, data bigtable.TableAPI, set bigtable.RowSet, filter bigtable.Filter, c *ShardProgress, each func(bigtable.Row) error) (Stats, error) {
	if c == nil {
		c = new(ShardProgress)
	}
	var read Stats
	c.request(&read)
	// What arrived since the last request's report: the rows and cells
	// returned (cells as the server counts them, each item) and the cells
	// counted as seen meanwhile.
	var rows, items, cells int64
	stats := func(st *bigtable.FullReadStats) {
		it := st.ReadIterationStats
		// Rows returned beyond what the reporting request returned came
		// from an attempt the client retried: one more request, and its
		// rows and cells seen at least as returned.
		lostRows := max(0, rows-it.RowsReturnedCount)
		lostItems := max(0, items-it.CellsReturnedCount)
		if lostRows > 0 {
			c.request(&read)
			c.retries.Add(1)
			read.Retries++
		}
		dr := max(0, it.RowsSeenCount+lostRows-rows)
		dc := max(0, it.CellsSeenCount+lostItems-cells)
		c.rowsSeen.Add(dr)
		c.cellsSeen.Add(dc)
		read.RowsSeen += int(dr)
		read.CellsSeen += int(dc)
		rows, items, cells = 0, 0, 0
	}
	var failed error
	err := data.ReadRows(ctx, set, func(r bigtable.Row) bool {
		n, raw, size := rowSize(r)
		// Seen before returned: a progress that reads returned first
		// never finds more returned than seen.
		c.rowsSeen.Add(1)
		c.cellsSeen.Add(int64(n))
		c.rows.Add(1)
		c.cells.Add(int64(n))
		c.bytes.Add(size)
		rows++
		items += int64(raw)
		cells += int64(n)
		read.RowsSeen++
		read.CellsSeen += n
		read.RowsReturned++
		read.CellsReturned += n
		failed = each(r)
		return failed == nil
	}, bigtable.RowFilter(filter), bigtable.WithFullReadStats(stats))
	if err == nil {
		err = failed
	}
	return read, err
}

// rowSize returns the distinct cells of a row (an interleave returns a
// cell that two of its branches pass twice, one after the other), the
// items it arrived as, and the bytes of its cells as CountCell counts
// them.
func rowSize(r bigtable.Row) (cells, items int, size int64) {
	key := r.Key()
	for _, its := range r {
		for i, it := range its {
			items++
			if i > 0 && it.Column == its[i-1].Column && it.Timestamp == its[i-1].Timestamp {
				continue
			}
			cells++
			size += CountCell(key, it).Bytes
		}
	}
	return cells, items, size
}

// ReadTable reads the whole of data through filter, shard by shard with Run
// (or a sample of ranges of every shard, with o.Sample, the stats then
// carrying Estimates), and returns what was read.
// Each shard's rows go to row with an accumulator of the shard's own from
// newAcc, both called in the worker goroutine that reads the shard (an
// accumulator is never shared); merge gets the accumulator of each shard
// read to the end, in the calling goroutine, so that merged counts are
// exact for the shards read.
// After an error the stats are not Complete.
func ReadTable[A any](ctx context.Context, data bigtable.TableAPI, filter bigtable.Filter, o Options,
	newAcc func() A, row func(A, bigtable.Row), merge func(A)) (Stats, error) {

	var read Stats
	shards, err := Shards(ctx, data)
	if err != nil {
		return read, err
	}
	read.Shards = len(shards)
	var units []unit
	if o.Sample > 0 {
		units = sampleUnits(shards, o.Sample, o.random())
		shards = make([]Shard, len(units))
		for i, u := range units {
			shards[i] = u.Shard
		}
		read.Sampled = len(units)
	}
	type shardResult struct {
		acc  A
		read Stats
	}
	var counts []unitCounts
	_, err = Run(ctx, shards, o, func(ctx context.Context, s Shard, c *ShardProgress) (shardResult, error) {
		acc := newAcc()
		r, err := ReadShard(ctx, data, s, filter, c, func(r bigtable.Row) error {
			row(acc, r)
			return nil
		})
		return shardResult{acc, r}, err
	}, func(i int, res shardResult) error {
		merge(res.acc)
		read.Add(res.read)
		read.ShardsRead++
		if units != nil {
			r := res.read
			counts = append(counts, unitCounts{stratum: units[i].stratum, ranges: units[i].ranges,
				y: [4]float64{float64(r.RowsSeen), float64(r.CellsSeen), float64(r.RowsReturned), float64(r.CellsReturned)}})
		}
		return nil
	})
	if read.Estimate() {
		read.Estimates = estimate(counts)
	}
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

// String prints the count as reports spell it: "3 cells (1.5 KiB)".
func (c Count) String() string {
	return fmt.Sprintf("%s (%s)", text.Plural(int(c.Cells), "cell", "cells"), text.Bytes(c.Bytes))
}
