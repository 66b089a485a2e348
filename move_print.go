package ttl

import (
	"fmt"
	"strings"

	"github.com/cellttl/ttl/internal/text"
)

// How a MoveReport prints.

// String returns the report as a person reads it: the move, the family's
// policies, the cells on each side, when the move can end, what was done
// and what blocks the next step.
func (r *MoveReport) String() string {
	var b strings.Builder
	state := "not started"
	switch {
	case r.Found == r.Final && r.Final != r.Window:
		state = "finished"
	case r.Started:
		state = "started"
	}
	fmt.Fprintf(&b, "family %q of table %q at %s: %s\n", r.Family, r.Table, text.Time(r.Now), state)
	fmt.Fprintf(&b, "  %s\n", r.Move)
	fmt.Fprintf(&b, "  GC policy: %s now, %s during the move, %s after it\n", r.Found, r.Window, r.Final)
	fmt.Fprintf(&b, "  boundary: %s (%d µs)\n", text.Time(r.Boundary.Time()), r.Boundary)
	ends := "never by time: the old cells must be rewritten"
	if !r.EndsBy.IsZero() {
		ends = text.Time(r.EndsBy) + ", the skew included"
	}
	fmt.Fprintf(&b, "  the old cells' rule ends: %s\n", ends)
	if r.Counted {
		mark := ""
		if r.Scan.ShardsRead < r.Scan.planned() {
			mark = "≥"
		}
		count := func(c Count) string {
			return fmt.Sprintf("%s%s (%s)", mark, text.Plural(int(c.Cells), "cell", "cells"), text.Bytes(c.Bytes))
		}
		fmt.Fprintf(&b, "  old cells: %s live, %s expired; %s never expire", count(r.OldLive), count(r.OldExpired), count(r.OldNeverExpire))
		if !r.LastExpiry.IsZero() {
			fmt.Fprintf(&b, "; the last expires at %s", text.Time(r.LastExpiry))
		}
		fmt.Fprintf(&b, "\n  new cells: %s\n", count(r.New))
		if r.Misplaced.Cells > 0 {
			fmt.Fprintf(&b, "  misplaced: %s stamped at or above the boundary, which the new rule would misread\n", count(r.Misplaced))
		}
	}
	if r.Rewritten > 0 || r.Kept > 0 {
		fmt.Fprintf(&b, "  rewritten: %s; kept: %s\n", text.Plural(int(r.Rewritten), "cell", "cells"), text.Plural(int(r.Kept), "cell", "cells"))
	}
	verb := "done"
	if r.DryRun {
		verb = "to do"
	}
	for _, a := range r.Actions {
		fmt.Fprintf(&b, "  %s: %s\n", verb, a)
	}
	for _, x := range r.Blockers {
		fmt.Fprintf(&b, "  blocked: %s\n", x)
	}
	if r.Scan.Reads > 0 {
		fmt.Fprintf(&b, "  scan: %s\n", describeScan(r.Scan))
	}
	return b.String()
}
