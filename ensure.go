package ttl

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"cloud.google.com/go/bigtable"
)

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
//   - to OneSecond or DefaultExpiration(d) from a policy whose age a is
//     longer than the strategy's own (MaxAge(a) with a > d; a > 1s for
//     OneSecond): a live cell, which lived until ts + a and now expires
//     a − d earlier (a earlier under OneSecond), before the expiry it was
//     written with. Cells stamped from MaxTimestamp − a on, Forever under
//     the old age, still expire in the year 294,000 and do not count.
//     From a policy without an age rule (no GC, a version limit) nothing
//     moves: cells written with their write times live d from then.
//   - to SequenceNumbers(n): a cell stamped in 2000 or later, which would
//     outrank every sequence number written after it, and, unless the
//     current policy already keeps at most n versions, a column with more
//     than n cells, whose oldest MaxVersions(n) deletes.
type FamilyPlan struct {
	FamilyStatus

	// Rows is the number of rows holding cells that the change would
	// delete or hide. Zero for a change that loses nothing, and for a
	// family kept or created.
	Rows int

	// Losses says which cells the change would delete or hide, and why:
	// one entry for each kind of cell found, with the rows that hold it.
	// A row can hold several kinds, so their rows may add up to more
	// than Rows. Empty when Rows is zero.
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
		verb := "to create"
		if done > 0 {
			verb = "created"
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
//   - a shorter default on a DefaultExpiration family, or OneSecond on
//     one: the cells that would expire at once, and the live cells whose
//     expiries would move earlier by the difference.
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
		found, err := newLossScan(managed[st.Family], st.Found, plan.Now).run(ctx, data, st.Family)
		f.Rows, f.Losses, f.Resurfaced, f.Scan = found.rows, found.losses, found.resurfaced, found.scan
		if err != nil {
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
