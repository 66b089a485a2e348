package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/scan"
)

// How stats prints an audit.Report: one family a line with its live,
// expired, never-expiring and uncollectable cells and their bytes, then
// for each family when its live cells expire and its expired ones become
// collectable, and what the scan read.
func renderAudit(w io.Writer, a *audit.Report) {
	fmt.Fprintf(w, "table %q at %s: %s\n", a.Table, text.Time(a.Now), auditState(a))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FAMILY\tSTRATEGY\tPOLICY\tLIVE\tEXPIRED, STORED\tNEVER EXPIRE\tUNCOLLECTABLE")
	for _, f := range a.Families {
		strategy := f.Strategy
		if strategy == "" {
			strategy = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Family, strategy, f.Policy,
			auditCount(a, f.Live), auditCount(a, f.Expired), auditCount(a, f.Forever), auditCount(a, f.Uncollectable))
	}
	tw.Flush()
	for _, f := range a.Families {
		switch s := histogram(a, f.Expiring, f.Strategy == ""); {
		case s == "":
		case f.Strategy == "":
			// Without a strategy a cell is live until GC deletes it: what
			// the family's age gives is when GC may, not an expiry.
			fmt.Fprintf(w, "  %s: no strategy, its cells are live until GC deletes them: GC may delete them %s\n", f.Family, s)
		default:
			fmt.Fprintf(w, "  %s: live cells expire %s\n", f.Family, s)
		}
		if s := histogram(a, f.Collectable, false); s != "" {
			fmt.Fprintf(w, "  %s: expired cells are collectable %s\n", f.Family, s)
		}
	}
	if a.Read.Reads > 0 {
		fmt.Fprintf(w, "  scan: %s\n", a.Read)
	}
	if s := describeEstimate(a.Read); s != "" {
		fmt.Fprintf(w, "  estimate: %s\n", s)
	}
}

// describeEstimate says what a sample estimates the table holds, with
// the 95% interval, or "" for a read that is not a sample's estimate.
func describeEstimate(s scan.Stats) string {
	e := s.Estimates
	if e == nil {
		return ""
	}
	c := e.CellsSeen
	r := e.RowsSeen
	return fmt.Sprintf("the table holds about %d cells (95%% interval %d to %d, ±%.1f%%) and %d rows (%d to %d), from %s read; counts above ×%.2f",
		c.Estimate, c.Low, c.High, 100*c.Margin(), r.Estimate, r.Low, r.High, text.Plural(s.CellsSeen, "cell", "cells"), e.Scale)
}

// auditState sums the audit up for its first line.
func auditState(a *audit.Report) string {
	bytes := "bytes without values (stripped on the server)"
	if a.Values {
		bytes = "bytes with values"
	}
	switch {
	case a.Read.Stopped():
		return fmt.Sprintf("the scan stopped after %d of %d shards: the counts below are partial; %s", a.Read.ShardsRead, a.Read.Planned(), bytes)
	case a.Read.Estimate():
		return fmt.Sprintf("estimates from a sample of %d ranges of %d shards; %s", a.Read.Sampled, a.Read.Shards, bytes)
	}
	return "every shard read; " + bytes
}

// auditCount prints a count of cells and bytes, marked as an estimate or
// a lower bound when the scan was not complete.
func auditCount(a *audit.Report, c scan.Count) string {
	if c.Cells == 0 {
		return "0"
	}
	return bound(a.Read) + c.String()
}

// histogram prints the non-empty buckets of h, or "" when all are empty;
// due labels a bucket in the past as due now ("now, due 1h to 1d ago").
func histogram(a *audit.Report, h []audit.Bucket, due bool) string {
	var parts []string
	for _, bk := range h {
		if bk.Cells == 0 {
			continue
		}
		label := bucketLabel(a.Now, bk)
		if due && strings.HasSuffix(label, " ago") {
			label = "now, due " + label
		}
		parts = append(parts, fmt.Sprintf("%s: %s", label, auditCount(a, bk.Count)))
	}
	return strings.Join(parts, "; ")
}

// bucketLabel names a bucket of a histogram by its edges, relative to the
// audit's now: "more than 30d ago", "1h to 1d ago", "within 1h",
// "in 7d to 30d", "in more than 1y".
func bucketLabel(now time.Time, b audit.Bucket) string {
	from, until := b.From.Sub(now), b.Until.Sub(now)
	switch {
	case b.From.IsZero():
		return "more than " + formatSpan(-until) + " ago"
	case b.Until.IsZero():
		return "in more than " + formatSpan(from)
	case until <= 0:
		if until == 0 {
			return "less than " + formatSpan(-from) + " ago"
		}
		return formatSpan(-until) + " to " + formatSpan(-from) + " ago"
	case from == 0:
		return "within " + formatSpan(until)
	}
	return "in " + formatSpan(from) + " to " + formatSpan(until)
}

// formatSpan prints a histogram edge: 1h, 1d, 7d, 30d, 1y.
func formatSpan(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d >= 365*day && d%(365*day) == 0:
		return fmt.Sprintf("%dy", d/(365*day))
	case d >= day && d%day == 0:
		return fmt.Sprintf("%dd", d/day)
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}
