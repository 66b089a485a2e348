package move_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/move"
)

// TestRewriteNotAllowedByTheAppProfile: a rewrite through an app profile
// with multi-cluster routing, which refuses its conditional writes, stops
// with ttl.ErrTransactionNotAllowed naming the profile, and writes
// nothing.
func TestRewriteNotAllowedByTheAppProfile(t *testing.T) {
	refusal := status.Error(codes.FailedPrecondition, "Single-row transactions are not allowed by this app profile")
	e := emulator.StartForTest(t, grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if method == "/google.bigtable.v2.Bigtable/CheckAndMutateRow" {
			return refusal
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}))
	x := &moveTable{t, e, e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil}), testkit.NewClock(testkit.Base)}
	ts := testkit.MS(start.Add(-30 * time.Minute))
	x.put("a", "c", "old", ts)
	opts := x.opts(time.Minute)
	opts.AppProfile = "replicated"
	_, err := x.family(x.raw, oneHour, opts).Rewrite(context.Background())
	require.ErrorIs(t, err, ttl.ErrTransactionNotAllowed)
	assert.Equal(t, codes.FailedPrecondition, status.Code(err))
	assert.ErrorContains(t, err, `the move's rewrite of a cell (a CheckAndMutateRow) needs a single-row transaction, which app profile "replicated" refuses`)
	assert.Equal(t, []bigtable.Timestamp{ts}, x.stamps("a", "c"))

	row := bigtable.Row{"f": {{Row: "a", Column: "f:c", Timestamp: ts, Value: []byte("old")}}}
	_, err = move.RewriteRow(context.Background(), x.raw, "f", oneHour, row, start.Add(time.Minute), false)
	require.ErrorIs(t, err, ttl.ErrTransactionNotAllowed)
	assert.ErrorContains(t, err, "which the client's app profile (bigtable.ClientConfig.AppProfile) refuses")

}
