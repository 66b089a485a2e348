package scan

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cellttl/ttl/internal/text"
)

// Progress is how far table-wide work has come.
type Progress struct {
	// Shards is the number of shards to read (with Options.Sample, those
	// of the sample); ShardsDone those read to the end.
	Shards, ShardsDone int
	// Rows, Cells and Bytes are what the server returned so far, in every
	// shard, finished or not: after the server's filter, so usually far
	// less than the table holds. Bytes counts each cell as CountCell
	// does: its row key, column, timestamp and value as it arrived
	// (values are usually stripped), the bytes a report's counts add up.
	Rows, Cells, Bytes int64
	// RowsSeen and CellsSeen are what the server read to return them: as
	// each request reports it when it ends, and until then what it
	// returned. Never fewer than Rows and Cells (see Stats).
	RowsSeen, CellsSeen int64
	// Requests is the number of ReadRows requests made, Retries those
	// that resumed a retried stream (see Stats.Reads).
	Requests, Retries int64
	// Elapsed is the time since the work started.
	Elapsed time.Duration
}

// RowsPerSecond is the rate at which the server has read rows so far.
func (p Progress) RowsPerSecond() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.RowsSeen) / p.Elapsed.Seconds()
}

// Remaining estimates the time left from the share of shards done; shards
// split on tablet boundaries are of about equal size. It reports false
// before the first shard is done.
func (p Progress) Remaining() (time.Duration, bool) {
	if p.ShardsDone == 0 || p.Shards == 0 {
		return 0, false
	}
	left := float64(p.Shards-p.ShardsDone) / float64(p.ShardsDone)
	return time.Duration(float64(p.Elapsed) * left), true
}

// String prints the progress on one line, such as
// "12/64 shards, 1.2M rows and 3.4M cells seen, 3.1k rows returned (1.2 MiB), 45.0k rows/s, 2m10s left",
// with the streams retried, if any, before the rate.
func (p Progress) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d shards, %s rows and %s cells seen, %s rows returned (%s)",
		p.ShardsDone, p.Shards, text.Metric(p.RowsSeen), text.Metric(p.CellsSeen), text.Metric(p.Rows), text.Bytes(p.Bytes))
	if p.Retries > 0 {
		fmt.Fprintf(&b, ", %s", text.Plural(int(p.Retries), "stream retried", "streams retried"))
	}
	if r := p.RowsPerSecond(); r > 0 {
		fmt.Fprintf(&b, ", %s rows/s", text.Metric(int64(r)))
	}
	if left, ok := p.Remaining(); ok && p.ShardsDone < p.Shards {
		fmt.Fprintf(&b, ", %v left", left.Round(time.Second))
	}
	return b.String()
}

// A ShardProgress is what one shard's work has read so far. ReadShard adds to
// it as rows arrive; Run sums every shard's ShardProgress into its Progress
// while the workers add to them.
type ShardProgress struct {
	rows, cells, bytes  atomic.Int64 // returned so far
	rowsSeen, cellsSeen atomic.Int64 // read by the server: never less than returned
	requests, retries   atomic.Int64
}

// request counts one more ReadRows request in c and read.
func (c *ShardProgress) request(read *Stats) {
	c.requests.Add(1)
	read.Reads++
}

// addTo adds the shard's progress to p. Returned counts are loaded before seen
// ones, which the workers add to first: the sums never show more rows or
// cells returned than seen.
func (c *ShardProgress) addTo(p *Progress) {
	p.Rows += c.rows.Load()
	p.Cells += c.cells.Load()
	p.Bytes += c.bytes.Load()
	p.RowsSeen += c.rowsSeen.Load()
	p.CellsSeen += c.cellsSeen.Load()
	p.Requests += c.requests.Load()
	p.Retries += c.retries.Load()
}
