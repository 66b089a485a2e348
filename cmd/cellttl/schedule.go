package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/move"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/schedule"
)

// A schedule table (package schedule, -schedule TABLE): ensure creates
// and sets it up, check compares it, beside the data table's families.

// scheduleHelp is the paragraph check's and ensure's help give -schedule.
const scheduleHelp = `
-schedule TABLE names the schedule table of the families given: the index
of their rows by expiry that the writers fill (ttl.WithSchedule) and a
sweep reads (sweep -schedule), so that a round reads what expires instead
of the whole table. Its one family, "` + schedule.Family + `", needs the GC policy of
OneSecond with the families' longest grace (grace:DURATION:SPEC), or no
GC when a family in a move keeps its cells with no age, so that an entry
is kept as long as the expired cells it names. A schedule named as
the table itself, or for a seqnum family (its cells expire at no instant),
is refused (exit 2), nothing read or written.`

// scheduleFlag defines -schedule, for a command that checks, sets up or
// reads a schedule table.
func scheduleFlag(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.schedule, "schedule", "", "the schedule `table` of the families given: the index of their rows by\n"+
		"expiry (see \"cellttl help sweep\"); its family \""+schedule.Family+"\" is checked or set up\n"+
		"beside theirs")
}

// scheduleAhead refuses a schedule that cannot work, before anything is
// read: named as the table, or for a family whose cells expire at no
// instant. It returns exitOK, or the status of the refusal it printed.
func scheduleAhead(c *config, name string, strategies map[string]ttl.Strategy, stderr io.Writer) int {
	if c.schedule == "" {
		return exitOK
	}
	if _, err := policy.SchedulePolicy(c.table, c.schedule, strategies); err != nil {
		return fail(stderr, name, err)
	}
	return exitOK
}

// scheduleToCreate refuses, without -create, a schedule table that does
// not exist or lacks its family, as ensure refuses a data family to
// create: a misspelled name creates nothing. It returns exitOK, or the
// status of the refusal it printed.
func scheduleToCreate(ctx context.Context, c *config, admin *bigtable.AdminClient, stderr io.Writer) int {
	if c.create {
		return exitOK
	}
	return scheduleExists(ctx, c, admin, "ensure", "refused, nothing changed; give -create to create it (check the name first)", stderr)
}

// scheduleExists refuses, for command name, a schedule table that does
// not exist or lacks its family, saying what to do (hint), before
// anything is written. It returns exitOK (for no -schedule too), or the
// status of the refusal it printed: exit 3, as for a data family.
func scheduleExists(ctx context.Context, c *config, admin *bigtable.AdminClient, name, hint string, stderr io.Writer) int {
	if c.schedule == "" {
		return exitOK
	}
	sc := *c
	sc.table = c.schedule
	found, err := reach(ctx, &sc, admin)
	if err != nil {
		return fail(stderr, name, err)
	}
	if slices.Contains(found.names, schedule.Family) {
		return exitOK
	}
	if found.exists {
		fmt.Fprintf(stderr, "cellttl %s: schedule table %q has no family %q\n", name, c.schedule, schedule.Family)
	} else {
		fmt.Fprintf(stderr, "cellttl %s: schedule table %q does not exist\n", name, c.schedule)
	}
	fmt.Fprintf(stderr, "cellttl %s: %s\n", name, hint)
	return exitMismatch
}

// moveScheduleFlag defines -schedule for the move's steps that rewrite
// cells.
func moveScheduleFlag(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.schedule, "schedule", "", "the schedule `table` of the table (see \"cellttl help sweep\"): every cell\n"+
		"rewritten gets its entry, each batch's written before its cells")
}

// moveSchedule sets the schedule table of a move's step in its options:
// move.New then refuses one that cannot work (named as the table, or for
// a move to seqnum), before moveScheduleExists reads it.
func moveSchedule(c *config, client *bigtable.Client, o *move.Options) {
	if c.schedule != "" {
		o.Schedule, o.ScheduleTable = client.Open(c.schedule), c.schedule
	}
}

// moveScheduleExists refuses a schedule table that does not exist or
// lacks its family, before the step writes anything. It returns exitOK,
// or the status of the refusal it printed.
func moveScheduleExists(ctx context.Context, c *config, admin *bigtable.AdminClient, name string, stderr io.Writer) int {
	hint := fmt.Sprintf("refused, nothing changed; \"cellttl ensure -schedule %s -create\" creates it", c.schedule)
	return scheduleExists(ctx, c, admin, name, hint, stderr)
}

// ensureSchedule finishes ensure with -schedule: once the data table's
// plan went through (or would, in a dry run), it ensures the schedule
// table, prints both plans (JSON: {"table": …, "schedule": …}) and
// returns the exit status. A data plan that failed or was refused leaves
// the schedule untouched, and says so.
func ensureSchedule(ctx context.Context, c *config, admin *bigtable.AdminClient, client *bigtable.Client, strategies map[string]ttl.Strategy,
	plan *policy.Plan, err error, stdout, stderr io.Writer) int {
	if err != nil || plan == nil {
		if plan != nil {
			if code := printReport(c, stdout, stderr, "ensure", plan, renderPlan); code != exitOK {
				return code
			}
		}
		code := ensureStatus(c, plan, err, stdout, stderr)
		fmt.Fprintf(stderr, "cellttl ensure: the schedule table %q was not looked at\n", c.schedule)
		return code
	}
	sched, serr := ensureSchedulePlan(ctx, c, admin, client, strategies, stderr)
	if c.format.json {
		if err := printJSON(stdout, struct {
			Table    *policy.Plan `json:"table"`
			Schedule *policy.Plan `json:"schedule"`
		}{plan, sched}); err != nil {
			return fail(stderr, "ensure", err)
		}
	} else {
		renderPlan(stdout, plan)
		if sched != nil {
			fmt.Fprintf(stdout, "schedule of table %q:\n", c.table)
			renderPlan(stdout, sched)
		}
	}
	if code, done := scheduleStatus(sched, serr, stderr); done {
		return code
	}
	both := *plan
	both.Families = append(slices.Clone(plan.Families), sched.Families...)
	return ensureStatus(c, &both, nil, stdout, stderr)
}

// ensureSchedulePlan ensures the schedule table (a dry run without
// -apply), and returns its plan.
func ensureSchedulePlan(ctx context.Context, c *config, admin *bigtable.AdminClient, client *bigtable.Client, strategies map[string]ttl.Strategy,
	stderr io.Writer) (*policy.Plan, error) {
	progress := newProgress(c, stderr)
	defer progress.end()
	schedTool, err := policy.New(admin, nil, c.table, strategies, policy.Options{
		DryRun:         !c.apply,
		AllowDataLoss:  c.allowDataLoss,
		IgnoreWarnings: c.ignoreWarnings,
		Scan:           progress.options(c),
	})
	if err != nil {
		return nil, err
	}
	return schedTool.EnsureSchedule(ctx, c.schedule, client.Open(c.schedule))
}

// scheduleStatus says what became of a schedule's plan that failed or was
// refused, and returns its exit status and true; false when it went
// through.
func scheduleStatus(sched *policy.Plan, serr error, stderr io.Writer) (int, bool) {
	switch {
	case errors.Is(serr, policy.ErrDataLoss):
		fmt.Fprintf(stderr, "cellttl ensure: %s\n", message(serr))
		fmt.Fprintln(stderr, "cellttl ensure: the schedule was refused, nothing changed in it; run again with -allow-data-loss to accept the loss")
		return exitMismatch, true
	case serr != nil && sched != nil && sched.Read.Stopped():
		fmt.Fprintf(stderr, "cellttl ensure: %v\n", serr)
		fmt.Fprintln(stderr, "cellttl ensure: the scan of the schedule did not finish: nothing was decided or changed in it, the counts above are partial")
		return exitFailed, true
	case errors.Is(serr, policy.ErrFamilyMismatch):
		fmt.Fprintf(stderr, "cellttl ensure: %v\n", serr)
		return exitMismatch, true
	case serr != nil:
		return fail(stderr, "ensure", serr), true
	}
	return exitOK, false
}

// A scheduleCheck is what check -schedule found of the schedule table.
type scheduleCheck struct {
	Table string `json:"table"`
	policy.Status
	mismatch error // wraps policy.ErrFamilyMismatch, or nil
}

// MarshalJSON encodes the check as the schedule table's name followed by
// its family's status, as policy.Status encodes it: {"table": …,
// "family": …, "found": …}. Without it, the status's own MarshalJSON,
// promoted, would leave the table out.
func (s scheduleCheck) MarshalJSON() ([]byte, error) {
	st, err := json.Marshal(s.Status)
	if err != nil {
		return nil, err
	}
	table, err := json.Marshal(s.Table)
	if err != nil {
		return nil, err
	}
	out := append([]byte(`{"table":`), table...)
	if len(st) > 2 { // {} has no field to follow the table's
		out = append(out, ',')
	}
	return append(out, st[1:]...), nil
}

// checkSchedule compares the schedule table with what the families need:
// nil without -schedule, and an error that is not a mismatch.
func checkSchedule(ctx context.Context, c *config, tool *policy.Tool) (*scheduleCheck, error) {
	if c.schedule == "" {
		return nil, nil
	}
	st, err := tool.CheckSchedule(ctx, c.schedule)
	if err != nil && !errors.Is(err, policy.ErrFamilyMismatch) {
		return nil, err
	}
	return &scheduleCheck{Table: c.schedule, Status: st, mismatch: err}, nil
}

// report says on stderr how the schedule table does not match, and
// reports whether it does not.
func (s *scheduleCheck) report(stderr io.Writer) bool {
	if s == nil || s.mismatch == nil {
		return false
	}
	fmt.Fprintf(stderr, "cellttl check: %v\n", s.mismatch)
	fmt.Fprintf(stderr, "cellttl check: the schedule table does not match; \"cellttl ensure -schedule %s\" shows what it would change (-create creates it)\n", s.Table)
	return true
}

// renderScheduleCheck prints the schedule table's check below the data
// table's.
func renderScheduleCheck(w io.Writer, table string, s *scheduleCheck) {
	status := "ok"
	switch {
	case !s.Exists:
		status = "missing"
	case !s.Matches:
		status = "mismatch"
	}
	fmt.Fprintf(w, "schedule table %q of table %q\n", s.Table, table)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FAMILY\tSTRATEGY\tFOUND\tWANT\tSTATUS")
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Family, s.Strategy, policy.Describe(s.Found)+kindNote(s.Type), policy.Describe(s.Want)+kindNote(s.WantType), status)
	tw.Flush()
}
