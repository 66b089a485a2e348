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
	help: `Check reads the table's families and prints, for each family given with
-family, the GC policy it has and the one its strategy needs. It changes
nothing. It exits 3 when a family is missing or its policy differs in any
way, stricter or looser; "cellttl ensure" shows how it would fix them.`,
	run: runCheck,
}

func runCheck(ctx context.Context, c *config, stdout, stderr io.Writer) int {
	admin, err := adminClient(ctx, c)
	if err != nil {
		return fail(stderr, "check", err)
	}
	defer admin.Close()
	statuses, err := ttl.CheckFamilies(ctx, admin, c.table, c.families.strategies)
	if statuses == nil {
		return fail(stderr, "check", err)
	}
	type row struct {
		Family   string `json:"family"`
		Strategy string `json:"strategy"`
		Found    string `json:"found"`
		Want     string `json:"want"`
		Status   string `json:"status"`
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
		rows[i] = row{s.Family, s.Strategy.String(), found, want, state}
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
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.Family, r.Strategy, r.Found, r.Want, r.Status)
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
