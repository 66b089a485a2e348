// Package audit counts what a table holds, family by family, and when it is freed.
//
// It counts the cells reads return, the expired cells still stored because
// GC lags, the cells that never expire, with their bytes, and when the
// expired ones become collectable and the live ones expire: the storage a
// team pays for, and when it is freed.
//
// An Auditor, bound once with New to the clients, the table, its families'
// strategies and the options, audits the whole table with the scan engine
// (Auditor.Run). The per-row logic is exported (NewReport, Report.Filter,
// Report.AddRow, Report.Merge) and a Report
// is plain data, so that audits of disjoint parts of a table made anywhere
// (the Beam module's workers, say) add up to the table's.
package audit

import (
	"fmt"
	"sort"
	"time"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/scan"
)

// A Report is what a table holds, family by family, at one instant. Its
// counts come from one scan of the table (see Auditor.Run); a report made by NewReport
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

	// AllBuckets makes the report's JSON list every bucket of its
	// histograms, empty ones too; by default only buckets that count
	// something are encoded (see Options.AllBuckets).
	AllBuckets bool `json:"-"`

	rules map[string]rule // by family; only in a report made by NewReport
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
// [From, Until); a zero From or Until is an open end, which JSON leaves
// out.
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

// rule is how the audit judges one family's cells.
type rule struct {
	s        ttl.Strategy  // nil for a family without a strategy
	age      time.Duration // the GC policy's age, when aged
	aged     bool
	versions int // the versions the GC policy keeps, when limited
	limited  bool
}
