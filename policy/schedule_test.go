package policy_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
)

// TestSchedulePolicy checks that a schedule's family keeps entries for
// the longest age its families' GC policies keep expired cells, a move's
// the longer of its sides' graces, or until deleted when a family keeps
// cells with no age (issue 33.3), and that a schedule that cannot work is
// refused.
func TestSchedulePolicy(t *testing.T) {
	start := testkit.Base
	for _, tt := range []struct {
		name     string
		families map[string]ttl.Strategy
		want     string
	}{
		{"no grace", map[string]ttl.Strategy{"f": ttl.OneSecond()}, "maxage=1s"},
		{"the longest grace", map[string]ttl.Strategy{
			"a": ttl.Grace(ttl.OneSecond(), time.Hour),
			"b": ttl.Grace(ttl.DefaultExpiration(48*time.Hour), 2*time.Hour),
			"c": ttl.Counter(ttl.Grace(ttl.OneSecond(), time.Minute)),
		}, "maxage=2h"},
		{"a move's longer side", map[string]ttl.Strategy{
			"m": ttl.Move{From: ttl.Grace(ttl.DefaultExpiration(time.Hour), 3*time.Hour), To: ttl.Grace(ttl.OneSecond(), time.Hour), Start: start},
		}, "maxage=3h"},
		{"a move to versions whose old cells expire: no GC", map[string]ttl.Strategy{
			"m": ttl.Move{To: ttl.SequenceNumbers(2), Start: start, Old: ttl.For(time.Hour)},
		}, "never"},
		{"a family in a move that keeps cells until deleted, beside a grace", map[string]ttl.Strategy{
			"sess": ttl.Grace(ttl.OneSecond(), time.Hour),
			"mv":   ttl.Move{To: ttl.OneSecond(), Start: start},
		}, "never"},
		{"a move with an end", map[string]ttl.Strategy{
			"sess": ttl.Grace(ttl.OneSecond(), time.Hour),
			"mv":   ttl.Move{From: ttl.DefaultExpiration(time.Hour), To: ttl.OneSecond(), Start: start, Old: ttl.Until(start.Add(time.Hour))},
		}, "never"},
	} {
		p, err := policy.SchedulePolicy("t", "t-schedule", tt.families)
		require.NoError(t, err, tt.name)
		assert.Equal(t, tt.want, policy.Describe(p), tt.name)
		if g, err := time.ParseDuration(strings.TrimPrefix(tt.want, "maxage=")); err == nil {
			assert.Equal(t, policy.Describe(schedule.Policy(g)), policy.Describe(p), tt.name)
		}
	}
	one := map[string]ttl.Strategy{"f": ttl.OneSecond()}
	for _, tt := range []struct {
		name     string
		schedule string
		families map[string]ttl.Strategy
		want     error
		msg      string
	}{
		{"no name", "", one, ttl.ErrInvalidOption, `table "t": no schedule table named`},
		{"the data table", "t", one, ttl.ErrInvalidOption, `table "t": the schedule table must be another table`},
		{"sequence numbers", "s", map[string]ttl.Strategy{"f": ttl.OneSecond(), "v": ttl.SequenceNumbers(3)}, ttl.ErrInvalidOption,
			`family "v" (SequenceNumbers(3)) has no cell that expires at an instant`},
		{"a move that never expires", "s", map[string]ttl.Strategy{"m": ttl.Move{To: ttl.SequenceNumbers(2), Start: start}}, ttl.ErrInvalidOption, `family "m"`},
		{"an invalid strategy", "s", map[string]ttl.Strategy{"f": ttl.SequenceNumbers(0)}, ttl.ErrInvalidStrategy, "SequenceNumbers(0)"},
		{"no family", "s", nil, ttl.ErrInvalidStrategy, "no family"},
	} {
		_, err := policy.SchedulePolicy("t", tt.schedule, tt.families)
		if assert.ErrorIs(t, err, tt.want, tt.name) {
			assert.Contains(t, err.Error(), tt.msg, tt.name)
		}
	}
}

// TestCheckSchedule checks that a schedule matches only with its family,
// plain, under exactly the policy its families' grace needs: a missing
// table or family, a shorter policy and a longer one are mismatches.
func TestCheckSchedule(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	fams := map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), time.Hour)}
	e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"sess": bigtable.MaxAgePolicy(time.Hour)})
	e.TableForTest(t, "ok", map[string]bigtable.GCPolicy{schedule.Family: schedule.Policy(time.Hour), "other": nil})
	e.TableForTest(t, "short", map[string]bigtable.GCPolicy{schedule.Family: schedule.Policy(time.Minute)})
	e.TableForTest(t, "long", map[string]bigtable.GCPolicy{schedule.Family: bigtable.NoGcPolicy()})
	e.TableForTest(t, "nofamily", map[string]bigtable.GCPolicy{"x": nil})

	st, err := runCheckSchedule(ctx, e.Admin, "t", "ok", fams)
	require.NoError(t, err)
	assert.Equal(t, spelledStatus{Family: "e", Strategy: "Grace(OneSecond(), 1h0m0s)", Found: "maxage=1h", Want: "maxage=1h",
		Type: "plain", WantType: "plain", Exists: true, Matches: true}, spell(st))

	for _, tt := range []struct{ schedule, msg string }{
		{"missing", `schedule table "missing" of table "t" does not exist: family "e" (Grace(OneSecond(), 1h0m0s)): missing, want maxage=1h`},
		{"nofamily", `schedule table "nofamily" of table "t": family "e" (Grace(OneSecond(), 1h0m0s)): missing, want maxage=1h`},
		{"short", `schedule table "short" of table "t": family "e" (Grace(OneSecond(), 1h0m0s)): found maxage=1m, want maxage=1h`},
		{"long", `schedule table "long" of table "t": family "e" (Grace(OneSecond(), 1h0m0s)): found never, want maxage=1h`},
	} {
		st, err := runCheckSchedule(ctx, e.Admin, "t", tt.schedule, fams)
		require.ErrorIs(t, err, policy.ErrFamilyMismatch, tt.schedule)
		assert.Equal(t, "ttl: column family does not match its strategy: "+tt.msg, err.Error())
		assert.False(t, st.Matches, tt.schedule)
		assert.Equal(t, "maxage=1h", policy.Describe(st.Want), tt.schedule)
	}

	_, err = runCheckSchedule(ctx, e.Admin, "t", "t", fams)
	assert.ErrorIs(t, err, ttl.ErrInvalidOption)
	var noCtx context.Context
	_, err = runCheckSchedule(noCtx, e.Admin, "t", "ok", fams)
	assert.ErrorIs(t, err, ttl.ErrNilArgument)
	_, err = runCheckSchedule(ctx, nil, "t", "ok", fams)
	assert.ErrorIs(t, err, ttl.ErrNilArgument)
}

// TestEnsureScheduleCreates checks that a dry run creates nothing and a
// real run creates the schedule table with its family and policy, or the
// family in a table that lacks it, leaving other families alone.
func TestEnsureScheduleCreates(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	fams := map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), 2*time.Hour)}

	plan, err := runEnsureSchedule(ctx, e.Admin, "t", "sched", e.Client.Open("sched"), fams, policy.Options{DryRun: true, Scan: scan.Options{Now: fixedNow}})
	require.NoError(t, err)
	assert.True(t, plan.CreateTable)
	assert.Equal(t, []summary{{"e", "Grace(OneSecond(), 2h0m0s)", "missing", "maxage=2h", policy.Create, 0, 0, false, false}}, summaries(plan))
	assert.Equal(t, `table "sched" (to create): 1 family to create (dry run)`, plan.String())
	_, err = e.Admin.TableInfo(ctx, "sched")
	require.Error(t, err, "a dry run created the table")

	plan, err = runEnsureSchedule(ctx, e.Admin, "t", "sched", e.Client.Open("sched"), fams, policy.Options{Scan: scan.Options{Now: fixedNow}})
	require.NoError(t, err)
	assert.True(t, plan.Families[0].Done)
	assert.Equal(t, map[string]string{"e": "maxage=2h"}, policies(t, e.Admin, "sched"))
	_, err = runCheckSchedule(ctx, e.Admin, "t", "sched", fams)
	require.NoError(t, err, "Check finds what Ensure made")

	plan, err = runEnsureSchedule(ctx, e.Admin, "t", "sched", e.Client.Open("sched"), fams, policy.Options{Scan: scan.Options{Now: fixedNow}})
	require.NoError(t, err)
	assert.Equal(t, policy.Keep, plan.Families[0].Action)
	assert.False(t, plan.Families[0].Done)

	raw := e.TableForTest(t, "other", map[string]bigtable.GCPolicy{"x": bigtable.MaxVersionsPolicy(1)})
	plan, err = runEnsureSchedule(ctx, e.Admin, "t", "other", raw, fams, policy.Options{Scan: scan.Options{Now: fixedNow}})
	require.NoError(t, err)
	assert.False(t, plan.CreateTable)
	assert.Equal(t, policy.Create, plan.Families[0].Action)
	assert.Equal(t, map[string]string{"e": "maxage=2h", "x": "maxversions=1"}, policies(t, e.Admin, "other"))
}

// TestEnsureScheduleChanges checks that a longer grace is set freely, and
// that a shorter policy, which would delete entries a sweep behind by
// more than the grace still reads, is refused with nothing changed unless
// the loss is allowed; entries it would not delete do not count.
func TestEnsureScheduleChanges(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	now := testkit.Base
	clock := func() time.Time { return now }
	hour := map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), time.Hour)}

	short := e.TableForTest(t, "short", map[string]bigtable.GCPolicy{schedule.Family: schedule.Policy(time.Minute)})
	testkit.Put(t, short, schedule.Family, stored(schedule.Key("r", now.Add(-30*time.Minute)), schedule.Column, schedule.Timestamp(now.Add(-30*time.Minute))))
	plan, err := runEnsureSchedule(ctx, e.Admin, "t", "short", short, hour, policy.Options{Scan: scan.Options{Now: clock}})
	require.NoError(t, err)
	assert.Equal(t, []summary{{"e", "Grace(OneSecond(), 1h0m0s)", "maxage=1m", "maxage=1h", policy.Change, 0, 0, false, true}}, summaries(plan))
	assert.Equal(t, map[string]string{"e": "maxage=1h"}, policies(t, e.Admin, "short"))
	assert.Equal(t, 0, plan.Read.Reads, "a longer policy deletes nothing: no scan")

	long := e.TableForTest(t, "long", map[string]bigtable.GCPolicy{schedule.Family: bigtable.MaxAgePolicy(24 * time.Hour)})
	entry := func(row string, expiry time.Time) testkit.Stored {
		return stored(schedule.Key(row, expiry), schedule.Column, schedule.Timestamp(expiry))
	}
	testkit.Put(t, long, schedule.Family,
		entry("kept-by-both", now.Add(-30*time.Minute)),
		entry("ahead", now.Add(time.Hour)),
		entry("lost-1", now.Add(-2*time.Hour)),
		entry("lost-2", now.Add(-20*time.Hour)),
		entry("gone-already", now.Add(-25*time.Hour)),
	)
	plan, err = runEnsureSchedule(ctx, e.Admin, "t", "long", long, hour, policy.Options{Scan: scan.Options{Now: clock}})
	require.ErrorIs(t, err, policy.ErrDataLoss)
	assert.Contains(t, err.Error(), `table "long": family "e" (Grace(OneSecond(), 1h0m0s)): found maxage=1d, want maxage=1h: 2 entries stamped`)
	assert.Contains(t, err.Error(), "nothing changed (allow it with AllowDataLoss)")
	assert.Equal(t, []summary{{"e", "Grace(OneSecond(), 1h0m0s)", "maxage=1d", "maxage=1h", policy.Change, 2, 0, true, false}}, summaries(plan))
	assert.Equal(t, []policy.Loss{{Kind: policy.LossEntries, Rows: 2, From: tm("2030-04-29T09:00:00.001Z"), Until: tm("2030-04-30T08:00:00Z")}},
		plan.Families[0].Losses)
	assert.Equal(t, []string{"2 entries stamped 2030-04-29T09:00:00.001Z to 2030-04-30T08:00:00.000Z, which would be deleted at once"},
		reasons(plan.Families[0]))
	assert.Equal(t, map[string]string{"e": "maxage=1d"}, policies(t, e.Admin, "long"), "a refused change changed the policy")
	assert.Equal(t, 5, count(t, long))

	plan, err = runEnsureSchedule(ctx, e.Admin, "t", "long", long, hour, policy.Options{AllowDataLoss: true, Scan: scan.Options{Now: clock}})
	require.NoError(t, err)
	assert.True(t, plan.Families[0].Done)
	assert.Equal(t, 2, plan.Families[0].Rows, "the plan still reports what the change loses")
	assert.Equal(t, map[string]string{"e": "maxage=1h"}, policies(t, e.Admin, "long"))

	never := e.TableForTest(t, "never", map[string]bigtable.GCPolicy{schedule.Family: bigtable.NoGcPolicy()})
	testkit.Put(t, never, schedule.Family, entry("ahead", now.Add(time.Minute)), entry("recent", now.Add(-time.Minute)))
	plan, err = runEnsureSchedule(ctx, e.Admin, "t", "never", never, hour, policy.Options{Scan: scan.Options{Now: clock}})
	require.NoError(t, err, "no entry older than the grace: nothing lost")
	assert.True(t, plan.Families[0].Done)
	assert.True(t, plan.Read.Complete() && plan.Read.ShardsRead > 0, "a shorter policy is scanned for")
	assert.Equal(t, 0, plan.Families[0].Rows)
}

// TestEnsureScheduleRefuses checks that a schedule that cannot work is
// refused with nothing created or changed, and a nil argument too.
func TestEnsureScheduleRefuses(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"sess": bigtable.MaxAgePolicy(time.Second)})
	one := map[string]ttl.Strategy{"sess": ttl.OneSecond()}

	for _, tt := range []struct {
		name, schedule string
		families       map[string]ttl.Strategy
		opts           policy.Options
		want           error
		msg            string
	}{
		{"the data table", "t", one, policy.Options{}, ttl.ErrInvalidOption, "must be another table"},
		{"sequence numbers", "s", map[string]ttl.Strategy{"v": ttl.SequenceNumbers(1)}, policy.Options{}, ttl.ErrInvalidOption, `family "v"`},
		{"bad scan options", "s", one, policy.Options{Scan: scan.Options{Workers: -1}}, ttl.ErrInvalidOption, "policy.New: "},
		{"a sample that would decide", "s", one, policy.Options{Scan: scan.Options{Sample: 0.5}}, ttl.ErrInvalidOption, "use it with DryRun"},
	} {
		plan, err := runEnsureSchedule(ctx, e.Admin, "t", tt.schedule, raw, tt.families, tt.opts)
		assert.Nil(t, plan, tt.name)
		if assert.ErrorIs(t, err, tt.want, tt.name) {
			assert.Contains(t, err.Error(), tt.msg, tt.name)
		}
	}
	_, err := e.Admin.TableInfo(ctx, "s")
	assert.Error(t, err, "a refused schedule was created")
	assert.Equal(t, map[string]string{"sess": "maxage=1s"}, policies(t, e.Admin, "t"))

	var noCtx context.Context
	for _, data := range []bigtable.TableAPI{nil, (*bigtable.Table)(nil)} {
		_, err := runEnsureSchedule(ctx, e.Admin, "t", "s", data, one, policy.Options{})
		assert.ErrorIs(t, err, ttl.ErrNilArgument)
	}
	_, err = runEnsureSchedule(noCtx, e.Admin, "t", "s", raw, one, policy.Options{})
	assert.ErrorIs(t, err, ttl.ErrNilArgument)

	e.TableForTest(t, "agg", map[string]bigtable.GCPolicy{"x": nil})
	require.NoError(t, e.Admin.CreateColumnFamilyWithConfig(ctx, "agg", schedule.Family, bigtable.Family{
		GCPolicy: bigtable.MaxAgePolicy(time.Second), ValueType: bigtable.AggregateType{Input: bigtable.Int64Type{}, Aggregator: bigtable.SumAggregator{}}}))
	plan, err := runEnsureSchedule(ctx, e.Admin, "t", "agg", e.Client.Open("agg"), one, policy.Options{})
	require.ErrorIs(t, err, policy.ErrFamilyMismatch)
	assert.Contains(t, err.Error(), `schedule table "agg" of table "t": family "e" (OneSecond()): found counter cells, want plain cells`)
	assert.True(t, plan.Families[0].Refused)
}

// TestEnsureScheduleScanStops checks that a scan for lost entries that
// stops decides nothing and changes nothing, and says so.
func TestEnsureScheduleScanStops(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "sched", map[string]bigtable.GCPolicy{schedule.Family: bigtable.NoGcPolicy()})
	boom := errors.New("boom")
	data := failingReads{testkit.Tablets{TableAPI: raw}, boom}
	plan, err := runEnsureSchedule(ctx, e.Admin, "t", "sched", data, map[string]ttl.Strategy{"f": ttl.OneSecond()}, policy.Options{AllowDataLoss: true, Scan: scan.Options{Now: fixedNow}})
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), `policy: schedule table "sched": the scan for entries the change would delete stopped after 0 of 1 shards; its count is partial and nothing was changed: `)
	assert.False(t, plan.Families[0].Done)
	assert.Equal(t, `table "sched": 1 family to change (the scan stopped: nothing decided)`, plan.String())
	assert.Equal(t, map[string]string{"e": "never"}, policies(t, e.Admin, "sched"))
}
