package ttl_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	btpb "cloud.google.com/go/bigtable/apiv2/bigtablepb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
)

// This file checks table-wide work when things go wrong: a shard's stream
// that fails mid-way and is retried by the client, a shard that fails for
// good, a cancelled or timed-out scan. Counts stay exact for what was
// read, and a scan that stopped is never shown as complete.

const readRows = "/google.bigtable.v2.Bigtable/ReadRows"

// streamFaults breaks ReadRows streams: the n-th stream (counting from 1)
// fails with code after passing after responses; with hang, it waits
// instead until its context ends, as a server too slow for the caller's
// deadline.
type streamFaults struct {
	mu      sync.Mutex
	streams int
	fail    map[int]codes.Code
	after   int
	hang    bool
}

func (f *streamFaults) interceptor() grpc.DialOption {
	return grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		s, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil || method != readRows {
			return s, err
		}
		f.mu.Lock()
		f.streams++
		code, fail := f.fail[f.streams]
		f.mu.Unlock()
		if !fail {
			return s, nil
		}
		return &failingStream{ClientStream: s, code: code, left: f.after, hang: f.hang}, nil
	})
}

// failingStream fails, or hangs, after passing left responses.
type failingStream struct {
	grpc.ClientStream
	code codes.Code
	left int
	hang bool
}

func (s *failingStream) RecvMsg(m any) error {
	if s.left == 0 && s.hang {
		<-s.Context().Done()
		return status.FromContextError(s.Context().Err()).Err()
	}
	if s.left == 0 {
		return status.Error(s.code, "injected: the tablet server went away")
	}
	if err := s.ClientStream.RecvMsg(m); err != nil {
		return err
	}
	if resp, ok := m.(*btpb.ReadRowsResponse); ok && len(resp.Chunks) > 0 {
		s.left--
	}
	return nil
}

// auditFixture is a table of 400 rows in 8 shards, each row holding a live
// cell and an expired one of a OneSecond family, audited at base.
func auditFixture(t *testing.T, f *streamFaults) (*faultServer, bigtable.TableAPI) {
	t.Helper()
	fs := newFaultServer(t, nil, f.interceptor())
	raw := fs.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	rows := make([]string, 400)
	muts := make([]*bigtable.Mutation, len(rows))
	for i := range rows {
		rows[i] = fmt.Sprintf("r%03d", i)
		muts[i] = bigtable.NewMutation()
		muts[i].Set("f", "live", ms(base.Add(time.Hour)), []byte("v"))
		muts[i].Set("f", "dead", ms(base.Add(-time.Hour)), []byte("v"))
	}
	errs, err := raw.ApplyBulk(context.Background(), rows, muts)
	require.NoError(t, err)
	require.Nil(t, errs)
	return fs, tablets{raw, []string{"r050", "r100", "r150", "r200", "r250", "r300", "r350"}}
}

func audit(ctx context.Context, fs *faultServer, tbl bigtable.TableAPI, workers int) (*ttl.Audit, error) {
	return ttl.AuditTable(ctx, fs.Admin, "t", tbl, map[string]ttl.Strategy{"f": ttl.OneSecond()},
		ttl.AuditOptions{Now: func() time.Time { return base }, Scan: ttl.ScanOptions{Workers: workers}})
}

// TestAuditRetriedShard: a stream that fails mid-way with a code the
// client retries is resumed after its last row; the counts are exact.
func TestAuditRetriedShard(t *testing.T) {
	ctx := context.Background()
	faults := &streamFaults{fail: map[int]codes.Code{2: codes.Unavailable, 5: codes.Unavailable}, after: 10}
	fs, tbl := auditFixture(t, faults)
	a, err := audit(ctx, fs, tbl, 2)
	require.NoError(t, err)
	assert.True(t, a.Scan.Complete())
	assert.Equal(t, 8, a.Scan.ShardsRead)
	assert.Equal(t, ttl.Count{Cells: 400, Bytes: 400 * int64(len("r000")+len("f:live")+8)}, a.Families[0].Live)
	assert.Equal(t, int64(400), a.Families[0].Expired.Cells)
	assert.Greater(t, faults.streams, 8, "the failed streams were retried")
}

// TestAuditFailedShard: a shard that fails for good stops the scan: the
// shards read are counted exactly, and the audit says it is partial, in
// its fields, its text and its JSON.
func TestAuditFailedShard(t *testing.T) {
	ctx := context.Background()
	faults := &streamFaults{fail: map[int]codes.Code{3: codes.PermissionDenied}, after: 5}
	fs, tbl := auditFixture(t, faults)
	a, err := audit(ctx, fs, tbl, 1)
	require.Error(t, err)
	assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
	assert.Contains(t, err.Error(), "the audit stopped after 2 of 8 shards; its counts are partial")
	assert.False(t, a.Scan.Complete())
	assert.Equal(t, 2, a.Scan.ShardsRead)
	assert.Equal(t, int64(100), a.Families[0].Live.Cells, "the two shards read, exactly: r000..r099")
	assert.Contains(t, a.String(), "the scan stopped after 2 of 8 shards: the counts below are partial")
	assert.Contains(t, a.String(), "≥100 cells")
	b, err := json.Marshal(a)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"complete":false`)
}

// TestAuditCancelled: a cancelled scan stops promptly and says so.
func TestAuditCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	fs, tbl := auditFixture(t, &streamFaults{})
	_, err := ttl.AuditTable(ctx, fs.Admin, "t", tbl, map[string]ttl.Strategy{"f": ttl.OneSecond()}, ttl.AuditOptions{
		Now: func() time.Time { return base },
		Scan: ttl.ScanOptions{Workers: 1, Progress: func(p ttl.Progress) {
			if p.ShardsDone == 3 {
				cancel()
			}
		}},
	})
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled) || status.Code(err) == codes.Canceled, "%v", err)
	assert.Contains(t, err.Error(), "its counts are partial")
}

// TestEnsureScanStopped: a loss scan cut short by a deadline decides
// nothing: the plan says partial, ACTION undecided, ROWS LOST a lower
// bound, and nothing is changed even with AllowDataLoss.
func TestEnsureScanStopped(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	faults := &streamFaults{fail: map[int]codes.Code{4: codes.OK}, after: 3, hang: true}
	fs, tbl := auditFixture(t, faults)
	plan, err := ttl.EnsureFamilies(ctx, fs.Admin, "t", tbl, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(time.Hour)},
		ttl.EnsureOptions{AllowDataLoss: true, Now: func() time.Time { return base }, Scan: ttl.ScanOptions{Workers: 1}})
	require.Error(t, err)
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
	assert.Contains(t, err.Error(), "the scan for data loss stopped after 3 of 8 shards; its counts are partial and nothing was changed")
	text := plan.String()
	assert.Contains(t, text, "the scan stopped after 3 of 8 shards: nothing decided, nothing changed; the counts below are partial")
	assert.Contains(t, text, "undecided  ≥150", "150 rows of the shards read hold cells that would expire at once")
	assert.Contains(t, text, "f: ≥150 rows hold cells", "the reason's count is partial too")
	assert.Contains(t, text, "3 of 8 shards read (partial)")
	assert.False(t, plan.Families[0].Done)
	assert.Equal(t, "", policies(t, fs.Admin, "t")["f"], "nothing changed")
	b, err := json.Marshal(plan)
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(b), `"decided":false`), "%s", b)
}
