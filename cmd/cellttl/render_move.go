package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/move"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
)

// How the move commands print a move.Report: the move, the family's
// policies, the cells on each side, when the move can end, what was done
// and what blocks the next step.
func renderMove(w io.Writer, r *move.Report) { renderMoveStep(w, r, false) }

// renderDryRun prints the report of a step that changes the family, run
// without -apply: labelled a dry run, saying what it would do.
func renderDryRun(w io.Writer, r *move.Report) { renderMoveStep(w, r, r.DryRun) }

// renderMoveStep prints r; dryRun labels it a dry run of a step that
// changes the family.
func renderMoveStep(w io.Writer, r *move.Report, dryRun bool) {
	state := r.State.String()
	if dryRun {
		state += "; dry run, nothing changed"
	}
	fmt.Fprintf(w, "family %q of table %q at %s: %s\n", r.Family, r.Table, text.Time(r.Now), state)
	fmt.Fprintf(w, "  %s\n", r.Move)
	fmt.Fprintf(w, "  GC policy: %s now, %s during the move, %s after it\n", policy.Describe(r.Found), policy.Describe(r.Window), policy.Describe(r.Final))
	fmt.Fprintf(w, "  boundary: %s (%d µs)\n", text.Time(r.Boundary.Time()), r.Boundary)
	ends := "never by time: the old cells must be rewritten"
	if !r.EndsBy.IsZero() {
		ends = text.Time(r.EndsBy) + ", the skew included"
	}
	fmt.Fprintf(w, "  the old cells' rule ends: %s\n", ends)
	if r.Counted {
		mark := ""
		if r.Read.Stopped() {
			mark = "≥"
		}
		count := func(c scan.Count) string {
			return mark + c.String()
		}
		fmt.Fprintf(w, "  old cells: %s live, %s expired; %s never expire", count(r.OldLive), count(r.OldExpired), count(r.OldNeverExpire))
		if !r.LastExpiry.IsZero() {
			fmt.Fprintf(w, "; the last expires at %s", text.Time(r.LastExpiry))
		}
		fmt.Fprintf(w, "\n  new cells: %s\n", count(r.New))
		if r.Misplaced.Cells > 0 {
			fmt.Fprintf(w, "  misplaced: %s stamped at or above the boundary, which the new rule would misread\n", count(r.Misplaced))
		}
	}
	switch {
	case (r.Rewritten > 0 || r.Kept > 0) && dryRun:
		fmt.Fprintf(w, "  would rewrite: %s; would keep: %s\n", text.Plural(int(r.Rewritten), "cell", "cells"), text.Plural(int(r.Kept), "cell", "cells"))
	case r.Rewritten > 0 || r.Kept > 0:
		fmt.Fprintf(w, "  rewritten: %s; kept: %s\n", text.Plural(int(r.Rewritten), "cell", "cells"), text.Plural(int(r.Kept), "cell", "cells"))
	}
	for _, a := range r.Actions {
		switch {
		case dryRun && strings.HasPrefix(a, "would "):
			fmt.Fprintf(w, "  %s\n", a)
		case dryRun:
			fmt.Fprintf(w, "  would do: %s\n", a)
		case r.DryRun:
			fmt.Fprintf(w, "  to do: %s\n", a)
		default:
			fmt.Fprintf(w, "  done: %s\n", a)
		}
	}
	for _, x := range r.Blockers {
		fmt.Fprintf(w, "  blocked: %s\n", x)
	}
	if r.Read.Reads > 0 {
		fmt.Fprintf(w, "  scan: %s\n", r.Read)
	}
}
