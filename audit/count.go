package audit

import (
	"fmt"
	"sort"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
)

// NewReport returns an empty report of table at now: families are the managed
// families' strategies (nil or empty when none is managed), policies the
// GC policy of every family of the table as AdminClient.TableInfo reports
// it (bigtable.NoGcPolicy() or nil for none; see policy.Tool.Policies). A
// managed family missing from policies is reported with Policy "missing".
// values says whether the rows given to AddRow carry values.
//
// Rows read with the report's Filter go to AddRow; reports of disjoint
// parts of the table add up with Merge. This is what Auditor.Run does, shard by
// shard, and what a pipeline spreading the work over many machines does
// too.
func NewReport(table string, now time.Time, families map[string]ttl.Strategy, policies map[string]bigtable.GCPolicy, values bool) (*Report, error) {
	managed := map[string]ttl.Strategy{}
	if len(families) > 0 {
		var err error
		if managed, err = rules.CheckFamilies(families, ttl.ErrInvalidStrategy); err != nil {
			return nil, fmt.Errorf("audit.NewReport: %w", err)
		}
	}
	a := &Report{Table: table, Now: now, Values: values, rules: map[string]rule{}}
	names := map[string]bool{}
	for name := range managed {
		names[name] = true
	}
	for name := range policies {
		if err := rules.CheckFamilyName(name); err != nil {
			return nil, fmt.Errorf("%w: audit.NewReport: %v", ttl.ErrInvalidStrategy, err)
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
		r := rule{s: s}
		r.age, r.aged = rules.GCAge(p)
		r.versions, r.limited = rules.GCVersions(p)
		a.rules[name] = r
		f := Family{Family: name, Policy: policy.Describe(p),
			Expiring: newBuckets(now), Collectable: newBuckets(now)}
		if s != nil {
			f.Strategy = s.String()
		}
		a.Families = append(a.Families, f)
	}
	return a, nil
}

// Filter returns the filter to read the table with for AddRow: every
// cell, its value stripped unless the report counts values.
func (a *Report) Filter() bigtable.Filter {
	if a.Values {
		return bigtable.PassAllFilter()
	}
	return bigtable.StripValueFilter()
}

// AddRow counts the cells of a row read with the report's Filter. Cells
// of a family the report does not know are counted as a family without a
// strategy. It must be called on a report made by NewReport.
func (a *Report) AddRow(r bigtable.Row) {
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
			a.judge(f, rule, it.Timestamp, rank, scan.CountCell(r.Key(), it))
		}
	}
}

// judge counts one cell of family f, stamped ts, the rank-th newest of its
// column.
func (a *Report) judge(f *Family, rule rule, ts bigtable.Timestamp, rank int, c scan.Count) {
	stamped := ts.Time()
	n, versioned := 0, false
	if rule.s != nil {
		n, versioned = rule.s.Versions()
	}
	switch {
	case rule.s == nil:
		f.Live.Add(c)
		if !rule.aged {
			f.Forever.Add(c)
			return
		}
		f.Expiring[bucketOf(stamped.Add(rule.age).Sub(a.Now))].Add(c)
	case versioned:
		if rank < n {
			f.Live.Add(c)
			return
		}
		f.Expired.Add(c)
		if rule.limited && rank >= rule.versions || rule.aged {
			// A version limit deletes it now; an age rule (which deletes
			// sequence numbers, stamped in 1970, at once) too.
			f.Collectable[bucketOf(0)].Add(c)
			return
		}
		f.Uncollectable.Add(c)
	default:
		expiry, expires := rule.s.ExpiresAt(ts)
		switch {
		case !expires:
			f.Live.Add(c)
			f.Forever.Add(c)
		case expiry.After(a.Now):
			f.Live.Add(c)
			f.Expiring[bucketOf(expiry.Sub(a.Now))].Add(c)
		case rule.aged:
			f.Expired.Add(c)
			f.Collectable[bucketOf(stamped.Add(rule.age).Sub(a.Now))].Add(c)
		case rule.limited && rank >= rule.versions:
			f.Expired.Add(c)
			f.Collectable[bucketOf(0)].Add(c)
		default:
			f.Expired.Add(c)
			f.Uncollectable.Add(c)
		}
	}
}

// family returns the audit of family, adding one (without a strategy, the
// policy unknown) for a family the report did not know.
func (a *Report) family(name string) *Family {
	i := sort.Search(len(a.Families), func(i int) bool { return a.Families[i].Family >= name })
	if i < len(a.Families) && a.Families[i].Family == name {
		return &a.Families[i]
	}
	a.Families = append(a.Families, Family{})
	copy(a.Families[i+1:], a.Families[i:])
	a.Families[i] = Family{Family: name, Policy: "unknown", Expiring: newBuckets(a.Now), Collectable: newBuckets(a.Now)}
	return &a.Families[i]
}

// Merge adds the counts of o, a report of another part of the same table
// at the same instant, to a. Reports decoded from JSON merge too.
func (a *Report) Merge(o *Report) error {
	if o == nil {
		return nil
	}
	if !o.Now.Equal(a.Now) || o.Table != a.Table || o.Values != a.Values {
		return fmt.Errorf("%w: audit.Report.Merge: a report of table %q at %v (values %v) into one of table %q at %v (values %v)",
			ttl.ErrInvalidOption, o.Table, o.Now, o.Values, a.Table, a.Now, a.Values)
	}
	for _, of := range o.Families {
		for _, bk := range append(append([]Bucket(nil), of.Expiring...), of.Collectable...) {
			if _, ok := a.bucketIndex(bk); !ok {
				return fmt.Errorf("%w: audit.Report.Merge: family %q: a bucket from %v until %v is not one of the report's at %v",
					ttl.ErrInvalidOption, of.Family, bk.From, bk.Until, a.Now)
			}
		}
	}
	for _, of := range o.Families {
		f := a.family(of.Family)
		if f.Policy == "unknown" {
			f.Strategy, f.Policy = of.Strategy, of.Policy
		}
		f.Live.Add(of.Live)
		f.Expired.Add(of.Expired)
		f.Forever.Add(of.Forever)
		f.Uncollectable.Add(of.Uncollectable)
		a.mergeBuckets(f.Expiring, of.Expiring)
		a.mergeBuckets(f.Collectable, of.Collectable)
	}
	a.Read.Add(o.Read)
	a.Read.ShardsRead += o.Read.ShardsRead
	return nil
}

// mergeBuckets adds the buckets of o, which may leave empty ones out and
// which Merge checked, to the full histogram h of a.
func (a *Report) mergeBuckets(h, o []Bucket) {
	for _, bk := range o {
		if i, ok := a.bucketIndex(bk); ok {
			h[i].Add(bk.Count)
		}
	}
}

// scale multiplies every count by f: a sample's audit as an estimate.
func (a *Report) scale(f float64) {
	if f == 1 {
		return
	}
	for i := range a.Families {
		fa := &a.Families[i]
		fa.Live, fa.Expired, fa.Forever, fa.Uncollectable = scaled(fa.Live, f), scaled(fa.Expired, f), scaled(fa.Forever, f), scaled(fa.Uncollectable, f)
		for j := range fa.Expiring {
			fa.Expiring[j].Count = scaled(fa.Expiring[j].Count, f)
			fa.Collectable[j].Count = scaled(fa.Collectable[j].Count, f)
		}
	}
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
