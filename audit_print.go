package ttl

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cellttl/ttl/internal/text"
)

// How an Audit prints.

// String returns the audit as a table a person can read: one family a
// line with its live, expired, never-expiring and uncollectable cells and
// their bytes, then for each family when its live cells expire and its
// expired ones become collectable, and what the scan read.
func (a *Audit) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "table %q at %s: %s\n", a.Table, text.Time(a.Now), a.state())
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "FAMILY\tSTRATEGY\tPOLICY\tLIVE\tEXPIRED, STORED\tNEVER EXPIRE\tUNCOLLECTABLE")
	for _, f := range a.Families {
		strategy := f.Strategy
		if strategy == "" {
			strategy = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Family, strategy, f.Policy,
			a.count(f.Live), a.count(f.Expired), a.count(f.Forever), a.count(f.Uncollectable))
	}
	w.Flush()
	for _, f := range a.Families {
		if s := a.histogram(f.Expiring); s != "" {
			fmt.Fprintf(&b, "  %s: live cells expire %s\n", f.Family, s)
		}
		if s := a.histogram(f.Collectable); s != "" {
			fmt.Fprintf(&b, "  %s: expired cells are collectable %s\n", f.Family, s)
		}
	}
	if a.Scan.Reads > 0 {
		fmt.Fprintf(&b, "  scan: %s\n", describeScan(a.Scan))
	}
	return b.String()
}

// state sums the audit up for its first line.
func (a *Audit) state() string {
	bytes := "bytes without values (stripped on the server)"
	if a.Values {
		bytes = "bytes with values"
	}
	switch {
	case a.Scan.ShardsRead < a.Scan.planned():
		return fmt.Sprintf("the scan stopped after %d of %d shards: the counts below are partial; %s", a.Scan.ShardsRead, a.Scan.planned(), bytes)
	case a.Scan.Estimate():
		return fmt.Sprintf("estimates from a sample of %d of %d shards; %s", a.Scan.Sampled, a.Scan.Shards, bytes)
	}
	return "every shard read; " + bytes
}

// count prints a count of cells and bytes, marked as an estimate or a
// lower bound when the scan was not complete.
func (a *Audit) count(c Count) string {
	mark := ""
	switch {
	case a.Scan.ShardsRead < a.Scan.planned():
		mark = "≥"
	case a.Scan.Estimate():
		mark = "~"
	}
	if c.Cells == 0 {
		return "0"
	}
	return fmt.Sprintf("%s%s (%s)", mark, text.Plural(int(c.Cells), "cell", "cells"), text.Bytes(c.Bytes))
}

// histogram prints the non-empty buckets of h, or "" when all are empty.
func (a *Audit) histogram(h []Bucket) string {
	var parts []string
	for i, bk := range h {
		if bk.Cells == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s: %s", bucketLabel(i), a.count(bk.Count)))
	}
	return strings.Join(parts, "; ")
}

// bucketLabel names bucket i of a histogram, relative to the audit's now.
func bucketLabel(i int) string {
	ago := func(d time.Duration) string { return formatSpan(-d) }
	switch {
	case i == 0:
		return "more than " + ago(auditEdges[0]) + " ago"
	case i == numBuckets-1:
		return "in more than " + formatSpan(auditEdges[i-1])
	case auditEdges[i] <= 0:
		if auditEdges[i] == 0 {
			return "less than " + ago(auditEdges[i-1]) + " ago"
		}
		return ago(auditEdges[i]) + " to " + ago(auditEdges[i-1]) + " ago"
	case auditEdges[i-1] == 0:
		return "within " + formatSpan(auditEdges[i])
	}
	return "in " + formatSpan(auditEdges[i-1]) + " to " + formatSpan(auditEdges[i])
}

// formatSpan prints a histogram edge: 1h, 1d, 7d, 30d, 1y.
func formatSpan(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d >= 365*day && d%(365*day) == 0:
		return fmt.Sprintf("%dy", d/(365*day))
	case d >= day && d%day == 0:
		return fmt.Sprintf("%dd", d/day)
	}
	return formatAge(d)
}

// MarshalJSON encodes the audit with two more fields for programs:
// complete (every shard read, counts exact) and estimate (a sample, counts
// scaled). Decoding it gives back the audit's counts, for Merge.
func (a *Audit) MarshalJSON() ([]byte, error) {
	type plain Audit // without this method
	return json.Marshal(struct {
		*plain
		Complete bool `json:"complete"`
		Estimate bool `json:"estimate"`
	}{(*plain)(a), a.Scan.Complete(), a.Scan.Estimate()})
}
