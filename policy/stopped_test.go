package policy_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
)

// TestEnsureScanStopped: a loss scan cut short by a deadline decides
// nothing: the plan says its scan stopped, the family's rows lost are a
// lower bound (the shards read), and nothing is changed even with
// AllowDataLoss. The deadline is real time: a timed-out scan is the
// scenario.
func TestEnsureScanStopped(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	// A table of 400 rows in 8 shards, each row holding a cell stamped an
	// hour after testkit.Base and one stamped an hour before, in a family
	// without GC; the 4th shard's stream hangs after 3 responses.
	e := emulator.StartForTest(t, (&testkit.StreamFaults{Hang: map[int]bool{4: true}, After: 3}).Interceptor())
	tbl := testkit.EightShards(t, e)

	plan, err := runEnsure(ctx, e.Admin, "t", tbl, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(time.Hour)},
		policy.Options{AllowDataLoss: true, Scan: scan.Options{Now: func() time.Time { return testkit.Base }, Workers: 1}})
	require.Error(t, err)
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
	assert.Contains(t, err.Error(), "the scan for data loss stopped after 3 of 8 shards; its counts are partial and nothing was changed")
	require.NotNil(t, plan, "the plan of the shards read")

	assert.True(t, plan.Read.Stopped())
	assert.False(t, plan.Read.Complete())
	assert.Equal(t, 3, plan.Read.ShardsRead)
	assert.Equal(t, 8, plan.Read.Planned())
	assert.Contains(t, plan.String(), "(the scan stopped: nothing decided)")

	// The family would change, but nothing was decided: 150 rows of the
	// shards read hold cells that would expire at once, a lower bound.
	require.Len(t, plan.Families, 1)
	f := plan.Families[0]
	assert.Equal(t, policy.Change, f.Action)
	assert.Equal(t, 150, f.Rows)
	require.NotEmpty(t, f.Losses)
	assert.Equal(t, 150, f.Losses[0].Rows)
	assert.Equal(t, policy.LossExpired, f.Losses[0].Kind)
	assert.Contains(t, f.Losses[0].String(), "150 rows hold cells")
	assert.False(t, f.Refused, "nothing refused: nothing decided")
	assert.False(t, f.Done)
	assert.Equal(t, "never", policies(t, e.Admin, "t")["f"], "nothing changed")

	b, err := json.Marshal(plan)
	require.NoError(t, err)
	var doc struct {
		Read map[string]any `json:"read"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.Equal(t, false, doc.Read["complete"], "%s", b)
	assert.EqualValues(t, 3, doc.Read["shards_read"], "%s", b)
}
