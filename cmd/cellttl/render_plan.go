package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"cloud.google.com/go/bigtable"

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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", f.Family, f.Strategy, policy.Describe(f.Found)+kindNote(f.Type), policy.Describe(f.Want)+kindNote(f.WantType), planAction(p, f), rowsLost(p, f))
	}
	tw.Flush()
	for _, f := range p.Families {
		for _, l := range f.Losses {
			fmt.Fprintf(w, "  %s: %s%s\n", f.Family, bound(p.Read), lossReason(f, l))
		}
		for _, l := range f.CollectedSooner {
			fmt.Fprintf(w, "  %s: not lost: %s%s\n", f.Family, bound(p.Read), lossReason(f, l))
		}
		if f.Resurfaced > 0 {
			fmt.Fprintf(w, "  %s: %s%s cells that the current policy %s already lets GC delete, not yet collected, which %s would return again\n",
				f.Family, bound(p.Read), text.Plural(f.Resurfaced, "row holds", "rows hold"), policy.Describe(f.Found), f.Strategy)
		}
	}
	if p.Read.Reads > 0 {
		fmt.Fprintf(w, "  scan: %s\n", p.Read)
	}
}

// planState sums the plan up for its first line.
func planState(p *policy.Plan) string {
	n := p.Tally()
	pending, refused, done := n.Pending(), n.Refused, n.Done
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

// lossReason says in full which cells a loss is and what the change would
// do to them, for the family f whose plan reports it: the sentences of
// the ensure command's output, made from the loss's data.
func lossReason(f policy.FamilyPlan, l policy.Loss) string {
	rows := text.Plural(l.Rows, "row holds", "rows hold")
	want := policy.Describe(f.Want)
	switch l.Kind {
	case policy.LossSequence:
		return fmt.Sprintf("%s sequence numbers (timestamps before 2000), which the age-based policy %s deletes all at once", rows, want)
	case policy.LossExpired:
		switch {
		case l.Age > 0:
			// The age found keeps them: a grace on the strategy, or a
			// longer default; the policy alone cannot tell which.
			return fmt.Sprintf("%s cells stamped %s, which %s reads as expired and %s keeps stored: GC deletes them at once; written under %s as a default, they are live cells, hidden at once; kept by a grace, they are lost to a sweep that has not read them",
				rows, l.Span(), f.Strategy, maxAge(l.Age), maxAge(l.Age))
		case l.Expiries:
			return fmt.Sprintf("%s cells stamped %s, which %s reads as expiries already past: hidden at once, deleted by GC within seconds", rows, l.Span(), f.Strategy)
		}
		return fmt.Sprintf("%s cells stamped %s, which would expire at once under %s", rows, l.Span(), f.Strategy)
	case policy.LossEarlier:
		return fmt.Sprintf("%s live cells whose expiries move %s earlier under %s, written under %s as a default (kept by a grace on a default of %s, none moves)",
			rows, age(l.Shift), f.Strategy, maxAge(l.Age), age(l.Age-l.Shift))
	case policy.LossRealTime:
		return fmt.Sprintf("%s real-time timestamps (2000 or later), which outrank every sequence number: reads would return them, and GC under %s would delete the versions written after them",
			rows, want)
	case policy.LossVersions:
		return fmt.Sprintf("%s columns with more than %d versions, whose oldest %s deletes", text.Plural(l.Rows, "row has", "rows have"), l.Versions, want)
	case policy.LossSooner:
		return fmt.Sprintf("%s live cells whose expiries %s keeps: GC deletes each %s sooner once expired (%s, a grace, taken off)",
			rows, f.Strategy, age(l.Shift), maxAge(l.Age))
	case policy.LossEntries:
		return fmt.Sprintf("%s stamped %s (each at the end of the second its cells expired in), which %s deletes at once: a sweep behind by more than that would no longer find their rows",
			text.Plural(l.Rows, "entry", "entries"), l.Span(), want)
	}
	return l.String()
}

// maxAge spells a GC age as a policy, as cbt takes it: "maxage=2d".
func maxAge(d time.Duration) string { return policy.Describe(bigtable.MaxAgePolicy(d)) }

// age spells a GC age as maxAge does, without "maxage=": "2d", "36h".
func age(d time.Duration) string { return strings.TrimPrefix(maxAge(d), "maxage=") }
