package policy

import (
	"context"
	"math"
	"sort"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/scan"
)

// ruleOf returns the rule of s, a strategy the caller has validated.
func ruleOf(s ttl.Strategy) rules.Strategy {
	r, _ := rules.Of(s)
	return r
}

// The data-loss rules: which cells a change of one family's GC policy, to
// the one a strategy needs, would delete or hide. Ensure counts
// the rows holding such cells before it changes a family.
//
// A cell counts unless the current policy already lets GC delete it by
// age:
//
//   - to OneSecond or DefaultExpiration(d): a cell stamped before the
//     strategy's live range (ts + d ≤ now; under OneSecond ts ≤ now),
//     which reads hide at once and the policy MaxAge(d) deletes. A
//     sequence number (a timestamp before 2000) is such a cell.
//   - to OneSecond or DefaultExpiration(d) from a policy whose age a is
//     longer than the strategy's own (MaxAge(a) with a > d; a > 1s for
//     OneSecond): a live cell, which lived until ts + a and now expires
//     a − d earlier (a earlier under OneSecond), before the expiry it was
//     written with. Cells stamped from MaxTimestamp − a on, Forever under
//     the old age, still expire in the year 294,000 and do not count.
//     From a policy without an age rule (no GC, a version limit) nothing
//     moves: cells written with their write times live d from then. The
//     policy alone cannot tell a longer default from a grace (ttl.Grace)
//     being taken off, under which nothing moves: the reasons say both.
//     Under OneSecond, whose timestamps are expiries, the age can only
//     have been a grace: the live cells are reported as collected sooner
//     once expired (FamilyPlan.CollectedSooner), not lost.
//   - to SequenceNumbers(n): a cell stamped in 2000 or later, which would
//     outrank every sequence number written after it, and, unless the
//     current policy already keeps at most n versions, a column with more
//     than n cells, whose oldest MaxVersions(n) deletes.
//
// Besides, the scan counts the rows holding cells that the current policy
// already lets GC delete by age, not collected yet, that the new strategy
// would read as live again (a longer default, or OneSecond's expiries read
// as DefaultExpiration's write times): nothing is lost, but they come back.

// A cellKind is one kind of cell the loss scan looks for. The scan's
// filter labels each cell it returns with its kind.
type cellKind int

const (
	kindSequence cellKind = iota // sequence numbers an age-based policy deletes
	kindExpired                  // real timestamps the new strategy reads as expired
	kindBack                     // expired cells the new strategy reads as live: not a loss
	kindEarlier                  // live cells whose expiry moves earlier
	kindRealTime                 // real timestamps in a sequence-number family
	kindVersions                 // columns with more versions than the new policy keeps
	numKinds
)

// kindLabels are the labels of the kinds, in the scan's filter.
var kindLabels = [numKinds]string{"seq", "expired", "back", "earlier", "realtime", "versions"}

// lost reports whether the scan's cells of kind k are deleted or hidden.
// Live cells whose expiries a shorter age would move earlier are not,
// under OneSecond: a cell's timestamp is its expiry, whatever the age
// found, so the longer age can only have been a grace (ttl.Grace) on
// it, now taken off. (A family of write times that becomes OneSecond is
// a move's work, and its past cells count as kindExpired.)
func (sc lossScan) lost(k cellKind) bool {
	return k != kindBack && (k != kindEarlier || !sc.expiries)
}

// A lossScan is the rules for changing one family from the policy found to
// the strategy s, at now: the timestamps of each kind of cell, and how to
// count and describe them.
type lossScan struct {
	s      ttl.Strategy
	ranges [numKinds]rules.Range // the timestamps of each kind; kindVersions uses from
	from   bigtable.Timestamp    // the first timestamp the current policy does not already delete
	n      int                   // SequenceNumbers(n) when versions must be counted, else 0
	age    time.Duration         // the age found, when kindEarlier has cells
	shift  time.Duration         // how much earlier they expire
	// expiries reports a strategy whose timestamps are expiries
	// (OneSecond's rule): the age found can only have been a grace.
	expiries bool
}

func newLossScan(s ttl.Strategy, found bigtable.GCPolicy, now time.Time) lossScan {
	sc := lossScan{s: s}
	if _, ok := s.(ttl.Move); ok {
		// The move's own policy deletes no cell either of its rules keeps
		// live, whatever the family had, and the operator chose the old
		// cells' rule. The cells a move would misread, stamped on the wrong
		// side of its boundary, are the move tools' to find (move.Family.Plan)
		// and rewrite (move.Family.Start).
		return sc
	}
	// Cells the current policy already lets GC delete by age are not the
	// change's to lose. The age boundary is taken the way a strategy's
	// live range is, so that an unchanged age gives empty ranges.
	var doomed bigtable.Timestamp
	age, aged := rules.GCAge(found)
	if aged {
		doomed = rules.Time{Offset: age}.LiveFrom(now)
	}
	sc.from = doomed
	if sr := ruleOf(s); sr.Kind == rules.ByTime {
		r := sr.Time
		live := r.LiveFrom(now)
		// maxage=1s is OneSecond's own policy: under it, as under
		// OneSecond, a cell stamped before now has expired.
		if own := r.Offset; own == 0 && aged && age <= time.Second {
			doomed = live
			sc.from = doomed
		}
		sc.ranges[kindSequence] = rules.Range{Lo: doomed, Hi: min(live, rules.RealTime)}
		sc.ranges[kindExpired] = rules.Range{Lo: max(doomed, rules.RealTime), Hi: live}
		sc.ranges[kindBack] = rules.Range{Lo: live, Hi: doomed}
		// Under the age found, a cell stamped ts lives until ts + age;
		// under s, until ts + offset. A shorter offset hides and deletes
		// every live cell before the expiry it was written with. The cells
		// from the old age's Forever on still expire in the year 294,000
		// under s: they are not counted. maxage=1s is OneSecond's own
		// policy, so the age is compared with the age s reads by (its
		// offset, 1s for OneSecond), not its GC age, which a grace
		// (ttl.Grace) lengthens: a family found with a longer age, which
		// may be a grace being taken off, is reported as a loss, since the
		// policy alone cannot tell a grace from a longer default.
		if own := max(r.Offset, time.Second); aged && age > own {
			sc.ranges[kindEarlier] = rules.Range{Lo: max(live, rules.RealTime), Hi: rules.Time{Offset: age}.Forever()}
			sc.age, sc.shift, sc.expiries = age, age-r.Offset, r.Offset == 0
		}
		return sc
	}
	sc.ranges[kindRealTime] = rules.Range{Lo: max(doomed, rules.RealTime), Open: true}
	// For n = math.MaxInt32, n+1 does not fit the filter's int32 (the
	// server refuses it), and no row holds 2³¹ cells of one column:
	// versions are not counted.
	n, _ := s.Versions()
	if kept, ok := rules.GCVersions(found); (!ok || kept > n) && n < math.MaxInt32 {
		sc.n = n
	}
	return sc
}

// filter returns the scan's filter for family, or nil when nothing can be
// lost or resurface. Values are stripped, and each kind returns at most
// one cell per row (versions: n+1 per column).
func (sc lossScan) filter(family string) bigtable.Filter {
	var branches [][]bigtable.Filter
	for k := cellKind(0); k < numKinds; k++ {
		if k == kindVersions {
			if sc.n > 0 {
				versions := []bigtable.Filter{bigtable.LatestNFilter(sc.n + 1), bigtable.LabelFilter(kindLabels[k])}
				if sc.from > 0 {
					versions = append([]bigtable.Filter{rules.Range{Lo: sc.from, Open: true}.Filter()}, versions...)
				}
				branches = append(branches, versions)
			}
			continue
		}
		if r := sc.ranges[k]; !r.Empty() {
			branches = append(branches, []bigtable.Filter{r.Filter(), bigtable.CellsPerRowLimitFilter(1), bigtable.LabelFilter(kindLabels[k])})
		}
	}
	chain := []bigtable.Filter{bigtable.ColumnRangeFilter(family, "", ""), bigtable.StripValueFilter()}
	switch len(branches) {
	case 0:
		return nil
	case 1:
		return bigtable.ChainFilters(append(chain, branches[0]...)...)
	}
	each := make([]bigtable.Filter, len(branches))
	for i, b := range branches {
		each[i] = bigtable.ChainFilters(b...)
	}
	return bigtable.ChainFilters(append(chain, bigtable.InterleaveFilters(each...))...)
}

// A lossTally counts, per kind, the rows a loss scan found holding such
// cells. Rows are counted one at a time, so tallies of disjoint parts of a
// table add up to the tally of the whole.
type lossTally struct {
	kinds [numKinds]int // rows holding cells of each kind
	rows  int           // rows holding cells of any kind that is lost
}

// add adds the counts of o to t.
func (t *lossTally) add(o lossTally) {
	for k := range t.kinds {
		t.kinds[k] += o.kinds[k]
	}
	t.rows += o.rows
}

// scaled returns t with every count multiplied by f, rounded: a sample's
// tally as an estimate for the table.
func (t lossTally) scaled(f float64) lossTally {
	if f == 1 {
		return t
	}
	for k := range t.kinds {
		t.kinds[k] = int(float64(t.kinds[k])*f + 0.5)
	}
	t.rows = int(float64(t.rows)*f + 0.5)
	return t
}

// count adds to t one row's cells of the family, as the scan's filter
// returned them.
func (sc lossScan) count(items []bigtable.ReadItem, t *lossTally) {
	var seen [numKinds]bool
	var perColumn map[string]int
	for _, it := range items {
		for _, l := range it.Labels {
			k := labelKind(l)
			if k == kindVersions {
				if perColumn == nil {
					perColumn = map[string]int{}
				}
				perColumn[it.Column]++
				seen[k] = seen[k] || perColumn[it.Column] > sc.n
			} else if k < numKinds {
				seen[k] = true
			}
		}
	}
	lost := false
	for k, ok := range seen {
		if ok {
			t.kinds[k]++
			lost = lost || sc.lost(cellKind(k))
		}
	}
	if lost {
		t.rows++
	}
}

// labelKind returns the kind a label names, or numKinds for another label.
func labelKind(label string) cellKind {
	for k, l := range kindLabels {
		if l == label {
			return cellKind(k)
		}
	}
	return numKinds
}

// losses describes what a tally found, one Loss per kind that is lost.
func (sc lossScan) losses(t lossTally) []Loss {
	var out []Loss
	for k := cellKind(0); k < numKinds; k++ {
		n := t.kinds[k]
		if n == 0 || !sc.lost(k) {
			continue
		}
		l := Loss{Rows: n}
		switch k {
		case kindSequence:
			l.Kind = LossSequence
		case kindExpired:
			r := sc.ranges[kindExpired]
			l.Kind, l.Until, l.Age = LossExpired, (r.Hi - 1000).Time().UTC(), sc.age
			if r.Lo > rules.RealTime {
				l.From = r.Lo.Time().UTC()
			}
			if sr := ruleOf(sc.s); sr.Kind == rules.ByTime && sr.Time.Offset == 0 {
				l.Expiries = true
			}
		case kindEarlier:
			l.Kind, l.Shift, l.Age = LossEarlier, sc.shift, sc.age
		case kindRealTime:
			l.Kind = LossRealTime
		case kindVersions:
			l.Kind, l.Versions = LossVersions, sc.n
		}
		out = append(out, l)
	}
	return out
}

// sooner describes the live cells a tally found that keep their expiries
// but that GC would delete sooner once expired: a grace taken off.
func (sc lossScan) sooner(t lossTally) []Loss {
	n := t.kinds[kindEarlier]
	if n == 0 || sc.lost(kindEarlier) {
		return nil
	}
	return []Loss{{Kind: LossSooner, Rows: n, Shift: sc.shift, Age: sc.age}}
}

// lossScans are the loss scans of the families one Ensure call
// changes, by family. They run in one pass over the table: one filter
// interleaves theirs, and each row's cells go to their family's scan.
type lossScans map[string]lossScan

// run reads data once and returns each family's tally, and what was read.
func (ls lossScans) run(ctx context.Context, data bigtable.TableAPI, o scan.Options) (map[string]lossTally, scan.Stats, error) {
	tallies := make(map[string]lossTally, len(ls))
	var filters []bigtable.Filter
	for family, sc := range ls {
		if f := sc.filter(family); f != nil {
			filters = append(filters, f)
		}
	}
	if len(filters) == 0 {
		return tallies, scan.Stats{}, nil
	}
	// Map order would make the request differ from call to call.
	sort.Slice(filters, func(i, j int) bool { return filters[i].String() < filters[j].String() })
	filter := filters[0]
	if len(filters) > 1 {
		filter = bigtable.InterleaveFilters(filters...)
	}
	read, err := scan.Table(ctx, data, filter, o,
		func() map[string]*lossTally { return map[string]*lossTally{} },
		func(acc map[string]*lossTally, r bigtable.Row) {
			for family, items := range r {
				sc, ok := ls[family]
				if !ok {
					continue
				}
				t := acc[family]
				if t == nil {
					t = new(lossTally)
					acc[family] = t
				}
				sc.count(items, t)
			}
		},
		func(acc map[string]*lossTally) {
			for family, t := range acc {
				sum := tallies[family]
				sum.add(*t)
				tallies[family] = sum
			}
		})
	for family, t := range tallies {
		tallies[family] = t.scaled(read.Scale())
	}
	return tallies, read, err
}
