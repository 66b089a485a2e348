package ttl

import (
	"context"
	"fmt"
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
)

// lossScan finds the cells that changing one family from the policy found to
// the strategy s would delete, hide, or read as live again, at now.
type lossScan struct {
	s       strategy
	timed   bool    // s is OneSecond or DefaultExpiration
	seq     tsRange // time strategies: sequence numbers the age rule deletes
	expired tsRange // time strategies: real timestamps expired at once
	back    tsRange // time strategies: cells GC may already delete, live again
	real    tsRange // SequenceNumbers: real-time timestamps
	from    bigtable.Timestamp
	n       int // SequenceNumbers(n) when versions must be counted, else 0
}

func newLossScan(s strategy, found bigtable.GCPolicy, now time.Time) lossScan {
	sc := lossScan{s: s}
	// Cells the current policy already lets GC delete by age are not the
	// change's to lose. The age boundary is taken the way a strategy's
	// live range is, so that an unchanged age gives empty ranges.
	var doomed bigtable.Timestamp
	if age, ok := gcAge(found); ok {
		doomed = timeRule{offset: age}.liveFrom(now)
	}
	sc.from = doomed
	if live, ok := s.liveFrom(now); ok {
		sc.timed = true
		sc.seq = tsRange{lo: doomed, hi: min(live, realTime)}
		sc.expired = tsRange{lo: max(doomed, realTime), hi: live}
		sc.back = tsRange{lo: live, hi: doomed}
		return sc
	}
	sc.real = tsRange{lo: max(doomed, realTime), open: true}
	n := int(s.GCPolicy().(bigtable.MaxVersionsGCPolicy))
	if kept, ok := gcVersions(found); !ok || kept > n {
		sc.n = n
	}
	return sc
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

// run reads the family through data with the scan's filter and fills in
// f's losses, resurfaced rows and scan counts.
func (sc lossScan) run(ctx context.Context, data bigtable.TableAPI, f *FamilyPlan) error {
	filter := sc.filter(f.Family)
	if filter == nil {
		return nil
	}
	var seq, expired, real, versions int
	count := func(r bigtable.Row) bool {
		f.Scan.RowsReturned++
		var isSeq, isExpired, isReal, isBack bool
		var perColumn map[string]int
		tooMany := false
		for _, items := range r {
			f.Scan.CellsReturned += len(items)
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
		if isReal {
			real++
		}
		if tooMany {
			versions++
		}
		if isBack {
			f.Resurfaced++
		}
		if isSeq || isExpired || isReal || tooMany {
			f.Rows++
		}
		return true
	}
	stats := func(s *bigtable.FullReadStats) {
		f.Scan.RowsSeen += int(s.ReadIterationStats.RowsSeenCount)
		f.Scan.CellsSeen += int(s.ReadIterationStats.CellsSeenCount)
	}
	f.Scan.Reads++
	if err := data.ReadRows(ctx, bigtable.InfiniteRange(""), count, bigtable.RowFilter(filter), bigtable.WithFullReadStats(stats)); err != nil {
		return err
	}
	want := describePolicy(f.Want)
	if seq > 0 {
		f.Losses = append(f.Losses, Loss{Rows: seq, Reason: fmt.Sprintf(
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
		f.Losses = append(f.Losses, Loss{Rows: expired, Reason: reason})
	}
	if real > 0 {
		f.Losses = append(f.Losses, Loss{Rows: real, Reason: fmt.Sprintf(
			"%s real-time timestamps (2000 or later), which outrank every sequence number: reads would return them, and GC under %s would delete the versions written after them",
			plural(real, "row holds", "rows hold"), want)})
	}
	if versions > 0 {
		f.Losses = append(f.Losses, Loss{Rows: versions, Reason: fmt.Sprintf(
			"%s columns with more than %d versions, whose oldest %s deletes", plural(versions, "row has", "rows have"), sc.n, want)})
	}
	return nil
}
