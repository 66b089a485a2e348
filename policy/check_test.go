package policy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/policy"
)

// TestCheck checks that every mismatch is reported, stricter policies and
// unions included, with the policy found and the one wanted.
func TestCheck(t *testing.T) {
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
	statuses, err := runCheck(ctx, e.Admin, "t", families)
	require.ErrorIs(t, err, policy.ErrFamilyMismatch)
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
	assert.Equal(t, spelledStatus{Family: "clicks", Strategy: "DefaultExpiration(48h0m0s)", Found: "maxage=2d", Want: "maxage=2d",
		Type: "plain", WantType: "plain", Exists: true, Matches: true}, spell(statuses[1]))
	assert.Equal(t, bigtable.MaxAgePolicy(48*time.Hour), statuses[1].Want, "the strategy's own policy")
	assert.False(t, statuses[2].Exists)
	assert.Nil(t, statuses[2].Type, "a missing family holds no kind of cell")
	assert.False(t, statuses[2].Matches)
	assert.Nil(t, statuses[2].Found, "a missing family has no policy")
	assert.Equal(t, "missing", policy.Describe(statuses[2].Found))
	assert.Equal(t, bigtable.NoGcPolicy(), statuses[4].Found, "no GC is bigtable.NoGcPolicy()")
	assert.Equal(t, "never", policy.Describe(statuses[4].Found))
	assert.True(t, statuses[4].Exists)
	for _, s := range statuses {
		assert.Nil(t, s.Finished, "no move: %s", s.Family)
	}

	statuses, err = runCheck(ctx, e.Admin, "t", map[string]ttl.Strategy{"clicks": ttl.DefaultExpiration(48 * time.Hour)})
	assert.NoError(t, err)
	assert.Len(t, statuses, 1)

	statuses, err = runCheck(ctx, e.Admin, "nope", map[string]ttl.Strategy{"f": ttl.OneSecond()})
	require.ErrorIs(t, err, policy.ErrFamilyMismatch)
	assert.Equal(t, `ttl: column family does not match its strategy: table "nope": the table does not exist; family "f" (OneSecond()): missing, want maxage=1s`, err.Error())
	require.Len(t, statuses, 1)
	assert.False(t, statuses[0].Exists)
	_, err = runPolicies(ctx, e.Admin, "nope")
	assert.ErrorIs(t, err, policy.ErrTableNotFound, "a table is not a family: its own sentinel")
	assert.ErrorContains(t, err, `table "nope" does not exist`)
	assert.Nil(t, statuses[0].Found)
}

// TestCheckMove checks that a family in a move matches with the move's own
// policy and with the one it has once the move is finished, and that any
// other policy is reported with both.
func TestCheckMove(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	e.TableForTest(t, "t", map[string]bigtable.GCPolicy{
		"during": bigtable.MaxAgePolicy(time.Hour),
		"after":  bigtable.MaxAgePolicy(time.Second),
		"other":  bigtable.MaxVersionsPolicy(1),
	})
	m := ttl.Move{To: ttl.OneSecond(), Start: testkit.Base, Old: ttl.For(time.Hour), Skew: time.Minute}
	statuses, err := runCheck(ctx, e.Admin, "t", map[string]ttl.Strategy{"during": m, "after": m, "other": m})
	require.ErrorIs(t, err, policy.ErrFamilyMismatch)
	require.Len(t, statuses, 3)
	for _, s := range statuses {
		assert.Equal(t, m.String(), s.Strategy)
		assert.Equal(t, "maxage=1h", policy.Describe(s.Want), s.Family)
		assert.Equal(t, "maxage=1s", policy.Describe(s.Finished), s.Family)
		assert.True(t, s.Exists, s.Family)
	}
	assert.Equal(t, []bool{true, true, false}, []bool{statuses[0].Matches, statuses[1].Matches, statuses[2].Matches}, "after, during, other")
	assert.Equal(t, `family "after" (`+m.String()+`): maxage=1s, as wanted`, statuses[0].String())
	assert.Equal(t, `family "during" (`+m.String()+`): maxage=1h, as wanted`, statuses[1].String())
	want := `family "other" (` + m.String() + `): found maxversions=1, want maxage=1h (or maxage=1s once the move is finished)`
	assert.Equal(t, want, statuses[2].String())
	assert.Equal(t, `ttl: column family does not match its strategy: table "t": `+want, err.Error())
}

// TestStatusHandBuilt checks that a status built by hand, not returned by
// Check, prints without panicking.
func TestStatusHandBuilt(t *testing.T) {
	noWant := policy.Status{Family: "f", Found: bigtable.NoGcPolicy(), Exists: true}
	assert.Equal(t, `family "f" (): found never, want missing`, noWant.String())
	assert.Equal(t, `family "" (): missing, want missing`, policy.Status{}.String())
}

// TestCheckBigtableErrors checks that an error of Bigtable's other than a
// missing table is returned as it is, wrapped with the table's name.
func TestCheckBigtableErrors(t *testing.T) {
	e := emulator.StartForTest(t)
	e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	statuses, err := runCheck(ctx, e.Admin, "t", map[string]ttl.Strategy{"f": ttl.OneSecond()})
	require.Error(t, err)
	assert.NotErrorIs(t, err, policy.ErrFamilyMismatch)
	assert.Equal(t, codes.Canceled, status.Code(err), "%v", err)
	assert.True(t, strings.HasPrefix(err.Error(), `policy: table "t": `), err.Error())
	assert.Nil(t, statuses)
}

// TestPolicies checks that Policies reports every family, managed or not,
// no GC as bigtable.NoGcPolicy(), and a missing table as the server's
// NotFound, which Check and Ensure read as a table to create.
func TestPolicies(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	e.TableForTest(t, "t", map[string]bigtable.GCPolicy{
		"none": nil,
		"age":  bigtable.MaxAgePolicy(48 * time.Hour),
		"both": bigtable.UnionPolicy(bigtable.MaxAgePolicy(time.Hour), bigtable.MaxVersionsPolicy(2)),
	})
	found, err := runPolicies(ctx, e.Admin, "t")
	require.NoError(t, err)
	require.Len(t, found, 3)
	assert.Equal(t, bigtable.NoGcPolicy().String(), found["none"].String())
	assert.NotNil(t, found["none"], "no GC is a policy, not nil")
	assert.Equal(t, map[string]string{"none": "never", "age": "maxage=2d", "both": "maxage=1h or maxversions=2"}, policies(t, e.Admin, "t"))

	found, err = runPolicies(ctx, e.Admin, "nope")
	assert.Nil(t, found)
	require.Error(t, err)
	assert.Equal(t, codes.NotFound, status.Code(err), "%v", err)
	assert.ErrorIs(t, err, policy.ErrTableNotFound)
	assert.True(t, strings.HasPrefix(err.Error(), `policy: table not found: table "nope" does not exist (`), err.Error())
}
