package ttl

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/internal/text"
)

// The tools that carry a family through a Move: PlanMove says what the
// move will do and when it can end, StartMove prepares the family before
// Start, RewriteMove converts the old cells now instead of waiting for
// them to expire, and FinishMove sets the new strategy's GC policy once no
// old cell is live.

// MoveOptions configures the move tools. The zero value reads time.Now,
// makes the changes, and refuses to finish while old cells are live.
type MoveOptions struct {
	// Now is the clock; it is read once per call. nil means time.Now.
	Now func() time.Time

	// DryRun makes StartMove, RewriteMove and FinishMove report what they
	// would do and change nothing.
	DryRun bool

	// AllowDataLoss lets FinishMove set the new policy while cells of the
	// old rule are live: reads hide them from then on, and GC deletes
	// them.
	AllowDataLoss bool

	// IgnoreWarnings passes bigtable.IgnoreWarnings() with every GC policy
	// change, as a replicated table needs to relax its policy.
	IgnoreWarnings bool

	// Scan configures the scans: workers, progress.
	Scan ScanOptions

	// Checkpoint records the progress of the changes StartMove and
	// RewriteMove make, so that an interrupted run given the same
	// checkpoint resumes where it stopped and makes no change twice.
	// RewriteMove works without one (a new run reads the whole family
	// again); StartMove needs one to rewrite the cells it must rewrite.
	Checkpoint Checkpoint
}

// A MoveReport is what a move tool found in the family, and what it did
// or, in a dry run, would do.
type MoveReport struct {
	// Table is the table's name.
	Table string `json:"table"`
	// Family is the name of the family being moved.
	Family string `json:"family"`
	// Move is the move, as its String method prints it.
	Move string `json:"move"`
	// Now is the instant the call judged cells at (MoveOptions.Now, read
	// once).
	Now time.Time `json:"now"`
	// DryRun reports that the call changed nothing: MoveOptions.DryRun
	// was set, or the call was PlanMove.
	DryRun bool `json:"dry_run"`

	// Policies, as cbt setgcpolicy takes them. Found is the family's GC
	// policy as found ("missing" for a family that does not exist).
	Found string `json:"found"`
	// Window is the move's GCPolicy, which StartMove sets for the
	// duration of the move.
	Window string `json:"window"`
	// Final is the policy of the strategy moved to, set by FinishMove.
	Final string `json:"final"`

	// Started reports that writes use the new strategy.
	Started bool `json:"started"`
	// Boundary is the timestamp between the two encodings.
	Boundary bigtable.Timestamp `json:"boundary"`
	// EndsBy is when the last cell written before Start expires by the
	// old cells' rule, Skew included; zero when they never do.
	EndsBy time.Time `json:"ends_by"`

	// OldLive counts the cells of the old rule live for a reader whose
	// clock lags by Skew; OldExpired those expired but still stored.
	OldLive    Count `json:"old_live"`
	OldExpired Count `json:"old_expired"`
	// OldNeverExpire counts the live old cells that never expire by time.
	OldNeverExpire Count `json:"old_never_expire"`
	// LastExpiry is the latest expiry of a live old cell that expires.
	LastExpiry time.Time `json:"last_expiry"`
	// Misplaced counts, before Start in a move from DefaultExpiration, the
	// old cells stamped at or above the boundary (a lifetime longer than
	// the default stamps a cell in the future): the new rule would misread
	// them. StartMove rewrites them; once it has (MoveOptions.Checkpoint
	// records it), the cells there are counted as New.
	Misplaced Count `json:"misplaced"`
	// New counts the cells of the new encoding.
	New Count `json:"new"`
	// Counted reports that the counts above cover the whole family:
	// RewriteMove reads only the old cells, and says what it did with
	// them in Rewritten, Kept and Actions instead.
	Counted bool `json:"counted"`

	// Rewritten counts the cells rewritten in the new encoding; Kept the
	// old cells a rewrite left as they were because a writer changed them
	// or a newer cell of their column would be outranked.
	Rewritten int64 `json:"rewritten"`
	Kept      int64 `json:"kept"`
	// Purged counts the old cells, expired by their rule, that FinishMove
	// deleted because the new strategy alone would read them as live.
	Purged int64 `json:"purged"`

	// Blockers say what keeps the next step from being taken.
	Blockers []string `json:"blockers"`
	// Actions say what the call did, or in a dry run would do.
	Actions []string `json:"actions"`

	// Scan is what was read.
	Scan Scan `json:"scan"`
}

// moveTally counts a family's cells by the side of the move they are on.
type moveTally struct {
	oldLive, oldExpired, oldForever, misplaced, new Count
	lastExpiry                                      time.Time
}

func (t *moveTally) add(o *moveTally) {
	t.oldLive.add(o.oldLive)
	t.oldExpired.add(o.oldExpired)
	t.oldForever.add(o.oldForever)
	t.misplaced.add(o.misplaced)
	t.new.add(o.new)
	if o.lastExpiry.After(t.lastExpiry) {
		t.lastExpiry = o.lastExpiry
	}
}

// count adds one row's cells of the family to t, judged at now; misplaced
// says whether the cells on the new side are old cells stamped there.
func (m Move) count(items []bigtable.ReadItem, key string, now time.Time, misplaced bool, t *moveTally) {
	old, _, _ := m.sides()
	lagging := now.Add(-m.Skew)
	rank := 0
	for i, it := range items {
		c := Count{Cells: 1, Bytes: int64(len(key)+len(it.Column)+8) + int64(len(it.Value))}
		if !old.Span.Contains(it.Timestamp) {
			if misplaced {
				t.misplaced.add(c)
			} else {
				t.new.add(c)
			}
			continue
		}
		if i > 0 && it.Column == items[i-1].Column && old.Span.Contains(items[i-1].Timestamp) {
			rank++
		} else {
			rank = 0
		}
		if !old.LiveAt(it.Timestamp, rank, lagging) {
			t.oldExpired.add(c)
			continue
		}
		t.oldLive.add(c)
		if e, ok := old.Expiry(it.Timestamp); ok {
			if e.After(t.lastExpiry) {
				t.lastExpiry = e
			}
		} else {
			t.oldForever.add(c)
		}
	}
}

// moveScan reads the family through data and counts its cells by side.
func moveScan(ctx context.Context, data bigtable.TableAPI, family string, m Move, now time.Time, misplaced bool, o ScanOptions) (moveTally, Scan, error) {
	var total moveTally
	filter := bigtable.ChainFilters(bigtable.ColumnRangeFilter(family, "", ""), bigtable.StripValueFilter())
	read, err := scanTable(ctx, data, filter, o,
		func() *moveTally { return new(moveTally) },
		func(t *moveTally, r bigtable.Row) { m.count(r[family], r.Key(), now, misplaced, t) },
		func(t *moveTally) { total.add(t) })
	return total, read, err
}

// moveCall is what every move tool does first: check its arguments, read
// the family's policy and count its cells.
func moveCall(ctx context.Context, admin *bigtable.AdminClient, table string, data bigtable.TableAPI, family string, m Move, opts MoveOptions, name string) (*MoveReport, moveTally, error) {
	r, err := moveReport(ctx, admin, table, data, family, m, opts, name)
	if err != nil {
		return r, moveTally{}, err
	}
	// Before the start of a move from DefaultExpiration, the cells on the
	// new side are old cells stamped there, until StartMove has rewritten
	// them: its checkpoint says so.
	misplaced := m.rules().MisplacedBefore(r.Now) && !finished(opts.Checkpoint, startWork(table, family, m))
	t, read, err := moveScan(ctx, data, family, m, r.Now, misplaced, opts.Scan)
	r.fill(t, read)
	if err != nil {
		return r, t, fmt.Errorf("ttl: table %q, family %q: the scan stopped after %d of %d shards; its counts are partial and nothing was changed: %w",
			table, family, read.ShardsRead, read.planned(), err)
	}
	return r, t, nil
}

// moveReport checks a move tool's arguments and starts its report with the
// family's policies.
func moveReport(ctx context.Context, admin *bigtable.AdminClient, table string, data bigtable.TableAPI, family string, m Move, opts MoveOptions, name string) (*MoveReport, error) {
	if ctx == nil || admin == nil || data == nil || rules.IsNilPointer(data) {
		return nil, fmt.Errorf("%w: %s: nil context, admin client or table", ErrNilArgument, name)
	}
	if err := rules.CheckFamilyName(family); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidStrategy, name, err)
	}
	if err := m.valid(); err != nil {
		return nil, fmt.Errorf("%s: %w (family %q)", name, err, family)
	}
	if err := opts.Scan.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if opts.Scan.Sample > 0 {
		return nil, fmt.Errorf("%w: %s: a move needs exact counts, not a sample", ErrInvalidOption, name)
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	r := &MoveReport{Table: table, Family: family, Move: m.String(), Now: now(), DryRun: opts.DryRun,
		Window: describePolicy(m.GCPolicy()), Final: describePolicy(m.To.GCPolicy())}
	_, _, r.Boundary = m.sides()
	r.Started = m.rules().Started(r.Now)
	if end, ok := m.rules().EndsBy(); ok {
		r.EndsBy = end
	}
	info, err := admin.TableInfo(ctx, table)
	switch {
	case status.Code(err) == codes.NotFound:
		return r, fmt.Errorf("ttl: table %q does not exist: %w", table, err)
	case err != nil:
		return r, fmt.Errorf("ttl: table %q: %w", table, err)
	}
	r.Found = describePolicy(nil)
	for _, f := range info.FamilyInfos {
		if f.Name == family {
			p := f.FullGCPolicy
			if p == nil {
				p = bigtable.NoGcPolicy()
			}
			r.Found = describePolicy(p)
		}
	}
	if r.Found == describePolicy(nil) {
		return r, fmt.Errorf("%w: table %q has no family %q", ErrFamilyMismatch, table, family)
	}
	return r, nil
}

// fill sets the report's counts from a tally.
func (r *MoveReport) fill(t moveTally, read Scan) {
	r.OldLive, r.OldExpired, r.OldNeverExpire, r.Misplaced, r.New = t.oldLive, t.oldExpired, t.oldForever, t.misplaced, t.new
	r.LastExpiry = t.lastExpiry
	r.Scan = read
	r.Counted = true
}

// PlanMove reports what moving family of table through data (the table
// opened with a data client) by m does, without changing anything: the
// policies before, during and after, the boundary, the cells on each side
// and which of the old are live, the old cells stamped on the wrong side
// of the boundary, when the move can end, and what keeps each step from
// being taken.
func PlanMove(ctx context.Context, admin *bigtable.AdminClient, table string, data bigtable.TableAPI, family string, m Move, opts MoveOptions) (*MoveReport, error) {
	r, _, err := moveCall(ctx, admin, table, data, family, m, opts, "PlanMove")
	if err != nil {
		return r, err
	}
	r.DryRun = true
	r.plan(m)
	return r, nil
}

// plan says what the next steps are and what blocks them.
func (r *MoveReport) plan(m Move) {
	switch {
	case !r.Started && r.Found != r.Window && r.Found != r.Final:
		r.Actions = append(r.Actions, fmt.Sprintf("before %s: configure every process with the move, then start it: GC policy %s → %s",
			text.Time(m.Start), r.Found, r.Window))
	case !r.Started:
		r.Actions = append(r.Actions, fmt.Sprintf("at %s writers switch to %v", text.Time(m.Start), m.To))
	}
	if r.Misplaced.Cells > 0 {
		r.Actions = append(r.Actions, fmt.Sprintf("start rewrites %s stamped at or above the boundary in the new encoding",
			text.Plural(int(r.Misplaced.Cells), "old cell", "old cells")))
	}
	if !r.Started && r.Now.Add(m.Skew).After(m.Start) {
		r.Blockers = append(r.Blockers, fmt.Sprintf("the start, %s, is less than the skew (%v) away: processes whose clocks run ahead may have started",
			text.Time(m.Start), m.Skew))
	}
	if r.Found == r.Final && r.Final != r.Window {
		r.Actions = append(r.Actions, "finished: the family has the new strategy's policy; configure the processes with "+m.To.String())
		return
	}
	if !r.Started {
		r.Blockers = append(r.Blockers, "the move has not started: it cannot finish before "+text.Time(m.Start))
	}
	switch {
	case r.OldNeverExpire.Cells > 0 && m.rewritable() != nil:
		r.Blockers = append(r.Blockers, fmt.Sprintf("%s of the old rule never expire, and cells cannot be rewritten between sequence numbers and times: "+
			"the move never ends by itself; give the old cells an end (Old: For or Until), or finish with data loss",
			text.Plural(int(r.OldNeverExpire.Cells), "live cell", "live cells")))
	case r.OldNeverExpire.Cells > 0:
		r.Blockers = append(r.Blockers, fmt.Sprintf("%s of the old rule never expire: rewrite them (or finish with data loss)",
			text.Plural(int(r.OldNeverExpire.Cells), "live cell", "live cells")))
	case r.OldLive.Cells > 0:
		r.Blockers = append(r.Blockers, fmt.Sprintf("%s of the old rule live until %s (the skew included): wait, or rewrite them",
			text.Plural(int(r.OldLive.Cells), "cell", "cells"), text.Time(r.LastExpiry.Add(m.Skew))))
	case r.Started:
		r.Actions = append(r.Actions, fmt.Sprintf("finish: no cell of the old rule is live; GC policy %s → %s", r.Found, r.Final))
	}
}

// StartMove prepares family for m, before m.Start, once every process is
// configured with the move: in a move from DefaultExpiration it rewrites
// the old cells stamped at or above the boundary in the new encoding
// (each only if still there unchanged, recorded in opts.Checkpoint first
// so that no cell is rewritten twice), then it sets the family's GC policy
// to the move's. It refuses while misplaced cells remain.
func StartMove(ctx context.Context, admin *bigtable.AdminClient, table string, data bigtable.TableAPI, family string, m Move, opts MoveOptions) (*MoveReport, error) {
	r, _, err := moveCall(ctx, admin, table, data, family, m, opts, "StartMove")
	if err != nil {
		return r, err
	}
	if r.Misplaced.Cells > 0 {
		if opts.Checkpoint == nil && !opts.DryRun {
			return r, fmt.Errorf("%w: StartMove: %s stamped above the boundary must be rewritten, and that needs a Checkpoint (MoveOptions.Checkpoint): a rewritten cell cannot be told from one still to rewrite",
				ErrInvalidOption, text.Plural(int(r.Misplaced.Cells), "old cell", "old cells"))
		}
		r.Actions = append(r.Actions, fmt.Sprintf("rewrite %s stamped at or above the boundary", text.Plural(int(r.Misplaced.Cells), "old cell", "old cells")))
		if !opts.DryRun {
			if err := rewriteMisplaced(ctx, data, family, m, r, opts); err != nil {
				return r, err
			}
			if r.Kept > 0 {
				return r, fmt.Errorf("%w: StartMove: %s stamped above the boundary could not be rewritten (changed meanwhile, or a newer cell would be outranked); the policy is unchanged",
					ErrDataLoss, text.Plural(int(r.Kept), "old cell", "old cells"))
			}
		}
	}
	if r.Found != r.Window && r.Found != r.Final {
		r.Actions = append(r.Actions, fmt.Sprintf("GC policy %s → %s", r.Found, r.Window))
		if !opts.DryRun {
			if err := setPolicy(ctx, admin, table, family, m.GCPolicy(), opts.IgnoreWarnings); err != nil {
				return r, err
			}
			r.Found = r.Window
		}
	}
	if len(r.Actions) == 0 {
		r.Actions = append(r.Actions, "nothing to do: the family has the move's policy")
	}
	return r, nil
}

// FinishMove ends the move: when no cell of the old rule is live (for a
// reader lagging by m.Skew), it sets the family's GC policy to m.To's.
// While one is, it refuses with ErrDataLoss, unless opts.AllowDataLoss.
// The processes can then be configured with m.To alone.
func FinishMove(ctx context.Context, admin *bigtable.AdminClient, table string, data bigtable.TableAPI, family string, m Move, opts MoveOptions) (*MoveReport, error) {
	r, _, err := moveCall(ctx, admin, table, data, family, m, opts, "FinishMove")
	if err != nil {
		return r, err
	}
	switch {
	case !r.Started:
		return r, fmt.Errorf("%w: FinishMove: the move starts at %s", ErrInvalidOption, text.Time(m.Start))
	case r.Found == r.Final:
		r.Actions = append(r.Actions, "nothing to do: the family has the new strategy's policy")
		return r, nil
	case r.OldLive.Cells > 0 && !opts.AllowDataLoss:
		return r, fmt.Errorf("%w: FinishMove: table %q, family %q: %s of the old rule are live (the latest until %s); rewrite them, wait, or allow the loss",
			ErrDataLoss, table, family, text.Plural(int(r.OldLive.Cells), "cell", "cells"), text.Time(r.LastExpiry.Add(m.Skew)))
	}
	if r.OldLive.Cells > 0 {
		r.Actions = append(r.Actions, fmt.Sprintf("%s of the old rule are lost", text.Plural(int(r.OldLive.Cells), "live cell", "live cells")))
	}
	// The old cells still stored, expired by their rule, that the new
	// strategy alone would read as live (or, under a version limit, would
	// rank above every version) go before the new policy comes.
	purged, err := purgeOld(ctx, data, family, m, r.Now, opts)
	r.Purged = purged
	if purged > 0 {
		verb := "deleted"
		if opts.DryRun {
			verb = "delete"
		}
		r.Actions = append(r.Actions, fmt.Sprintf("%s %s of the old rule, expired, which %v alone would read as live",
			verb, text.Plural(int(purged), "cell", "cells"), m.To))
	}
	if err != nil {
		return r, err
	}
	r.Actions = append(r.Actions, fmt.Sprintf("GC policy %s → %s", r.Found, r.Final))
	if !opts.DryRun {
		if err := setPolicy(ctx, admin, table, family, m.To.GCPolicy(), opts.IgnoreWarnings); err != nil {
			return r, err
		}
		r.Found = r.Final
	}
	return r, nil
}

// purgeOld deletes (in a dry run, counts) the cells on the old side of the
// move that m.To alone would read as live at now: once the processes are
// configured with To, they would come back. Under a version limit every
// old cell goes: real timestamps outrank every sequence number, and GC
// would delete the versions below them.
func purgeOld(ctx context.Context, data bigtable.TableAPI, family string, m Move, now time.Time, opts MoveOptions) (int64, error) {
	old, _, _ := m.sides()
	filter := []bigtable.Filter{bigtable.ColumnRangeFilter(family, "", ""), old.Span.Filter(), bigtable.StripValueFilter()}
	if _, versions := m.To.Versions(); !versions {
		filter = append(filter, m.To.Filter(now))
	}
	var total int64
	var failed error
	_, err := scanTable(ctx, data, bigtable.ChainFilters(filter...), opts.Scan,
		func() *purge { return &purge{ctx: ctx, data: data, family: family, dryRun: opts.DryRun} },
		(*purge).row,
		func(p *purge) {
			total += p.n
			if failed == nil {
				failed = p.err
			}
		})
	if err == nil {
		err = failed
	}
	if err != nil {
		return total, fmt.Errorf("ttl: deleting the expired old cells of family %q: %w", family, err)
	}
	return total, nil
}

// A purge deletes the cells a scan returns, row by row.
type purge struct {
	ctx    context.Context
	data   bigtable.TableAPI
	family string
	dryRun bool
	n      int64
	err    error
}

func (p *purge) row(r bigtable.Row) {
	items := r[p.family]
	if p.err != nil || len(items) == 0 {
		return
	}
	p.n += int64(len(items))
	if p.dryRun {
		return
	}
	mut := bigtable.NewMutation()
	for _, it := range items {
		_, qualifier := rules.SplitColumn(it.Column)
		mut.DeleteTimestampRange(p.family, qualifier, it.Timestamp, it.Timestamp+1000)
	}
	p.err = p.data.Apply(p.ctx, r.Key(), mut)
}

// startWork names StartMove's work in a checkpoint.
func startWork(table, family string, m Move) string {
	return fmt.Sprintf("start table %q family %q %v", table, family, m)
}

// finished reports whether cp records work as finished.
func finished(cp Checkpoint, work string) bool {
	if cp == nil {
		return false
	}
	rec, err := cp.Load()
	if err != nil || rec == nil || rec.Work != work {
		return false
	}
	for _, s := range rec.Shards {
		if !s.Done {
			return false
		}
	}
	return true
}

// setPolicy sets a family's GC policy.
func setPolicy(ctx context.Context, admin *bigtable.AdminClient, table, family string, p bigtable.GCPolicy, ignoreWarnings bool) error {
	var opts []bigtable.GCPolicyOption
	if ignoreWarnings {
		opts = append(opts, bigtable.IgnoreWarnings())
	}
	if err := admin.SetGCPolicyWithOptions(ctx, table, family, p, opts...); err != nil {
		return fmt.Errorf("ttl: table %q: setting family %q to %s: %w", table, family, describePolicy(p), err)
	}
	return nil
}
