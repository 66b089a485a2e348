package ttl

import (
	"context"
	"fmt"
	"math"
	"time"

	"cloud.google.com/go/bigtable"
)

// realTime is the smallest timestamp taken for a real instant rather than a
// sequence number: 2000-01-01T00:00:00Z. Sequence numbers stay far below it
// (it would be sequence number 946,684,800,000).
const realTime bigtable.Timestamp = 946_684_800_000_000

// tsRange is the timestamps [lo, hi), or from lo on when open; the zero
// value is empty.
type tsRange struct {
	lo, hi bigtable.Timestamp
	open   bool
}

func (r tsRange) empty() bool { return !r.open && r.hi <= r.lo }

// filter passes the cells of the range.
func (r tsRange) filter() bigtable.Filter {
	if r.open {
		return bigtable.TimestampRangeFilterMicros(r.lo, 0) // 0: no upper bound
	}
	return bigtable.TimestampRangeFilterMicros(r.lo, r.hi)
}

// Labels of the scan's branches. Each branch returns at most one cell per
// row (versions: up to n+1 per column), labelled with its kind.
const (
	labelSequence = "seq"      // sequence numbers an age-based policy deletes
	labelExpired  = "expired"  // real timestamps the new strategy reads as expired
	labelRealTime = "realtime" // real timestamps in a sequence-number family
	labelVersions = "versions" // newest n+1 versions of each column
	labelBack     = "back"     // expired cells the new strategy reads as live
	labelEarlier  = "earlier"  // live cells whose expiry moves earlier
)

// A Loss is one kind of cell that a change of GC policy would delete or
// hide, and the number of rows that hold such cells.
type Loss struct {
	// Rows is the number of rows that hold such cells.
	Rows int
	// Reason says which cells and what the change would do to them, such
	// as "3 rows hold cells stamped up to …, which would expire at once
	// under DefaultExpiration(168h0m0s)".
	Reason string
}

// A Scan counts what was read to find the cells a change of one family's
// GC policy affects. The family is read with one server-side filter that
// strips values and returns at most one cell per row and kind of cell (up
// to n+1 per column when a change to SequenceNumbers(n) must count
// versions). The server still reads every cell of the table: the filter
// selects the family, not a row range.
type Scan struct {
	// Reads is the number of ReadRows requests.
	Reads int
	// RowsSeen and CellsSeen are the rows and cells the server read, as
	// it reports them: every row and cell of the table.
	RowsSeen  int
	CellsSeen int
	// RowsReturned and CellsReturned are the rows and cells the filter
	// let through: what crossed the network, values stripped.
	RowsReturned  int
	CellsReturned int
}

// scanned is what a lossScan found: the rows holding cells the change would
// delete or hide and why, the rows whose expired cells would be live again,
// and what reading them took.
type scanned struct {
	rows       int
	losses     []Loss
	resurfaced int
	scan       Scan
}

// gcAge returns the shortest age after which policy p lets GC delete a cell
// on its own, and false when no rule of p does: no GC, a version limit, an
// intersection (which needs all its rules; the emulator ignores it).
func gcAge(p bigtable.GCPolicy) (time.Duration, bool) {
	switch p := p.(type) {
	case bigtable.MaxAgeGCPolicy:
		return time.Duration(p), true
	case bigtable.UnionGCPolicy:
		var shortest time.Duration
		found := false
		for _, c := range p.Children {
			if a, ok := gcAge(c); ok && (!found || a < shortest) {
				shortest, found = a, true
			}
		}
		return shortest, found
	}
	return 0, false
}

// gcVersions returns the fewest versions of a column that policy p keeps,
// and false when no rule of p limits versions on its own.
func gcVersions(p bigtable.GCPolicy) (int, bool) {
	switch p := p.(type) {
	case bigtable.MaxVersionsGCPolicy:
		return int(p), true
	case bigtable.UnionGCPolicy:
		fewest, found := 0, false
		for _, c := range p.Children {
			if n, ok := gcVersions(c); ok && (!found || n < fewest) {
				fewest, found = n, true
			}
		}
		return fewest, found
	}
	return 0, false
}

// lossScan finds the cells that changing one family from the policy found to
// the strategy s would delete, hide, or read as live again, at now.
type lossScan struct {
	s       strategy
	timed   bool          // s is OneSecond or DefaultExpiration
	seq     tsRange       // time strategies: sequence numbers the age rule deletes
	expired tsRange       // time strategies: real timestamps expired at once
	back    tsRange       // time strategies: cells GC may already delete, live again
	earlier tsRange       // time strategies: live cells whose expiry moves earlier
	age     time.Duration // the age found, when earlier is not empty
	shift   time.Duration // how much earlier, when earlier is not empty
	real    tsRange       // SequenceNumbers: real-time timestamps
	from    bigtable.Timestamp
	n       int // SequenceNumbers(n) when versions must be counted, else 0
}

func newLossScan(s strategy, found bigtable.GCPolicy, now time.Time) lossScan {
	sc := lossScan{s: s}
	// Cells the current policy already lets GC delete by age are not the
	// change's to lose. The age boundary is taken the way a strategy's
	// live range is, so that an unchanged age gives empty ranges.
	var doomed bigtable.Timestamp
	age, aged := gcAge(found)
	if aged {
		doomed = timeRule{offset: age}.liveFrom(now)
	}
	sc.from = doomed
	if live, ok := s.liveFrom(now); ok {
		sc.timed = true
		sc.seq = tsRange{lo: doomed, hi: min(live, realTime)}
		sc.expired = tsRange{lo: max(doomed, realTime), hi: live}
		sc.back = tsRange{lo: live, hi: doomed}
		// Under the age found, a cell stamped ts lives until ts + age;
		// under s, until ts + offset. A shorter offset hides and deletes
		// every live cell before the expiry it was written with. The cells
		// from the old age's Forever on still expire in the year 294,000
		// under s: they are not counted. maxage=1s is OneSecond's own
		// policy, so the age is compared with s's own age.
		if own, _ := gcAge(s.GCPolicy()); aged && age > own {
			sc.earlier = tsRange{lo: max(live, realTime), hi: timeRule{offset: age}.forever()}
			sc.age, sc.shift = age, age-ruleOffset(s)
		}
		return sc
	}
	sc.real = tsRange{lo: max(doomed, realTime), open: true}
	// For n = math.MaxInt32, n+1 does not fit the filter's int32 (the
	// server refuses it), and no row holds 2³¹ cells of one column:
	// versions are not counted.
	n := int(s.GCPolicy().(bigtable.MaxVersionsGCPolicy))
	if kept, ok := gcVersions(found); (!ok || kept > n) && n < math.MaxInt32 {
		sc.n = n
	}
	return sc
}

// ruleOffset returns the offset of a time strategy's rule (see timeRule): d
// for DefaultExpiration(d), 0 for OneSecond.
func ruleOffset(s strategy) time.Duration {
	if d, ok := s.(defaultExpiration); ok {
		return d.d
	}
	return 0
}

// filter returns the scan's filter for family, or nil when nothing can be
// lost or resurface.
func (sc lossScan) filter(family string) bigtable.Filter {
	var branches [][]bigtable.Filter
	oneARow := func(r tsRange, label string) {
		if !r.empty() {
			branches = append(branches, []bigtable.Filter{r.filter(), bigtable.CellsPerRowLimitFilter(1), bigtable.LabelFilter(label)})
		}
	}
	if sc.timed {
		oneARow(sc.seq, labelSequence)
		oneARow(sc.expired, labelExpired)
		oneARow(sc.back, labelBack)
		oneARow(sc.earlier, labelEarlier)
	} else {
		oneARow(sc.real, labelRealTime)
		if sc.n > 0 {
			versions := []bigtable.Filter{bigtable.LatestNFilter(sc.n + 1), bigtable.LabelFilter(labelVersions)}
			if sc.from > 0 {
				versions = append([]bigtable.Filter{tsRange{lo: sc.from, open: true}.filter()}, versions...)
			}
			branches = append(branches, versions)
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

// run reads family through data with the scan's filter and returns what it
// found, and what it found so far with an error.
func (sc lossScan) run(ctx context.Context, data bigtable.TableAPI, family string) (scanned, error) {
	var f scanned
	filter := sc.filter(family)
	if filter == nil {
		return f, nil
	}
	var seq, expired, earlier, real, versions int
	count := func(r bigtable.Row) bool {
		f.scan.RowsReturned++
		var isSeq, isExpired, isEarlier, isReal, isBack bool
		var perColumn map[string]int
		tooMany := false
		for _, items := range r {
			f.scan.CellsReturned += len(items)
			for _, it := range items {
				for _, l := range it.Labels {
					switch l {
					case labelSequence:
						isSeq = true
					case labelExpired:
						isExpired = true
					case labelRealTime:
						isReal = true
					case labelBack:
						isBack = true
					case labelEarlier:
						isEarlier = true
					case labelVersions:
						if perColumn == nil {
							perColumn = map[string]int{}
						}
						perColumn[it.Column]++
						tooMany = tooMany || perColumn[it.Column] > sc.n
					}
				}
			}
		}
		if isSeq {
			seq++
		}
		if isExpired {
			expired++
		}
		if isEarlier {
			earlier++
		}
		if isReal {
			real++
		}
		if tooMany {
			versions++
		}
		if isBack {
			f.resurfaced++
		}
		if isSeq || isExpired || isEarlier || isReal || tooMany {
			f.rows++
		}
		return true
	}
	stats := func(s *bigtable.FullReadStats) {
		f.scan.RowsSeen += int(s.ReadIterationStats.RowsSeenCount)
		f.scan.CellsSeen += int(s.ReadIterationStats.CellsSeenCount)
	}
	f.scan.Reads++
	if err := data.ReadRows(ctx, bigtable.InfiniteRange(""), count, bigtable.RowFilter(filter), bigtable.WithFullReadStats(stats)); err != nil {
		return f, err
	}
	want := describePolicy(sc.s.GCPolicy())
	if seq > 0 {
		f.losses = append(f.losses, Loss{Rows: seq, Reason: fmt.Sprintf(
			"%s sequence numbers (timestamps before 2000), which the age-based policy %s deletes all at once",
			plural(seq, "row holds", "rows hold"), want)})
	}
	if expired > 0 {
		last := formatTime((sc.expired.hi - 1000).Time())
		span := "up to " + last
		if sc.expired.lo > realTime {
			span = formatTime(sc.expired.lo.Time()) + " to " + last
		}
		rows := plural(expired, "row holds", "rows hold")
		reason := fmt.Sprintf("%s cells stamped %s, which would expire at once under %v", rows, span, sc.s)
		if _, ok := sc.s.(oneSecond); ok {
			reason = fmt.Sprintf("%s cells stamped %s, which %v reads as expiries already past: hidden at once, deleted by GC within seconds",
				rows, span, sc.s)
		}
		f.losses = append(f.losses, Loss{Rows: expired, Reason: reason})
	}
	if earlier > 0 {
		f.losses = append(f.losses, Loss{Rows: earlier, Reason: fmt.Sprintf(
			"%s cells whose expiries move %s earlier under %v than under maxage=%s",
			plural(earlier, "row holds", "rows hold"), formatAge(sc.shift), sc.s, formatAge(sc.age))})
	}
	if real > 0 {
		f.losses = append(f.losses, Loss{Rows: real, Reason: fmt.Sprintf(
			"%s real-time timestamps (2000 or later), which outrank every sequence number: reads would return them, and GC under %s would delete the versions written after them",
			plural(real, "row holds", "rows hold"), want)})
	}
	if versions > 0 {
		f.losses = append(f.losses, Loss{Rows: versions, Reason: fmt.Sprintf(
			"%s columns with more than %d versions, whose oldest %s deletes", plural(versions, "row has", "rows have"), sc.n, want)})
	}
	return f, nil
}
