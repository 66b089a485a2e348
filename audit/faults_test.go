package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/scan"
)

// This file checks an audit when things go wrong: a shard's stream that
// fails mid-way and is retried by the client, a shard that fails for good,
// a cancelled scan. Counts stay exact for what was read, and a scan that
// stopped is never shown as complete. (A scan timed out is policy.Tool.Ensure's
// case, in package policy.)

// auditFixture is testkit.EightShards, read through faults: 400 rows in 8
// shards, each row holding a live cell and an expired one of a OneSecond
// family, audited at testkit.Base.
func auditFixture(t *testing.T, f *testkit.StreamFaults) (*emulator.Emulator, bigtable.TableAPI) {
	t.Helper()
	e := emulator.StartForTest(t, f.Interceptor())
	return e, testkit.EightShards(t, e)
}

func auditWith(ctx context.Context, e *emulator.Emulator, tbl bigtable.TableAPI, workers int) (*audit.Report, error) {
	return runAudit(ctx, e.Admin, "t", tbl, map[string]ttl.Strategy{"f": ttl.OneSecond()},
		audit.Options{Scan: scan.Options{Now: func() time.Time { return testkit.Base }, Workers: workers}})
}

// TestAuditRetriedShard: a stream that fails mid-way with a code the
// client retries is resumed after its last row; the counts are exact.
func TestAuditRetriedShard(t *testing.T) {
	ctx := context.Background()
	faults := &testkit.StreamFaults{Fail: map[int]codes.Code{2: codes.Unavailable, 5: codes.Unavailable}, After: 10}
	e, tbl := auditFixture(t, faults)
	a, err := auditWith(ctx, e, tbl, 2)
	require.NoError(t, err)
	assert.True(t, a.Read.Complete())
	assert.Equal(t, 8, a.Read.ShardsRead)
	assert.Equal(t, scan.Count{Cells: 400, Bytes: 400 * int64(len("r000")+len("f:live")+8)}, a.Families[0].Live)
	assert.Equal(t, int64(400), a.Families[0].Expired.Cells)
	assert.Greater(t, faults.Streams(), 8, "the failed streams were retried")
}

// TestAuditFailedShard: a shard that fails for good stops the scan: the
// shards read are counted exactly, and the report says it is partial, in
// its fields, its text and its JSON.
func TestAuditFailedShard(t *testing.T) {
	ctx := context.Background()
	faults := &testkit.StreamFaults{Fail: map[int]codes.Code{3: codes.PermissionDenied}, After: 5}
	e, tbl := auditFixture(t, faults)
	a, err := auditWith(ctx, e, tbl, 1)
	require.Error(t, err)
	assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
	assert.Contains(t, err.Error(), "the audit stopped after 2 of 8 shards; its counts are partial")
	require.NotNil(t, a, "the partial report")
	assert.False(t, a.Read.Complete())
	assert.False(t, a.Read.Estimate())
	// The scan stopped after 2 of the 8 shards it meant to read: the
	// counts are lower bounds (the command prints them with ≥).
	assert.True(t, a.Read.Stopped())
	assert.Equal(t, 2, a.Read.ShardsRead)
	assert.Equal(t, 8, a.Read.Planned())
	assert.Equal(t, int64(100), a.Families[0].Live.Cells, "the two shards read, exactly: r000..r099")
	assert.Equal(t, int64(100), a.Families[0].Expired.Cells)
	assert.Contains(t, a.String(), "100 cells live, 100 expired and still stored (partial: the scan stopped)")
	b, err := json.Marshal(a)
	require.NoError(t, err)
	var doc struct {
		Read map[string]any `json:"read"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.Equal(t, false, doc.Read["complete"], "%s", b)
	assert.Equal(t, false, doc.Read["estimate"], "%s", b)
	assert.EqualValues(t, 2, doc.Read["shards_read"], "%s", b)
	assert.NotContains(t, string(b), `"scan"`)
}

// TestAuditCancelled: a cancelled scan stops promptly and says so.
func TestAuditCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	e, tbl := auditFixture(t, &testkit.StreamFaults{})
	_, err := runAudit(ctx, e.Admin, "t", tbl, map[string]ttl.Strategy{"f": ttl.OneSecond()}, audit.Options{Scan: scan.Options{Now: func() time.Time { return testkit.Base }, Workers: 1, Progress: func(p scan.Progress) {
		if p.ShardsDone == 3 {
			cancel()
		}
	}},
	})
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled) || status.Code(err) == codes.Canceled, "%v", err)
	assert.Contains(t, err.Error(), "its counts are partial")
}

// TestAuditBytesAgree reproduces the bytes part of finding 4 of issue 21:
// the progress said 19.8 MiB where the report's table said 29.3 MiB. The
// progress counts bytes as the report does, so the last progress of a
// complete audit has the bytes of every cell the report counts, after a
// retried stream too.
func TestAuditBytesAgree(t *testing.T) {
	faults := &testkit.StreamFaults{Fail: map[int]codes.Code{3: codes.Unavailable}, After: 7}
	e, tbl := auditFixture(t, faults)
	var last scan.Progress
	a, err := runAudit(context.Background(), e.Admin, "t", tbl, map[string]ttl.Strategy{"f": ttl.OneSecond()}, audit.Options{Values: true,
		Scan: scan.Options{Now: func() time.Time { return testkit.Base }, Workers: 3, Progress: func(p scan.Progress) { last = p }},
	})
	require.NoError(t, err)
	var total scan.Count
	for _, f := range a.Families {
		total.Add(f.Live)
		total.Add(f.Expired)
	}
	assert.Equal(t, total.Bytes, last.Bytes, "the report's bytes and the progress's")
	assert.Equal(t, total.Cells, last.Cells)
	assert.Equal(t, int64(a.Read.RowsSeen), last.RowsSeen)
	assert.Equal(t, 400, a.Read.RowsSeen, "every row, the retried stream's included")
	assert.Equal(t, faults.Streams(), a.Read.Reads, "one read a request")
}
