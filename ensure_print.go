package ttl

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// How a Plan prints: the decisions are EnsureFamilies', in ensure.go.

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
