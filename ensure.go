package ttl

import (
	"context"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
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

	// Scan configures the scan for data that changes would lose: its
	// workers, its progress reports, and a sample of the table for a
	// fast estimate. A sampled plan decides nothing: it needs DryRun.
	Scan ScanOptions
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
	// Scan is what the scan for data loss read: one pass over the table
	// for every family to change. A scan that is not Complete decided
	// nothing: its counts are partial (it stopped early) or estimates (a
	// sample).
	Scan Scan
}

// A FamilyPlan is the plan for one family: keep it when it matches,
// create it when it is missing, change its GC policy otherwise.
//
// Before a change, EnsureFamilies counts the rows whose cells the change
// would delete or hide, by the data-loss rules (see loss.go): cells the new
// strategy reads as expired at once, live cells whose expiries a shorter age
// moves earlier, sequence numbers under an age-based policy, real-time
// timestamps or surplus versions under SequenceNumbers. A cell counts
// unless the current policy already lets GC delete it by age.
type FamilyPlan struct {
	// FamilyStatus is the family's policy as found and as wanted.
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

	// Scan is the scan that counted them, shared by every family changed
	// in the same call (the same as Plan.Scan); zero for a family that
	// needed none.
	Scan Scan

	// Refused reports a change that would lose data and was not allowed.
	// When any change is refused, none is made.
	Refused bool

	// Done reports that the family was created or changed.
	Done bool
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
	if ctx == nil || admin == nil || data == nil || rules.IsNilPointer(data) {
		return nil, fmt.Errorf("%w: EnsureFamilies: nil context, admin client or table", ErrNilArgument)
	}
	names, managed, err := checkedFamilies(families)
	if err != nil {
		return nil, err
	}
	if err := opts.Scan.check(); err != nil {
		return nil, fmt.Errorf("EnsureFamilies: %w", err)
	}
	if opts.Scan.Sample > 0 && !opts.DryRun {
		return nil, fmt.Errorf("%w: EnsureFamilies: a sample (ScanOptions.Sample) gives estimates, which cannot decide a change; use it with DryRun",
			ErrInvalidOption)
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
	scans := lossScans{}
	for i, st := range statuses {
		plan.Families[i].FamilyStatus = st
		if st.Exists() && !st.Matches() {
			scans[st.Family] = newLossScan(managed[st.Family], st.Found, plan.Now)
		}
	}
	tallies, read, err := scans.run(ctx, data, opts.Scan)
	plan.Scan = read
	for i := range plan.Families {
		f := &plan.Families[i]
		sc, changed := scans[f.Family]
		if !changed {
			continue
		}
		t := tallies[f.Family]
		f.Rows, f.Resurfaced, f.Losses = t.rows, t.kinds[kindBack], sc.losses(t)
		if sc.filter(f.Family) != nil {
			f.Scan = read
		}
	}
	if err != nil {
		return plan, fmt.Errorf("ttl: table %q: the scan for data loss stopped after %d of %d shards; its counts are partial and nothing was changed: %w",
			table, read.ShardsRead, read.planned(), err)
	}
	if read.Sampled > 0 {
		return plan, nil
	}
	var refused []string
	for i := range plan.Families {
		f := &plan.Families[i]
		if f.Rows > 0 && !opts.AllowDataLoss {
			f.Refused = true
			reasons := make([]string, len(f.Losses))
			for j, l := range f.Losses {
				reasons[j] = l.Reason
			}
			refused = append(refused, fmt.Sprintf("%s: %s", f.FamilyStatus, strings.Join(reasons, "; ")))
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
