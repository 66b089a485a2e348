package ttl

import (
	"context"
	"fmt"
	"sort"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl/internal/rules"
)

// An audit of what a table holds: per family, the cells reads return, the
// expired cells still stored because GC lags, and the cells that never
// expire, with their bytes, and when the expired ones become collectable
// and the live ones expire: the storage a team pays for, and when it is
// freed.

// AuditOptions configures AuditTable. The zero value judges cells at
// time.Now, strips values on the server, and reads every shard with
// DefaultWorkers workers.
type AuditOptions struct {
	// Now is the clock that decides which cells are live; it is read once.
	// nil means time.Now.
	Now func() time.Time

	// Values makes the scan transfer values, so that bytes include them.
	// By default the server strips them and bytes count each cell's row
	// key, column and timestamp only: a read of the whole table that
	// moves a small fraction of it.
	Values bool

	// Scan configures the scan: workers, progress, a sample.
	Scan ScanOptions
}

// An Audit is what a table holds, family by family, at one instant. Its
// counts come from one scan of the table (see AuditTable); an audit made
// by NewAudit counts the rows given to AddRow. It is plain data, so that
// partial audits can be encoded (as JSON), sent and merged.
type Audit struct {
	// Table is the table's name.
	Table string `json:"table"`
	// Now is the instant at which cells were judged.
	Now time.Time `json:"now"`
	// Values reports that bytes include values.
	Values bool `json:"values"`
	// Families has one entry per family, sorted by name.
	Families []FamilyAudit `json:"families"`
	// Scan is what was read. A scan that is not Complete gives partial
	// counts (it stopped early) or estimates (a sample), and says so.
	Scan Scan `json:"scan"`

	rules map[string]auditRule // by family; only in an audit made by NewAudit
}

// A FamilyAudit is what one family holds.
type FamilyAudit struct {
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
	Live Count `json:"live"`
	// Expired counts the cells reads hide but the table still stores,
	// because GC has not collected them yet: expired cells, or, under
	// SequenceNumbers, versions beyond the newest n.
	Expired Count `json:"expired"`
	// Forever counts the live cells that never expire by time: Forever
	// cells, and every cell of a family without a strategy and without an
	// age in its GC policy. (Sequence numbers expire by newer versions,
	// not by time: they are in Live only.)
	Forever Count `json:"forever"`
	// Expiring counts the live cells that expire by time by when they do:
	// for a family without a strategy, when its GC policy's age lets GC
	// delete them.
	Expiring []Bucket `json:"expiring"`
	// Collectable counts the expired cells by when the family's GC policy
	// lets GC delete them; most are already due, GC lagging.
	Collectable []Bucket `json:"collectable"`
	// Uncollectable counts the expired cells that the family's GC policy
	// never deletes: it does not match the strategy.
	Uncollectable Count `json:"uncollectable"`
}

// Count is a number of cells and the bytes they take.
type Count struct {
	// Cells is the number of cells.
	Cells int64 `json:"cells"`
	// Bytes is what they take: row key, family, qualifier and timestamp,
	// and the value where the audit transferred values.
	Bytes int64 `json:"bytes"`
}

func (c *Count) add(o Count) { c.Cells += o.Cells; c.Bytes += o.Bytes }

func (c Count) scaled(f float64) Count {
	return Count{int64(float64(c.Cells)*f + 0.5), int64(float64(c.Bytes)*f + 0.5)}
}

// A Bucket counts the cells of a histogram whose instant falls in
// [From, Until); a zero From or Until is an open end.
type Bucket struct {
	// From is the bucket's first instant; zero: open.
	From time.Time `json:"from"`
	// Until is the instant after its last; zero: open.
	Until time.Time `json:"until"`
	// Count is what falls in the bucket.
	Count
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

// auditRule is how the audit judges one family's cells.
type auditRule struct {
	s        Strategy      // nil for a family without a strategy
	age      time.Duration // the GC policy's age, when aged
	aged     bool
	versions int // the versions the GC policy keeps, when limited
	limited  bool
}

// NewAudit returns an empty audit of table at now: families are the
// managed families' strategies (nil or empty when none is managed),
// policies the GC policy of every family of the table as
// AdminClient.TableInfo reports it (bigtable.NoGcPolicy() or nil for none).
// A managed family missing from policies is reported with Policy
// "missing". values says whether the rows given to AddRow carry values.
//
// Rows read with the audit's Filter go to AddRow; audits of disjoint
// parts of the table add up with Merge. This is what AuditTable does,
// shard by shard, and what a pipeline spreading the work over many
// machines does too.
func NewAudit(table string, now time.Time, families map[string]Strategy, policies map[string]bigtable.GCPolicy, values bool) (*Audit, error) {
	managed := map[string]Strategy{}
	if len(families) > 0 {
		var err error
		if managed, err = rules.CheckFamilies(families, ErrInvalidStrategy); err != nil {
			return nil, fmt.Errorf("NewAudit: %w", err)
		}
	}
	a := &Audit{Table: table, Now: now, Values: values, rules: map[string]auditRule{}}
	names := map[string]bool{}
	for name := range managed {
		names[name] = true
	}
	for name := range policies {
		if err := rules.CheckFamilyName(name); err != nil {
			return nil, fmt.Errorf("%w: NewAudit: %v", ErrInvalidStrategy, err)
		}
		names[name] = true
	}
	sorted := make([]string, 0, len(names))
	for name := range names {
		sorted = append(sorted, name)
	}
	sort.Strings(sorted)
	for _, name := range sorted {
		s := managed[name]
		p, found := policies[name]
		if found && p == nil {
			p = bigtable.NoGcPolicy()
		}
		r := auditRule{s: s}
		r.age, r.aged = rules.GCAge(p)
		r.versions, r.limited = rules.GCVersions(p)
		a.rules[name] = r
		f := FamilyAudit{Family: name, Policy: describePolicy(p),
			Expiring: newBuckets(now), Collectable: newBuckets(now)}
		if s != nil {
			f.Strategy = s.String()
		}
		a.Families = append(a.Families, f)
	}
	return a, nil
}

// Filter returns the filter to read the table with for AddRow: every
// cell, its value stripped unless the audit counts values.
func (a *Audit) Filter() bigtable.Filter {
	if a.Values {
		return bigtable.PassAllFilter()
	}
	return bigtable.StripValueFilter()
}

// AddRow counts the cells of a row read with the audit's Filter. Cells of
// a family the audit does not know are counted as a family without a
// strategy. It must be called on an audit made by NewAudit.
func (a *Audit) AddRow(r bigtable.Row) {
	key := int64(len(r.Key()))
	for family, items := range r {
		f := a.family(family)
		rule := a.rules[family]
		rank := 0 // the cell's place in its column, newest first
		for i, it := range items {
			if i > 0 && it.Column == items[i-1].Column {
				rank++
			} else {
				rank = 0
			}
			c := Count{Cells: 1, Bytes: key + int64(len(it.Column)) + 8 + int64(len(it.Value))}
			a.judge(f, rule, it.Timestamp, rank, c)
		}
	}
}

// judge counts one cell of family f, stamped ts, the rank-th newest of its
// column.
func (a *Audit) judge(f *FamilyAudit, rule auditRule, ts bigtable.Timestamp, rank int, c Count) {
	stamped := ts.Time()
	n, versioned := 0, false
	if rule.s != nil {
		n, versioned = rule.s.Versions()
	}
	switch {
	case rule.s == nil:
		f.Live.add(c)
		if !rule.aged {
			f.Forever.add(c)
			return
		}
		f.Expiring[bucketOf(stamped.Add(rule.age).Sub(a.Now))].add(c)
	case versioned:
		if rank < n {
			f.Live.add(c)
			return
		}
		f.Expired.add(c)
		if rule.limited && rank >= rule.versions || rule.aged {
			// A version limit deletes it now; an age rule (which deletes
			// sequence numbers, stamped in 1970, at once) too.
			f.Collectable[bucketOf(0)].add(c)
			return
		}
		f.Uncollectable.add(c)
	default:
		expiry, expires := rule.s.ExpiresAt(ts)
		switch {
		case !expires:
			f.Live.add(c)
			f.Forever.add(c)
		case expiry.After(a.Now):
			f.Live.add(c)
			f.Expiring[bucketOf(expiry.Sub(a.Now))].add(c)
		case rule.aged:
			f.Expired.add(c)
			f.Collectable[bucketOf(stamped.Add(rule.age).Sub(a.Now))].add(c)
		case rule.limited && rank >= rule.versions:
			f.Expired.add(c)
			f.Collectable[bucketOf(0)].add(c)
		default:
			f.Expired.add(c)
			f.Uncollectable.add(c)
		}
	}
}

// family returns the audit of family, adding one (without a strategy, the
// policy unknown) for a family the audit did not know.
func (a *Audit) family(name string) *FamilyAudit {
	i := sort.Search(len(a.Families), func(i int) bool { return a.Families[i].Family >= name })
	if i < len(a.Families) && a.Families[i].Family == name {
		return &a.Families[i]
	}
	a.Families = append(a.Families, FamilyAudit{})
	copy(a.Families[i+1:], a.Families[i:])
	a.Families[i] = FamilyAudit{Family: name, Policy: "unknown", Expiring: newBuckets(a.Now), Collectable: newBuckets(a.Now)}
	return &a.Families[i]
}

// Merge adds the counts of o, an audit of another part of the same table
// at the same instant, to a. Audits decoded from JSON merge too.
func (a *Audit) Merge(o *Audit) error {
	if o == nil {
		return nil
	}
	if !o.Now.Equal(a.Now) || o.Table != a.Table || o.Values != a.Values {
		return fmt.Errorf("%w: Audit.Merge: an audit of table %q at %v (values %v) into one of table %q at %v (values %v)",
			ErrInvalidOption, o.Table, o.Now, o.Values, a.Table, a.Now, a.Values)
	}
	for _, of := range o.Families {
		f := a.family(of.Family)
		if f.Policy == "unknown" {
			f.Strategy, f.Policy = of.Strategy, of.Policy
		}
		f.Live.add(of.Live)
		f.Expired.add(of.Expired)
		f.Forever.add(of.Forever)
		f.Uncollectable.add(of.Uncollectable)
		for i := 0; i < numBuckets && i < len(of.Expiring) && i < len(of.Collectable); i++ {
			f.Expiring[i].add(of.Expiring[i].Count)
			f.Collectable[i].add(of.Collectable[i].Count)
		}
	}
	a.Scan.add(o.Scan)
	a.Scan.ShardsRead += o.Scan.ShardsRead
	return nil
}

// scale multiplies every count by f: a sample's audit as an estimate.
func (a *Audit) scale(f float64) {
	if f == 1 {
		return
	}
	for i := range a.Families {
		fa := &a.Families[i]
		fa.Live, fa.Expired, fa.Forever, fa.Uncollectable = fa.Live.scaled(f), fa.Expired.scaled(f), fa.Forever.scaled(f), fa.Uncollectable.scaled(f)
		for j := range fa.Expiring {
			fa.Expiring[j].Count = fa.Expiring[j].Count.scaled(f)
			fa.Collectable[j].Count = fa.Collectable[j].Count.scaled(f)
		}
	}
}

// AuditTable reads the whole table through data (the table opened with a
// data client) and returns what it holds, family by family; see Audit.
// families are the managed families' strategies, which may be nil when
// none is; the table's other families are audited as families without a
// strategy. admin reads the families' GC policies, which decide when
// expired cells become collectable.
//
// The table is read shard by shard (see Shards and ScanOptions), values
// stripped on the server unless opts.Values. When the scan stops early
// (an error, a timeout, a cancellation) the audit of the shards read is
// returned with the error, its Scan not Complete: its counts are partial.
// With opts.Scan.Sample the counts are scaled estimates, and say so.
func AuditTable(ctx context.Context, admin *bigtable.AdminClient, table string, data bigtable.TableAPI, families map[string]Strategy, opts AuditOptions) (*Audit, error) {
	if ctx == nil || admin == nil || data == nil || rules.IsNilPointer(data) {
		return nil, fmt.Errorf("%w: AuditTable: nil context, admin client or table", ErrNilArgument)
	}
	if err := opts.Scan.check(); err != nil {
		return nil, fmt.Errorf("AuditTable: %w", err)
	}
	info, err := admin.TableInfo(ctx, table)
	if status.Code(err) == codes.NotFound {
		return nil, fmt.Errorf("ttl: table %q does not exist: %w", table, err)
	}
	if err != nil {
		return nil, fmt.Errorf("ttl: table %q: %w", table, err)
	}
	policies := map[string]bigtable.GCPolicy{}
	for _, f := range info.FamilyInfos {
		policies[f.Name] = f.FullGCPolicy
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	audit, err := NewAudit(table, now(), families, policies, opts.Values)
	if err != nil {
		return nil, err
	}
	// Each shard's audit starts from a copy made now: the workers must not
	// read audit while the calling goroutine merges into it.
	blank := audit.empty()
	read, err := scanTable(ctx, data, audit.Filter(), opts.Scan,
		func() *Audit { return blank.empty() },
		(*Audit).AddRow,
		func(part *Audit) {
			// The same table and instant: merging cannot fail.
			_ = audit.Merge(part)
		})
	audit.scale(read.scale())
	audit.Scan = read
	if err != nil {
		return audit, fmt.Errorf("ttl: table %q: the audit stopped after %d of %d shards; its counts are partial: %w",
			table, read.ShardsRead, read.planned(), err)
	}
	return audit, nil
}

// empty returns an empty audit with a's families and rules, for one part
// of the table.
func (a *Audit) empty() *Audit {
	e := &Audit{Table: a.Table, Now: a.Now, Values: a.Values, rules: a.rules, Families: make([]FamilyAudit, len(a.Families))}
	for i, f := range a.Families {
		e.Families[i] = FamilyAudit{Family: f.Family, Strategy: f.Strategy, Policy: f.Policy,
			Expiring: newBuckets(a.Now), Collectable: newBuckets(a.Now)}
	}
	return e
}
