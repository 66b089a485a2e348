// Package scan runs work over a whole Bigtable table: split on the
// table's own tablets into shards, read by a bounded pool of workers that
// ends with the call, with progress as it goes and, for work that writes,
// a checkpoint from which an interrupted run resumes.
//
// It knows nothing of time to live: the family tools, the audit and the
// strategy moves of this module are its users, each with a filter and a
// count of its own.
package scan

import (
	"context"
	"fmt"
	"sort"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
)

// A Shard is one piece of work that reads a whole table: the rows from
// Start, inclusive, to End, exclusive. An empty Start is the table's
// beginning, an empty End its end.
//
// Bigtable serves a table from many tablets, and one ReadRows stream reads
// them one after another, bounded by one node's scan rate however large
// the cluster. Shards split on the table's own tablet boundaries, read
// concurrently, are served by many nodes at once.
type Shard struct {
	// Start is the shard's first row key, included; "" is the table's
	// beginning.
	Start string `json:"start"`
	// End is the row key the shard stops before, excluded; "" is the
	// table's end.
	End string `json:"end"`
}

// RowSet returns the rows of the shard, for a ReadRows call.
func (s Shard) RowSet() bigtable.RowSet {
	if s.End == "" {
		return bigtable.InfiniteRange(s.Start)
	}
	return bigtable.NewRange(s.Start, s.End)
}

// String returns the shard as a half-open range, such as `["", "user#5")`
// or `["user#5", end)`.
func (s Shard) String() string {
	end := "end"
	if s.End != "" {
		end = fmt.Sprintf("%q", s.End)
	}
	return fmt.Sprintf("[%q, %s)", s.Start, end)
}

// MaxShards is the most shards Shards returns. A table whose sample has
// more boundaries is split on every k-th of them, so that a shard is never
// so small that its request costs more than its rows (the in-memory
// emulator samples one row in a hundred; Bigtable samples tablets).
const MaxShards = 1024

// Shards splits the table on the boundaries tbl.SampleRowKeys reports (the
// tablets of the table as Bigtable serves it), into at most MaxShards
// shards that together cover every row once, in row order.
func Shards(ctx context.Context, tbl bigtable.TableAPI) ([]Shard, error) {
	if ctx == nil || tbl == nil || rules.IsNilPointer(tbl) {
		return nil, fmt.Errorf("%w: scan.Shards: nil context or table", rules.ErrNilArgument)
	}
	keys, err := tbl.SampleRowKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("scan: sampling the table's row keys: %w", err)
	}
	return splitOn(keys, MaxShards), nil
}

// splitOn returns the shards between the boundaries keys (in any order,
// with repeats and "" ignored), using at most max-1 of them evenly spread.
func splitOn(keys []string, max int) []Shard {
	bounds := make([]string, 0, len(keys))
	for _, k := range keys {
		if k != "" {
			bounds = append(bounds, k)
		}
	}
	sort.Strings(bounds)
	uniq := bounds[:0]
	for i, k := range bounds {
		if i == 0 || k != bounds[i-1] {
			uniq = append(uniq, k)
		}
	}
	bounds = uniq
	if len(bounds) > max-1 {
		kept := make([]string, max-1)
		for i := range kept {
			kept[i] = bounds[(i+1)*len(bounds)/max]
		}
		bounds = kept
	}
	shards := make([]Shard, 0, len(bounds)+1)
	start := ""
	for _, k := range bounds {
		shards = append(shards, Shard{Start: start, End: k})
		start = k
	}
	return append(shards, Shard{Start: start})
}
