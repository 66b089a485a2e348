package policy

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
)

// A schedule table (package schedule) has one family, schedule.Family,
// whose GC policy must keep each entry as long as the families it indexes
// keep the expired cells it names. The functions below check and make it
// so, the way Check and Ensure do a table's families.

// SchedulePolicy returns the GC policy of the family of schedule, the
// schedule table of table's families: schedule.Policy of the longest age
// any family's GC policy keeps its expired cells, or no GC at all when
// some family keeps them with no age (a ttl.Move whose rules disagree
// collects nothing by age until it is finished). It reads nothing.
//
// It refuses, with ttl.ErrInvalidOption, a schedule with no name or named
// as table itself (its entries would be read as data, and a data family
// named as schedule.Family would get the schedule's policy), and a family
// none of whose cells expires at an instant (SequenceNumbers, or a move
// between sequence numbers and no strategy): the schedule indexes cells by
// their expiry, and such a family writes no entry. Families ttl.NewTable
// would refuse are refused with ttl.ErrInvalidStrategy.
func SchedulePolicy(table, schedule string, families map[string]ttl.Strategy) (bigtable.GCPolicy, error) {
	w, err := scheduleWant(table, schedule, families)
	return w.gc, err
}

// scheduleWant returns what the family of schedule needs, as
// SchedulePolicy says, named in messages by the grace it keeps entries
// for, or by the family that keeps cells with no age.
func scheduleWant(table, schedule string, families map[string]ttl.Strategy) (want, error) {
	names, managed, err := checkedFamilies(families)
	if err != nil {
		return want{}, err
	}
	switch {
	case schedule == "":
		return want{}, fmt.Errorf("%w: table %q: no schedule table named", ttl.ErrInvalidOption, table)
	case schedule == table:
		return want{}, fmt.Errorf("%w: table %q: the schedule table must be another table: its entries would be read as the data's rows, and a family named %q would get the schedule's GC policy",
			ttl.ErrInvalidOption, table, schedulePkgFamily)
	}
	var keep time.Duration
	ageless := ""
	for _, name := range names {
		s := managed[name]
		r := ruleOf(s)
		if !r.ExpiresAtInstant() {
			return want{}, fmt.Errorf("%w: table %q: family %q (%v) has no cell that expires at an instant, so it writes no entry to a schedule: name a schedule for families of OneSecond, DefaultExpiration, their counters and graces, or a move with such a side",
				ttl.ErrInvalidOption, table, name, s)
		}
		k, aged := r.ScheduleAge(s.GCPolicy())
		if !aged && ageless == "" {
			ageless = name
		}
		keep = max(keep, k)
	}
	if ageless != "" {
		return want{label: fmt.Sprintf("no GC: family %q keeps expired cells until deleted", ageless), gc: bigtable.NoGcPolicy()}, nil
	}
	label := ttl.OneSecond().String() // its policy keeps a second
	if keep > time.Second {
		label = ttl.Grace(ttl.OneSecond(), keep).String()
	}
	return want{label: label, gc: schedulePkgPolicy(keep)}, nil
}

// schedulePkgFamily is the schedule's family, named in messages.
const schedulePkgFamily = schedule.Family

// schedulePkgPolicy is schedule.Policy, in functions whose schedule is a
// table's name.
var schedulePkgPolicy = schedule.Policy

// CheckSchedule reads the families of schedule, the schedule table of the
// tool's families, and reports whether its family (schedule.Family)
// exists, holds plain cells and has exactly the GC policy SchedulePolicy
// returns. It changes nothing.
//
// The error is nil when it matches. Otherwise it wraps
// ErrFamilyMismatch and says what was found and what is wanted: a
// missing table or family, a policy that keeps entries shorter than the
// families keep the expired cells they name (a sweep would miss them), or
// longer (the entries stay stored, and billed, for nothing). Arguments
// SchedulePolicy refuses are refused before anything is read.
func (t *Tool) CheckSchedule(ctx context.Context, schedule string) (Status, error) {
	if err := t.start(ctx, "policy.CheckSchedule", true); err != nil {
		return Status{}, err
	}
	table := t.table
	w, err := scheduleWant(table, schedule, t.families)
	if err != nil {
		return Status{}, err
	}
	statuses, _, exists, err := readFamilies(ctx, t.admin, schedule, []string{schedulePkgFamily}, map[string]want{schedulePkgFamily: w})
	if err != nil {
		return Status{}, err
	}
	st := statuses[0]
	switch {
	case !exists:
		return st, fmt.Errorf("%w: schedule table %q of table %q does not exist: %s", ErrFamilyMismatch, schedule, table, st)
	case !st.Matches:
		return st, fmt.Errorf("%w: schedule table %q of table %q: %s", ErrFamilyMismatch, schedule, table, st)
	}
	return st, nil
}

// EnsureSchedule makes schedule, the schedule table of the tool's
// families, what CheckSchedule wants: it creates the table, with its
// family, if it does not exist, creates the family if it is missing, and
// changes a mismatched policy. scheduleData is the schedule table opened
// with a data client (client.Open(schedule)); other families of the
// schedule are left alone. The tool's Options apply as they do to Ensure,
// and the plan is Ensure's too, for the schedule table and its one family.
// A change that would lose entries is refused with ErrDataLoss, nothing
// changed, unless AllowDataLoss; an aggregate family with ErrFamilyMismatch.
//
// Costs and rationale: docs/api-notes.md#policytoolensureschedule.
//
// Arguments SchedulePolicy refuses are refused before anything is read.
func (t *Tool) EnsureSchedule(ctx context.Context, schedule string, scheduleData bigtable.TableAPI) (*Plan, error) {
	if err := t.start(ctx, "policy.EnsureSchedule", true); err != nil {
		return nil, err
	}
	if scheduleData == nil || rules.IsNilPointer(scheduleData) {
		return nil, fmt.Errorf("%w: policy.EnsureSchedule: schedule table %q: nil data client table", ttl.ErrNilArgument, schedule)
	}
	table, admin, opts, entries := t.table, t.admin, t.opts, scheduleData
	w, err := scheduleWant(table, schedule, t.families)
	if err != nil {
		return nil, err
	}
	plan := t.newPlan(schedule)
	wants := map[string]want{schedulePkgFamily: w}
	statuses, found, exists, err := readFamilies(ctx, admin, schedule, []string{schedulePkgFamily}, wants)
	if err != nil {
		return nil, err
	}
	plan.CreateTable = !exists
	plan.actions(statuses, nil, found)
	f := &plan.Families[0]
	if f.wrongKind() {
		f.Refused = true
		return plan, fmt.Errorf("%w: schedule table %q of table %q: %s; nothing changed: name a new table as the schedule",
			ErrFamilyMismatch, schedule, table, f.Status)
	}
	if f.Action == Change {
		opts.Scan.Table = cmp.Or(opts.Scan.Table, schedule)
		opts.Scan.Work = cmp.Or(opts.Scan.Work, "ensure")
		lost := shortened(found[schedulePkgFamily], w.gc, plan.Now)
		if err := plan.countEntries(ctx, entries, lost, opts.Scan); err != nil || plan.Read.Sampled > 0 {
			return plan, err
		}
	}
	if err := plan.refuse(opts.AllowDataLoss); err != nil || opts.DryRun {
		return plan, err
	}
	return plan, plan.apply(ctx, admin, wants, opts.IgnoreWarnings)
}

// shortened returns the timestamps of the entries that policy want lets
// GC delete at now and policy found does not: none when want's age is no
// shorter than found's, or want has none.
func shortened(found, want bigtable.GCPolicy, now time.Time) rules.Range {
	age, aged := rules.GCAge(want)
	if !aged {
		return rules.Range{}
	}
	r := rules.Range{Hi: rules.Time{Offset: age}.LiveFrom(now)}
	if old, aged := rules.GCAge(found); aged {
		r.Lo = rules.Time{Offset: old}.LiveFrom(now)
	}
	return r
}

// countEntries counts the entries in lost, one per row (each row of a
// schedule is one entry), and sets the schedule family's loss. A scan
// that stops is an error: its count is partial.
func (p *Plan) countEntries(ctx context.Context, entries bigtable.TableAPI, lost rules.Range, o scan.Options) error {
	if lost.Empty() {
		return nil
	}
	filter := bigtable.ChainFilters(bigtable.ColumnRangeFilter(schedulePkgFamily, "", ""), lost.Filter(),
		bigtable.CellsPerRowLimitFilter(1), bigtable.StripValueFilter())
	n := 0
	read, err := scan.ReadTable(ctx, entries, filter, o,
		func() *int { return new(int) },
		func(acc *int, _ bigtable.Row) { *acc++ },
		func(acc *int) { n += *acc })
	p.Read = read
	n = int(float64(n)*read.Scale() + 0.5)
	f := &p.Families[0]
	if f.Rows = n; n > 0 {
		l := Loss{Kind: LossEntries, Rows: n, Until: (lost.Hi - 1000).Time().UTC()}
		if lost.Lo > 0 {
			l.From = lost.Lo.Time().UTC()
		}
		f.Losses = []Loss{l}
	}
	if err != nil {
		return fmt.Errorf("policy: schedule table %q: the scan for entries the change would delete stopped after %d of %d shards; its count is partial and nothing was changed: %w",
			p.Table, read.ShardsRead, read.Planned(), err)
	}
	return nil
}
