package scan

import (
	"encoding/json"
	"fmt"

	"github.com/cellttl/ttl/internal/text"
)

// The counting rules. Progress, Stats and the scan's metrics count by
// these rules, so that every number a scan reports agrees with the others
// at every instant and with the final result:
//
//   - Returned: a row or cell returned is one the server's filter let
//     through and the client received. A cell that two branches of the
//     filter return is one cell.
//   - Seen: a row or cell seen is one the server read to answer. The
//     server reports what one request saw when the request ends; until
//     then, and for a request the client retried (which never reports),
//     what it returned counts as seen, the least it can have read. So rows
//     seen are never fewer than rows returned, cells likewise, at any
//     instant, and a shard's rows seen cover the rows every attempt of its
//     stream returned.
//   - Bytes: the bytes of returned cells, each cell counted alone as
//     CountCell counts it (its row key, column, 8 bytes of timestamp and
//     its value as received): the same bytes a report's Count adds up.
//   - Requests: one per ReadRows stream: a shard read is one, and a
//     stream the client retried after it had returned rows is one more,
//     a retry. (A stream the bigtable client retried before it returned
//     any row cannot be told apart through bigtable.TableAPI, and is not
//     counted.)
//   - Shards done: shards read to the end and merged; rows of a shard
//     that failed are counted as returned and seen, but its shard is not
//     done.

// Stats count what table-wide work read, by the counting rules above. The
// table is read shard by shard (see Shards) through one server-side
// filter, which usually strips values and returns only the cells the work
// needs; the server still reads every cell of each shard.
type Stats struct {
	// Reads is the number of ReadRows requests: one per shard read, and
	// one per retry of a shard's stream.
	Reads int `json:"reads"`
	// Retries is how many of the Reads resumed a stream the client
	// retried after it had returned rows.
	Retries int `json:"retries,omitempty"`
	// RowsSeen and CellsSeen are the rows and cells the server read: what
	// each request reported when it ended, and what a retried request
	// returned before it failed. Never fewer than those returned.
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
	// number of ranges in the sample (two of each shard's, mostly); 0
	// otherwise. ShardsRead then counts the ranges read.
	Sampled int `json:"sampled,omitempty"`
	// Estimates are, for a sample read to the end, the table's counts
	// estimated from it, with their 95% intervals; nil otherwise.
	Estimates *Estimates `json:"estimates,omitempty"`
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
// to s. Shards, ShardsRead, Sampled and Estimates are the caller's to
// keep.
func (s *Stats) Add(o Stats) {
	s.Reads += o.Reads
	s.Retries += o.Retries
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

// String says what the work read, and whether its counts are exact,
// partial or estimates, such as
// "64 shards, 70 reads, 2000 rows and 3000 cells seen, 1880 cells returned",
// or "12 of 64 shards read (partial), ..." for work that stopped early.
func (s Stats) String() string {
	var shards string
	switch {
	case s.Sampled > 0:
		shards = fmt.Sprintf("a sample of %d ranges of %d shards (estimates: counts ×%.1f)", s.Sampled, s.Shards, s.Scale())
		if s.ShardsRead < s.Sampled {
			shards = fmt.Sprintf("%d of a sample of %d ranges of %d shards read (partial)", s.ShardsRead, s.Sampled, s.Shards)
		}
	case s.ShardsRead < s.Shards:
		shards = fmt.Sprintf("%d of %d shards read (partial)", s.ShardsRead, s.Shards)
	default:
		shards = text.Plural(s.Shards, "shard", "shards")
	}
	return fmt.Sprintf("%s, %s, %s and %s seen, %s returned", shards, text.Plural(s.Reads, "read", "reads"),
		text.Plural(s.RowsSeen, "row", "rows"), text.Plural(s.CellsSeen, "cell", "cells"), text.Plural(s.CellsReturned, "cell", "cells"))
}

// Scale returns the factor that scales counts of the ranges read to the
// table, for a sample: Estimates.Scale when there are estimates, the
// share of the ranges read otherwise; 1 for work that read no sample.
func (s Stats) Scale() float64 {
	if s.Estimates != nil {
		return s.Estimates.Scale
	}
	if s.Sampled == 0 || s.ShardsRead == 0 {
		return 1
	}
	return float64(s.Shards) / float64(s.ShardsRead)
}
