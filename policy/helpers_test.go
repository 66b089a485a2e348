package policy_test

import (
	"context"
	"testing"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/testkit"
)

// The emulator ignores intersection GC rules (it keeps the cells and logs
// a warning), so these tests give families simple rules and unions only.
// It does store and report intersections; TestDescribe covers how they
// are spelled.

// stored returns a cell to write raw, with its own timestamp, as a writer
// that does not use the library does.
func stored(row, column string, ts bigtable.Timestamp) testkit.Stored {
	return testkit.Stored{Row: row, Column: column, TS: ts}
}

// versions returns cells for sequence numbers from..to of one column.
func versions(row, column string, from, to int64) []testkit.Stored {
	var out []testkit.Stored
	for seq := from; seq <= to; seq++ {
		out = append(out, stored(row, column, bigtable.Timestamp(seq*1000)))
	}
	return out
}

// count returns the number of cells stored in raw.
func count(t testing.TB, raw bigtable.TableAPI) int {
	t.Helper()
	n, err := cellsIn(raw)
	require.NoError(t, err)
	return n
}

// cellsIn returns the number of cells stored in raw, or the error of the
// read: it does not fail a test, so that it can run off the test's
// goroutine.
func cellsIn(raw bigtable.TableAPI) (int, error) {
	n := 0
	err := raw.ReadRows(context.Background(), bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		for _, items := range r {
			n += len(items)
		}
		return true
	})
	return n, err
}

// policies returns each family's policy as policy.Describe spells it.
func policies(t testing.TB, admin *bigtable.AdminClient, table string) map[string]string {
	t.Helper()
	found, err := policy.Policies(context.Background(), admin, table)
	require.NoError(t, err)
	out := map[string]string{}
	for family, p := range found {
		out[family] = policy.Describe(p)
	}
	return out
}

// reasons returns the reasons of a family's losses, nil for none.
func reasons(f policy.FamilyPlan) []string {
	var out []string
	for _, l := range f.Losses {
		out = append(out, l.Reason)
	}
	return out
}

// sooner returns the reasons of the plan's cells collected sooner.
func sooner(f policy.FamilyPlan) []string {
	var out []string
	for _, l := range f.CollectedSooner {
		out = append(out, l.Reason)
	}
	return out
}

// A summary is what a plan says of one family, as the tests compare it:
// the columns of the table the command prints (render_plan.go), as data.
type summary struct {
	Family, Strategy, Found, Want string
	Action                        policy.Action
	Rows, Resurfaced              int
	Refused, Done                 bool
}

// summaries returns the summary of each family of a plan, in its order.
func summaries(p *policy.Plan) []summary {
	out := make([]summary, len(p.Families))
	for i, f := range p.Families {
		out[i] = summary{f.Family, f.Strategy, f.Found, f.Want, f.Action, f.Rows, f.Resurfaced, f.Refused, f.Done}
	}
	return out
}
