package move

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
)

// A Report is what a step found in the family, and what it did or, in a
// dry run, would do.
type Report struct {
	// Table is the table's name.
	Table string `json:"table"`
	// Family is the name of the family being moved.
	Family string `json:"family"`
	// Move is the move.
	Move ttl.Move `json:"-"`
	// Now is the instant the step judged cells at (Options.Scan.Now, read
	// once).
	Now time.Time `json:"now"`
	// DryRun reports that the step changed nothing: Options.DryRun was
	// set, or the step was Plan.
	DryRun bool `json:"dry_run"`
	// State is how far the move has come, by the family's policy and the
	// clock.
	State State `json:"state"`

	// Found is the family's GC policy as found; nil for a family the
	// table does not have. After a step that set the policy, it is the
	// policy set.
	Found bigtable.GCPolicy `json:"-"`
	// Window is the move's GCPolicy, which Start sets for the duration of
	// the move.
	Window bigtable.GCPolicy `json:"-"`
	// Final is the policy of the strategy moved to, set by Finish.
	Final bigtable.GCPolicy `json:"-"`

	// Started reports that writes use the new strategy.
	Started bool `json:"started"`
	// Boundary is the timestamp between the two encodings.
	Boundary bigtable.Timestamp `json:"boundary"`
	// EndsBy is when the last cell written before Start expires by the
	// old cells' rule, Skew included; zero when they never do.
	EndsBy time.Time `json:"ends_by"`

	// OldLive counts the cells of the old rule live for a reader whose
	// clock lags by Skew; OldExpired those expired but still stored.
	OldLive    scan.Count `json:"old_live"`
	OldExpired scan.Count `json:"old_expired"`
	// OldNeverExpire counts the live old cells that never expire by time.
	OldNeverExpire scan.Count `json:"old_never_expire"`
	// LastExpiry is the latest expiry of a live old cell that expires.
	LastExpiry time.Time `json:"last_expiry"`
	// Misplaced counts, before Start in a move from DefaultExpiration, the
	// old cells stamped at or above the boundary (a lifetime longer than
	// the default stamps a cell in the future): the new rule would misread
	// them. Start rewrites them; once it has (Options.Checkpoint records
	// it), the cells there are counted as New.
	Misplaced scan.Count `json:"misplaced"`
	// New counts the cells of the new encoding.
	New scan.Count `json:"new"`
	// Counted reports that the counts above cover the whole family:
	// Rewrite reads only the old cells, and says what it did with them in
	// Rewritten, Kept and Actions instead.
	Counted bool `json:"counted"`

	// Rewritten counts the cells rewritten in the new encoding; Kept the
	// old cells a rewrite left as they were because a writer changed them
	// or a newer cell of their column would be outranked.
	Rewritten int64 `json:"rewritten"`
	Kept      int64 `json:"kept"`
	// Purged counts the old cells, expired by their rule, that Finish
	// deleted because the new strategy alone would read them as live.
	Purged int64 `json:"purged"`

	// Blockers say what keeps the next step from being taken, and
	// Actions what the step did, or in a dry run would do: sentences for
	// a person, each naming its cells, times and policies. A program reads
	// the fields above, which hold the same facts.
	Blockers []string `json:"blockers"`
	Actions  []string `json:"actions"`

	// Read is what was read.
	Read scan.Stats `json:"read"`
}

// String sums the report up on one line, such as
// `family "sess" of table "sessions" at 2030-05-01T00:10:00.000Z: started, 120 old cells live`.
func (r *Report) String() string {
	s := fmt.Sprintf("family %q of table %q at %s: %s", r.Family, r.Table, text.Time(r.Now), r.State)
	if r.Counted {
		s += ", " + text.Plural(int(r.OldLive.Cells), "old cell", "old cells") + " live"
	}
	if len(r.Blockers) > 0 {
		s += ", " + text.Plural(len(r.Blockers), "blocker", "blockers")
	}
	return s
}

// MarshalJSON encodes the report for programs: the move as its String
// method prints it and the policies as policy.Describe spells them
// ("move", "found", "window", "final"), the rest as its fields say.
func (r *Report) MarshalJSON() ([]byte, error) {
	type plain Report // without these methods
	// The fields before plain's come first, in the order they had when
	// they were strings, and hide plain's of the same name.
	return json.Marshal(struct {
		Table  string    `json:"table"`
		Family string    `json:"family"`
		Move   string    `json:"move"`
		Now    time.Time `json:"now"`
		DryRun bool      `json:"dry_run"`
		State  State     `json:"state"`
		Found  string    `json:"found"`
		Window string    `json:"window"`
		Final  string    `json:"final"`
		*plain
	}{r.Table, r.Family, r.Move.String(), r.Now, r.DryRun, r.State,
		policy.Describe(r.Found), policy.Describe(r.Window), policy.Describe(r.Final), (*plain)(r)})
}

// report starts a step's report with the family's policies; it refuses a
// table or family that does not exist.
func (f *Family) report(ctx context.Context, name string) (*Report, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w: move.Family.%s: nil context", ttl.ErrNilArgument, name)
	}
	now := time.Now
	if f.opts.Scan.Now != nil {
		now = f.opts.Scan.Now
	}
	r := &Report{Table: f.table, Family: f.family, Move: f.m, Now: now(), DryRun: f.opts.DryRun,
		Window: f.m.GCPolicy(), Final: f.m.To.GCPolicy()}
	_, _, r.Boundary = f.rule.Sides()
	r.Started = f.rule.Started(r.Now)
	r.State = stateOf(r)
	if end, ok := f.rule.EndsBy(); ok {
		r.EndsBy = end
	}
	found, err := f.policies.Policies(ctx)
	if err != nil {
		return r, fmt.Errorf("move: %w", err)
	}
	r.Found = found[f.family]
	r.State = stateOf(r)
	if found[f.family] == nil {
		return r, fmt.Errorf("%w: table %q has no family %q", policy.ErrFamilyMismatch, f.table, f.family)
	}
	return r, nil
}

// counted is what every step but Rewrite does first: start the report
// and count the family's cells by side.
func (f *Family) counted(ctx context.Context, name string) (*Report, error) {
	r, err := f.report(ctx, name)
	if err != nil {
		return r, err
	}
	// Before the start of a move from DefaultExpiration, the cells on the
	// new side are old cells stamped there, until Start has rewritten
	// them: its checkpoint says so.
	misplaced := f.rule.MisplacedBefore(r.Now) && !scan.Finished(ctx, f.opts.Checkpoint, f.startWork())
	t, read, err := f.tally(ctx, r.Now, misplaced)
	r.OldLive, r.OldExpired, r.OldNeverExpire, r.Misplaced, r.New = t.oldLive, t.oldExpired, t.oldForever, t.misplaced, t.new
	r.LastExpiry, r.Read, r.Counted = t.lastExpiry, read, true
	if err != nil {
		return r, fmt.Errorf("move: table %q, family %q: the scan stopped after %d of %d shards; its counts are partial and nothing was changed: %w",
			f.table, f.family, read.ShardsRead, read.Planned(), err)
	}
	return r, nil
}

// tally counts a family's cells by the side of the move they are on.
type tally struct {
	oldLive, oldExpired, oldForever, misplaced, new scan.Count
	lastExpiry                                      time.Time
}

func (t *tally) add(o *tally) {
	t.oldLive.Add(o.oldLive)
	t.oldExpired.Add(o.oldExpired)
	t.oldForever.Add(o.oldForever)
	t.misplaced.Add(o.misplaced)
	t.new.Add(o.new)
	if o.lastExpiry.After(t.lastExpiry) {
		t.lastExpiry = o.lastExpiry
	}
}

// tally reads the family and counts its cells by side, judged at now;
// misplaced says whether the cells on the new side are old cells stamped
// there.
func (f *Family) tally(ctx context.Context, now time.Time, misplaced bool) (tally, scan.Stats, error) {
	var total tally
	filter := bigtable.ChainFilters(bigtable.ColumnRangeFilter(f.family, "", ""), bigtable.StripValueFilter())
	read, err := scan.ReadTable(ctx, f.data, filter, f.opts.Scan,
		func() *tally { return new(tally) },
		func(t *tally, r bigtable.Row) { f.count(r[f.family], r.Key(), now, misplaced, t) },
		func(t *tally) { total.add(t) })
	return total, read, err
}

// count adds one row's cells of the family to t.
func (f *Family) count(items []bigtable.ReadItem, key string, now time.Time, misplaced bool, t *tally) {
	old, _, _ := f.rule.Sides()
	lagging := now.Add(-f.m.Skew)
	rank := 0
	for i, it := range items {
		c := scan.CountCell(key, it)
		if !old.Span.Contains(it.Timestamp) {
			if misplaced {
				t.misplaced.Add(c)
			} else {
				t.new.Add(c)
			}
			continue
		}
		if i > 0 && it.Column == items[i-1].Column && old.Span.Contains(items[i-1].Timestamp) {
			rank++
		} else {
			rank = 0
		}
		if !old.LiveAt(it.Timestamp, rank, lagging) {
			t.oldExpired.Add(c)
			continue
		}
		t.oldLive.Add(c)
		if e, ok := old.Expiry(it.Timestamp); ok {
			if e.After(t.lastExpiry) {
				t.lastExpiry = e
			}
		} else {
			t.oldForever.Add(c)
		}
	}
}

// startWork names Start's work in a checkpoint.
func (f *Family) startWork() string {
	return fmt.Sprintf("start table %q family %q %v", f.table, f.family, f.m)
}

// rewriteWork names Rewrite's work in a checkpoint.
func (f *Family) rewriteWork() string {
	return fmt.Sprintf("rewrite table %q family %q %v", f.table, f.family, f.m)
}

// ownCheckpoint refuses, before the step named step reads or reports
// anything, an Options.Checkpoint that records other work than work (the
// other step's, or another move's), dry run or not: each step that
// changes cells resumes from a checkpoint of its own.
func (f *Family) ownCheckpoint(ctx context.Context, step, work string) error {
	if f.opts.Checkpoint == nil {
		return nil
	}
	rec, err := f.opts.Checkpoint.Load(ctx)
	if err != nil {
		return fmt.Errorf("move.Family.%s: reading the checkpoint: %w", step, err)
	}
	if rec != nil && rec.Work != work {
		return fmt.Errorf("%w: move.Family.%s: the checkpoint records other work (%s), not %s; give each step a checkpoint of its own",
			ttl.ErrInvalidOption, step, rec.Work, work)
	}
	return nil
}
