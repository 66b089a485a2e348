package ttl_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"cloud.google.com/go/bigtable/admin/apiv2/adminpb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
)

// The emulator ignores intersection GC rules (it keeps the cells and logs
// a warning), so these tests give families simple rules and unions only.
// It does store and report intersections; TestDescribePolicy covers how
// they are printed.

// stored is a cell written raw, with its own timestamp, as a writer that
// does not use the library does.
type stored struct {
	row, column string
	ts          bigtable.Timestamp
}

// put writes cells to family f of raw.
func put(t testing.TB, raw *bigtable.Table, family string, cells ...stored) {
	t.Helper()
	ctx := context.Background()
	for _, c := range cells {
		m := bigtable.NewMutation()
		m.Set(family, c.column, c.ts, []byte("v"))
		require.NoError(t, raw.Apply(ctx, c.row, m))
	}
}

// versions returns cells for sequence numbers from..to of one column.
func versions(row, column string, from, to int64) []stored {
	var out []stored
	for seq := from; seq <= to; seq++ {
		out = append(out, stored{row, column, bigtable.Timestamp(seq * 1000)})
	}
	return out
}

// count returns the number of cells stored in raw.
func count(t testing.TB, raw *bigtable.Table) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	require.NoError(t, raw.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		for _, items := range r {
			n += len(items)
		}
		return true
	}))
	return n
}

// policies returns each family's policy as the plan prints it.
func policies(t testing.TB, admin *bigtable.AdminClient, table string) map[string]string {
	t.Helper()
	ctx := context.Background()
	info, err := admin.TableInfo(ctx, table)
	require.NoError(t, err)
	out := map[string]string{}
	for _, f := range info.FamilyInfos {
		out[f.Name] = f.FullGCPolicy.String()
	}
	return out
}

// TestCheckFamilies checks that every mismatch is reported, stricter
// policies and unions included, with the policy found and the one wanted.
func TestCheckFamilies(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	e.TableForTest(t, "t", map[string]bigtable.GCPolicy{
		"clicks": bigtable.MaxAgePolicy(48 * time.Hour),
		"short":  bigtable.MaxAgePolicy(24 * time.Hour),
		"sess":   nil,
		"rev":    bigtable.MaxVersionsPolicy(5),
		"both":   bigtable.UnionPolicy(bigtable.MaxAgePolicy(time.Second), bigtable.MaxVersionsPolicy(1)),
		"meta":   nil, // no strategy: not checked
	})
	families := map[string]ttl.Strategy{
		"both":   ttl.OneSecond(),
		"clicks": ttl.DefaultExpiration(48 * time.Hour),
		"gone":   ttl.SequenceNumbers(1),
		"rev":    ttl.SequenceNumbers(3),
		"sess":   ttl.OneSecond(),
		"short":  ttl.DefaultExpiration(48 * time.Hour),
	}
	statuses, err := ttl.CheckFamilies(ctx, e.Admin, "t", families)
	require.ErrorIs(t, err, ttl.ErrFamilyMismatch)
	want := []string{
		`family "both" (OneSecond()): found maxage=1s or maxversions=1, want maxage=1s`,
		`family "clicks" (DefaultExpiration(48h0m0s)): maxage=2d, as wanted`,
		`family "gone" (SequenceNumbers(1)): missing, want maxversions=1`,
		`family "rev" (SequenceNumbers(3)): found maxversions=5, want maxversions=3`,
		`family "sess" (OneSecond()): found never, want maxage=1s`,
		`family "short" (DefaultExpiration(48h0m0s)): found maxage=1d, want maxage=2d`,
	}
	var got []string
	for _, s := range statuses {
		got = append(got, s.String())
	}
	assert.Equal(t, want, got)
	assert.Equal(t, `ttl: column family does not match its strategy: table "t": `+
		strings.Join(append(want[:1:1], want[2:]...), "; "), err.Error())
	assert.True(t, statuses[1].Matches() && statuses[1].Exists())
	assert.False(t, statuses[2].Exists())
	assert.Nil(t, statuses[2].Found)
	assert.Equal(t, "", statuses[4].Found.String(), "no GC is bigtable.NoGcPolicy()")

	statuses, err = ttl.CheckFamilies(ctx, e.Admin, "t", map[string]ttl.Strategy{"clicks": ttl.DefaultExpiration(48 * time.Hour)})
	assert.NoError(t, err)
	assert.Len(t, statuses, 1)

	statuses, err = ttl.CheckFamilies(ctx, e.Admin, "nope", map[string]ttl.Strategy{"f": ttl.OneSecond()})
	require.ErrorIs(t, err, ttl.ErrFamilyMismatch)
	assert.Equal(t, `ttl: column family does not match its strategy: table "nope": the table does not exist; family "f" (OneSecond()): missing, want maxage=1s`, err.Error())
	assert.False(t, statuses[0].Exists())
}

// TestFamiliesHandBuilt checks that statuses and plans built by hand, not
// returned by the calls, print and compare without panicking.
func TestFamiliesHandBuilt(t *testing.T) {
	noWant := ttl.FamilyStatus{Family: "f", Found: bigtable.NoGcPolicy()}
	assert.False(t, noWant.Matches(), "no policy wanted")
	assert.False(t, ttl.FamilyStatus{}.Matches())
	assert.Equal(t, `family "f" (<nil>): found never, want missing`, noWant.String())

	plan := &ttl.Plan{Table: "t", Now: base, CreateTable: true}
	assert.Equal(t, `table "t" at 2030-04-30T09:00:00.000Z: table does not exist, to create with its families; every family matches its strategy, nothing to change
FAMILY  STRATEGY  FOUND  WANT  ACTION  ROWS LOST
`, plan.String())
	plan.Families = []ttl.FamilyPlan{{FamilyStatus: noWant}}
	assert.Contains(t, plan.String(), "\nf       <nil>     never  missing  change  0\n")
}

// TestFamiliesRefuseBadArguments checks that both calls refuse what
// NewTable refuses, and a default they cannot check.
func TestFamiliesRefuseBadArguments(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	one := map[string]ttl.Strategy{"f": ttl.OneSecond()}
	var noCtx context.Context
	for _, tt := range []struct {
		name     string
		ctx      context.Context
		admin    *bigtable.AdminClient
		data     bigtable.TableAPI
		families map[string]ttl.Strategy
		want     error
		msg      string
	}{
		{"nil context", noCtx, e.Admin, raw, one, ttl.ErrNilArgument, "nil context"},
		{"nil admin", ctx, nil, raw, one, ttl.ErrNilArgument, "admin client"},
		{"no families", ctx, e.Admin, raw, nil, ttl.ErrInvalidStrategy, "no family"},
		{"bad family name", ctx, e.Admin, raw, map[string]ttl.Strategy{"a:b": ttl.OneSecond()}, ttl.ErrInvalidStrategy, `"a:b"`},
		{"nil strategy", ctx, e.Admin, raw, map[string]ttl.Strategy{"f": nil}, ttl.ErrInvalidStrategy, `family "f"`},
		{"invalid strategy", ctx, e.Admin, raw, map[string]ttl.Strategy{"f": ttl.SequenceNumbers(0)}, ttl.ErrInvalidStrategy, "SequenceNumbers(0)"},
		{"fraction of a second", ctx, e.Admin, raw, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(1500 * time.Millisecond)}, ttl.ErrInvalidStrategy,
			`DefaultExpiration(1.5s) (family "f"): the Bigtable client reports GC ages in whole seconds`},
	} {
		_, err := ttl.CheckFamilies(tt.ctx, tt.admin, "t", tt.families)
		if assert.ErrorIs(t, err, tt.want, "CheckFamilies: "+tt.name) {
			assert.Contains(t, err.Error(), tt.msg, "CheckFamilies: "+tt.name)
		}
		plan, err := ttl.EnsureFamilies(tt.ctx, tt.admin, "t", tt.data, tt.families, ttl.EnsureOptions{})
		assert.Nil(t, plan, tt.name)
		if assert.ErrorIs(t, err, tt.want, "EnsureFamilies: "+tt.name) {
			assert.Contains(t, err.Error(), tt.msg, "EnsureFamilies: "+tt.name)
		}
	}
	for _, data := range []bigtable.TableAPI{nil, (*bigtable.Table)(nil)} {
		_, err := ttl.EnsureFamilies(ctx, e.Admin, "t", data, one, ttl.EnsureOptions{})
		assert.ErrorIs(t, err, ttl.ErrNilArgument)
	}
	assert.Equal(t, map[string]string{"f": ""}, policies(t, e.Admin, "t"), "nothing changed")
}

// TestEnsureFamiliesChange runs one change per row against a family
// holding the cells given, at base: first without AllowDataLoss, which must
// refuse exactly the changes that delete or hide cells and change nothing
// then, and again with it.
func TestEnsureFamiliesChange(t *testing.T) {
	ctx := context.Background()
	h := time.Hour
	at := func(d time.Duration) bigtable.Timestamp { return ms(base.Add(d)) }
	for _, tt := range []struct {
		name     string
		found    bigtable.GCPolicy // nil: no GC
		strategy ttl.Strategy
		cells    []stored
		lost     int      // rows that the change deletes or hides
		losses   []string // why
		back     int      // rows that resurface
		returned int      // cells the scan returns
		noScan   bool     // nothing can be lost or resurface
	}{
		{
			name: "one second on past timestamps", strategy: ttl.OneSecond(),
			cells: []stored{{"r1", "a", at(-h)}, {"r1", "b", at(-2 * h)}, {"r2", "a", at(-24 * h)},
				{"r3", "a", at(h)}, {"r4", "a", at(0)}},
			lost: 3, returned: 3,
			losses: []string{"3 rows hold cells stamped up to 2030-04-30T09:00:00.000Z, which OneSecond() reads as expiries already past: hidden at once, deleted by GC within seconds"},
		},
		{
			name: "one second on a family that already holds expiries", strategy: ttl.OneSecond(),
			cells: []stored{{"r1", "a", at(h)}, {"r2", "a", at(365 * 24 * h)}, {"r3", "a", ttl.MaxTimestamp}},
		},
		{
			name: "one second on sequence numbers", found: bigtable.MaxVersionsPolicy(3), strategy: ttl.OneSecond(),
			cells: append(versions("r1", "a", 1, 3), stored{"r2", "a", 7000}),
			lost:  2, returned: 2,
			losses: []string{"2 rows hold sequence numbers (timestamps before 2000), which the age-based policy maxage=1s deletes all at once"},
		},
		{
			name: "default expiration on sequence numbers", found: bigtable.MaxVersionsPolicy(3), strategy: ttl.DefaultExpiration(48 * h),
			cells: versions("r1", "a", 1, 3),
			lost:  1, returned: 1,
			losses: []string{"1 row holds sequence numbers (timestamps before 2000), which the age-based policy maxage=2d deletes all at once"},
		},
		{
			name: "sequence numbers on real timestamps", strategy: ttl.SequenceNumbers(3),
			cells: []stored{{"r1", "a", at(-h)}, {"r1", "b", at(h)}, {"r2", "a", 5000}},
			lost:  1, returned: 3, // r1: its two cells, one also a real-time cell (counted once); r2: its version
			losses: []string{"1 row holds real-time timestamps (2000 or later), which outrank every sequence number: reads would return them, and GC under maxversions=3 would delete the versions written after them"},
		},
		{
			name: "sequence numbers on too many versions", strategy: ttl.SequenceNumbers(3),
			cells: append(append(versions("r1", "a", 1, 5), versions("r2", "a", 1, 3)...), append(versions("r2", "b", 1, 4), versions("r3", "a", 1, 1)...)...),
			lost:  2, returned: 4 + 3 + 4 + 1, // up to 4 versions a column
			losses: []string{"2 rows have columns with more than 3 versions, whose oldest maxversions=3 deletes"},
		},
		{
			// No column can hold more than math.MaxInt32 versions: they are
			// not counted (n+1 would not fit the filter's int32).
			name: "sequence numbers, the most versions", strategy: ttl.SequenceNumbers(math.MaxInt32),
			cells: append(versions("r1", "a", 1, 3), stored{"r2", "a", at(-h)}),
			lost:  1, returned: 1,
			losses: []string{"1 row holds real-time timestamps (2000 or later), which outrank every sequence number: reads would return them, and GC under maxversions=2147483647 would delete the versions written after them"},
		},
		{
			name: "sequence numbers with fewer versions kept", found: bigtable.MaxVersionsPolicy(3), strategy: ttl.SequenceNumbers(5),
			cells: versions("r1", "a", 1, 3),
		},
		{
			name: "sequence numbers on an age policy", found: bigtable.MaxAgePolicy(time.Second), strategy: ttl.SequenceNumbers(2),
			cells: []stored{{"r1", "a", at(h)}, {"r2", "a", 3000}},
			lost:  1, returned: 1, // the real-time cell, passed as real time and as a version, counted once; the 1970 cell is GC's already
			losses: []string{"1 row holds real-time timestamps (2000 or later), which outrank every sequence number: reads would return them, and GC under maxversions=2 would delete the versions written after them"},
		},
		{
			// The cell of r2 is live under both, but its expiry moves a day
			// earlier. The Forever cell of the old age still expires in the
			// year 294,000 under the new one: not counted.
			name: "shorter default", found: bigtable.MaxAgePolicy(72 * h), strategy: ttl.DefaultExpiration(48 * h),
			cells: []stored{{"r1", "a", at(-60 * h)}, {"r2", "a", at(-10 * h)}, {"r3", "a", at(-100 * h)}, {"r4", "a", at(-48 * h)},
				{"r5", "a", ttl.MaxTimestamp - bigtable.Timestamp(72*h/time.Microsecond)}},
			lost: 3, returned: 3,
			losses: []string{
				"2 rows hold cells stamped 2030-04-27T09:00:00.001Z to 2030-04-28T09:00:00.000Z, which would expire at once under DefaultExpiration(48h0m0s)",
				"1 row holds cells whose expiries move 1d earlier under DefaultExpiration(48h0m0s) than under maxage=3d",
			},
		},
		{
			name: "one second on an age policy", found: bigtable.MaxAgePolicy(48 * h), strategy: ttl.OneSecond(),
			cells: []stored{{"r1", "a", at(-h)}, {"r2", "a", at(24 * h)}, {"r2", "b", at(-72 * h)}, {"r3", "a", at(-72 * h)},
				{"r4", "a", ttl.MaxTimestamp - bigtable.Timestamp(48*h/time.Microsecond)}},
			lost: 2, returned: 2,
			losses: []string{
				"1 row holds cells stamped 2030-04-28T09:00:00.001Z to 2030-04-30T09:00:00.000Z, which OneSecond() reads as expiries already past: hidden at once, deleted by GC within seconds",
				"1 row holds cells whose expiries move 2d earlier under OneSecond() than under maxage=2d",
			},
		},
		{
			// maxage=1s is OneSecond's own age: dropping the version limit
			// moves no expiry.
			name: "one second, version limit dropped", found: bigtable.UnionPolicy(bigtable.MaxAgePolicy(time.Second), bigtable.MaxVersionsPolicy(1)),
			strategy: ttl.OneSecond(),
			cells:    []stored{{"r1", "a", at(h)}, {"r2", "a", at(365 * 24 * h)}},
		},
		{
			name: "default expiration on real timestamps", strategy: ttl.DefaultExpiration(48 * h),
			cells: []stored{{"r1", "a", at(-72 * h)}, {"r2", "a", at(-h)}},
			lost:  1, returned: 1,
			losses: []string{"1 row holds cells stamped up to 2030-04-28T09:00:00.000Z, which would expire at once under DefaultExpiration(48h0m0s)"},
		},
		{
			// Without an age rule, nothing expired before: the cells now
			// live 48h from their timestamps, future ones included.
			name: "default expiration on recent timestamps", strategy: ttl.DefaultExpiration(48 * h),
			cells: []stored{{"r1", "a", at(-47 * h)}, {"r2", "a", at(-h)}, {"r3", "a", at(24 * h)}},
		},
		{
			name: "longer default", found: bigtable.MaxAgePolicy(48 * h), strategy: ttl.DefaultExpiration(72 * h),
			cells: []stored{{"r1", "a", at(-60 * h)}, {"r2", "a", at(-h)}},
			back:  1, returned: 1,
		},
		{
			// One-second timestamps are expiries; DefaultExpiration reads them
			// as write times. Nothing is deleted or hidden: every live cell
			// lives d longer, and the cells that expired less than d ago and
			// are not collected yet are returned again. The plan reports
			// them; the change is not refused.
			name: "one second to default expiration", found: bigtable.MaxAgePolicy(time.Second), strategy: ttl.DefaultExpiration(48 * h),
			cells: []stored{{"r1", "a", at(h)}, {"r2", "a", at(-h)}, {"r3", "a", at(-72 * h)}},
			back:  1, returned: 1,
		},
		{
			name: "same age, version limit dropped", found: bigtable.UnionPolicy(bigtable.MaxAgePolicy(48*h), bigtable.MaxVersionsPolicy(1)),
			strategy: ttl.DefaultExpiration(48 * h),
			cells:    []stored{{"r1", "a", at(-72 * h)}, {"r2", "a", at(-h)}},
			noScan:   true,
		},
		{
			name: "empty family", strategy: ttl.OneSecond(),
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := emulator.StartForTest(t)
			raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": tt.found, "other": nil})
			put(t, raw, "f", tt.cells...)
			put(t, raw, "other", stored{"r0", "x", at(-1000 * h)}) // never scanned, never counted
			before := policies(t, e.Admin, "t")
			fams := map[string]ttl.Strategy{"f": tt.strategy}
			opts := ttl.EnsureOptions{Now: func() time.Time { return base }}

			plan, err := ttl.EnsureFamilies(ctx, e.Admin, "t", raw, fams, opts)
			require.NotNil(t, plan)
			require.Len(t, plan.Families, 1)
			f := plan.Families[0]
			var reasons []string
			for _, l := range f.Losses {
				reasons = append(reasons, l.Reason)
			}
			assert.Equal(t, tt.losses, reasons)
			assert.Equal(t, tt.lost, f.Rows, "rows lost")
			assert.Equal(t, tt.back, f.Resurfaced, "rows resurfaced")
			assert.Equal(t, base, plan.Now)
			rows := map[string]bool{"r0": true}
			for _, c := range tt.cells {
				rows[c.row] = true
			}
			if tt.noScan {
				assert.Equal(t, ttl.Scan{}, f.Scan)
			} else {
				// The server sees every row and cell of the table: the scan
				// selects the family with a filter, not a row range. It
				// reads each shard once (bttest samples keys at random).
				assert.True(t, f.Scan.Complete(), "complete")
				assert.Equal(t, f.Scan.Shards, f.Scan.Reads, "reads")
				assert.Equal(t, len(rows), f.Scan.RowsSeen, "rows seen")
				assert.Equal(t, len(tt.cells)+1, f.Scan.CellsSeen, "cells seen")
			}
			assert.Equal(t, tt.returned, f.Scan.CellsReturned, "cells returned")

			if tt.lost > 0 {
				require.ErrorIs(t, err, ttl.ErrDataLoss)
				for _, r := range tt.losses {
					assert.Contains(t, err.Error(), r)
				}
				assert.Contains(t, err.Error(), `family "f" (`+fmt.Sprint(tt.strategy)+`)`)
				assert.True(t, f.Refused)
				assert.False(t, f.Done)
				assert.Equal(t, before, policies(t, e.Admin, "t"), "policy changed by a refused change")
				assert.Equal(t, len(tt.cells)+1, count(t, raw), "cells lost by a refused change")

				opts.AllowDataLoss = true
				plan, err = ttl.EnsureFamilies(ctx, e.Admin, "t", raw, fams, opts)
				require.NotNil(t, plan)
				f = plan.Families[0]
				assert.Equal(t, tt.lost, f.Rows, "rows lost, allowed")
				assert.False(t, f.Refused)
			}
			require.NoError(t, err)
			assert.True(t, f.Done)
			_, err = ttl.CheckFamilies(ctx, e.Admin, "t", fams)
			assert.NoError(t, err)
			assert.Equal(t, before["other"], policies(t, e.Admin, "t")["other"])
		})
	}
}

// TestEnsureFamiliesShortensLifetimes checks that a change that moves the
// expiries of live cells earlier is refused, though the cells stay live:
// they would be hidden and deleted before the expiry they were written
// with. The cells are written through a Table under DefaultExpiration(48h):
// r1 to live 72h, r2 with the default an hour ago, r3 forever.
func TestEnsureFamiliesShortensLifetimes(t *testing.T) {
	ctx := context.Background()
	h := time.Hour
	for _, tt := range []struct {
		to     ttl.Strategy
		rows   int
		losses []string
	}{
		{ttl.OneSecond(), 2, []string{
			"1 row holds cells stamped 2030-04-28T09:00:00.001Z to 2030-04-30T09:00:00.000Z, which OneSecond() reads as expiries already past: hidden at once, deleted by GC within seconds",
			"1 row holds cells whose expiries move 2d earlier under OneSecond() than under maxage=2d",
		}},
		{ttl.DefaultExpiration(24 * h), 2, []string{
			"2 rows hold cells whose expiries move 1d earlier under DefaultExpiration(24h0m0s) than under maxage=2d",
		}},
		{ttl.DefaultExpiration(96 * h), 0, nil},
	} {
		t.Run(fmt.Sprint(tt.to), func(t *testing.T) {
			e := emulator.StartForTest(t)
			raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": bigtable.MaxAgePolicy(48 * h)})
			clock := newClock(base.Add(-h))
			before, err := ttl.NewTable(raw, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(48 * h)}, ttl.WithClock(clock.Now))
			require.NoError(t, err)
			require.NoError(t, before.Apply(ctx, "r2", set("f", "written", "1h ago", ttl.Default)))
			clock.Set(base)
			require.NoError(t, before.Apply(ctx, "r1", set("f", "hold", "keep 72h", ttl.For(72*h))))
			require.NoError(t, before.Apply(ctx, "r3", set("f", "keep", "forever", ttl.Forever)))

			plan, err := ttl.EnsureFamilies(ctx, e.Admin, "t", raw, map[string]ttl.Strategy{"f": tt.to}, ttl.EnsureOptions{Now: clock.Now, DryRun: true})
			f := plan.Families[0]
			var reasons []string
			for _, l := range f.Losses {
				reasons = append(reasons, l.Reason)
			}
			assert.Equal(t, tt.losses, reasons)
			assert.Equal(t, tt.rows, f.Rows)
			assert.Zero(t, f.Resurfaced)
			if tt.rows == 0 {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ttl.ErrDataLoss)
			assert.True(t, f.Refused)
			assert.Contains(t, plan.String(), fmt.Sprintf("refused  %d\n", tt.rows))
			for _, r := range tt.losses {
				assert.Contains(t, plan.String(), "  f: "+r+"\n")
			}
		})
	}
}

// TestEnsureFamiliesDryRun checks that a dry run returns the plan and the
// error the real run would, and changes nothing.
func TestEnsureFamiliesDryRun(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{
		"clicks": nil,
		"hits":   bigtable.MaxAgePolicy(24 * time.Hour),
		"rev":    bigtable.MaxVersionsPolicy(3),
	})
	put(t, raw, "clicks", stored{"u1", "n", ms(base.Add(-72 * time.Hour))}, stored{"u2", "n", ms(base.Add(-time.Hour))})
	put(t, raw, "hits", stored{"u1", "n", ms(base.Add(-30 * time.Hour))})
	put(t, raw, "rev", versions("u1", "v", 1, 3)...)
	fams := map[string]ttl.Strategy{
		"clicks": ttl.DefaultExpiration(48 * time.Hour),
		"hits":   ttl.DefaultExpiration(48 * time.Hour),
		"rev":    ttl.SequenceNumbers(3),
		"sess":   ttl.OneSecond(),
	}
	before := policies(t, e.Admin, "t")
	opts := ttl.EnsureOptions{DryRun: true, Now: func() time.Time { return base }}

	plan, err := ttl.EnsureFamilies(ctx, e.Admin, "t", tablets{raw, nil}, fams, opts)
	require.ErrorIs(t, err, ttl.ErrDataLoss)
	assert.Equal(t, `ttl: change would delete or hide existing data: table "t": family "clicks" (DefaultExpiration(48h0m0s)): found never, want maxage=2d: `+
		`1 row holds cells stamped up to 2030-04-28T09:00:00.000Z, which would expire at once under DefaultExpiration(48h0m0s); nothing changed (allow it with AllowDataLoss)`,
		err.Error())
	assert.Equal(t, `table "t" at 2030-04-30T09:00:00.000Z: dry run, nothing changed; 1 change would be refused
FAMILY  STRATEGY                    FOUND          WANT           ACTION   ROWS LOST
clicks  DefaultExpiration(48h0m0s)  never          maxage=2d      refused  1
hits    DefaultExpiration(48h0m0s)  maxage=1d      maxage=2d      change   0
rev     SequenceNumbers(3)          maxversions=3  maxversions=3  keep     -
sess    OneSecond()                 missing        maxage=1s      create   -
  clicks: 1 row holds cells stamped up to 2030-04-28T09:00:00.000Z, which would expire at once under DefaultExpiration(48h0m0s)
  hits: 1 row holds cells that the current policy maxage=1d already lets GC delete, not yet collected, which DefaultExpiration(48h0m0s) would return again
  scan: 1 shard, 1 read, 2 rows and 6 cells seen, 2 cells returned
`, plan.String())
	assert.Equal(t, before, policies(t, e.Admin, "t"))

	opts.AllowDataLoss = true
	plan, err = ttl.EnsureFamilies(ctx, e.Admin, "t", tablets{raw, nil}, fams, opts)
	require.NoError(t, err)
	assert.Equal(t, `table "t" at 2030-04-30T09:00:00.000Z: dry run, nothing changed; 3 changes to make
FAMILY  STRATEGY                    FOUND          WANT           ACTION              ROWS LOST
clicks  DefaultExpiration(48h0m0s)  never          maxage=2d      change, loses data  1
hits    DefaultExpiration(48h0m0s)  maxage=1d      maxage=2d      change              0
rev     SequenceNumbers(3)          maxversions=3  maxversions=3  keep                -
sess    OneSecond()                 missing        maxage=1s      create              -
`, strings.Join(strings.SplitAfter(plan.String(), "\n")[:6], ""))
	assert.Equal(t, before, policies(t, e.Admin, "t"))
	assert.Equal(t, 6, count(t, raw))

	opts.DryRun = false
	plan, err = ttl.EnsureFamilies(ctx, e.Admin, "t", tablets{raw, nil}, fams, opts)
	require.NoError(t, err)
	assert.Equal(t, `table "t" at 2030-04-30T09:00:00.000Z: 3 changes made
FAMILY  STRATEGY                    FOUND          WANT           ACTION              ROWS LOST
clicks  DefaultExpiration(48h0m0s)  never          maxage=2d      changed, data lost  1
hits    DefaultExpiration(48h0m0s)  maxage=1d      maxage=2d      changed             0
rev     SequenceNumbers(3)          maxversions=3  maxversions=3  keep                -
sess    OneSecond()                 missing        maxage=1s      created             -
`, strings.Join(strings.SplitAfter(plan.String(), "\n")[:6], ""))

	plan, err = ttl.EnsureFamilies(ctx, e.Admin, "t", tablets{raw, nil}, fams, ttl.EnsureOptions{Now: func() time.Time { return base }})
	require.NoError(t, err)
	assert.Equal(t, `table "t" at 2030-04-30T09:00:00.000Z: every family matches its strategy, nothing to change`,
		strings.SplitN(plan.String(), "\n", 2)[0])
}

// TestEnsureFamiliesCreates checks that a missing table is created with its
// families in one call, and missing families beside the others.
func TestEnsureFamiliesCreates(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	fams := map[string]ttl.Strategy{"sess": ttl.OneSecond(), "clicks": ttl.DefaultExpiration(30 * 24 * time.Hour)}

	plan, err := ttl.EnsureFamilies(ctx, e.Admin, "new", e.Client.Open("new"), fams, ttl.EnsureOptions{DryRun: true})
	require.NoError(t, err)
	assert.True(t, plan.CreateTable)
	assert.Contains(t, plan.String(), "table does not exist, to create with its families; dry run, nothing changed; 2 changes to make")
	_, err = e.Admin.TableInfo(ctx, "new")
	require.Error(t, err, "a dry run created the table")

	plan, err = ttl.EnsureFamilies(ctx, e.Admin, "new", e.Client.Open("new"), fams, ttl.EnsureOptions{})
	require.NoError(t, err)
	assert.True(t, plan.Families[0].Done && plan.Families[1].Done)
	assert.Contains(t, plan.String(), "table does not exist, created with its families; 2 changes made")
	assert.Equal(t, map[string]string{"clicks": "age() > 30d", "sess": "age() > 1000000"}, policies(t, e.Admin, "new"))

	raw := e.TableForTest(t, "old", map[string]bigtable.GCPolicy{"meta": bigtable.MaxVersionsPolicy(1), "sess": bigtable.MaxAgePolicy(time.Second)})
	put(t, raw, "meta", stored{"r", "x", ms(base)})
	plan, err = ttl.EnsureFamilies(ctx, e.Admin, "old", raw, fams, ttl.EnsureOptions{})
	require.NoError(t, err)
	assert.False(t, plan.CreateTable)
	assert.Equal(t, 0, plan.Families[0].Scan.Reads+plan.Families[1].Scan.Reads, "a creation needs no scan")
	assert.Equal(t, map[string]string{"clicks": "age() > 30d", "meta": "versions() > 1", "sess": "age() > 1000000"}, policies(t, e.Admin, "old"))
}

// modifyRecorder records the ModifyColumnFamilies requests a client sends.
type modifyRecorder struct {
	mu   sync.Mutex
	reqs []*adminpb.ModifyColumnFamiliesRequest
}

func (r *modifyRecorder) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if m, ok := req.(*adminpb.ModifyColumnFamiliesRequest); ok {
		r.mu.Lock()
		r.reqs = append(r.reqs, m)
		r.mu.Unlock()
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// TestEnsureFamiliesIgnoreWarnings checks that IgnoreWarnings reaches
// Bigtable with each policy change, and only when asked. The emulator does
// not replicate, so it is seen on the wire.
func TestEnsureFamiliesIgnoreWarnings(t *testing.T) {
	ctx := context.Background()
	for _, ignore := range []bool{false, true} {
		rec := &modifyRecorder{}
		e := emulator.StartForTest(t, grpc.WithUnaryInterceptor(rec.intercept))
		raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"a": bigtable.MaxAgePolicy(time.Hour), "b": bigtable.MaxAgePolicy(time.Hour)})
		rec.reqs = nil
		fams := map[string]ttl.Strategy{"a": ttl.DefaultExpiration(2 * time.Hour), "b": ttl.DefaultExpiration(3 * time.Hour)}
		_, err := ttl.EnsureFamilies(ctx, e.Admin, "t", raw, fams, ttl.EnsureOptions{IgnoreWarnings: ignore})
		require.NoError(t, err)
		require.Len(t, rec.reqs, 2)
		for _, r := range rec.reqs {
			assert.Equal(t, ignore, r.IgnoreWarnings, "IgnoreWarnings: %v, family %s", ignore, r.Modifications[0].Id)
		}
	}
}

// TestScanIsCheap measures what the scan reads on a family of 200 rows of
// 5 columns of 4 cells each: the server sees every cell, and returns one
// per row, without its value.
func TestScanIsCheap(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	var rows []string
	var muts []*bigtable.Mutation
	for r := 0; r < 200; r++ {
		m := bigtable.NewMutation()
		for c := 0; c < 5; c++ {
			for v := 0; v < 4; v++ {
				age := time.Duration(v) * time.Hour
				if r%2 == 0 {
					age += 72 * time.Hour // half the rows have cells older than the default
				}
				m.Set("f", fmt.Sprint("c", c), ms(base.Add(-age)), []byte(strings.Repeat("x", 100)))
			}
		}
		rows, muts = append(rows, fmt.Sprintf("r%03d", r)), append(muts, m)
	}
	errs, err := raw.ApplyBulk(ctx, rows, muts)
	require.NoError(t, err)
	require.Nil(t, errs)
	plan, err := ttl.EnsureFamilies(ctx, e.Admin, "t", raw, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(48 * time.Hour)},
		ttl.EnsureOptions{DryRun: true, Now: func() time.Time { return base }})
	require.ErrorIs(t, err, ttl.ErrDataLoss)
	f := plan.Families[0]
	t.Logf("%+v", f.Scan)
	assert.Equal(t, ttl.Scan{Reads: f.Scan.Shards, RowsSeen: 200, CellsSeen: 4000, RowsReturned: 100, CellsReturned: 100,
		Shards: f.Scan.Shards, ShardsRead: f.Scan.Shards}, f.Scan)
	assert.Equal(t, 100, f.Rows)

	plan, err = ttl.EnsureFamilies(ctx, e.Admin, "t", raw, map[string]ttl.Strategy{"f": ttl.SequenceNumbers(2)},
		ttl.EnsureOptions{DryRun: true, Now: func() time.Time { return base }})
	require.ErrorIs(t, err, ttl.ErrDataLoss)
	f = plan.Families[0]
	t.Logf("%+v", f.Scan)
	// 3 versions of each of 5 columns a row; the real-time cell the other
	// branch passes is one of them, counted once.
	assert.Equal(t, ttl.Scan{Reads: f.Scan.Shards, RowsSeen: 200, CellsSeen: 4000, RowsReturned: 200, CellsReturned: 200 * 5 * 3,
		Shards: f.Scan.Shards, ShardsRead: f.Scan.Shards}, f.Scan)
}

// TestRefusalMatters is the one test on the real clock: it shows what the
// refusal prevents. A family holding ordinary timestamps loses its cells
// within seconds of being switched to OneSecond's policy.
func TestRefusalMatters(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	put(t, raw, "f", stored{"r", "a", bigtable.Now() - bigtable.Timestamp(time.Hour/time.Microsecond)})
	fams := map[string]ttl.Strategy{"f": ttl.OneSecond()}

	_, err := ttl.EnsureFamilies(ctx, e.Admin, "t", raw, fams, ttl.EnsureOptions{})
	require.ErrorIs(t, err, ttl.ErrDataLoss)
	_, err = ttl.EnsureFamilies(ctx, e.Admin, "t", raw, fams, ttl.EnsureOptions{AllowDataLoss: true})
	require.NoError(t, err)
	deadline := time.Now().Add(10 * time.Second)
	for count(t, raw) > 0 {
		if time.Now().After(deadline) {
			require.Fail(t, "the cell survived 10s of one-second GC")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ExampleEnsureFamilies migrates a family holding ordinary timestamps to
// default expiration on an emulator: a dry run first, which refuses the
// change because one row holds a click older than the default.
func ExampleEnsureFamilies() {
	e, err := emulator.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()

	// An existing table: clicks stamped with their write times, no GC.
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	events, err := e.CreateTable(ctx, "events", map[string]bigtable.GCPolicy{"clicks": nil})
	if err != nil {
		log.Fatal(err)
	}
	m := bigtable.NewMutation()
	m.Set("clicks", "home", bigtable.Time(now.Add(-time.Hour)), []byte("2"))
	m.Set("clicks", "home", bigtable.Time(now.Add(-9*24*time.Hour)), []byte("1"))
	if err := events.Apply(ctx, "user#1", m); err != nil {
		log.Fatal(err)
	}

	families := map[string]ttl.Strategy{"clicks": ttl.DefaultExpiration(7 * 24 * time.Hour)}
	plan, err := ttl.EnsureFamilies(ctx, e.Admin, "events", events, families,
		ttl.EnsureOptions{DryRun: true, Now: func() time.Time { return now }})
	fmt.Print(plan)
	fmt.Println(errors.Is(err, ttl.ErrDataLoss))
	// Output:
	// table "events" at 2030-04-30T09:00:00.000Z: dry run, nothing changed; 1 change would be refused
	// FAMILY  STRATEGY                     FOUND  WANT       ACTION   ROWS LOST
	// clicks  DefaultExpiration(168h0m0s)  never  maxage=7d  refused  1
	//   clicks: 1 row holds cells stamped up to 2030-04-23T09:00:00.000Z, which would expire at once under DefaultExpiration(168h0m0s)
	//   scan: 2 shards, 2 reads, 1 row and 2 cells seen, 1 cell returned
	// true
}
