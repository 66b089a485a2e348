package policy_test

import (
	"context"
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
)

// sum is the value type of a counter family.
var sum = bigtable.AggregateType{Input: bigtable.Int64Type{}, Aggregator: bigtable.SumAggregator{}}

// TestCheckCounter: a counter family must be an aggregate of int64 sums
// with its strategy's policy, and a plain strategy's family must not be
// one; either the other way round is a mismatch, whatever the policy.
func TestCheckCounter(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	require.NoError(t, e.Admin.CreateTableFromConf(ctx, &bigtable.TableConf{TableID: "t", ColumnFamilies: map[string]bigtable.Family{
		"hits":   {GCPolicy: bigtable.MaxAgePolicy(time.Second), ValueType: sum},
		"plain":  {GCPolicy: bigtable.MaxAgePolicy(time.Second)},
		"agg":    {GCPolicy: bigtable.MaxAgePolicy(time.Second), ValueType: sum},
		"maxint": {GCPolicy: bigtable.MaxAgePolicy(time.Second), ValueType: bigtable.AggregateType{Input: bigtable.Int64Type{}, Aggregator: bigtable.MaxAggregator{}}},
		"daily":  {GCPolicy: bigtable.MaxAgePolicy(49 * time.Hour), ValueType: sum},
	}}))
	statuses, err := runCheck(ctx, e.Admin, "t", map[string]ttl.Strategy{
		"hits":   ttl.Counter(ttl.OneSecond()),
		"plain":  ttl.Counter(ttl.OneSecond()),
		"agg":    ttl.OneSecond(),
		"maxint": ttl.Counter(ttl.OneSecond()),
		"daily":  ttl.Counter(ttl.Grace(ttl.DefaultExpiration(48*time.Hour), time.Hour)),
	})
	require.ErrorIs(t, err, policy.ErrFamilyMismatch)
	var got []string
	for _, s := range statuses {
		got = append(got, s.String())
	}
	assert.Equal(t, []string{
		`family "agg" (OneSecond()): found counter cells, want plain cells: a family's kind of cell cannot be changed in place`,
		`family "daily" (Counter(Grace(DefaultExpiration(48h0m0s), 1h0m0s))): maxage=49h, as wanted`,
		`family "hits" (Counter(OneSecond())): maxage=1s, as wanted`,
		`family "maxint" (Counter(OneSecond())): found aggregate cells, want counter cells: a family's kind of cell cannot be changed in place`,
		`family "plain" (Counter(OneSecond())): found plain cells, want counter cells: a family's kind of cell cannot be changed in place`,
	}, got)
	assert.Equal(t, spelledStatus{Family: "hits", Strategy: "Counter(OneSecond())", Found: "maxage=1s", Want: "maxage=1s",
		Type: "counter", WantType: "counter", Exists: true, Matches: true}, spell(statuses[2]))
}

// TestEnsureCounter: Ensure creates a counter family as an aggregate of
// int64 sums with its strategy's policy, in one step, changes a counter
// family's policy like any other, and refuses to turn a plain family into
// a counter family (or back), changing nothing.
func TestEnsureCounter(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	fams := map[string]ttl.Strategy{"hits": ttl.Counter(ttl.Grace(ttl.OneSecond(), time.Minute)), "sess": ttl.OneSecond()}
	plan, err := runEnsure(ctx, e.Admin, "t", e.Client.Open("t"), fams, policy.Options{Scan: scan.Options{Now: fixedNow}})
	require.NoError(t, err)
	assert.True(t, plan.CreateTable)
	info, err := e.Admin.TableInfo(ctx, "t")
	require.NoError(t, err)
	kinds := map[string]string{}
	for _, f := range info.FamilyInfos {
		kinds[f.Name] = policy.Describe(f.FullGCPolicy) + " " + policy.DescribeType(f.ValueType)
	}
	assert.Equal(t, map[string]string{"hits": "maxage=1m counter", "sess": "maxage=1s plain"}, kinds)
	statuses, err := runCheck(ctx, e.Admin, "t", fams)
	require.NoError(t, err)
	assert.True(t, statuses[0].Matches && statuses[1].Matches)

	// A longer grace: the policy changes, the type stays. The bttest of
	// bigtable v1.35 (the minimum go.mod requires) ignores the update mask
	// and refuses any update of an aggregate family; Bigtable and later
	// bttests (v1.58, CI's newest run) change the policy alone.
	fams["hits"] = ttl.Counter(ttl.Grace(ttl.OneSecond(), time.Hour))
	_, err = runEnsure(ctx, e.Admin, "t", e.Client.Open("t"), fams, policy.Options{Scan: scan.Options{Now: fixedNow}})
	if err != nil && strings.Contains(err.Error(), "Immutable fields 'value_type.aggregate_type' cannot be updated") {
		t.Logf("this bttest cannot change an aggregate family's policy: %v", err)
		require.NoError(t, e.Admin.DeleteColumnFamily(ctx, "t", "hits"))
		require.NoError(t, e.Admin.CreateColumnFamilyWithConfig(ctx, "t", "hits", bigtable.Family{GCPolicy: bigtable.MaxAgePolicy(time.Hour), ValueType: sum}))
	} else {
		require.NoError(t, err)
	}
	assert.Equal(t, "maxage=1h", policies(t, e.Admin, "t")["hits"])

	// Plain to counter, and counter to plain: refused, nothing changed.
	raw := e.Client.Open("t")
	testkit.Put(t, raw, "sess", stored("r", "c", testkit.MS(testkit.Base.Add(time.Hour))))
	for _, swap := range []map[string]ttl.Strategy{
		{"hits": ttl.Counter(ttl.Grace(ttl.OneSecond(), time.Hour)), "sess": ttl.Counter(ttl.OneSecond())},
		{"hits": ttl.Grace(ttl.OneSecond(), time.Hour), "sess": ttl.OneSecond()},
	} {
		plan, err := runEnsure(ctx, e.Admin, "t", raw, swap, policy.Options{Scan: scan.Options{Now: fixedNow}})
		require.ErrorIs(t, err, policy.ErrFamilyMismatch)
		assert.Contains(t, err.Error(), "cannot be changed in place")
		assert.Contains(t, err.Error(), "nothing changed")
		require.NotNil(t, plan)
		assert.Equal(t, map[string]string{"hits": "maxage=1h", "sess": "maxage=1s"}, policies(t, e.Admin, "t"))
	}
}
