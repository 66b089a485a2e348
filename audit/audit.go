// Package audit counts what a table holds, family by family: the cells
// reads return, the expired cells still stored because GC lags, the cells
// that never expire, with their bytes, and when the expired ones become
// collectable and the live ones expire: the storage a team pays for, and
// when it is freed.
//
// Table audits a whole table with the scan engine. The per-row logic is
// exported (New, Report.Filter, Report.AddRow, Report.Merge) and a Report
// is plain data, so that audits of disjoint parts of a table made anywhere
// (the Beam module's workers, say) add up to the table's.
package audit

import (
	"context"
	"fmt"
	"sort"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"

	"github.com/cellttl/ttl/internal/rules"
)

// Options configures Table. The zero value judges cells at time.Now,
// strips values on the server, and reads every shard with
// scan.DefaultWorkers workers.
type Options struct {
	// Now is the clock that decides which cells are live; it is read once.
	// nil means time.Now.
	Now func() time.Time

	// Values makes the scan transfer values, so that bytes include them.
	// By default the server strips them and bytes count each cell's row
	// key, column and timestamp only: a read of the whole table that
	// moves a small fraction of it.
	Values bool

	// Scan configures the scan: workers, progress, a sample.
	Scan scan.Options
}

// A Report is what a table holds, family by family, at one instant. Its
// counts come from one scan of the table (see Table); a report made by New
// counts the rows given to AddRow. It is plain data, so that partial
// reports can be encoded (as JSON), sent and merged.
type Report struct {
	// Table is the table's name.
	Table string `json:"table"`
	// Now is the instant at which cells were judged.
	Now time.Time `json:"now"`
	// Values reports that bytes include values.
	Values bool `json:"values"`
	// Families has one entry per family, sorted by name.
	Families []Family `json:"families"`
	// Read is what was read. Work that did not read every shard gives
	// partial counts (it stopped early) or estimates (a sample), and says
	// so.
	Read scan.Stats `json:"read"`

	rules map[string]rule // by family; only in a report made by New
}

// String sums the report up on one line, such as
// `table "events" at 2030-04-30T09:00:00.000Z: 3 families, 1200 cells live, 40 expired and still stored`.
func (a *Report) String() string {
	var live, expired int64
	for _, f := range a.Families {
		live += f.Live.Cells
		expired += f.Expired.Cells
	}
	s := fmt.Sprintf("table %q at %s: %s, %d cells live, %d expired and still stored",
		a.Table, text.Time(a.Now), text.Plural(len(a.Families), "family", "families"), live, expired)
	switch {
	case a.Read.Stopped():
		s += " (partial: the scan stopped)"
	case a.Read.Estimate():
		s += " (estimates from a sample)"
	}
	return s
}

// A Family is what one family holds.
type Family struct {
	// Family is the family's name.
	Family string `json:"family"`
	// Strategy is the family's strategy, as its String method prints it;
	// "" for a family without one.
	Strategy string `json:"strategy,omitempty"`
	// Policy is the family's GC policy as found, as cbt setgcpolicy takes
	// it ("missing" for a family the table does not have).
	Policy string `json:"policy"`
	// Live counts the cells reads return: for a family without a
	// strategy, every cell.
	Live scan.Count `json:"live"`
	// Expired counts the cells reads hide but the table still stores,
	// because GC has not collected them yet: expired cells, or, under
	// SequenceNumbers, versions beyond the newest n.
	Expired scan.Count `json:"expired"`
	// Forever counts the live cells that never expire by time: Forever
	// cells, and every cell of a family without a strategy and without an
	// age in its GC policy. (Sequence numbers expire by newer versions,
	// not by time: they are in Live only.)
	Forever scan.Count `json:"forever"`
	// Expiring counts the live cells that expire by time by when they do:
	// for a family without a strategy, when its GC policy's age lets GC
	// delete them.
	Expiring []Bucket `json:"expiring"`
	// Collectable counts the expired cells by when the family's GC policy
	// lets GC delete them; most are already due, GC lagging.
	Collectable []Bucket `json:"collectable"`
	// Uncollectable counts the expired cells that the family's GC policy
	// never deletes: it does not match the strategy.
	Uncollectable scan.Count `json:"uncollectable"`
}

// scaled returns c with both numbers multiplied by f, rounded: a
// sample's count as an estimate for the table.
func scaled(c scan.Count, f float64) scan.Count {
	return scan.Count{Cells: int64(float64(c.Cells)*f + 0.5), Bytes: int64(float64(c.Bytes)*f + 0.5)}
}

// A Bucket counts the cells of a histogram whose instant falls in
// [From, Until); a zero From or Until is an open end.
type Bucket struct {
	// From is the bucket's first instant; zero: open.
	From time.Time `json:"from"`
	// Until is the instant after its last; zero: open.
	Until time.Time `json:"until"`
	// Count is what falls in the bucket.
	scan.Count
}

// auditEdges are the edges of the histograms, as durations from the
// audit's Now: the past is negative.
var auditEdges = [...]time.Duration{
	-30 * 24 * time.Hour, -7 * 24 * time.Hour, -24 * time.Hour, -time.Hour,
	0,
	time.Hour, 24 * time.Hour, 7 * 24 * time.Hour, 30 * 24 * time.Hour, 365 * 24 * time.Hour,
}

// numBuckets is the number of buckets of a histogram.
const numBuckets = len(auditEdges) + 1

// bucketOf returns the bucket of an instant d from now.
func bucketOf(d time.Duration) int {
	return sort.Search(len(auditEdges), func(i int) bool { return d < auditEdges[i] })
}

// newBuckets returns an empty histogram at now.
func newBuckets(now time.Time) []Bucket {
	b := make([]Bucket, numBuckets)
	for i := range b {
		if i > 0 {
			b[i].From = now.Add(auditEdges[i-1])
		}
		if i < len(auditEdges) {
			b[i].Until = now.Add(auditEdges[i])
		}
	}
	return b
}

// Table reads the whole table through data (the table opened with a data
// client) and returns what it holds, family by family; see Report.
// families are the managed families' strategies, which may be nil when
// none is; the table's other families are audited as families without a
// strategy. admin reads the families' GC policies, which decide when
// expired cells become collectable.
//
// The table is read shard by shard (see package scan), values stripped on
// the server unless opts.Values. When the scan stops early (an error, a
// timeout, a cancellation) the report of the shards read is returned with
// the error, its Read not Complete: its counts are partial. With
// opts.Scan.Sample the counts are scaled estimates, and say so.
func Table(ctx context.Context, admin *bigtable.AdminClient, table string, data bigtable.TableAPI, families map[string]ttl.Strategy, opts Options) (*Report, error) {
	if ctx == nil || admin == nil || data == nil || rules.IsNilPointer(data) {
		return nil, fmt.Errorf("%w: audit.Table: nil context, admin client or table", ttl.ErrNilArgument)
	}
	if err := opts.Scan.Check(); err != nil {
		return nil, fmt.Errorf("audit.Table: %w", err)
	}
	policies, err := policy.Policies(ctx, admin, table)
	if status.Code(err) == codes.NotFound {
		return nil, fmt.Errorf("audit: table %q does not exist: %w", table, err)
	}
	if err != nil {
		return nil, err
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	audit, err := New(table, now(), families, policies, opts.Values)
	if err != nil {
		return nil, err
	}
	// Each shard's audit starts from a copy made now: the workers must not
	// read audit while the calling goroutine merges into it.
	blank := audit.empty()
	read, err := scan.Table(ctx, data, audit.Filter(), opts.Scan,
		func() *Report { return blank.empty() },
		(*Report).AddRow,
		func(part *Report) {
			// The same table and instant: merging cannot fail.
			_ = audit.Merge(part)
		})
	audit.scale(read.Scale())
	audit.Read = read
	if err != nil {
		return audit, fmt.Errorf("audit: table %q: the audit stopped after %d of %d shards; its counts are partial: %w",
			table, read.ShardsRead, read.Planned(), err)
	}
	return audit, nil
}

// empty returns an empty report with a's families and rules, for one part
// of the table.
func (a *Report) empty() *Report {
	e := &Report{Table: a.Table, Now: a.Now, Values: a.Values, rules: a.rules, Families: make([]Family, len(a.Families))}
	for i, f := range a.Families {
		e.Families[i] = Family{Family: f.Family, Strategy: f.Strategy, Policy: f.Policy,
			Expiring: newBuckets(a.Now), Collectable: newBuckets(a.Now)}
	}
	return e
}
