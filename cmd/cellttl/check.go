package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/cellttl/ttl"
)

var checkCommand = &command{
	name: "check",
	args: " [-move NAME -from SPEC|none -start TIME [-old RULE] [-skew DURATION]] [-format json]",
	help: `Check reads the table's families and prints, for each family given with
-family, the GC policy it has and the one its strategy needs. It changes
nothing. It exits 3 when a family is missing or its policy differs in any
way, stricter or looser; "cellttl ensure" shows how it would fix them.

A family in a move ("cellttl help move") is given as the move commands take
it: -family NAME=SPEC with the strategy it moves to, and -from, -start, -old
and -skew, the same values; with several families, -move NAME says which
one. Its policy matches both during the move (the move's policy, set by
"cellttl move start") and once finished (SPEC's, set by "cellttl move
finish"); STATUS says which.`,
	flags: movingFlags,
	run:   runCheck,
}

func runCheck(ctx context.Context, c *config, stdout, stderr io.Writer) int {
	strategies, err := c.strategies()
	if err != nil {
		fmt.Fprintf(stderr, "cellttl check: %v\n", err)
		return exitUsage
	}
	admin, err := adminClient(ctx, c)
	if err != nil {
		return fail(stderr, "check", err)
	}
	defer admin.Close()
	statuses, err := ttl.CheckFamilies(ctx, admin, c.table, strategies)
	if statuses == nil {
		return fail(stderr, "check", err)
	}
	// moveState is, for a family in a move, the policy it has once the
	// move is finished (Want being the move's), and whether it has that
	// one rather than the move's.
	type moveState struct {
		FinishedPolicy string `json:"finished_policy"`
		Finished       bool   `json:"finished"`
	}
	type row struct {
		Family   string     `json:"family"`
		Strategy string     `json:"strategy"`
		Found    string     `json:"found"`
		Want     string     `json:"want"`
		Status   string     `json:"status"`
		Move     *moveState `json:"move,omitempty"`
	}
	rows := make([]row, len(statuses))
	bad := 0
	for i, s := range statuses {
		found, want := s.Policies()
		state := "ok"
		switch {
		case !s.Exists():
			state = "missing"
		case !s.Matches():
			state = "mismatch"
		}
		if state != "ok" {
			bad++
		}
		rows[i] = row{s.Family, s.Strategy.String(), found, want, state, nil}
		if s.Finished != nil {
			_, finished := ttl.FamilyStatus{Want: s.Finished}.Policies()
			rows[i].Move = &moveState{finished, state == "ok" && found == finished && found != want}
		}
	}
	if c.format.json {
		if err := printJSON(stdout, struct {
			Table    string `json:"table"`
			Families []row  `json:"families"`
		}{c.table, rows}); err != nil {
			return fail(stderr, "check", err)
		}
	} else {
		fmt.Fprintf(stdout, "table %q\n", c.table)
		w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "FAMILY\tSTRATEGY\tFOUND\tWANT\tSTATUS")
		for _, r := range rows {
			want, status := r.Want, r.Status
			if m := r.Move; m != nil {
				same := m.FinishedPolicy == r.Want
				if !same {
					want += " or " + m.FinishedPolicy
				}
				switch {
				case status != "ok":
				case same:
					status += " (in a move, or finished)"
				case m.Finished:
					status += " (move finished)"
				default:
					status += " (in a move)"
				}
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.Family, r.Strategy, r.Found, want, status)
		}
		w.Flush()
	}
	if errors.Is(err, ttl.ErrFamilyMismatch) {
		fmt.Fprintf(stderr, "cellttl check: %v\n", err)
		fmt.Fprintf(stderr, "cellttl check: %d of %d families do not match their strategies; \"cellttl ensure\" shows what it would change\n",
			bad, len(statuses))
		return exitMismatch
	}
	if err != nil {
		return fail(stderr, "check", err)
	}
	return exitOK
}
