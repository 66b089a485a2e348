// Package move moves a family that holds data from one strategy to another.
//
// It does so online, with readers and writers running: the steps of a
// ttl.Move, bound once to the family they move.
//
//	f, err := move.New(admin, client.Open("sessions"), "sessions", "sess", m, move.Options{})
//	report, err := f.Plan(ctx)    // what the move will do, and what blocks each step
//	report, err = f.Start(ctx)    // before m.Start: the move's GC policy
//	report, err = f.Rewrite(ctx)  // after it: the old cells in the new encoding, now
//	report, err = f.Finish(ctx)   // once no old cell is live: the new strategy's policy
//
// Every step reads the family first and reports what it found (a Report,
// whose State says how far the move has come);
// a step that changes the family is a dry run with Options.DryRun. A
// checkpoint (Options.Checkpoint) records one step's work: give Start and
// Rewrite each a checkpoint of its own, through a Family of its own.
package move

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
)

// Checkpoint is Options.Checkpoint, as a refusal that a checkpoint lifts
// names it (policy.OptionError).
const Checkpoint policy.Option = "Options.Checkpoint"

// Options configures the steps. The zero value reads time.Now, makes the
// changes, and refuses to finish while old cells are live.
type Options struct {
	// Scan is how the tool reads the table, and its clock and meters:
	// workers and progress; Scan.Now, the clock, read once per step (nil
	// means time.Now); Scan.MeterProvider, if not nil, records the cells
	// Start and Rewrite rewrite, skip and lose to a writer
	// (docs/metrics.md; a dry run records none) beside the scans' own
	// metrics, with the table and the work "move" unless Scan.Table and
	// Scan.Work say otherwise. A move needs exact counts: a sample is
	// refused.
	Scan scan.Options

	// DryRun makes Start, Rewrite and Finish report what they would do
	// and change nothing.
	DryRun bool

	// AllowDataLoss lets Finish set the new policy while cells of the old
	// rule are live: reads hide them from then on, and GC deletes them.
	AllowDataLoss bool

	// IgnoreWarnings passes bigtable.IgnoreWarnings() with every GC policy
	// change, as a replicated table needs to relax its policy.
	IgnoreWarnings bool

	// AppProfile names the app profile the data client was opened with
	// (bigtable.ClientConfig.AppProfile), for the error that wraps
	// ttl.ErrTransactionNotAllowed when a profile with multi-cluster
	// routing refuses the rewrite's conditional writes. It changes nothing
	// else.
	AppProfile string

	// Checkpoint records the progress of the changes Start and Rewrite
	// make, so that an interrupted run given the same checkpoint resumes
	// where it stopped and makes no change twice. Rewrite works without
	// one (a new run reads the whole family again); Start needs one to
	// rewrite the cells it must rewrite.
	Checkpoint scan.Checkpoint

	// Schedule, if not nil, is the schedule table of the table (package
	// schedule), opened with a data client: every cell Start and Rewrite
	// rewrite with an expiry gets its entry, as the library's writers
	// (ttl.WithSchedule) give the cells they write, so that a sweep that
	// reads the schedule finds the rewritten cells. The entries of a batch
	// of rewrites are written in one request before the batch, which a
	// failed entry write leaves unmade: the step stops, and a run given
	// the same checkpoint writes the entries again, then the batch. When
	// the move's Old gives the old cells another expiry than their old
	// rule, Start writes each one's entry at it. A move none of whose
	// cells expires at an instant writes no entry: a schedule is refused
	// for it.
	Schedule bigtable.TableAPI

	// ScheduleTable is the name of the schedule table, for messages; it
	// cannot be the table's own.
	ScheduleTable string
}

// A Family is one family of a table and the move it is in, with the
// options of its steps: Plan, Start, Rewrite and Finish.
type Family struct {
	policies      *policy.Tool // reads and sets the family's GC policy
	data          bigtable.TableAPI
	table, family string
	m             ttl.Move
	rule          rules.Move
	opts          Options

	startRec, rewriteRec *recorder // Options.Scan.MeterProvider's; nil without one
}

// New returns the steps of moving family of table by m: admin reads and
// sets the family's GC policy, data is the same table opened with a data
// client (client.Open(table)). It checks the arguments and changes
// nothing: a nil admin client or table is refused with
// ttl.ErrNilArgument, a bad family name or an invalid move with
// ttl.ErrInvalidStrategy, bad options (a sample among them, a
// Scan.MeterProvider that refuses the move's instruments) with
// ttl.ErrInvalidOption.
func New(admin *bigtable.AdminClient, data bigtable.TableAPI, table, family string, m ttl.Move, opts Options) (*Family, error) {
	if admin == nil || data == nil || rules.IsNilPointer(data) {
		return nil, fmt.Errorf("%w: move.New: nil admin client or table", ttl.ErrNilArgument)
	}
	if err := rules.CheckFamilyName(family); err != nil {
		return nil, fmt.Errorf("%w: move.New: %v", ttl.ErrInvalidStrategy, err)
	}
	r, err := rules.Of(m)
	if err != nil {
		return nil, fmt.Errorf("move.New: %w (family %q)", err, family)
	}
	if err := opts.Scan.Check(); err != nil {
		return nil, fmt.Errorf("move.New: %w", err)
	}
	if opts.Scan.Sample > 0 {
		return nil, fmt.Errorf("%w: move.New: a move needs exact counts, not a sample", ttl.ErrInvalidOption)
	}
	if err := checkSchedule(table, family, m, *r.Move, opts); err != nil {
		return nil, fmt.Errorf("move.New: %w", err)
	}
	opts.Scan.Table = cmp.Or(opts.Scan.Table, table)
	opts.Scan.Work = cmp.Or(opts.Scan.Work, "move")
	policies, err := policy.New(admin, nil, table, nil, policy.Options{IgnoreWarnings: opts.IgnoreWarnings})
	if err != nil {
		return nil, fmt.Errorf("move.New: %w", err)
	}
	f := &Family{policies: policies, data: data, table: table, family: family, m: m, rule: *r.Move, opts: opts}
	if f.startRec, f.rewriteRec, err = newRecorders(opts.Scan.MeterProvider, table, family); err != nil {
		return nil, fmt.Errorf("move.New: %w", err)
	}
	return f, nil
}

// Boundary returns the timestamp that separates a move's two encodings:
// its Start for moves between time rules, 2000-01-01 for moves to or from
// sequence numbers; 0 for an invalid move.
func Boundary(m ttl.Move) bigtable.Timestamp {
	r, err := rules.Of(m)
	if err != nil {
		return 0
	}
	_, _, b := r.Move.Sides()
	return b
}

// EndsBy returns the instant from which no cell written before the move's
// Start is live, its Skew included: the earliest the move can be finished
// without rewriting them. It reports false when the old cells never
// expire by time (or the move is invalid): the move then ends once they
// are rewritten.
func EndsBy(m ttl.Move) (time.Time, bool) {
	r, err := rules.Of(m)
	if err != nil {
		return time.Time{}, false
	}
	return r.Move.EndsBy()
}

// setPolicy sets the family's GC policy to p, the move's window or its
// final policy, and records the change among r's actions; in a dry run it
// only records it. Start and Finish end with it.
func (f *Family) setPolicy(ctx context.Context, r *Report, p bigtable.GCPolicy) error {
	r.Actions = append(r.Actions, fmt.Sprintf("GC policy %s → %s", policy.Describe(r.Found), policy.Describe(p)))
	if f.opts.DryRun {
		return nil
	}
	if err := f.policies.Set(ctx, f.family, p); err != nil {
		return err
	}
	r.Found = p
	r.State = stateOf(r)
	return nil
}
