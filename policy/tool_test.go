package policy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/policy"
)

// TestNewRefuses checks that New refuses what no call could use, naming
// itself, and that a tool bound without what a method needs refuses that
// method: Ensure without a data client, Check and the schedule's methods
// without families, any method without a context. Nothing is read.
func TestNewRefuses(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	one := map[string]ttl.Strategy{"f": ttl.OneSecond()}

	tool, err := policy.New(nil, nil, "t", one, policy.Options{})
	assert.Nil(t, tool)
	require.ErrorIs(t, err, ttl.ErrNilArgument)
	assert.Equal(t, "ttl: nil argument: policy.New: nil admin client", err.Error())

	tool, err = policy.New(e.Admin, nil, "t", map[string]ttl.Strategy{"f": ttl.SequenceNumbers(0)}, policy.Options{})
	assert.Nil(t, tool)
	assert.ErrorIs(t, err, ttl.ErrInvalidStrategy)
	assert.ErrorContains(t, err, `"f"`)

	checking, err := policy.New(e.Admin, (*bigtable.Table)(nil), "t", one, policy.Options{})
	require.NoError(t, err, "a tool that only checks needs no data client")
	plan, err := checking.Ensure(ctx)
	assert.Nil(t, plan)
	require.ErrorIs(t, err, ttl.ErrNilArgument)
	assert.Equal(t, `ttl: nil argument: policy.Ensure: table "t": no data client to scan it with (policy.New's data is nil)`, err.Error())
	statuses, err := checking.Check(ctx)
	require.ErrorIs(t, err, policy.ErrFamilyMismatch, "found never, want maxage=1s")
	require.Len(t, statuses, 1)
	again, err := checking.Check(ctx)
	require.ErrorIs(t, err, policy.ErrFamilyMismatch)
	assert.Equal(t, statuses, again, "a tool runs as often as asked")

	bare, err := policy.New(e.Admin, nil, "t", nil, policy.Options{})
	require.NoError(t, err, "a tool without families reads and sets policies")
	found, err := bare.Policies(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]bigtable.GCPolicy{"f": bigtable.NoGcPolicy()}, found)
	_, err = bare.Check(ctx)
	assert.ErrorIs(t, err, ttl.ErrInvalidStrategy)
	assert.ErrorContains(t, err, "policy.Check: ")
	_, err = bare.Ensure(ctx)
	assert.ErrorIs(t, err, ttl.ErrInvalidStrategy)
	_, err = bare.CheckSchedule(ctx, "s")
	assert.ErrorIs(t, err, ttl.ErrInvalidStrategy)
	_, err = bare.EnsureSchedule(ctx, "s", e.Client.Open("s"))
	assert.ErrorIs(t, err, ttl.ErrInvalidStrategy)

	var noCtx context.Context
	_, err = bare.Policies(noCtx)
	assert.ErrorIs(t, err, ttl.ErrNilArgument)
	assert.ErrorContains(t, err, "policy.Policies: nil context")
	err = bare.Set(noCtx, "f", bigtable.MaxAgePolicy(time.Hour))
	assert.ErrorIs(t, err, ttl.ErrNilArgument)
	assert.ErrorContains(t, err, "policy.Set: nil context")
	_, err = checking.CheckSchedule(noCtx, "s")
	assert.ErrorIs(t, err, ttl.ErrNilArgument)
	assert.Equal(t, map[string]string{"f": "never"}, policies(t, e.Admin, "t"), "nothing changed")

	require.NoError(t, bare.Set(ctx, "f", bigtable.MaxAgePolicy(time.Hour)))
	assert.Equal(t, map[string]string{"f": "maxage=1h"}, policies(t, e.Admin, "t"), "Set sets the policy given")
}

// TestLossKinds checks each kind's name, in String and in JSON, and back.
func TestLossKinds(t *testing.T) {
	names := map[policy.LossKind]string{
		policy.LossSequence: "sequence-numbers", policy.LossExpired: "expired", policy.LossEarlier: "earlier-expiries",
		policy.LossRealTime: "real-time", policy.LossVersions: "versions", policy.LossSooner: "collected-sooner",
		policy.LossEntries: "schedule-entries",
	}
	for k, name := range names {
		assert.Equal(t, name, k.String())
		b, err := json.Marshal(k)
		require.NoError(t, err)
		assert.Equal(t, `"`+name+`"`, string(b))
		var back policy.LossKind
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, k, back)
	}
	assert.Equal(t, "LossKind(0)", policy.LossKind(0).String())
	_, err := json.Marshal(policy.LossKind(99))
	assert.ErrorContains(t, err, "no such loss kind: 99")
	var k policy.LossKind
	assert.ErrorContains(t, json.Unmarshal([]byte(`"lost"`), &k), `no such loss kind: "lost"`)
}

// TestLossString checks a loss of each kind summed up on one line, from
// the fields its kind sets.
func TestLossString(t *testing.T) {
	h := time.Hour
	for _, tt := range []struct {
		loss policy.Loss
		want string
	}{
		{policy.Loss{Kind: policy.LossSequence, Rows: 2}, "2 rows hold sequence numbers (timestamps before 2000), which an age-based policy deletes all at once"},
		{policy.Loss{Kind: policy.LossExpired, Rows: 1, Until: tm("2030-04-28T09:00:00Z")},
			"1 row holds cells stamped up to 2030-04-28T09:00:00.000Z, which would expire at once"},
		{policy.Loss{Kind: policy.LossExpired, Rows: 3, Until: tm("2030-04-30T09:00:00Z"), Expiries: true},
			"3 rows hold cells stamped up to 2030-04-30T09:00:00.000Z, which are expiries already past: hidden at once"},
		{policy.Loss{Kind: policy.LossExpired, Rows: 2, From: tm("2030-04-27T09:00:00.001Z"), Until: tm("2030-04-28T09:00:00Z"), Age: 72 * h},
			"2 rows hold cells stamped 2030-04-27T09:00:00.001Z to 2030-04-28T09:00:00.000Z, which would expire at once (maxage=3d found keeps them stored)"},
		{policy.Loss{Kind: policy.LossEarlier, Rows: 1, Age: 49 * h, Shift: h}, "1 row holds live cells whose expiries move 1h earlier (maxage=49h found)"},
		{policy.Loss{Kind: policy.LossRealTime, Rows: 1}, "1 row holds real-time timestamps (2000 or later), which outrank every sequence number"},
		{policy.Loss{Kind: policy.LossVersions, Rows: 2, Versions: 3}, "2 rows have columns with more than 3 versions, whose oldest would be deleted"},
		{policy.Loss{Kind: policy.LossSooner, Rows: 1, Age: 48 * h, Shift: 48 * h},
			"1 row holds live cells that GC would delete 2d sooner once expired (maxage=2d, a grace, taken off)"},
		{policy.Loss{Kind: policy.LossEntries, Rows: 1, From: tm("2030-04-29T09:00:00.001Z"), Until: tm("2030-04-30T08:00:00Z")},
			"1 entry stamped 2030-04-29T09:00:00.001Z to 2030-04-30T08:00:00.000Z, which would be deleted at once"},
		{policy.Loss{Rows: 1}, "1 row holds cells of LossKind(0)"},
	} {
		assert.Equal(t, tt.want, tt.loss.String(), "%v", tt.loss.Kind)
		assert.NotContains(t, tt.loss.String(), "\n")
	}
}

// TestTally checks that a plan's families are counted once each, by what
// became of them, as Plan.String says.
func TestTally(t *testing.T) {
	f := func(a policy.Action, refused, done bool) policy.FamilyPlan {
		return policy.FamilyPlan{Action: a, Refused: refused, Done: done}
	}
	plan := policy.Plan{Table: "t", Families: []policy.FamilyPlan{
		f(policy.Keep, false, false), f(policy.Keep, false, false), f(policy.Create, false, false), f(policy.Change, false, false),
		f(policy.Change, true, false), f(policy.Change, false, true), f(policy.Create, false, true),
	}}
	n := plan.Tally()
	assert.Equal(t, policy.Tally{Keep: 2, Create: 1, Change: 1, Refused: 1, Done: 2}, n)
	assert.Equal(t, 2, n.Pending())
	assert.Equal(t, `table "t": 1 family to create, 1 family to change, 1 family refused, 2 families created or changed, 2 families kept`, plan.String())
	assert.Equal(t, policy.Tally{}, (&policy.Plan{}).Tally())
}

// TestStatusJSON checks a status's JSON: its policies and kinds of cell
// spelled as the text output spells them, a missing family's "missing"
// and "", a move's finished policy; and that it decodes back, refusing a
// spelling it cannot read.
func TestStatusJSON(t *testing.T) {
	counter := bigtable.AggregateType{Input: bigtable.Int64Type{}, Aggregator: bigtable.SumAggregator{}}
	for _, tt := range []struct {
		status policy.Status
		want   string
	}{
		{policy.Status{Family: "hits", Strategy: "Counter(OneSecond())", Found: bigtable.MaxAgePolicy(time.Second), Want: bigtable.MaxAgePolicy(time.Second),
			Type: counter, WantType: counter, Exists: true, Matches: true},
			`{"family":"hits","strategy":"Counter(OneSecond())","found":"maxage=1s","want":"maxage=1s","type":"counter","want_type":"counter","exists":true,"matches":true}`},
		{policy.Status{Family: "gone", Strategy: "OneSecond()", Want: bigtable.MaxAgePolicy(time.Second)},
			`{"family":"gone","strategy":"OneSecond()","found":"missing","want":"maxage=1s","type":"","want_type":"plain","exists":false,"matches":false}`},
		{policy.Status{Family: "m", Strategy: "Move", Found: bigtable.NoGcPolicy(), Want: bigtable.MaxAgePolicy(time.Hour), Finished: bigtable.MaxAgePolicy(time.Second),
			Type: bigtable.AggregateType{}, Exists: true},
			`{"family":"m","strategy":"Move","found":"never","want":"maxage=1h","finished":"maxage=1s","type":"aggregate","want_type":"plain","exists":true,"matches":false}`},
	} {
		b, err := json.Marshal(tt.status)
		require.NoError(t, err)
		assert.Equal(t, tt.want, string(b))
		var back policy.Status
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, tt.status, back, "decodes to the same status")
	}
	for _, bad := range []string{
		`{"family":"f","found":"maxage=soon","want":"never"}`,
		`{"family":"f","found":"never","want":"sometimes"}`,
		`{"family":"f","found":"never","want":"never","finished":"(maxage=1s"}`,
		`{"family":"f","found":"never","want":"never","type":"intmax"}`,
		`{"family":"f","found":"never","want":"never","want_type":"intmax"}`,
		`{"family":`,
	} {
		var st policy.Status
		err := json.Unmarshal([]byte(bad), &st)
		assert.Error(t, err, bad)
		var fp policy.FamilyPlan
		assert.Error(t, json.Unmarshal([]byte(bad), &fp), bad)
		if err != nil && strings.HasPrefix(bad, `{"family":"f"`) {
			assert.Contains(t, err.Error(), `family "f"`, bad)
		}
	}
	var l policy.Loss
	assert.Error(t, json.Unmarshal([]byte(`{"kind":"lost"}`), &l))
	assert.Error(t, json.Unmarshal([]byte(`{"kind":`), &l))
}
