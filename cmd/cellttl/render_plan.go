package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
)

// How ensure prints a policy.Plan: a line that sums it up, a table with
// one family a line, what each change would lose, and what its scan read.
func renderPlan(w io.Writer, p *policy.Plan) {
	fmt.Fprintf(w, "table %q at %s: %s\n", p.Table, text.Time(p.Now), planState(p))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FAMILY\tSTRATEGY\tFOUND\tWANT\tACTION\tROWS LOST")
	for _, f := range p.Families {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", f.Family, f.Strategy, f.Found+kindNote(f.Type), f.Want+kindNote(f.WantType), planAction(p, f), rowsLost(p, f))
	}
	tw.Flush()
	for _, f := range p.Families {
		for _, l := range f.Losses {
			fmt.Fprintf(w, "  %s: %s%s\n", f.Family, bound(p.Read), l.Reason)
		}
		for _, l := range f.CollectedSooner {
			fmt.Fprintf(w, "  %s: not lost: %s%s\n", f.Family, bound(p.Read), l.Reason)
		}
		if f.Resurfaced > 0 {
			fmt.Fprintf(w, "  %s: %s%s cells that the current policy %s already lets GC delete, not yet collected, which %s would return again\n",
				f.Family, bound(p.Read), text.Plural(f.Resurfaced, "row holds", "rows hold"), f.Found, f.Strategy)
		}
	}
	if p.Read.Reads > 0 {
		fmt.Fprintf(w, "  scan: %s\n", describeRead(p.Read))
	}
}

// planState sums the plan up for its first line.
func planState(p *policy.Plan) string {
	pending, refused, done := 0, 0, 0
	for _, f := range p.Families {
		switch {
		case f.Refused:
			refused++
		case f.Done:
			done++
		case f.Action != policy.Keep:
			pending++
		}
	}
	var s string
	switch {
	case p.Read.Stopped():
		s = fmt.Sprintf("the scan stopped after %d of %d shards: nothing decided, nothing changed; the counts below are partial",
			p.Read.ShardsRead, p.Read.Planned())
	case p.Read.Estimate():
		s = fmt.Sprintf("estimate from a sample of %d ranges of %d shards, nothing decided, nothing changed; would make %s",
			p.Read.Sampled, p.Read.Shards, text.Plural(pending, "change", "changes"))
	case refused > 0 && p.DryRun:
		s = fmt.Sprintf("dry run, nothing changed; %s would be refused", text.Plural(refused, "change", "changes"))
	case refused > 0:
		s = fmt.Sprintf("%s refused, nothing changed", text.Plural(refused, "change", "changes"))
	case p.DryRun && pending > 0:
		s = fmt.Sprintf("dry run, nothing changed; would make %s", text.Plural(pending, "change", "changes"))
	case pending == 0 && done == 0:
		s = "every family matches its strategy, nothing to change"
	case pending > 0:
		s = fmt.Sprintf("%s made, %d not made", text.Plural(done, "change", "changes"), pending)
	default:
		s = fmt.Sprintf("%s made", text.Plural(done, "change", "changes"))
	}
	if p.CreateTable {
		verb := "would be created"
		if done > 0 {
			verb = "created"
		}
		s = "table does not exist, " + verb + " with its families; " + s
	}
	return s
}

// planAction is the family's ACTION in the plan: what was done, or what
// would be; never a decision the plan did not take.
func planAction(p *policy.Plan, f policy.FamilyPlan) string {
	estimate := ""
	if p.Read.Estimate() {
		estimate = " (estimate)"
	}
	switch {
	case f.Action == policy.Keep:
		return "keep"
	case f.Refused:
		return "refused"
	case f.Done && f.Action == policy.Create:
		return "created"
	case f.Done && f.Rows > 0:
		return "changed, data lost"
	case f.Done:
		return "changed"
	case p.Read.Stopped():
		return "undecided"
	case f.Action == policy.Create:
		return "would create"
	case f.Rows > 0 && !p.DryRun:
		// Allowed, but the changes stopped before this one: nothing lost.
		return "not changed"
	case f.Rows > 0:
		return "would change, loses data" + estimate
	}
	return "would change" + estimate
}

// rowsLost is the family's ROWS LOST: exact, at least (a scan that stopped
// early), or about (a sample).
func rowsLost(p *policy.Plan, f policy.FamilyPlan) string {
	if f.Action != policy.Change {
		return "-"
	}
	return fmt.Sprintf("%s%d", bound(p.Read), f.Rows)
}

// bound is what counts from a read are: "≥" at least (a scan that stopped
// early), "~" about (a sample), "" exact.
func bound(s scan.Stats) string {
	switch {
	case s.Stopped():
		return "≥"
	case s.Estimate():
		return "~"
	}
	return ""
}

// describeRead says what a scan read, and whether its counts are exact,
// partial or estimates.
func describeRead(s scan.Stats) string {
	var shards string
	switch {
	case s.Sampled > 0:
		shards = fmt.Sprintf("a sample of %d ranges of %d shards (estimates: counts ×%.1f)", s.Sampled, s.Shards, s.Scale())
		if s.ShardsRead < s.Sampled {
			shards = fmt.Sprintf("%d of a sample of %d ranges of %d shards read (partial)", s.ShardsRead, s.Sampled, s.Shards)
		}
	case s.ShardsRead < s.Shards:
		shards = fmt.Sprintf("%d of %d shards read (partial)", s.ShardsRead, s.Shards)
	default:
		shards = text.Plural(s.Shards, "shard", "shards")
	}
	return fmt.Sprintf("%s, %s, %s and %s seen, %s returned", shards, text.Plural(s.Reads, "read", "reads"),
		text.Plural(s.RowsSeen, "row", "rows"), text.Plural(s.CellsSeen, "cell", "cells"), text.Plural(s.CellsReturned, "cell", "cells"))
}
