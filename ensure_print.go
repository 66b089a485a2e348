package ttl

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cellttl/ttl/internal/text"
)

// How a Plan prints: the decisions are EnsureFamilies', in ensure.go.

// String returns the plan as a table a person can read, one family a line,
// with what each change would lose and what its scan read below.
func (p *Plan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "table %q at %s: %s\n", p.Table, text.Time(p.Now), p.state())
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "FAMILY\tSTRATEGY\tFOUND\tWANT\tACTION\tROWS LOST")
	for _, f := range p.Families {
		fmt.Fprintf(w, "%s\t%v\t%s\t%s\t%s\t%s\n", f.Family, f.Strategy, describePolicy(f.Found), describePolicy(f.Want), p.action(f), p.rowsLost(f))
	}
	w.Flush()
	for _, f := range p.Families {
		for _, l := range f.Losses {
			fmt.Fprintf(&b, "  %s: %s%s\n", f.Family, p.bound(), l.Reason)
		}
		if f.Resurfaced > 0 {
			fmt.Fprintf(&b, "  %s: %s\n", f.Family, p.resurfaced(f))
		}
	}
	if p.Scan.Reads > 0 {
		fmt.Fprintf(&b, "  scan: %s\n", describeScan(p.Scan))
	}
	return b.String()
}

// stopped reports a plan whose scan stopped early: it decided nothing.
func (p *Plan) stopped() bool { return p.Scan.ShardsRead < p.Scan.planned() }

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
	case p.stopped():
		s = fmt.Sprintf("the scan stopped after %d of %d shards: nothing decided, nothing changed; the counts below are partial",
			p.Scan.ShardsRead, p.Scan.planned())
	case p.Scan.Estimate():
		s = fmt.Sprintf("estimate from a sample of %d of %d shards, nothing decided, nothing changed; %s to make",
			p.Scan.Sampled, p.Scan.Shards, text.Plural(pending, "change", "changes"))
	case refused > 0 && p.DryRun:
		s = fmt.Sprintf("dry run, nothing changed; %s would be refused", text.Plural(refused, "change", "changes"))
	case refused > 0:
		s = fmt.Sprintf("%s refused, nothing changed", text.Plural(refused, "change", "changes"))
	case p.DryRun && pending > 0:
		s = fmt.Sprintf("dry run, nothing changed; %s to make", text.Plural(pending, "change", "changes"))
	case pending == 0 && done == 0:
		s = "every family matches its strategy, nothing to change"
	case pending > 0:
		s = fmt.Sprintf("%s made, %d not made", text.Plural(done, "change", "changes"), pending)
	default:
		s = fmt.Sprintf("%s made", text.Plural(done, "change", "changes"))
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

// action is the family's ACTION in the plan: what was done, or what would
// be; never a decision the plan did not take.
func (p *Plan) action(f FamilyPlan) string {
	estimate := ""
	if p.Scan.Estimate() {
		estimate = " (estimate)"
	}
	switch {
	case f.Matches():
		return "keep"
	case f.Refused:
		return "refused"
	case f.Done && !f.Exists():
		return "created"
	case f.Done && f.Rows > 0:
		return "changed, data lost"
	case f.Done:
		return "changed"
	case p.stopped():
		return "undecided"
	case !f.Exists():
		return "create"
	case f.Rows > 0 && !p.DryRun:
		// Allowed, but the changes stopped before this one: nothing lost.
		return "not changed"
	case f.Rows > 0:
		return "change, loses data" + estimate
	}
	return "change" + estimate
}

// rowsLost is the family's ROWS LOST: exact, at least (a scan that stopped
// early), or about (a sample).
func (p *Plan) rowsLost(f FamilyPlan) string {
	if !f.Exists() || f.Matches() {
		return "-"
	}
	return fmt.Sprintf("%s%d", p.bound(), f.Rows)
}

// resurfaced says how many rows hold cells the change would bring back:
// at least (a scan that stopped early), or about (a sample).
func (p *Plan) resurfaced(f FamilyPlan) string {
	return fmt.Sprintf("%s%s cells that the current policy %s already lets GC delete, not yet collected, which %v would return again",
		p.bound(), text.Plural(f.Resurfaced, "row holds", "rows hold"), describePolicy(f.Found), f.Strategy)
}

// bound is what the plan's counts are: "≥" at least (a scan that stopped
// early), "~" about (a sample), "" exact.
func (p *Plan) bound() string {
	switch {
	case p.stopped():
		return "≥"
	case p.Scan.Estimate():
		return "~"
	}
	return ""
}

// describeScan says what a scan read, and whether its counts are exact,
// partial or estimates.
func describeScan(s Scan) string {
	var shards string
	switch {
	case s.Sampled > 0:
		shards = fmt.Sprintf("a sample of %d of %d shards (estimates: counts ×%.1f)", s.Sampled, s.Shards, s.scale())
		if s.ShardsRead < s.Sampled {
			shards = fmt.Sprintf("%d of a sample of %d of %d shards read (partial)", s.ShardsRead, s.Sampled, s.Shards)
		}
	case s.ShardsRead < s.Shards:
		shards = fmt.Sprintf("%d of %d shards read (partial)", s.ShardsRead, s.Shards)
	default:
		shards = text.Plural(s.Shards, "shard", "shards")
	}
	return fmt.Sprintf("%s, %s, %s and %s seen, %s returned", shards, text.Plural(s.Reads, "read", "reads"),
		text.Plural(s.RowsSeen, "row", "rows"), text.Plural(s.CellsSeen, "cell", "cells"), text.Plural(s.CellsReturned, "cell", "cells"))
}

// MarshalJSON encodes the plan for programs: what String prints, as
// fields. decided is false for a plan whose scan stopped early or read a
// sample: its counts are partial or estimates, and it decided nothing.
func (p *Plan) MarshalJSON() ([]byte, error) {
	type family struct {
		Family     string `json:"family"`
		Strategy   string `json:"strategy"`
		Found      string `json:"found"`
		Want       string `json:"want"`
		Action     string `json:"action"`
		RowsLost   int    `json:"rows_lost"`
		Losses     []Loss `json:"losses"`
		Resurfaced int    `json:"resurfaced_rows"`
		Refused    bool   `json:"refused"`
		Done       bool   `json:"done"`
	}
	out := struct {
		Table       string    `json:"table"`
		Now         time.Time `json:"now"`
		State       string    `json:"state"`
		DryRun      bool      `json:"dry_run"`
		CreateTable bool      `json:"create_table"`
		Decided     bool      `json:"decided"`
		Scan        Scan      `json:"scan"`
		Families    []family  `json:"families"`
	}{p.Table, p.Now, p.state(), p.DryRun, p.CreateTable, !p.stopped() && !p.Scan.Estimate(), p.Scan, make([]family, len(p.Families))}
	for i, f := range p.Families {
		found, want := f.Policies()
		out.Families[i] = family{f.Family, f.Strategy.String(), found, want, p.action(f), f.Rows, f.Losses, f.Resurfaced, f.Refused, f.Done}
		if out.Families[i].Losses == nil {
			out.Families[i].Losses = []Loss{}
		}
	}
	return json.Marshal(out)
}
