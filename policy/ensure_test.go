package policy_test

import (
	"context"
	"encoding/json"
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
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
)

// fixedNow is a clock that always reads testkit.Base.
func fixedNow() time.Time { return testkit.Base }

// TestRefuseBadArguments checks that Check and Ensure refuse what
// NewTable refuses, and a default they cannot check; Ensure also a nil
// table, scan options that cannot work, and a sample that would decide.
func TestRefuseBadArguments(t *testing.T) {
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
		_, err := runCheck(tt.ctx, tt.admin, "t", tt.families)
		if assert.ErrorIs(t, err, tt.want, "Check: "+tt.name) {
			assert.Contains(t, err.Error(), tt.msg, "Check: "+tt.name)
		}
		plan, err := runEnsure(tt.ctx, tt.admin, "t", tt.data, tt.families, policy.Options{})
		assert.Nil(t, plan, tt.name)
		if assert.ErrorIs(t, err, tt.want, "Ensure: "+tt.name) {
			assert.Contains(t, err.Error(), tt.msg, "Ensure: "+tt.name)
		}
	}
	for _, data := range []bigtable.TableAPI{nil, (*bigtable.Table)(nil)} {
		plan, err := runEnsure(ctx, e.Admin, "t", data, one, policy.Options{})
		assert.Nil(t, plan)
		if assert.ErrorIs(t, err, ttl.ErrNilArgument) {
			assert.True(t, strings.HasPrefix(err.Error(), "ttl: nil argument: policy.Ensure: "), err.Error())
		}
	}
	for _, tt := range []struct {
		name string
		opts policy.Options
		msg  string
	}{
		{"negative workers", policy.Options{Scan: scan.Options{Workers: -1}}, "policy.New: ttl: invalid option: scan.Options.Workers -1"},
		{"negative progress interval", policy.Options{DryRun: true, Scan: scan.Options{ProgressEvery: -time.Second}}, "scan.Options.ProgressEvery -1s"},
		{"whole table as a sample", policy.Options{DryRun: true, Scan: scan.Options{Sample: 1}}, "scan.Options.Sample 1"},
		{"sample that would decide", policy.Options{Scan: scan.Options{Sample: 0.5}},
			"ttl: invalid option: policy.New: a sample (scan.Options.Sample) gives estimates, which cannot decide a change; use it with DryRun"},
		{"sample that would decide, data loss allowed", policy.Options{AllowDataLoss: true, Scan: scan.Options{Sample: 0.5}}, "use it with DryRun"},
	} {
		plan, err := runEnsure(ctx, e.Admin, "t", raw, one, tt.opts)
		assert.Nil(t, plan, tt.name)
		if assert.ErrorIs(t, err, ttl.ErrInvalidOption, tt.name) {
			assert.Contains(t, err.Error(), tt.msg, tt.name)
		}
	}
	assert.Equal(t, map[string]string{"f": "never"}, policies(t, e.Admin, "t"), "nothing changed")
}

// TestEnsureChange runs one change per row against a family holding the
// cells given, at testkit.Base: first without AllowDataLoss, which must
// refuse exactly the changes that delete or hide cells and change nothing
// then, and again with it.
func TestEnsureChange(t *testing.T) {
	ctx := context.Background()
	h := time.Hour
	at := func(d time.Duration) bigtable.Timestamp { return testkit.MS(testkit.Base.Add(d)) }
	for _, tt := range []struct {
		name     string
		found    bigtable.GCPolicy // nil: no GC
		strategy ttl.Strategy
		cells    []testkit.Stored
		lost     int           // rows that the change deletes or hides
		losses   []policy.Loss // which cells
		sooner   []policy.Loss // live cells collected sooner once expired: not lost
		back     int           // rows that resurface
		returned int           // cells the scan returns
		noScan   bool          // nothing can be lost or resurface
	}{
		{
			name: "one second on past timestamps", strategy: ttl.OneSecond(),
			cells: []testkit.Stored{stored("r1", "a", at(-h)), stored("r1", "b", at(-2*h)), stored("r2", "a", at(-24*h)),
				stored("r3", "a", at(h)), stored("r4", "a", at(0))},
			lost: 3, returned: 3,
			losses: []policy.Loss{{Kind: policy.LossExpired, Rows: 3, Until: tm("2030-04-30T09:00:00Z"), Expiries: true}},
		},
		{
			name: "one second on a family that already holds expiries", strategy: ttl.OneSecond(),
			cells: []testkit.Stored{stored("r1", "a", at(h)), stored("r2", "a", at(365*24*h)), stored("r3", "a", ttl.MaxTimestamp)},
		},
		{
			name: "one second on sequence numbers", found: bigtable.MaxVersionsPolicy(3), strategy: ttl.OneSecond(),
			cells: append(versions("r1", "a", 1, 3), stored("r2", "a", 7000)),
			lost:  2, returned: 2,
			losses: []policy.Loss{{Kind: policy.LossSequence, Rows: 2}},
		},
		{
			name: "default expiration on sequence numbers", found: bigtable.MaxVersionsPolicy(3), strategy: ttl.DefaultExpiration(48 * h),
			cells: versions("r1", "a", 1, 3),
			lost:  1, returned: 1,
			losses: []policy.Loss{{Kind: policy.LossSequence, Rows: 1}},
		},
		{
			name: "sequence numbers on real timestamps", strategy: ttl.SequenceNumbers(3),
			cells: []testkit.Stored{stored("r1", "a", at(-h)), stored("r1", "b", at(h)), stored("r2", "a", 5000)},
			lost:  1, returned: 3, // r1: its two cells, one also a real-time cell (counted once); r2: its version
			losses: []policy.Loss{{Kind: policy.LossRealTime, Rows: 1}},
		},
		{
			name: "sequence numbers on too many versions", strategy: ttl.SequenceNumbers(3),
			cells: append(append(versions("r1", "a", 1, 5), versions("r2", "a", 1, 3)...), append(versions("r2", "b", 1, 4), versions("r3", "a", 1, 1)...)...),
			lost:  2, returned: 4 + 3 + 4 + 1, // up to 4 versions a column
			losses: []policy.Loss{{Kind: policy.LossVersions, Rows: 2, Versions: 3}},
		},
		{
			// No column can hold more than math.MaxInt32 versions: they are
			// not counted (n+1 would not fit the filter's int32).
			name: "sequence numbers, the most versions", strategy: ttl.SequenceNumbers(math.MaxInt32),
			cells: append(versions("r1", "a", 1, 3), stored("r2", "a", at(-h))),
			lost:  1, returned: 1,
			losses: []policy.Loss{{Kind: policy.LossRealTime, Rows: 1}},
		},
		{
			name: "sequence numbers with fewer versions kept", found: bigtable.MaxVersionsPolicy(3), strategy: ttl.SequenceNumbers(5),
			cells: versions("r1", "a", 1, 3),
		},
		{
			name: "sequence numbers on an age policy", found: bigtable.MaxAgePolicy(time.Second), strategy: ttl.SequenceNumbers(2),
			cells: []testkit.Stored{stored("r1", "a", at(h)), stored("r2", "a", 3000)},
			lost:  1, returned: 1, // the real-time cell, passed as real time and as a version, counted once; the 1970 cell is GC's already
			losses: []policy.Loss{{Kind: policy.LossRealTime, Rows: 1}},
		},
		{
			// The cell of r2 is live under both, but its expiry moves a day
			// earlier. The Forever cell of the old age still expires in the
			// year 294,000 under the new one: not counted.
			name: "shorter default", found: bigtable.MaxAgePolicy(72 * h), strategy: ttl.DefaultExpiration(48 * h),
			cells: []testkit.Stored{stored("r1", "a", at(-60*h)), stored("r2", "a", at(-10*h)), stored("r3", "a", at(-100*h)), stored("r4", "a", at(-48*h)),
				stored("r5", "a", ttl.MaxTimestamp-bigtable.Timestamp(72*h/time.Microsecond))},
			lost: 3, returned: 3,
			losses: []policy.Loss{
				{Kind: policy.LossExpired, Rows: 2, From: tm("2030-04-27T09:00:00.001Z"), Until: tm("2030-04-28T09:00:00Z"), Age: 72 * h},
				{Kind: policy.LossEarlier, Rows: 1, Age: 72 * h, Shift: 24 * h},
			},
		},
		{
			// Under OneSecond a timestamp is the expiry: the longer age can
			// only have been a grace (issue 28). The cell it keeps past its
			// expiry is lost to a sweep; the live one keeps its expiry, and
			// is only collected sooner once expired.
			name: "one second on an age policy", found: bigtable.MaxAgePolicy(48 * h), strategy: ttl.OneSecond(),
			cells: []testkit.Stored{stored("r1", "a", at(-h)), stored("r2", "a", at(24*h)), stored("r2", "b", at(-72*h)), stored("r3", "a", at(-72*h)),
				stored("r4", "a", ttl.MaxTimestamp-bigtable.Timestamp(48*h/time.Microsecond))},
			lost: 1, returned: 2,
			losses: []policy.Loss{
				{Kind: policy.LossExpired, Rows: 1, From: tm("2030-04-28T09:00:00.001Z"), Until: tm("2030-04-30T09:00:00Z"), Age: 48 * h, Expiries: true},
			},
			sooner: []policy.Loss{{Kind: policy.LossSooner, Rows: 1, Age: 48 * h, Shift: 48 * h}},
		},
		{
			// maxage=1s is OneSecond's own age: dropping the version limit
			// moves no expiry and hides nothing, so nothing is read.
			name: "one second, version limit dropped", found: bigtable.UnionPolicy(bigtable.MaxAgePolicy(time.Second), bigtable.MaxVersionsPolicy(1)),
			strategy: ttl.OneSecond(),
			cells:    []testkit.Stored{stored("r1", "a", at(h)), stored("r2", "a", at(365*24*h))},
			noScan:   true,
		},
		{
			// A grace keeps expired cells longer: it hides and deletes
			// nothing, even a cell that expired a moment ago.
			name: "grace given to one second", found: bigtable.MaxAgePolicy(time.Second),
			strategy: ttl.Grace(ttl.OneSecond(), time.Hour),
			cells:    []testkit.Stored{stored("r1", "a", at(-time.Millisecond)), stored("r2", "a", at(h))},
			noScan:   true,
		},
		{
			name: "grace given to default expiration", found: bigtable.MaxAgePolicy(48 * h),
			strategy: ttl.Grace(ttl.DefaultExpiration(48*h), h),
			cells:    []testkit.Stored{stored("r1", "a", at(-48*h-time.Millisecond)), stored("r2", "a", at(-h))},
			noScan:   true,
		},
		{
			// The policy alone cannot tell a grace on a default from a
			// longer default: taking a grace off is reported as the loss of
			// the cells that would have lived under the longer age as a
			// default (the one the grace kept 30 minutes past its expiry,
			// and a live one), saying both readings, so that it needs
			// consent.
			name: "grace taken off", found: bigtable.MaxAgePolicy(49 * h),
			strategy: ttl.DefaultExpiration(48 * h),
			cells:    []testkit.Stored{stored("r1", "a", at(-48*h-30*time.Minute)), stored("r2", "a", at(-h))},
			lost:     2, returned: 2,
			losses: []policy.Loss{
				{Kind: policy.LossExpired, Rows: 1, From: tm("2030-04-28T08:00:00.001Z"), Until: tm("2030-04-28T09:00:00Z"), Age: 49 * h},
				{Kind: policy.LossEarlier, Rows: 1, Age: 49 * h, Shift: h},
			},
		},
		{
			// Within the age a grace gives, a shorter default still hides
			// live cells sooner than they were written to expire.
			name: "default shortened under a grace's age", found: bigtable.MaxAgePolicy(49 * h),
			strategy: ttl.Grace(ttl.DefaultExpiration(48*h), 2*h),
			cells:    []testkit.Stored{stored("r1", "a", at(-48*h-30*time.Minute)), stored("r2", "a", at(-h))},
			lost:     2, returned: 2,
			losses: []policy.Loss{
				{Kind: policy.LossExpired, Rows: 1, From: tm("2030-04-28T08:00:00.001Z"), Until: tm("2030-04-28T09:00:00Z"), Age: 49 * h},
				{Kind: policy.LossEarlier, Rows: 1, Age: 49 * h, Shift: h},
			},
		},
		{
			name: "default expiration on real timestamps", strategy: ttl.DefaultExpiration(48 * h),
			cells: []testkit.Stored{stored("r1", "a", at(-72*h)), stored("r2", "a", at(-h))},
			lost:  1, returned: 1,
			losses: []policy.Loss{{Kind: policy.LossExpired, Rows: 1, Until: tm("2030-04-28T09:00:00Z")}},
		},
		{
			// Without an age rule, nothing expired before: the cells now
			// live 48h from their timestamps, future ones included.
			name: "default expiration on recent timestamps", strategy: ttl.DefaultExpiration(48 * h),
			cells: []testkit.Stored{stored("r1", "a", at(-47*h)), stored("r2", "a", at(-h)), stored("r3", "a", at(24*h))},
		},
		{
			name: "longer default", found: bigtable.MaxAgePolicy(48 * h), strategy: ttl.DefaultExpiration(72 * h),
			cells: []testkit.Stored{stored("r1", "a", at(-60*h)), stored("r2", "a", at(-h))},
			back:  1, returned: 1,
		},
		{
			// One-second timestamps are expiries; DefaultExpiration reads them
			// as write times. Nothing is deleted or hidden: every live cell
			// lives d longer, and the cells that expired less than d ago and
			// are not collected yet are returned again. The plan reports
			// them; the change is not refused.
			name: "one second to default expiration", found: bigtable.MaxAgePolicy(time.Second), strategy: ttl.DefaultExpiration(48 * h),
			cells: []testkit.Stored{stored("r1", "a", at(h)), stored("r2", "a", at(-h)), stored("r3", "a", at(-72*h))},
			back:  1, returned: 1,
		},
		{
			name: "same age, version limit dropped", found: bigtable.UnionPolicy(bigtable.MaxAgePolicy(48*h), bigtable.MaxVersionsPolicy(1)),
			strategy: ttl.DefaultExpiration(48 * h),
			cells:    []testkit.Stored{stored("r1", "a", at(-72*h)), stored("r2", "a", at(-h))},
			noScan:   true,
		},
		{
			name: "empty family", strategy: ttl.OneSecond(),
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := emulator.StartForTest(t)
			raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": tt.found, "other": nil})
			testkit.Put(t, raw, "f", tt.cells...)
			testkit.Put(t, raw, "other", stored("r0", "x", at(-1000*h))) // never scanned, never counted
			before := policies(t, e.Admin, "t")
			fams := map[string]ttl.Strategy{"f": tt.strategy}
			opts := policy.Options{Scan: scan.Options{Now: fixedNow}}

			plan, err := runEnsure(ctx, e.Admin, "t", raw, fams, opts)
			require.NotNil(t, plan)
			require.Len(t, plan.Families, 1)
			f := plan.Families[0]
			assert.Equal(t, policy.Change, f.Action)
			assert.Equal(t, tt.losses, orNil(f.Losses))
			assert.Equal(t, tt.sooner, orNil(f.CollectedSooner), "collected sooner")
			assert.NotNil(t, f.CollectedSooner)
			assert.Equal(t, tt.lost, f.Rows, "rows lost")
			assert.Equal(t, tt.back, f.Resurfaced, "rows resurfaced")
			assert.Equal(t, testkit.Base, plan.Now)
			rows := map[string]bool{"r0": true}
			for _, c := range tt.cells {
				rows[c.Row] = true
			}
			if tt.noScan {
				assert.Equal(t, scan.Stats{}, plan.Read)
			} else {
				// The server sees every row and cell of the table: the scan
				// selects the family with a filter, not a row range. It
				// reads each shard once (bttest samples keys at random).
				assert.True(t, plan.Read.Complete(), "complete")
				assert.Equal(t, plan.Read.Shards, plan.Read.Reads, "reads")
				assert.Equal(t, len(rows), plan.Read.RowsSeen, "rows seen")
				assert.Equal(t, len(tt.cells)+1, plan.Read.CellsSeen, "cells seen")
			}
			assert.Equal(t, tt.returned, plan.Read.CellsReturned, "cells returned")

			if tt.lost > 0 {
				require.ErrorIs(t, err, policy.ErrDataLoss)
				for _, r := range tt.losses {
					assert.Contains(t, err.Error(), r.String())
				}
				assert.Contains(t, err.Error(), `family "f" (`+fmt.Sprint(tt.strategy)+`)`)
				assert.True(t, f.Refused)
				assert.False(t, f.Done)
				assert.Equal(t, before, policies(t, e.Admin, "t"), "policy changed by a refused change")
				assert.Equal(t, len(tt.cells)+1, count(t, raw), "cells lost by a refused change")

				opts.AllowDataLoss = true
				plan, err = runEnsure(ctx, e.Admin, "t", raw, fams, opts)
				require.NotNil(t, plan)
				f = plan.Families[0]
				assert.Equal(t, tt.lost, f.Rows, "rows lost, allowed")
				assert.False(t, f.Refused)
			}
			require.NoError(t, err)
			assert.True(t, f.Done)
			_, err = runCheck(ctx, e.Admin, "t", fams)
			assert.NoError(t, err)
			assert.Equal(t, before["other"], policies(t, e.Admin, "t")["other"])
		})
	}
}

// TestEnsureShortensLifetimes checks that a change that moves the expiries
// of live cells earlier is refused, though the cells stay live: they would
// be hidden and deleted before the expiry they were written with (to
// OneSecond, the cells past: the age found can only be a grace). The
// cells are written through a Table under DefaultExpiration(48h): r1 to
// live 72h, r2 with the default an hour ago, r3 forever.
func TestEnsureShortensLifetimes(t *testing.T) {
	ctx := context.Background()
	h := time.Hour
	for _, tt := range []struct {
		to     ttl.Strategy
		rows   int
		losses []policy.Loss
	}{
		{ttl.OneSecond(), 1, []policy.Loss{
			{Kind: policy.LossExpired, Rows: 1, From: tm("2030-04-28T09:00:00.001Z"), Until: tm("2030-04-30T09:00:00Z"), Age: 48 * h, Expiries: true},
		}},
		{ttl.DefaultExpiration(24 * h), 2, []policy.Loss{
			{Kind: policy.LossEarlier, Rows: 2, Age: 48 * h, Shift: 24 * h},
		}},
		{ttl.DefaultExpiration(96 * h), 0, nil},
	} {
		t.Run(fmt.Sprint(tt.to), func(t *testing.T) {
			e := emulator.StartForTest(t)
			raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": bigtable.MaxAgePolicy(48 * h)})
			clock := testkit.NewClock(testkit.Base.Add(-h))
			before, err := ttl.NewTable(raw, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(48 * h)}, ttl.WithClock(clock.Now))
			require.NoError(t, err)
			require.NoError(t, before.Apply(ctx, "r2", testkit.Set("f", "written", "1h ago", ttl.Default)))
			clock.Set(testkit.Base)
			require.NoError(t, before.Apply(ctx, "r1", testkit.Set("f", "hold", "keep 72h", ttl.For(72*h))))
			require.NoError(t, before.Apply(ctx, "r3", testkit.Set("f", "keep", "forever", ttl.Forever)))

			plan, err := runEnsure(ctx, e.Admin, "t", raw, map[string]ttl.Strategy{"f": tt.to}, policy.Options{DryRun: true, Scan: scan.Options{Now: clock.Now}})
			require.NotNil(t, plan)
			f := plan.Families[0]
			assert.Equal(t, tt.losses, orNil(f.Losses))
			assert.Equal(t, tt.rows, f.Rows)
			assert.Zero(t, f.Resurfaced)
			assert.Equal(t, policy.Change, f.Action)
			assert.False(t, f.Done, "a dry run")
			if tt.rows == 0 {
				require.NoError(t, err)
				assert.False(t, f.Refused)
				assert.Equal(t, `table "t": 1 family to change (dry run)`, plan.String())
				return
			}
			require.ErrorIs(t, err, policy.ErrDataLoss)
			assert.True(t, f.Refused)
			assert.Equal(t, `table "t": 1 family refused (dry run)`, plan.String())
			for _, r := range tt.losses {
				assert.Contains(t, err.Error(), r.String())
			}
		})
	}
}

// TestEnsureDryRun checks that a dry run returns the plan and the error
// the real run would, and changes nothing.
func TestEnsureDryRun(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{
		"clicks": nil,
		"hits":   bigtable.MaxAgePolicy(24 * time.Hour),
		"rev":    bigtable.MaxVersionsPolicy(3),
	})
	testkit.Put(t, raw, "clicks", stored("u1", "n", testkit.MS(testkit.Base.Add(-72*time.Hour))), stored("u2", "n", testkit.MS(testkit.Base.Add(-time.Hour))))
	testkit.Put(t, raw, "hits", stored("u1", "n", testkit.MS(testkit.Base.Add(-30*time.Hour))))
	testkit.Put(t, raw, "rev", versions("u1", "v", 1, 3)...)
	fams := map[string]ttl.Strategy{
		"clicks": ttl.DefaultExpiration(48 * time.Hour),
		"hits":   ttl.DefaultExpiration(48 * time.Hour),
		"rev":    ttl.SequenceNumbers(3),
		"sess":   ttl.OneSecond(),
	}
	before := policies(t, e.Admin, "t")
	opts := policy.Options{DryRun: true, Scan: scan.Options{Now: fixedNow}}
	const (
		clicksLoss = "1 row holds cells stamped up to 2030-04-28T09:00:00.000Z, which would expire at once"
		d48        = "DefaultExpiration(48h0m0s)"
	)
	// What the command prints as a table (render_plan.go), row by row.
	plans := func(refused, done bool) []summary {
		return []summary{
			{"clicks", d48, "never", "maxage=2d", policy.Change, 1, 0, refused, done},
			{"hits", d48, "maxage=1d", "maxage=2d", policy.Change, 0, 1, false, done},
			{"rev", "SequenceNumbers(3)", "maxversions=3", "maxversions=3", policy.Keep, 0, 0, false, false},
			{"sess", "OneSecond()", "missing", "maxage=1s", policy.Create, 0, 0, false, done},
		}
	}

	plan, err := runEnsure(ctx, e.Admin, "t", testkit.Tablets{TableAPI: raw}, fams, opts)
	require.ErrorIs(t, err, policy.ErrDataLoss)
	assert.Equal(t, `ttl: change would delete or hide existing data: table "t": family "clicks" (DefaultExpiration(48h0m0s)): found never, want maxage=2d: `+
		clicksLoss+`; nothing changed (allow it with AllowDataLoss)`, err.Error())
	require.NotNil(t, plan)
	assert.Equal(t, "t", plan.Table)
	assert.Equal(t, testkit.Base, plan.Now)
	assert.True(t, plan.DryRun)
	assert.False(t, plan.CreateTable)
	assert.Equal(t, plans(true, false), summaries(plan))
	assert.Equal(t, []string{clicksLoss}, reasons(plan.Families[0]))
	assert.Empty(t, plan.Families[1].Losses, "hits: nothing lost, one row resurfaces")
	assert.Equal(t, []policy.Loss{{Kind: policy.LossExpired, Rows: 1, Until: tm("2030-04-28T09:00:00Z")}}, plan.Families[0].Losses)
	// One shard, read once: two rows and six cells seen, two cells (of
	// one row) returned.
	assert.Equal(t, scan.Stats{Reads: 1, RowsSeen: 2, CellsSeen: 6, RowsReturned: 1, CellsReturned: 2, Shards: 1, ShardsRead: 1}, plan.Read)
	assert.Equal(t, `table "t": 1 family to create, 1 family to change, 1 family refused, 1 family kept (dry run)`, plan.String())
	assert.Equal(t, before, policies(t, e.Admin, "t"))

	opts.AllowDataLoss = true
	plan, err = runEnsure(ctx, e.Admin, "t", testkit.Tablets{TableAPI: raw}, fams, opts)
	require.NoError(t, err)
	assert.Equal(t, plans(false, false), summaries(plan))
	assert.Equal(t, []string{clicksLoss}, reasons(plan.Families[0]), "allowed, still reported")
	assert.Equal(t, `table "t": 1 family to create, 2 families to change, 1 family kept (dry run)`, plan.String())
	assert.Equal(t, before, policies(t, e.Admin, "t"))
	assert.Equal(t, 6, count(t, raw))

	opts.DryRun = false
	plan, err = runEnsure(ctx, e.Admin, "t", testkit.Tablets{TableAPI: raw}, fams, opts)
	require.NoError(t, err)
	assert.False(t, plan.DryRun)
	assert.Equal(t, plans(false, true), summaries(plan))
	assert.Equal(t, `table "t": 3 families created or changed, 1 family kept`, plan.String())
	assert.Equal(t, map[string]string{"clicks": "maxage=2d", "hits": "maxage=2d", "rev": "maxversions=3", "sess": "maxage=1s"}, policies(t, e.Admin, "t"))

	plan, err = runEnsure(ctx, e.Admin, "t", testkit.Tablets{TableAPI: raw}, fams, policy.Options{Scan: scan.Options{Now: fixedNow}})
	require.NoError(t, err)
	for _, f := range plan.Families {
		assert.Equal(t, policy.Keep, f.Action, f.Family)
		assert.True(t, f.Matches, f.Family)
		assert.False(t, f.Done, f.Family)
	}
	assert.Equal(t, scan.Stats{}, plan.Read, "nothing to change, nothing scanned")
	assert.Equal(t, `table "t": 4 families kept`, plan.String())
}

// TestEnsureCreates checks that a missing table is created with its
// families in one call, and missing families beside the others.
func TestEnsureCreates(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	fams := map[string]ttl.Strategy{"sess": ttl.OneSecond(), "clicks": ttl.DefaultExpiration(30 * 24 * time.Hour)}

	plan, err := runEnsure(ctx, e.Admin, "new", e.Client.Open("new"), fams, policy.Options{DryRun: true})
	require.NoError(t, err)
	assert.True(t, plan.CreateTable)
	assert.Equal(t, []summary{
		{"clicks", "DefaultExpiration(720h0m0s)", "missing", "maxage=30d", policy.Create, 0, 0, false, false},
		{"sess", "OneSecond()", "missing", "maxage=1s", policy.Create, 0, 0, false, false},
	}, summaries(plan))
	assert.Equal(t, `table "new" (to create): 2 families to create (dry run)`, plan.String())
	_, err = e.Admin.TableInfo(ctx, "new")
	require.Error(t, err, "a dry run created the table")

	plan, err = runEnsure(ctx, e.Admin, "new", e.Client.Open("new"), fams, policy.Options{})
	require.NoError(t, err)
	assert.True(t, plan.CreateTable)
	assert.True(t, plan.Families[0].Done && plan.Families[1].Done)
	assert.Equal(t, `table "new" (created): 2 families created or changed`, plan.String())
	assert.Equal(t, map[string]string{"clicks": "maxage=30d", "sess": "maxage=1s"}, policies(t, e.Admin, "new"))

	raw := e.TableForTest(t, "old", map[string]bigtable.GCPolicy{"meta": bigtable.MaxVersionsPolicy(1), "sess": bigtable.MaxAgePolicy(time.Second)})
	testkit.Put(t, raw, "meta", stored("r", "x", testkit.MS(testkit.Base)))
	plan, err = runEnsure(ctx, e.Admin, "old", raw, fams, policy.Options{})
	require.NoError(t, err)
	assert.False(t, plan.CreateTable)
	assert.Equal(t, []policy.Action{policy.Create, policy.Keep}, []policy.Action{plan.Families[0].Action, plan.Families[1].Action})
	assert.Equal(t, []bool{true, false}, []bool{plan.Families[0].Done, plan.Families[1].Done})
	assert.Equal(t, 0, plan.Read.Reads, "a creation needs no scan")
	assert.Equal(t, map[string]string{"clicks": "maxage=30d", "meta": "maxversions=1", "sess": "maxage=1s"}, policies(t, e.Admin, "old"))
}

// TestEnsureMove checks that a family in a move is changed to the move's
// policy without a scan: the move's policy deletes no cell either of its
// rules keeps live; the cells on the wrong side of its boundary are the
// move tools' to find.
func TestEnsureMove(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": bigtable.MaxVersionsPolicy(1)})
	testkit.Put(t, raw, "f", stored("r", "a", testkit.MS(testkit.Base.Add(-1000*time.Hour))), stored("s", "a", 5000))
	m := ttl.Move{To: ttl.OneSecond(), Start: testkit.Base.Add(time.Hour), Old: ttl.For(time.Hour), Skew: time.Minute}
	fams := map[string]ttl.Strategy{"f": m}

	plan, err := runEnsure(ctx, e.Admin, "t", raw, fams, policy.Options{Scan: scan.Options{Now: fixedNow}})
	require.NoError(t, err)
	assert.Equal(t, []summary{{"f", m.String(), "maxversions=1", "maxage=1h", policy.Change, 0, 0, false, true}}, summaries(plan))
	assert.Equal(t, bigtable.MaxAgePolicy(time.Second), plan.Families[0].Finished)
	assert.Equal(t, scan.Stats{}, plan.Read, "no scan")
	assert.Equal(t, map[string]string{"f": "maxage=1h"}, policies(t, e.Admin, "t"))
	assert.Equal(t, 2, count(t, raw))

	// Once finished, the family has its new strategy's policy: kept.
	require.NoError(t, runSet(ctx, e.Admin, "t", "f", bigtable.MaxAgePolicy(time.Second), false))
	plan, err = runEnsure(ctx, e.Admin, "t", raw, fams, policy.Options{Scan: scan.Options{Now: fixedNow}})
	require.NoError(t, err)
	assert.Equal(t, policy.Keep, plan.Families[0].Action)
	assert.False(t, plan.Families[0].Done)
	assert.Equal(t, map[string]string{"f": "maxage=1s"}, policies(t, e.Admin, "t"))
}

// TestEnsureSample checks that a dry run on a sample of the shards
// reports estimates, scaled to the table, and decides nothing: the change
// that would lose data is not refused, and nothing is changed.
func TestEnsureSample(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	old := testkit.MS(testkit.Base.Add(-72 * time.Hour))
	for i := range 100 {
		row := fmt.Sprintf("r%03d", i)
		testkit.Put(t, raw, "f", stored(row, "x", old), stored(row, "y", testkit.MS(testkit.Base)))
	}
	// Five shards of 20 rows; a sample of 0.4 splits each shard into five
	// ranges and reads two of each, at places the seed fixes.
	data := testkit.Tablets{TableAPI: raw, Keys: []string{"r020", "r040", "r060", "r080"}}
	fams := map[string]ttl.Strategy{"f": ttl.DefaultExpiration(48 * time.Hour)}
	var progress []scan.Progress
	opts := policy.Options{DryRun: true, Scan: scan.Options{Sample: 0.4, Seed: 7, Workers: 1, Now: fixedNow,
		Progress: func(p scan.Progress) { progress = append(progress, p) }}}

	plan, err := runEnsure(ctx, e.Admin, "t", data, fams, opts)
	require.NoError(t, err, "an estimate decides nothing, and refuses nothing")
	read := plan.Read
	assert.True(t, read.Estimate())
	assert.Equal(t, 5, read.Shards)
	assert.Equal(t, 10, read.Sampled, "two ranges of each of the five shards")
	require.NotNil(t, read.Estimates)
	f := plan.Families[0]
	// The family's rows are the rows the sample saw, scaled as the sample
	// scales the cells it saw; every row read would lose data.
	want := int(float64(read.RowsReturned)*read.Scale() + 0.5)
	assert.Equal(t, want, f.Rows, "%d rows read, scaled by %v", read.RowsReturned, read.Scale())
	assert.Equal(t, []policy.Loss{{Kind: policy.LossExpired, Rows: want, Until: tm("2030-04-28T09:00:00Z")}}, f.Losses)
	assert.Equal(t, fmt.Sprintf("%d rows hold cells stamped up to 2030-04-28T09:00:00.000Z, which would expire at once", want), f.Losses[0].String())
	assert.Less(t, read.RowsSeen, 100, "a sample reads part of the table")
	if est := read.Estimates.RowsSeen; est.Low > 100 || est.High < 100 {
		t.Errorf("the sample's interval of rows seen %+v does not hold the table's 100 rows", est)
	}
	assert.False(t, f.Refused)
	assert.False(t, f.Done)
	assert.Equal(t, `table "t": 1 family to change (an estimate from a sample: nothing decided)`, plan.String())
	assert.NotEmpty(t, progress, "the scan options reach the scan")
	assert.Equal(t, map[string]string{"f": "never"}, policies(t, e.Admin, "t"))

	opts.AllowDataLoss = true
	plan, err = runEnsure(ctx, e.Admin, "t", data, fams, opts)
	require.NoError(t, err)
	assert.False(t, plan.Families[0].Done)
	assert.Equal(t, map[string]string{"f": "never"}, policies(t, e.Admin, "t"), "a sample changes nothing")
}

// failingReads is a table of one shard whose reads fail.
type failingReads struct {
	testkit.Tablets
	err error
}

func (f failingReads) ReadRows(context.Context, bigtable.RowSet, func(bigtable.Row) bool, ...bigtable.ReadOption) error {
	return f.err
}

// TestEnsureScanStops checks that a scan that stops is an error, returned
// with the plan, whose counts are partial: nothing is decided or changed.
func TestEnsureScanStops(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	testkit.Put(t, raw, "f", stored("r", "a", testkit.MS(testkit.Base.Add(-72*time.Hour))))
	boom := errors.New("boom")
	data := failingReads{testkit.Tablets{TableAPI: raw}, boom}

	now := scan.Options{Now: fixedNow}
	for _, opts := range []policy.Options{{Scan: now}, {Scan: now, AllowDataLoss: true}, {Scan: now, DryRun: true}} {
		plan, err := runEnsure(ctx, e.Admin, "t", data, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(48 * time.Hour)}, opts)
		require.ErrorIs(t, err, boom)
		assert.NotErrorIs(t, err, policy.ErrDataLoss)
		assert.True(t, strings.HasPrefix(err.Error(),
			`policy: table "t": the scan for data loss stopped after 0 of 1 shards; its counts are partial and nothing was changed: `), err.Error())
		require.NotNil(t, plan)
		assert.True(t, plan.Read.Stopped())
		assert.Equal(t, 1, plan.Read.Shards)
		assert.Equal(t, 0, plan.Read.ShardsRead)
		f := plan.Families[0]
		assert.Equal(t, policy.Change, f.Action)
		assert.False(t, f.Refused, "nothing decided")
		assert.False(t, f.Done)
		assert.Equal(t, `table "t": 1 family to change (the scan stopped: nothing decided)`, plan.String())
		assert.Equal(t, map[string]string{"f": "never"}, policies(t, e.Admin, "t"))
	}
}

// failAdmin makes the admin calls that fail says fail, with
// PermissionDenied, before they reach the emulator.
type failAdmin struct {
	mu   sync.Mutex
	fail func(req any) bool
}

func (f *failAdmin) set(fail func(req any) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = fail
}

func (f *failAdmin) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	f.mu.Lock()
	fail := f.fail
	f.mu.Unlock()
	if fail != nil && fail(req) {
		return status.Error(codes.PermissionDenied, "refused by the test")
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// modifies returns a test of requests that modify family.
func modifies(family string) func(req any) bool {
	return func(req any) bool {
		m, ok := req.(*adminpb.ModifyColumnFamiliesRequest)
		return ok && len(m.Modifications) > 0 && m.Modifications[0].Id == family
	}
}

// TestEnsureFailedChanges checks that a failed change stops Ensure, which
// returns the plan with the families changed before it marked done, and
// the error of Bigtable's with the change that failed.
func TestEnsureFailedChanges(t *testing.T) {
	ctx := context.Background()
	f := &failAdmin{}
	e := emulator.StartForTest(t, grpc.WithUnaryInterceptor(f.intercept))
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"a": bigtable.MaxAgePolicy(time.Hour), "b": bigtable.MaxAgePolicy(time.Hour)})
	fams := map[string]ttl.Strategy{
		"a": ttl.DefaultExpiration(2 * time.Hour),
		"b": ttl.DefaultExpiration(3 * time.Hour),
		"c": ttl.OneSecond(),
	}

	f.set(modifies("b"))
	plan, err := runEnsure(ctx, e.Admin, "t", raw, fams, policy.Options{Scan: scan.Options{Now: fixedNow}})
	require.Error(t, err)
	assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
	assert.True(t, strings.HasPrefix(err.Error(), `policy: table "t": setting family "b" to maxage=3h: `), err.Error())
	require.NotNil(t, plan)
	assert.Equal(t, []bool{true, false, false}, []bool{plan.Families[0].Done, plan.Families[1].Done, plan.Families[2].Done})
	assert.Equal(t, map[string]string{"a": "maxage=2h", "b": "maxage=1h"}, policies(t, e.Admin, "t"))

	f.set(modifies("c"))
	plan, err = runEnsure(ctx, e.Admin, "t", raw, fams, policy.Options{Scan: scan.Options{Now: fixedNow}})
	require.Error(t, err)
	assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
	assert.True(t, strings.HasPrefix(err.Error(), `policy: table "t": creating family "c" with maxage=1s: `), err.Error())
	assert.Equal(t, []policy.Action{policy.Keep, policy.Change, policy.Create}, []policy.Action{plan.Families[0].Action, plan.Families[1].Action, plan.Families[2].Action})
	assert.Equal(t, []bool{false, true, false}, []bool{plan.Families[0].Done, plan.Families[1].Done, plan.Families[2].Done})
	assert.Equal(t, map[string]string{"a": "maxage=2h", "b": "maxage=3h"}, policies(t, e.Admin, "t"))

	f.set(func(req any) bool { _, ok := req.(*adminpb.CreateTableRequest); return ok })
	plan, err = runEnsure(ctx, e.Admin, "new", e.Client.Open("new"), fams, policy.Options{Scan: scan.Options{Now: fixedNow}})
	require.Error(t, err)
	assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
	assert.True(t, strings.HasPrefix(err.Error(), `policy: creating table "new": `), err.Error())
	assert.True(t, plan.CreateTable)
	for _, fp := range plan.Families {
		assert.Equal(t, policy.Create, fp.Action, fp.Family)
		assert.False(t, fp.Done, fp.Family)
	}
	_, err = e.Admin.TableInfo(ctx, "new")
	assert.Equal(t, codes.NotFound, status.Code(err), "%v", err)

	// A failure to read the families: no plan.
	f.set(func(req any) bool { _, ok := req.(*adminpb.GetTableRequest); return ok })
	plan, err = runEnsure(ctx, e.Admin, "t", raw, fams, policy.Options{Scan: scan.Options{Now: fixedNow}})
	assert.Nil(t, plan)
	assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
	assert.True(t, strings.HasPrefix(err.Error(), `policy: table "t": `), err.Error())

	f.set(nil)
	plan, err = runEnsure(ctx, e.Admin, "t", raw, fams, policy.Options{Scan: scan.Options{Now: fixedNow}})
	require.NoError(t, err)
	assert.Equal(t, []bool{false, false, true}, []bool{plan.Families[0].Done, plan.Families[1].Done, plan.Families[2].Done})
}

// TestSet checks that Set sets a family's policy, and wraps Bigtable's
// error with the table, the family and the policy.
func TestSet(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	p := bigtable.UnionPolicy(bigtable.MaxAgePolicy(time.Hour), bigtable.MaxVersionsPolicy(2))
	require.NoError(t, runSet(ctx, e.Admin, "t", "f", p, true))
	assert.Equal(t, map[string]string{"f": "maxage=1h or maxversions=2"}, policies(t, e.Admin, "t"))

	err := runSet(ctx, e.Admin, "t", "nope", bigtable.MaxAgePolicy(time.Hour), false)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), `policy: table "t": setting family "nope" to maxage=1h: `), err.Error())
	assert.NotEqual(t, codes.OK, status.Code(err))
	err = runSet(ctx, e.Admin, "missing", "f", bigtable.MaxAgePolicy(time.Hour), false)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), `policy: table "missing": setting family "f" to maxage=1h: `), err.Error())
	assert.Equal(t, map[string]string{"f": "maxage=1h or maxversions=2"}, policies(t, e.Admin, "t"))
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

// TestEnsureIgnoreWarnings checks that IgnoreWarnings reaches Bigtable
// with each policy change, and only when asked. The emulator does not
// replicate, so it is seen on the wire.
func TestEnsureIgnoreWarnings(t *testing.T) {
	ctx := context.Background()
	for _, ignore := range []bool{false, true} {
		rec := &modifyRecorder{}
		e := emulator.StartForTest(t, grpc.WithUnaryInterceptor(rec.intercept))
		raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"a": bigtable.MaxAgePolicy(time.Hour), "b": bigtable.MaxAgePolicy(time.Hour)})
		rec.mu.Lock()
		rec.reqs = nil
		rec.mu.Unlock()
		fams := map[string]ttl.Strategy{"a": ttl.DefaultExpiration(2 * time.Hour), "b": ttl.DefaultExpiration(3 * time.Hour)}
		_, err := runEnsure(ctx, e.Admin, "t", raw, fams, policy.Options{IgnoreWarnings: ignore})
		require.NoError(t, err)
		rec.mu.Lock()
		reqs := rec.reqs
		rec.mu.Unlock()
		require.Len(t, reqs, 2)
		for _, r := range reqs {
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
				m.Set("f", fmt.Sprint("c", c), testkit.MS(testkit.Base.Add(-age)), []byte(strings.Repeat("x", 100)))
			}
		}
		rows, muts = append(rows, fmt.Sprintf("r%03d", r)), append(muts, m)
	}
	errs, err := raw.ApplyBulk(ctx, rows, muts)
	require.NoError(t, err)
	require.Nil(t, errs)
	plan, err := runEnsure(ctx, e.Admin, "t", raw, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(48 * time.Hour)},
		policy.Options{DryRun: true, Scan: scan.Options{Now: fixedNow}})
	require.ErrorIs(t, err, policy.ErrDataLoss)
	read := plan.Read
	t.Logf("%+v", read)
	assert.Equal(t, scan.Stats{Reads: read.Shards, RowsSeen: 200, CellsSeen: 4000, RowsReturned: 100, CellsReturned: 100,
		Shards: read.Shards, ShardsRead: read.Shards}, read)
	assert.Equal(t, 100, plan.Families[0].Rows)

	plan, err = runEnsure(ctx, e.Admin, "t", raw, map[string]ttl.Strategy{"f": ttl.SequenceNumbers(2)},
		policy.Options{DryRun: true, Scan: scan.Options{Now: fixedNow}})
	require.ErrorIs(t, err, policy.ErrDataLoss)
	read = plan.Read
	t.Logf("%+v", read)
	// 3 versions of each of 5 columns a row; the real-time cell the other
	// branch passes is one of them, counted once.
	assert.Equal(t, scan.Stats{Reads: read.Shards, RowsSeen: 200, CellsSeen: 4000, RowsReturned: 200, CellsReturned: 200 * 5 * 3,
		Shards: read.Shards, ShardsRead: read.Shards}, read)
}

// TestRefusalMatters is the one test on the real clock: it shows what the
// refusal prevents. A family holding ordinary timestamps loses its cells
// within seconds of being switched to OneSecond's policy, by the
// emulator's GC, which runs on the real clock.
func TestRefusalMatters(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	testkit.Put(t, raw, "f", stored("r", "a", bigtable.Now()-bigtable.Timestamp(time.Hour/time.Microsecond)))
	fams := map[string]ttl.Strategy{"f": ttl.OneSecond()}

	_, err := runEnsure(ctx, e.Admin, "t", raw, fams, policy.Options{})
	require.ErrorIs(t, err, policy.ErrDataLoss)
	assert.Equal(t, 1, count(t, raw))
	_, err = runEnsure(ctx, e.Admin, "t", raw, fams, policy.Options{AllowDataLoss: true})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		n, err := cellsIn(raw)
		return err == nil && n == 0
	}, 10*time.Second, 100*time.Millisecond, "the cell survived 10s of one-second GC")
}

// TestPlanString checks the plan's one-line summary: each count of
// families, and whether the plan decided anything.
func TestPlanString(t *testing.T) {
	families := []policy.FamilyPlan{
		{Action: policy.Keep}, {Action: policy.Create}, {Action: policy.Change}, {Action: policy.Change},
		{Action: policy.Change, Refused: true}, {Action: policy.Create, Done: true}, {Action: policy.Change, Done: true},
	}
	for _, tt := range []struct {
		name string
		plan policy.Plan
		want string
	}{
		{"every kind", policy.Plan{Table: "t", Families: families},
			`table "t": 1 family to create, 2 families to change, 1 family refused, 2 families created or changed, 1 family kept`},
		{"dry run", policy.Plan{Table: "t", DryRun: true, Families: families[:1]}, `table "t": 1 family kept (dry run)`},
		{"stopped", policy.Plan{Table: "t", DryRun: true, Families: families[2:3], Read: scan.Stats{Shards: 4, ShardsRead: 1}},
			`table "t": 1 family to change (the scan stopped: nothing decided)`},
		{"stopped sample", policy.Plan{Table: "t", Families: families[2:3], Read: scan.Stats{Shards: 4, Sampled: 2, ShardsRead: 1}},
			`table "t": 1 family to change (the scan stopped: nothing decided)`},
		{"estimate", policy.Plan{Table: "t", DryRun: true, Families: families[2:3], Read: scan.Stats{Shards: 4, Sampled: 2, ShardsRead: 2}},
			`table "t": 1 family to change (an estimate from a sample: nothing decided)`},
		{"complete scan", policy.Plan{Table: "t", Families: families[6:], Read: scan.Stats{Reads: 4, Shards: 4, ShardsRead: 4}},
			`table "t": 1 family created or changed`},
		// Built by hand, without an action: counted as a change.
		{"hand-built", policy.Plan{Table: "t", Now: testkit.Base, CreateTable: true, Families: []policy.FamilyPlan{{Status: policy.Status{Family: "f"}}}},
			`table "t" (to create): 1 family to change`},
	} {
		assert.Equal(t, tt.want, tt.plan.String(), tt.name)
	}
	empty := &policy.Plan{Table: "t"}
	assert.Equal(t, `table "t": no family`, empty.String())
}

// TestPlanJSON checks the plan's JSON, which programs read: the struct's
// tags, each family's status inlined with its policies and kinds of cell
// spelled as the text output spells them, each loss's kind by name and
// its durations as Go durations, and the scan's verdict.
func TestPlanJSON(t *testing.T) {
	plan := policy.Plan{Table: "t", Now: testkit.Base, DryRun: true, Families: []policy.FamilyPlan{{
		Status: policy.Status{Family: "f", Strategy: "OneSecond()", Found: bigtable.NoGcPolicy(), Want: bigtable.MaxAgePolicy(time.Second), Exists: true},
		Action: policy.Change, Rows: 2,
		Losses: []policy.Loss{{Kind: policy.LossExpired, Rows: 2, From: tm("2030-04-28T09:00:00.001Z"), Until: tm("2030-04-30T09:00:00Z"),
			Age: 48 * time.Hour, Expiries: true}},
		CollectedSooner: []policy.Loss{{Kind: policy.LossSooner, Rows: 1, Age: 48 * time.Hour, Shift: 48 * time.Hour}},
		Resurfaced:      1, Refused: true,
	}}, Read: scan.Stats{Reads: 1, Shards: 1, ShardsRead: 1}}
	b, err := json.Marshal(&plan)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, map[string]any{
		"table": "t", "now": "2030-04-30T09:00:00Z", "dry_run": true, "create_table": false,
		"families": []any{map[string]any{
			"family": "f", "strategy": "OneSecond()", "found": "never", "want": "maxage=1s", "type": "plain", "want_type": "plain", "exists": true, "matches": false,
			"action": "change", "rows_lost": 2.0,
			"losses": []any{map[string]any{"kind": "expired", "rows": 2.0, "from": "2030-04-28T09:00:00.001Z", "until": "2030-04-30T09:00:00Z",
				"age": "48h0m0s", "expiries": true}},
			"resurfaced_rows":  1.0,
			"collected_sooner": []any{map[string]any{"kind": "collected-sooner", "rows": 1.0, "age": "48h0m0s", "shift": "48h0m0s"}},
			"refused":          true, "done": false,
		}},
		"read": map[string]any{"reads": 1.0, "rows_seen": 0.0, "cells_seen": 0.0, "rows_returned": 0.0, "cells_returned": 0.0,
			"shards": 1.0, "shards_read": 1.0, "complete": true, "estimate": false},
	}, got)

	var back policy.Plan
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, plan, back, "decodes to the same plan")
}

// ExampleTool_Ensure migrates a family holding ordinary timestamps to
// default expiration on an emulator: a dry run first, which refuses the
// change because one row holds a click older than the default.
func ExampleTool_Ensure() {
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
	tool, err := policy.New(e.Admin, events, "events", families,
		policy.Options{DryRun: true, Scan: scan.Options{Now: func() time.Time { return now }}})
	if err != nil {
		log.Fatal(err)
	}
	plan, err := tool.Ensure(ctx)
	fmt.Println(plan)
	for _, f := range plan.Families {
		fmt.Printf("%s: %s, found %s, want %s: %s, %d row lost, refused %v\n", f.Family, f.Strategy,
			policy.Describe(f.Found), policy.Describe(f.Want), f.Action, f.Rows, f.Refused)
		for _, l := range f.Losses {
			fmt.Printf("  %v: %s\n", l.Kind, l)
		}
	}
	fmt.Printf("scan: %d row and %d cells seen, %d cell returned\n", plan.Read.RowsSeen, plan.Read.CellsSeen, plan.Read.CellsReturned)
	fmt.Println(errors.Is(err, policy.ErrDataLoss))
	// Output:
	// table "events": 1 family refused (dry run)
	// clicks: DefaultExpiration(168h0m0s), found never, want maxage=7d: change, 1 row lost, refused true
	//   expired: 1 row holds cells stamped up to 2030-04-23T09:00:00.000Z, which would expire at once
	// scan: 1 row and 2 cells seen, 1 cell returned
	// true
}

// TestEnsureClock checks that Ensure judges cells at one instant of
// Options.Scan.Now, read before the scan (which times its progress with
// the same clock), and at time.Now without one.
func TestEnsureClock(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": bigtable.MaxAgePolicy(time.Hour)})
	fams := map[string]ttl.Strategy{"f": ttl.DefaultExpiration(2 * time.Hour)}

	// Each read a second later than the one before.
	var reads []time.Time
	var mu sync.Mutex
	ticking := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		reads = append(reads, testkit.Base.Add(time.Duration(len(reads))*time.Second))
		return reads[len(reads)-1]
	}
	plan, err := runEnsure(ctx, e.Admin, "t", raw, fams, policy.Options{DryRun: true, Scan: scan.Options{Now: ticking}})
	require.NoError(t, err)
	assert.Equal(t, testkit.Base, plan.Now, "the plan's instant is the clock's first read")
	assert.Greater(t, len(reads), 1, "the scan reads the clock too: one clock for the tool")

	before := time.Now()
	plan, err = runEnsure(ctx, e.Admin, "t", raw, fams, policy.Options{DryRun: true})
	after := time.Now()
	require.NoError(t, err)
	assert.False(t, plan.Now.Before(before) || plan.Now.After(after), "%v not between %v and %v", plan.Now, before, after)
}
