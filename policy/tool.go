package policy

import (
	"context"
	"errors"
	"fmt"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/scan"
)

var (
	// ErrFamilyMismatch reports a managed family that is missing or whose
	// GC policy is not exactly the one its strategy relies on. Check,
	// CheckSchedule, Ensure and EnsureSchedule return it, and with it the
	// tools that need a family as its strategy has it (package terraform,
	// the sweep, the move).
	ErrFamilyMismatch = errors.New("ttl: column family does not match its strategy")

	// ErrDataLoss reports a family change that would delete or hide
	// existing cells, refused unless the caller allows it (Ensure,
	// EnsureSchedule, package terraform, the move's steps).
	ErrDataLoss = errors.New("ttl: change would delete or hide existing data")
)

// Options are the options of a Tool. The zero value makes the changes,
// refuses every one that would lose data, does not ignore Bigtable's
// warnings, and reads time.Now.
type Options struct {
	// DryRun makes Ensure work out and return the plan, scans included,
	// and change nothing.
	DryRun bool

	// AllowDataLoss lets Ensure make changes that would delete or hide
	// existing cells. The plan still reports what they lose.
	AllowDataLoss bool

	// IgnoreWarnings passes bigtable.IgnoreWarnings() with every GC policy
	// change (Ensure's and Set's). Bigtable refuses to relax the GC policy
	// of a replicated table without it.
	IgnoreWarnings bool

	// Scan is how the tool reads the table, and its clock and meters:
	// the scan for data that changes would lose (its workers, its
	// progress reports, a sample of the table for a fast estimate), and
	// Scan.Now, the clock that decides which cells are live, read once a
	// plan (nil means time.Now). A sampled plan decides nothing: it needs
	// DryRun. Its metrics name the table and the work "ensure" unless
	// Scan.Table and Scan.Work say otherwise.
	Scan scan.Options
}

// A Tool checks and sets the GC policies of one table's managed
// families, bound once to its clients, its families and its options (New),
// then run as often as needed: Check and Ensure for the table, CheckSchedule
// and EnsureSchedule for a schedule table of its families, Policies and
// Set for one family's policy. It is not named Table, which is the
// library's table of data (ttl.Table): a Tool reads that table's families
// and changes their policies, never its cells.
//
// A Tool holds no connection of its own and no goroutine: it is safe for
// concurrent use when its clients are.
type Tool struct {
	admin    *bigtable.AdminClient
	data     bigtable.TableAPI
	table    string
	names    []string // the managed families, sorted
	managed  map[string]ttl.Strategy
	families map[string]ttl.Strategy // as given, for SchedulePolicy
	opts     Options
}

// New returns the tool for table's families: admin reads and changes
// their policies; data, the same table opened with a data client
// (client.Open(table)), is what Ensure scans for cells a change would
// lose. data may be nil for a tool that never calls Ensure (Check,
// CheckSchedule, EnsureSchedule, Policies, Set), and families may be nil
// or empty for one that only calls Policies and Set; Check, Ensure and
// the schedule methods then refuse with ttl.ErrInvalidStrategy.
//
// It refuses, and reads nothing, a nil admin client (ttl.ErrNilArgument),
// families ttl.NewTable would refuse or a DefaultExpiration of a fraction
// of a second, which the client cannot check (ttl.ErrInvalidStrategy),
// and scan options that cannot work, or a sample without DryRun
// (ttl.ErrInvalidOption).
func New(admin *bigtable.AdminClient, data bigtable.TableAPI, table string, families map[string]ttl.Strategy, opts Options) (*Tool, error) {
	if admin == nil {
		return nil, fmt.Errorf("%w: policy.New: nil admin client", ttl.ErrNilArgument)
	}
	if data != nil && rules.IsNilPointer(data) {
		data = nil
	}
	t := &Tool{admin: admin, data: data, table: table, families: families, opts: opts}
	if len(families) > 0 {
		var err error
		if t.names, t.managed, err = checkedFamilies(families); err != nil {
			return nil, err
		}
	}
	if err := opts.Scan.Check(); err != nil {
		return nil, fmt.Errorf("policy.New: %w", err)
	}
	if opts.Scan.Sample > 0 && !opts.DryRun {
		return nil, fmt.Errorf("%w: policy.New: a sample (scan.Options.Sample) gives estimates, which cannot decide a change; use it with DryRun",
			ttl.ErrInvalidOption)
	}
	return t, nil
}

// start checks what every method needs: a context and, for a method
// that reads the managed families, some.
func (t *Tool) start(ctx context.Context, call string, needFamilies bool) error {
	if ctx == nil {
		return fmt.Errorf("%w: %s: nil context", ttl.ErrNilArgument, call)
	}
	if needFamilies && len(t.managed) == 0 {
		_, _, err := checkedFamilies(nil)
		return fmt.Errorf("%s: %w", call, err)
	}
	return nil
}

// Policies reads the GC policy of every family of the table: the policy
// as the client reports it, bigtable.NoGcPolicy() for a family without
// one. A table that does not exist is reported by an error wrapping
// ErrTableNotFound and the server's NotFound status, which Check and
// Ensure read as a table to create; the audit and the move tools as an
// error.
func (t *Tool) Policies(ctx context.Context) (map[string]bigtable.GCPolicy, error) {
	if err := t.start(ctx, "policy.Policies", false); err != nil {
		return nil, err
	}
	found, _, err := families(ctx, t.admin, t.table)
	return found, err
}

// Set sets the GC policy of a family that exists to p, passing
// bigtable.IgnoreWarnings() with it when Options.IgnoreWarnings is set
// (Bigtable refuses to relax the GC policy of a replicated table without
// it). It checks nothing against the family's strategy: the move's steps
// set a policy that is neither side's alone.
func (t *Tool) Set(ctx context.Context, family string, p bigtable.GCPolicy) error {
	if err := t.start(ctx, "policy.Set", false); err != nil {
		return err
	}
	return set(ctx, t.admin, t.table, family, p, t.opts.IgnoreWarnings)
}

// set sets the GC policy of a family of table, as Tool.Set does.
func set(ctx context.Context, admin *bigtable.AdminClient, table, family string, p bigtable.GCPolicy, ignoreWarnings bool) error {
	var opts []bigtable.GCPolicyOption
	if ignoreWarnings {
		opts = append(opts, bigtable.IgnoreWarnings())
	}
	if err := admin.SetGCPolicyWithOptions(ctx, table, family, p, opts...); err != nil {
		return fmt.Errorf("policy: table %q: setting family %q to %s: %w", table, family, Describe(p), err)
	}
	return nil
}
