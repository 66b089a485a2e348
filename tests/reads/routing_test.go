package reads_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
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
)

// singleRowRefusal is the status Bigtable returns for a single-row
// transaction sent through an app profile with multi-cluster routing.
var singleRowRefusal = status.Error(codes.FailedPrecondition, "Single-row transactions are not allowed by this app profile")

// transactionRefuser is a unary interceptor that, while refusing holds an
// error, answers the single-row transactions (CheckAndMutateRow,
// ReadModifyWriteRow) with it, as a replicated instance's multi-cluster
// app profile does, and passes every other request on.
type transactionRefuser struct {
	refusing atomic.Pointer[error]
}

func (r *transactionRefuser) option() grpc.DialOption {
	return grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if err := r.refusing.Load(); err != nil &&
			(strings.HasSuffix(method, "/CheckAndMutateRow") || strings.HasSuffix(method, "/ReadModifyWriteRow")) {
			return *err
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	})
}

func (r *transactionRefuser) refuse(err error) { r.refusing.Store(&err) }

// refusedTable is a Table of sess (OneSecond) and clicks
// (DefaultExpiration(1h)) on an emulator behind a transactionRefuser,
// with the cell sess:tok of row r written and refusals on.
func refusedTable(t *testing.T, refusal error, opts ...ttl.Option) (*ttl.Table, *bigtable.Table) {
	t.Helper()
	var r transactionRefuser
	raw := emulator.StartForTest(t, r.option()).TableForTest(t, "t", map[string]bigtable.GCPolicy{"sess": nil, "clicks": nil})
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"sess": ttl.OneSecond(), "clicks": ttl.DefaultExpiration(time.Hour)},
		append([]ttl.Option{ttl.WithClock(testkit.NewClock(testkit.Base).Now)}, opts...)...)
	require.NoError(t, err)
	require.NoError(t, tbl.Apply(context.Background(), "r", testkit.Set("sess", "tok", "v", ttl.For(time.Minute))))
	r.refuse(refusal)
	return tbl, raw
}

// assertNotAllowed checks that err reports op's transaction refused for
// the app profile's routing, naming the profile and the alternatives, and
// still carries the server's status.
func assertNotAllowed(t *testing.T, err error, op, profile string) {
	t.Helper()
	require.ErrorIs(t, err, ttl.ErrTransactionNotAllowed)
	assert.Equal(t, codes.FailedPrecondition, status.Code(err), "the server's status stays visible")
	for _, want := range []string{op, profile, "single-cluster routing", "Set and Replace", "Add", "multi-cluster"} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestTransactionNotAllowed(t *testing.T) {
	ctx := context.Background()
	tbl, raw := refusedTable(t, singleRowRefusal, ttl.WithAppProfile("replicated"))
	before := testkit.Cells(testkit.RawRow(t, raw, "r"))

	touched, err := tbl.Touch(ctx, "r", "sess", "tok", ttl.For(time.Hour))
	assert.False(t, touched)
	assertNotAllowed(t, err, "Touch", `app profile "replicated"`)

	row, err := tbl.ReadRow(ctx, "r", ttl.KeepAlive(time.Hour))
	assert.ErrorIs(t, err, ttl.ErrRenewal)
	assertNotAllowed(t, err, "KeepAlive's renewal", `app profile "replicated"`)
	assert.Equal(t, []string{"sess:tok=v"}, testkit.Values(row), "the row is delivered")

	cond := ttl.NewCondMutation(bigtable.PassAllFilter(), testkit.Set("sess", "tok", "w", ttl.For(time.Hour)), nil)
	assertNotAllowed(t, tbl.Apply(ctx, "r", cond), "Apply of a conditional mutation", `app profile "replicated"`)

	rmw := ttl.NewReadModifyWrite()
	rmw.Increment("clicks", "n", 1)
	got, err := tbl.ApplyReadModifyWrite(ctx, "r", rmw)
	assert.Nil(t, got)
	assertNotAllowed(t, err, "ApplyReadModifyWrite", `app profile "replicated"`)

	assert.Equal(t, before, testkit.Cells(testkit.RawRow(t, raw, "r")), "nothing was written")

	// The alternatives need no transaction.
	require.NoError(t, tbl.Apply(ctx, "r", testkit.Set("sess", "tok", "w", ttl.For(time.Hour))))
	assert.Equal(t, []string{"sess:tok=w", "sess:tok=v"}, testkit.Values(testkit.RawRow(t, raw, "r")))
}

func TestTransactionNotAllowedUnnamedProfile(t *testing.T) {
	tbl, _ := refusedTable(t, singleRowRefusal)
	_, err := tbl.Touch(context.Background(), "r", "sess", "tok", ttl.For(time.Hour))
	assertNotAllowed(t, err, "Touch", "the client's app profile")
	assert.Contains(t, err.Error(), "ttl.WithAppProfile", "the message says how to name the profile")
}

func TestOtherRefusalsPassThrough(t *testing.T) {
	for _, refusal := range []error{
		status.Error(codes.FailedPrecondition, "Table is being restored"),
		status.Error(codes.PermissionDenied, "Single-row transactions are not allowed by this app profile"),
	} {
		t.Run(status.Code(refusal).String(), func(t *testing.T) {
			tbl, _ := refusedTable(t, refusal, ttl.WithAppProfile("replicated"))
			_, err := tbl.Touch(context.Background(), "r", "sess", "tok", ttl.For(time.Hour))
			require.Error(t, err)
			assert.False(t, errors.Is(err, ttl.ErrTransactionNotAllowed))
			assert.Equal(t, status.Convert(refusal).Proto().String(), status.Convert(err).Proto().String(), "the server's error, unchanged")
			assert.NotContains(t, err.Error(), "replicated")
		})
	}
}
