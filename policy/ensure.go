package policy

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/scan"
)

// A Plan is what Ensure found and what it did, or in a dry run would do:
// for each managed family, whether it is kept, created or changed, what
// the change would delete or hide, and whether it was refused.
type Plan struct {
	// Table is the table's name.
	Table string `json:"table"`
	// Now is the instant at which cells were judged live or expired.
	Now time.Time `json:"now"`
	// DryRun reports a plan made with Options.DryRun: nothing was
	// changed.
	DryRun bool `json:"dry_run"`
	// CreateTable reports that the table does not exist: it is created
	// with every family and its policy in one call.
	CreateTable bool `json:"create_table"`
	// Families has one entry per managed family, sorted by name.
	Families []FamilyPlan `json:"families"`
	// Read is what the scan for data loss read: one pass over the table
	// for every family to change (none when no family that exists
	// changes). A scan that is not Complete decided nothing: its counts
	// are partial (it stopped early) or estimates (a sample).
	Read scan.Stats `json:"read"`
}

// An Action is what a plan does to a family.
type Action string

// The actions of a plan.
const (
	Keep   Action = "keep"   // the family matches its strategy
	Create Action = "create" // the family is missing
	Change Action = "change" // the family's GC policy is changed
)

// A FamilyPlan is the plan for one family: keep it when it matches,
// create it when it is missing, change its GC policy otherwise.
//
// Before a change, Ensure counts the rows whose cells the change would
// delete or hide, by the data-loss rules (see Loss): cells the new
// strategy reads as expired at once, live cells whose expiries a shorter
// age moves earlier, sequence numbers under an age-based policy,
// real-time timestamps or surplus versions under SequenceNumbers. A cell
// counts unless the current policy already lets GC delete it by age.
type FamilyPlan struct {
	// Status is the family's policy as found and as wanted.
	Status

	// Action is what the plan does to the family.
	Action Action

	// Rows is the number of rows holding cells that the change would
	// delete or hide. Zero for a change that loses nothing, and for a
	// family kept or created.
	Rows int

	// Losses says which cells the change would delete or hide, and why:
	// one entry for each kind of cell found, with the rows that hold it.
	// A row can hold several kinds, so their rows may add up to more
	// than Rows. Empty (never nil) when Rows is zero.
	Losses []Loss

	// Resurfaced is the number of rows holding cells that the current
	// policy already lets GC delete by age, not collected yet, that the
	// new strategy would read as live again (a longer default, or
	// OneSecond's expiries read as DefaultExpiration's write times). It
	// is reported, not refused: nothing is deleted or hidden.
	Resurfaced int

	// CollectedSooner says which live cells keep their expiries under the
	// new strategy but would be deleted by GC sooner once expired: those
	// of a OneSecond family whose grace (ttl.Grace) is taken off. It is
	// reported, not refused. Empty (never nil) when there are none.
	CollectedSooner []Loss

	// Refused reports a change that would lose data and was not allowed.
	// When any change is refused, none is made.
	Refused bool

	// Done reports that the family was created or changed.
	Done bool
}

// String sums the plan up on one line, such as
// `table "events": 1 family to change, 1 family kept (dry run)`.
func (p *Plan) String() string {
	n := p.Tally()
	create, change, refused, done, keep := n.Create, n.Change, n.Refused, n.Done, n.Keep
	parts := []string{}
	for _, c := range []struct {
		n    int
		what string
	}{{create, "to create"}, {change, "to change"}, {refused, "refused"}, {done, "created or changed"}, {keep, "kept"}} {
		if c.n > 0 {
			parts = append(parts, text.Plural(c.n, "family", "families")+" "+c.what)
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "no family")
	}
	s := fmt.Sprintf("table %q: %s", p.Table, strings.Join(parts, ", "))
	if p.CreateTable {
		created := "to create"
		if done > 0 {
			created = "created"
		}
		s = fmt.Sprintf("table %q (%s): %s", p.Table, created, strings.Join(parts, ", "))
	}
	switch {
	case p.Read.Stopped():
		s += " (the scan stopped: nothing decided)"
	case p.Read.Estimate():
		s += " (an estimate from a sample: nothing decided)"
	case p.DryRun:
		s += " (dry run)"
	}
	return s
}

// Ensure makes the GC policy of each managed family the one its strategy
// needs: it creates the table if it does not exist (with every family, in
// one call), creates missing families with their policy, and changes
// mismatched policies. Families without a strategy are left alone.
//
// Before changing a family that exists, it scans the family through the
// tool's data client (New's data, which Ensure needs), for cells
// the change would delete or hide (see FamilyPlan and Loss).
// A change that would lose data is refused, nothing changed, with an error
// wrapping ErrDataLoss, unless Options.AllowDataLoss. A nil context or data
// client is refused with ttl.ErrNilArgument. With Options.DryRun nothing
// changes. It is safe for concurrent use when its clients are.
//
// Costs and rationale: docs/api-notes.md#policytoolensure.
func (t *Tool) Ensure(ctx context.Context) (*Plan, error) {
	if err := t.start(ctx, "policy.Ensure", true); err != nil {
		return nil, err
	}
	if t.data == nil {
		return nil, fmt.Errorf("%w: policy.Ensure: table %q: no data client to scan it with (policy.New's data is nil)", ttl.ErrNilArgument, t.table)
	}
	opts, table, admin, managed := t.opts, t.table, t.admin, t.managed
	plan := t.newPlan(table)
	statuses, found, exists, err := readFamilies(ctx, admin, table, t.names, wantsOf(managed))
	if err != nil {
		return nil, err
	}
	plan.CreateTable = !exists
	scans := plan.actions(statuses, managed, found)
	if err := plan.unchangeable(); err != nil {
		return plan, err
	}
	opts.Scan.Table = cmp.Or(opts.Scan.Table, table)
	opts.Scan.Work = cmp.Or(opts.Scan.Work, "ensure")
	if err := plan.count(ctx, t.data, scans, opts.Scan); err != nil || plan.Read.Sampled > 0 {
		return plan, err
	}
	if err := plan.refuse(opts.AllowDataLoss); err != nil || opts.DryRun {
		return plan, err
	}
	return plan, plan.apply(ctx, admin, wantsOf(managed), opts.IgnoreWarnings)
}

// actions sets each family's action, and returns the loss scans of the
// families of managed to change (a schedule's family, not among them,
// has its loss counted by countEntries).
func (p *Plan) actions(statuses []Status, managed map[string]ttl.Strategy, found map[string]bigtable.GCPolicy) lossScans {
	p.Families = make([]FamilyPlan, len(statuses))
	scans := lossScans{}
	for i, st := range statuses {
		f := &p.Families[i]
		f.Status, f.Action, f.Losses, f.CollectedSooner = st, Change, []Loss{}, []Loss{}
		switch {
		case st.Matches:
			f.Action = Keep
		case !st.Exists:
			f.Action = Create
		case managed[st.Family] != nil:
			scans[st.Family] = newLossScan(managed[st.Family], found[st.Family], p.Now)
		}
	}
	return scans
}

// unchangeable refuses the families whose kind of cell differs from their
// strategy's: Bigtable cannot turn a plain family into an aggregate one,
// or back, so no policy change makes them match, with or without data
// loss. Nothing is scanned or changed.
func (p *Plan) unchangeable() error {
	var bad []string
	for i := range p.Families {
		f := &p.Families[i]
		if f.wrongKind() {
			f.Refused = true
			bad = append(bad, f.Status.String())
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%w: table %q: %s; nothing changed: create the family under another name (a counter needs a ttl.Counter family, created as an aggregate of int64 sums)",
		ErrFamilyMismatch, p.Table, strings.Join(bad, "; "))
}

// count runs the loss scans in one pass over data, and sets what each
// family would lose. A scan that stops is an error: its counts are
// partial.
func (p *Plan) count(ctx context.Context, data bigtable.TableAPI, scans lossScans, o scan.Options) error {
	tallies, read, err := scans.run(ctx, data, o)
	p.Read = read
	for i := range p.Families {
		f := &p.Families[i]
		if sc, changed := scans[f.Family]; changed {
			t := tallies[f.Family]
			f.Rows, f.Resurfaced = t.rows, t.kinds[kindBack]
			f.Losses = append(f.Losses, sc.losses(t)...)
			f.CollectedSooner = append(f.CollectedSooner, sc.sooner(t)...)
		}
	}
	if err != nil {
		return fmt.Errorf("policy: table %q: the scan for data loss stopped after %d of %d shards; its counts are partial and nothing was changed: %w",
			p.Table, read.ShardsRead, read.Planned(), err)
	}
	return nil
}

// refuse marks refused every change that would lose data, unless the
// loss is allowed, and returns an error naming them all.
func (p *Plan) refuse(allowed bool) error {
	var refused []string
	for i := range p.Families {
		f := &p.Families[i]
		if f.Rows > 0 && !allowed {
			f.Refused = true
			reasons := make([]string, len(f.Losses))
			for j, l := range f.Losses {
				reasons[j] = l.String()
			}
			refused = append(refused, fmt.Sprintf("%s: %s", f.Status, strings.Join(reasons, "; ")))
		}
	}
	if len(refused) > 0 {
		return &OptionError{Err: fmt.Errorf("%w: table %q: %s; nothing changed",
			ErrDataLoss, p.Table, strings.Join(refused, "; ")), Option: AllowDataLoss}
	}
	return nil
}

// apply makes the plan's changes, marking each one done.
func (p *Plan) apply(ctx context.Context, admin *bigtable.AdminClient, wants map[string]want, ignoreWarnings bool) error {
	if p.CreateTable {
		conf := &bigtable.TableConf{TableID: p.Table, ColumnFamilies: map[string]bigtable.Family{}}
		for _, f := range p.Families {
			conf.ColumnFamilies[f.Family] = bigtable.Family{GCPolicy: wants[f.Family].gc, ValueType: wants[f.Family].typ}
		}
		if err := admin.CreateTableFromConf(ctx, conf); err != nil {
			return fmt.Errorf("policy: creating table %q: %w", p.Table, err)
		}
		for i := range p.Families {
			p.Families[i].Done = true
		}
		return nil
	}
	for i := range p.Families {
		f := &p.Families[i]
		var err error
		want := wants[f.Family].gc
		switch f.Action {
		case Keep:
			continue
		case Create:
			err = admin.CreateColumnFamilyWithConfig(ctx, p.Table, f.Family, bigtable.Family{GCPolicy: want, ValueType: wants[f.Family].typ})
			if err != nil {
				err = fmt.Errorf("policy: table %q: creating family %q with %s: %w", p.Table, f.Family, Describe(want), err)
			}
		default:
			err = set(ctx, admin, p.Table, f.Family, want, ignoreWarnings)
		}
		if err != nil {
			return err
		}
		f.Done = true
	}
	return nil
}

// newPlan returns the empty plan of table, at the clock's now.
func (t *Tool) newPlan(table string) *Plan {
	now := time.Now
	if t.opts.Scan.Now != nil {
		now = t.opts.Scan.Now
	}
	return &Plan{Table: table, Now: now(), DryRun: t.opts.DryRun}
}

// A Tally counts a plan's families by what became of them. Plan.String
// and the cellttl command's summary line both read it, so that they
// cannot disagree.
type Tally struct {
	// Keep counts the families that match their strategy.
	Keep int `json:"keep"`
	// Create counts the families to create, neither refused nor done.
	Create int `json:"create"`
	// Change counts the families to change, neither refused nor done.
	Change int `json:"change"`
	// Refused counts the families whose change was refused.
	Refused int `json:"refused"`
	// Done counts the families created or changed.
	Done int `json:"done"`
}

// Pending is the number of changes the plan would make and has not
// made: families to create or change, not refused.
func (n Tally) Pending() int { return n.Create + n.Change }

// Tally counts the plan's families by what became of them: each family
// in one count, refused first, then done, then by its action.
func (p *Plan) Tally() Tally {
	var n Tally
	for _, f := range p.Families {
		switch {
		case f.Refused:
			n.Refused++
		case f.Done:
			n.Done++
		case f.Action == Keep:
			n.Keep++
		case f.Action == Create:
			n.Create++
		default:
			n.Change++
		}
	}
	return n
}
