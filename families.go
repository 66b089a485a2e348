package ttl

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A strategy is only as good as its family's GC policy. CheckFamilies reads
// the policies; EnsureFamilies sets them, refusing any change that would
// delete or hide the cells a family already holds.

// realTime is the smallest timestamp taken for a real instant rather than a
// sequence number: 2000-01-01T00:00:00Z. Sequence numbers stay far below it
// (it would be sequence number 946,684,800,000).
const realTime bigtable.Timestamp = 946_684_800_000_000

// A FamilyStatus is what CheckFamilies found for one managed family: the GC
// policy the family has and the one its strategy needs.
type FamilyStatus struct {
	// Family is the family's name.
	Family string
	// Strategy is the strategy given for it.
	Strategy Strategy
	// Found is the family's GC policy as the Bigtable client reports it:
	// bigtable.NoGcPolicy() when the family has none, nil when the family
	// does not exist.
	Found bigtable.GCPolicy
	// Want is the strategy's GCPolicy.
	Want bigtable.GCPolicy
}

// Exists reports whether the family exists.
func (s FamilyStatus) Exists() bool { return s.Found != nil }

// Matches reports whether the family exists with exactly the policy its
// strategy needs. Any other policy, stricter or looser, is a mismatch.
func (s FamilyStatus) Matches() bool { return s.Found != nil && s.Found.String() == s.Want.String() }

// Policies returns the policy found and the policy wanted, spelled as cbt
// setgcpolicy takes them: "maxage=2d", "maxversions=3",
// "maxage=1d or maxversions=2", "never" for no GC, "missing" for a family
// that does not exist.
func (s FamilyStatus) Policies() (found, want string) {
	return describePolicy(s.Found), describePolicy(s.Want)
}

// String describes the status, such as
// `family "clicks" (DefaultExpiration(48h0m0s)): found never, want maxage=2d`.
// Policies are spelled as cbt setgcpolicy takes them.
func (s FamilyStatus) String() string {
	head := fmt.Sprintf("family %q (%v)", s.Family, s.Strategy)
	switch {
	case !s.Exists():
		return fmt.Sprintf("%s: missing, want %s", head, describePolicy(s.Want))
	case !s.Matches():
		return fmt.Sprintf("%s: found %s, want %s", head, describePolicy(s.Found), describePolicy(s.Want))
	}
	return fmt.Sprintf("%s: %s, as wanted", head, describePolicy(s.Found))
}

// CheckFamilies reads the families of the table with admin and reports, for
// each managed family (sorted by name), whether it exists and whether its GC
// policy is exactly the one its strategy needs. It changes nothing.
//
// The error is nil when every family matches. Otherwise it wraps
// ErrFamilyMismatch and lists every mismatch, with the policy found and the
// policy wanted; a table that does not exist is reported the same way, with
// every family missing. Other errors are Bigtable's, or ErrNilArgument and
// ErrInvalidStrategy for arguments NewTable would refuse.
//
// The client reports GC ages in whole seconds, so a DefaultExpiration whose
// default is not a whole number of seconds cannot be checked: it is refused
// with ErrInvalidStrategy. For the same reason, a policy set by other
// means to a fraction of a second is seen rounded down (cbt's
// maxage=1500ms as maxage=1s).
func CheckFamilies(ctx context.Context, admin *bigtable.AdminClient, table string, families map[string]Strategy) ([]FamilyStatus, error) {
	if ctx == nil || admin == nil {
		return nil, fmt.Errorf("%w: CheckFamilies: nil context or admin client", ErrNilArgument)
	}
	names, managed, err := checkedFamilies(families)
	if err != nil {
		return nil, err
	}
	statuses, exists, err := readFamilies(ctx, admin, table, names, managed)
	if err != nil {
		return statuses, err
	}
	var bad []string
	if !exists {
		bad = append(bad, "the table does not exist")
	}
	for _, s := range statuses {
		if !s.Matches() {
			bad = append(bad, s.String())
		}
	}
	if len(bad) > 0 {
		return statuses, fmt.Errorf("%w: table %q: %s", ErrFamilyMismatch, table, strings.Join(bad, "; "))
	}
	return statuses, nil
}

// checkedFamilies validates the managed families as NewTable does, and
// returns their names sorted. A DefaultExpiration of a fraction of a second
// is refused too: TableInfo reports ages in whole seconds.
func checkedFamilies(families map[string]Strategy) ([]string, map[string]strategy, error) {
	managed, err := checkFamilies(families)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(managed))
	for name, own := range managed {
		if age, ok := own.GCPolicy().(bigtable.MaxAgeGCPolicy); ok && time.Duration(age)%time.Second != 0 {
			return nil, nil, fmt.Errorf("%w: %v (family %q): the Bigtable client reports GC ages in whole seconds, so this policy cannot be checked; use a default of whole seconds",
				ErrInvalidStrategy, own, name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names, managed, nil
}

// readFamilies returns the status of each managed family, and false for a
// table that does not exist (every family is then missing).
func readFamilies(ctx context.Context, admin *bigtable.AdminClient, table string, names []string, managed map[string]strategy) ([]FamilyStatus, bool, error) {
	info, err := admin.TableInfo(ctx, table)
	exists := true
	switch {
	case status.Code(err) == codes.NotFound:
		exists = false
	case err != nil:
		return nil, false, fmt.Errorf("ttl: table %q: %w", table, err)
	}
	found := map[string]bigtable.GCPolicy{}
	if exists {
		for _, f := range info.FamilyInfos {
			found[f.Name] = f.FullGCPolicy
			if found[f.Name] == nil {
				found[f.Name] = bigtable.NoGcPolicy()
			}
		}
	}
	statuses := make([]FamilyStatus, len(names))
	for i, name := range names {
		s := managed[name]
		statuses[i] = FamilyStatus{Family: name, Strategy: s, Found: found[name], Want: s.GCPolicy()}
	}
	return statuses, exists, nil
}

// EnsureOptions are the options of EnsureFamilies. The zero value makes
// the changes, refuses every one that would lose data, does not ignore
// Bigtable's warnings, and reads time.Now.
type EnsureOptions struct {
	// DryRun makes EnsureFamilies work out and return the plan, scans
	// included, and change nothing.
	DryRun bool

	// AllowDataLoss lets EnsureFamilies make changes that would delete or
	// hide existing cells. The plan still reports what they lose.
	AllowDataLoss bool

	// IgnoreWarnings passes bigtable.IgnoreWarnings() with every GC policy
	// change. Bigtable refuses to relax the GC policy of a replicated table
	// without it.
	IgnoreWarnings bool

	// Now is the clock that decides which cells are live; it is read once.
	// nil means time.Now.
	Now func() time.Time
}

// A Plan is what EnsureFamilies found and what it did, or in a dry run
// would do: for each managed family, whether it is kept, created or
// changed, what the change would delete or hide, and whether it was
// refused. Its String method prints it as a table.
type Plan struct {
	// Table is the table's name.
	Table string
	// Now is the instant at which cells were judged live or expired.
	Now time.Time
	// CreateTable reports that the table does not exist: it is created with
	// every family and its policy in one call.
	CreateTable bool
	// Families has one entry per managed family, sorted by name.
	Families []FamilyPlan
	// DryRun reports a plan made with EnsureOptions.DryRun: nothing was
	// changed.
	DryRun bool
}

// A FamilyPlan is the plan for one family: keep it when it matches,
// create it when it is missing, change its GC policy otherwise.
//
// Before a change, EnsureFamilies counts the rows whose cells the change
// would delete or hide. A cell counts unless the current policy already
// lets GC delete it by age:
//
//   - to OneSecond or DefaultExpiration(d): a cell stamped before the
//     strategy's live range (ts + d ≤ now; under OneSecond ts ≤ now),
//     which reads hide at once and the policy MaxAge(d) deletes. A
//     sequence number (a timestamp before 2000) is such a cell.
//   - to SequenceNumbers(n): a cell stamped in 2000 or later, which would
//     outrank every sequence number written after it, and, unless the
//     current policy already keeps at most n versions, a column with more
//     than n cells, whose oldest MaxVersions(n) deletes.
type FamilyPlan struct {
	FamilyStatus

	// Rows is the number of rows holding cells that the change would
	// delete or hide; Losses says which cells, and why. Zero for a change
	// that loses nothing, and for a family kept or created.
	Rows   int
	Losses []Loss

	// Resurfaced is the number of rows holding cells that the current
	// policy already lets GC delete by age, not collected yet, that the
	// new strategy would read as live again (a longer default, or
	// OneSecond's expiries read as DefaultExpiration's write times). It
	// is reported, not refused: nothing is deleted or hidden.
	Resurfaced int

	// Scan is what counting them read.
	Scan Scan

	// Refused reports a change that would lose data and was not allowed.
	// When any change is refused, none is made.
	Refused bool

	// Done reports that the family was created or changed.
	Done bool
}

// A Loss is one kind of cell that a change would delete or hide, and the
// number of rows that hold such cells.
type Loss struct {
	// Rows is the number of rows that hold such cells.
	Rows int
	// Reason says which cells and what the change would do to them, such
	// as "3 rows hold cells stamped up to …, which would expire at once
	// under DefaultExpiration(168h0m0s)".
	Reason string
}

// Scan counts what EnsureFamilies read to find the cells a change affects.
// It reads each family with one server-side filter that strips values and
// returns at most one cell per row and kind of cell (up to n+1 per column
// when a change to SequenceNumbers(n) must count versions). The server
// still reads every cell of the table: the filter selects the family, not
// a row range.
type Scan struct {
	Reads         int // ReadRows requests
	RowsSeen      int // rows the server read, as it reports them
	CellsSeen     int // cells the server read, as it reports them
	RowsReturned  int
	CellsReturned int
}

// String returns the plan as a table a person can read, one family a line,
// with what each change would lose and what its scan read below.
func (p *Plan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "table %q at %s: %s\n", p.Table, formatTime(p.Now), p.state())
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "FAMILY\tSTRATEGY\tFOUND\tWANT\tACTION\tROWS LOST")
	for _, f := range p.Families {
		rows := "-"
		if f.Exists() && !f.Matches() {
			rows = fmt.Sprint(f.Rows)
		}
		fmt.Fprintf(w, "%s\t%v\t%s\t%s\t%s\t%s\n", f.Family, f.Strategy, describePolicy(f.Found), describePolicy(f.Want), f.action(p.DryRun), rows)
	}
	w.Flush()
	for _, f := range p.Families {
		for _, l := range f.Losses {
			fmt.Fprintf(&b, "  %s: %s\n", f.Family, l.Reason)
		}
		if f.Resurfaced > 0 {
			fmt.Fprintf(&b, "  %s: %s\n", f.Family, f.resurfaced())
		}
		if f.Scan.Reads > 0 {
			fmt.Fprintf(&b, "  %s: scan: %s, %s and %s seen, %s returned\n", f.Family, plural(f.Scan.Reads, "read", "reads"),
				plural(f.Scan.RowsSeen, "row", "rows"), plural(f.Scan.CellsSeen, "cell", "cells"), plural(f.Scan.CellsReturned, "cell", "cells"))
		}
	}
	return b.String()
}

// state sums the plan up for its first line.
func (p *Plan) state() string {
	pending, refused, done := 0, 0, 0
	for _, f := range p.Families {
		switch {
		case f.Refused:
			refused++
		case f.Done:
			done++
		case !f.Matches():
			pending++
		}
	}
	var s string
	switch {
	case refused > 0 && p.DryRun:
		s = fmt.Sprintf("dry run, nothing changed; %s would be refused", plural(refused, "change", "changes"))
	case refused > 0:
		s = fmt.Sprintf("%s refused, nothing changed", plural(refused, "change", "changes"))
	case p.DryRun && pending > 0:
		s = fmt.Sprintf("dry run, nothing changed; %s to make", plural(pending, "change", "changes"))
	case pending == 0 && done == 0:
		s = "every family matches its strategy, nothing to change"
	case pending > 0:
		s = fmt.Sprintf("%s made, %d not made", plural(done, "change", "changes"), pending)
	default:
		s = fmt.Sprintf("%s made", plural(done, "change", "changes"))
	}
	if p.CreateTable {
		verb := "created"
		if !p.Families[0].Done {
			verb = "to create"
		}
		s = "table does not exist, " + verb + " with its families; " + s
	}
	return s
}

// action is the family's line in the plan.
func (f FamilyPlan) action(dryRun bool) string {
	switch {
	case f.Matches():
		return "keep"
	case f.Refused:
		return "refused"
	case !f.Exists() && f.Done:
		return "created"
	case !f.Exists():
		return "create"
	case f.Done && f.Rows > 0:
		return "changed, data lost"
	case f.Done:
		return "changed"
	case f.Rows > 0 && !dryRun:
		return "change, data lost"
	case f.Rows > 0:
		return "change, loses data"
	}
	return "change"
}

func (f FamilyPlan) resurfaced() string {
	return fmt.Sprintf("%s cells that the current policy %s already lets GC delete, not yet collected, which %v would return again",
		plural(f.Resurfaced, "row holds", "rows hold"), describePolicy(f.Found), f.Strategy)
}

// EnsureFamilies makes the GC policy of each managed family the one its
// strategy needs: it creates the table if it does not exist (with every
// family, in one call), creates missing families with their policy, and
// changes mismatched policies. Families without a strategy are left alone.
//
// Before changing a family that exists, it scans the family through data,
// the same table opened with a data client (client.Open(table)), for cells
// the change would delete or hide (see [FamilyPlan]), such as:
//
//   - OneSecond on a family holding ordinary, past timestamps;
//   - SequenceNumbers on a family holding real-time timestamps (from the
//     year 2000 on), or an age-based policy on a family holding sequence
//     numbers;
//   - a shorter default on a DefaultExpiration family: the cells that
//     would expire at once.
//
// Such a change is refused unless opts.AllowDataLoss is set: then nothing
// at all is changed, and the error wraps ErrDataLoss and names each
// refused family and what it would lose. A family that exists but holds no
// such cells is changed freely, and a change that relaxes GC (a longer
// default, more versions) loses nothing; the plan reports the rows whose
// expired cells it would bring back (FamilyPlan.Resurfaced).
//
// With opts.DryRun nothing is changed; the plan and the error are what the
// real run would return, except that nothing is marked done. The plan is
// also returned with the errors of a scan or a change; after a failed
// change, the families marked done were changed.
//
// The scan and the changes are not atomic: a cell written between them,
// by a writer that does not follow the strategy, is not protected. GC
// policies are compared as the client reports them (see CheckFamilies).
func EnsureFamilies(ctx context.Context, admin *bigtable.AdminClient, table string, data bigtable.TableAPI, families map[string]Strategy, opts EnsureOptions) (*Plan, error) {
	if ctx == nil || admin == nil || data == nil || isNilPointer(data) {
		return nil, fmt.Errorf("%w: EnsureFamilies: nil context, admin client or table", ErrNilArgument)
	}
	names, managed, err := checkedFamilies(families)
	if err != nil {
		return nil, err
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	plan := &Plan{Table: table, Now: now(), DryRun: opts.DryRun}
	statuses, exists, err := readFamilies(ctx, admin, table, names, managed)
	if err != nil {
		return nil, err
	}
	plan.CreateTable = !exists
	plan.Families = make([]FamilyPlan, len(statuses))
	var refused []string
	for i, st := range statuses {
		f := &plan.Families[i]
		f.FamilyStatus = st
		if !st.Exists() || st.Matches() {
			continue
		}
		sc := newLossScan(managed[st.Family], st.Found, plan.Now)
		if err := sc.run(ctx, data, f); err != nil {
			return plan, fmt.Errorf("ttl: table %q: scanning family %q: %w", table, st.Family, err)
		}
		if f.Rows > 0 && !opts.AllowDataLoss {
			f.Refused = true
			reasons := make([]string, len(f.Losses))
			for j, l := range f.Losses {
				reasons[j] = l.Reason
			}
			refused = append(refused, fmt.Sprintf("%s: %s", st, strings.Join(reasons, "; ")))
		}
	}
	if len(refused) > 0 {
		return plan, fmt.Errorf("%w: table %q: %s; nothing changed (allow it with AllowDataLoss)",
			ErrDataLoss, table, strings.Join(refused, "; "))
	}
	if opts.DryRun {
		return plan, nil
	}
	return plan, plan.apply(ctx, admin, opts.IgnoreWarnings)
}

// apply makes the plan's changes, marking each one done.
func (p *Plan) apply(ctx context.Context, admin *bigtable.AdminClient, ignoreWarnings bool) error {
	if p.CreateTable {
		conf := &bigtable.TableConf{TableID: p.Table, ColumnFamilies: map[string]bigtable.Family{}}
		for _, f := range p.Families {
			conf.ColumnFamilies[f.Family] = bigtable.Family{GCPolicy: f.Want}
		}
		if err := admin.CreateTableFromConf(ctx, conf); err != nil {
			return fmt.Errorf("ttl: creating table %q: %w", p.Table, err)
		}
		for i := range p.Families {
			p.Families[i].Done = true
		}
		return nil
	}
	var opts []bigtable.GCPolicyOption
	if ignoreWarnings {
		opts = append(opts, bigtable.IgnoreWarnings())
	}
	for i := range p.Families {
		f := &p.Families[i]
		var err error
		switch {
		case f.Matches():
			continue
		case !f.Exists():
			err = admin.CreateColumnFamilyWithConfig(ctx, p.Table, f.Family, bigtable.Family{GCPolicy: f.Want})
		default:
			err = admin.SetGCPolicyWithOptions(ctx, p.Table, f.Family, f.Want, opts...)
		}
		if err != nil {
			return fmt.Errorf("ttl: table %q: setting family %q to %s: %w", p.Table, f.Family, describePolicy(f.Want), err)
		}
		f.Done = true
	}
	return nil
}

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

// describePolicy spells a GC policy as cbt setgcpolicy takes it:
// "maxage=2d", "maxversions=3", "maxage=1d or maxversions=2", "never";
// "missing" for a family that does not exist (nil).
func describePolicy(p bigtable.GCPolicy) string {
	return describeRule(p, true)
}

func describeRule(p bigtable.GCPolicy, top bool) string {
	join := func(children []bigtable.GCPolicy, op string) string {
		if len(children) == 0 {
			return "never"
		}
		parts := make([]string, len(children))
		for i, c := range children {
			parts[i] = describeRule(c, false)
		}
		if top || len(children) == 1 {
			return strings.Join(parts, op)
		}
		return "(" + strings.Join(parts, op) + ")"
	}
	switch p := p.(type) {
	case nil:
		return "missing"
	case bigtable.MaxAgeGCPolicy:
		return "maxage=" + formatAge(time.Duration(p))
	case bigtable.MaxVersionsGCPolicy:
		return fmt.Sprintf("maxversions=%d", int(p))
	case bigtable.UnionGCPolicy:
		return join(p.Children, " or ")
	case bigtable.IntersectionGCPolicy:
		return join(p.Children, " and ")
	}
	if p.String() == "" {
		return "never"
	}
	return p.String()
}

// formatAge spells a GC age in the largest whole unit, as cbt takes it:
// "2d" (for 48h), "36h", "90m", "1s", "1500ms".
func formatAge(d time.Duration) string {
	for _, u := range []struct {
		d      time.Duration
		suffix string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
		if d != 0 && d%u.d == 0 {
			return fmt.Sprintf("%d%s", d/u.d, u.suffix)
		}
	}
	return d.String()
}

// plural returns n and the singular or plural words that follow it.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// formatTime prints an instant in UTC to the millisecond, Bigtable's
// granularity.
func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }
