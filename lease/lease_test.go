package lease_test

import (
	"context"
	"errors"
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
	"github.com/cellttl/ttl/lease"
	"github.com/cellttl/ttl/scan"
)

var ctx = context.Background()

// setup starts an emulator with table sweeps, family cp, and a clock.
func setup(t *testing.T) (*emulator.Emulator, *bigtable.Table, *testkit.Clock) {
	e := emulator.StartForTest(t)
	tbl := e.TableForTest(t, "sweeps", map[string]bigtable.GCPolicy{lease.Family: bigtable.MaxVersionsPolicy(1)})
	return e, tbl, testkit.NewClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
}

func open(t *testing.T, e *emulator.Emulator, tbl bigtable.TableAPI, clock *testkit.Clock, holder string) *lease.Checkpoint {
	c, err := lease.Open(ctx, e.Admin, tbl, "sweeps", "orders", lease.Options{Holder: holder, Now: clock.Now})
	require.NoError(t, err)
	return c
}

func TestOpenRefusesAMissingTableOrFamily(t *testing.T) {
	e, tbl, _ := setup(t)
	_, err := lease.Open(ctx, e.Admin, e.Client.Open("nope"), "nope", "k", lease.Options{})
	require.ErrorIs(t, err, lease.ErrNoTable)
	assert.Contains(t, err.Error(), "cbt createtable nope families=cp:maxversions=1")

	_, err = lease.Open(ctx, nil, e.Client.Open("nope"), "nope", "k", lease.Options{})
	require.ErrorIs(t, err, lease.ErrNoTable, "without an admin client, the read finds the table missing")
	assert.Contains(t, err.Error(), "cbt createtable nope families=cp:maxversions=1")

	e.TableForTest(t, "other", map[string]bigtable.GCPolicy{"x": nil})
	_, err = lease.Open(ctx, e.Admin, e.Client.Open("other"), "other", "k", lease.Options{})
	require.ErrorIs(t, err, lease.ErrNoTable)
	assert.Contains(t, err.Error(), `no family "cp"`)
	assert.Contains(t, err.Error(), "cbt createtable other families=cp:maxversions=1")

	_, err = lease.Open(ctx, nil, nil, "sweeps", "k", lease.Options{})
	assert.ErrorIs(t, err, ttl.ErrNilArgument)
	_, err = lease.Open(ctx, nil, tbl, "sweeps", "", lease.Options{})
	assert.ErrorIs(t, err, ttl.ErrInvalidOption)

	c, err := lease.Open(ctx, nil, tbl, "sweeps", "k", lease.Options{})
	require.NoError(t, err)
	assert.Equal(t, "bigtable:sweeps/k", c.String())
	assert.Regexp(t, `^.+/\d+/[0-9a-f]{6}$`, c.HolderName(), "host/pid/suffix by default")
}

func TestSaveRefusesAStaleView(t *testing.T) {
	e, tbl, clock := setup(t)
	a, b := open(t, e, tbl, clock, "a"), open(t, e, tbl, clock, "b")
	rec, err := a.Load(ctx)
	require.NoError(t, err)
	assert.Nil(t, rec, "no row, no record")
	_, err = b.Load(ctx)
	require.NoError(t, err)

	require.NoError(t, a.Save(ctx, &scan.Record{Work: "w", State: []byte(`{"n":1}`)}))
	err = b.Save(ctx, &scan.Record{Work: "w", State: []byte(`{"n":0}`)})
	require.ErrorIs(t, err, lease.ErrStale, "b read before a saved")
	got, err := a.Load(ctx)
	require.NoError(t, err)
	assert.JSONEq(t, `{"n":1}`, string(got.State), "the refused save wrote nothing")

	require.NoError(t, a.Save(ctx, &scan.Record{Work: "w", State: []byte(`{"n":2}`)}), "a's own saves follow each other")
	_, err = b.Load(ctx)
	require.NoError(t, err)
	require.NoError(t, b.Save(ctx, &scan.Record{Work: "w", State: []byte(`{"n":3}`)}), "b saves once it read the newest")
	got, err = a.Load(ctx)
	require.NoError(t, err)
	assert.JSONEq(t, `{"n":3}`, string(got.State))

	fresh := open(t, e, tbl, clock, "c")
	assert.ErrorIs(t, fresh.Save(ctx, &scan.Record{Work: "w"}), lease.ErrStale, "a save without a load does not overwrite a row")
}

func TestLeaseOneHolderAtATime(t *testing.T) {
	e, tbl, clock := setup(t)
	a, b := open(t, e, tbl, clock, "a"), open(t, e, tbl, clock, "b")
	const d = 30 * time.Second

	ok, err := a.Acquire(ctx, d)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = b.Acquire(ctx, d)
	require.NoError(t, err)
	assert.False(t, ok, "a holds it")
	holder, until := b.Holder()
	assert.Equal(t, "a", holder)
	assert.Equal(t, clock.Now().Add(d), until)
	assert.ErrorIs(t, b.Save(ctx, &scan.Record{Work: "w"}), lease.ErrStale, "b may not save while a holds the lease")
	require.NoError(t, a.Save(ctx, &scan.Record{Work: "w"}))

	// a renews within its third; b still cannot take it.
	clock.Advance(lease.RenewEvery(d))
	ok, err = a.Hold(ctx, d)
	require.NoError(t, err)
	require.True(t, ok)
	clock.Advance(lease.RenewEvery(d) - time.Second)
	ok, _ = a.Hold(ctx, d)
	assert.True(t, ok, "not due: held without a write")
	clock.Advance(d - lease.RenewEvery(d))
	ok, err = b.Acquire(ctx, d)
	require.NoError(t, err)
	assert.False(t, ok, "a renewed %v ago; the lease has not expired", d-time.Second)

	// a stops renewing (paused): past its deadline it does not hold it,
	// and once the lease expired b takes it.
	clock.Advance(d)
	assert.False(t, a.Held())
	ok, err = b.Acquire(ctx, d)
	require.NoError(t, err)
	require.True(t, ok)
	assert.ErrorIs(t, a.Save(ctx, &scan.Record{Work: "stale"}), lease.ErrLeaseLost)
	assert.ErrorIs(t, a.Renew(ctx), lease.ErrLeaseLost)
	ok, err = a.Hold(ctx, d)
	require.NoError(t, err)
	assert.False(t, ok, "b holds it now")
	got, err := b.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, "w", got.Work, "a's saves after the pause wrote nothing")
	require.NoError(t, b.Save(ctx, &scan.Record{Work: "w2"}))

	// b releases: a takes it at once.
	require.NoError(t, b.Release(ctx))
	require.NoError(t, b.Release(ctx), "releasing a lease not held does nothing")
	ok, err = a.Acquire(ctx, d)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = a.Acquire(ctx, d)
	require.NoError(t, err)
	assert.True(t, ok, "acquiring a lease held is holding it")
}

func TestRenewRefusals(t *testing.T) {
	e, tbl, clock := setup(t)
	a, b := open(t, e, tbl, clock, "a"), open(t, e, tbl, clock, "b")
	const d = 30 * time.Second
	assert.ErrorIs(t, a.Renew(ctx), lease.ErrLeaseLost, "not held")
	_, err := a.Acquire(ctx, 0)
	assert.ErrorIs(t, err, ttl.ErrInvalidOption)

	ok, err := a.Acquire(ctx, d)
	require.NoError(t, err)
	require.True(t, ok)
	clock.Advance(lease.Deadline(d))
	err = a.Renew(ctx)
	require.ErrorIs(t, err, lease.ErrLeaseLost, "past the deadline a holder does not renew")
	assert.Contains(t, err.Error(), "deadline")

	ok, err = a.Acquire(ctx, d)
	require.NoError(t, err)
	require.False(t, ok, "past its deadline, a waits for its own lease to expire as any other")
	clock.Advance(d - lease.Deadline(d))
	ok, err = a.Acquire(ctx, d)
	require.NoError(t, err)
	require.True(t, ok, "nobody took it: a takes it again")
	// b writes the row (a plain save, past the lease's expiry).
	clock.Advance(d)
	_, err = b.Load(ctx)
	require.NoError(t, err)
	require.NoError(t, b.Save(ctx, &scan.Record{Work: "b"}))
	clock.Set(clock.Now().Add(-d + lease.RenewEvery(d)))
	err = a.Renew(ctx)
	require.ErrorIs(t, err, lease.ErrLeaseLost, "the row changed under a")
	assert.Contains(t, err.Error(), "changed")
}

func TestLoadSeesAnotherHolder(t *testing.T) {
	e, tbl, clock := setup(t)
	a, b := open(t, e, tbl, clock, "a"), open(t, e, tbl, clock, "b")
	const d = 30 * time.Second
	ok, _ := a.Acquire(ctx, d)
	require.True(t, ok)
	clock.Advance(d)
	ok, _ = b.Acquire(ctx, d)
	require.True(t, ok)
	clock.Set(clock.Now().Add(-d)) // a's clock: before its deadline
	_, err := a.Load(ctx)
	require.NoError(t, err)
	assert.False(t, a.Held(), "a saw b's token")
	assert.ErrorIs(t, a.Save(ctx, &scan.Record{Work: "a"}), lease.ErrStale)
}

func TestBadRow(t *testing.T) {
	e, tbl, clock := setup(t)
	a := open(t, e, tbl, clock, "a")
	put := func(col, v string) {
		m := bigtable.NewMutation()
		m.Set(lease.Family, col, bigtable.Time(clock.Now()), []byte(v))
		require.NoError(t, tbl.Apply(ctx, "orders", m))
	}
	put("record", "{")
	put("gen", "x")
	_, err := a.Load(ctx)
	assert.ErrorContains(t, err, "does not hold a checkpoint's record")
	assert.ErrorContains(t, a.Save(ctx, &scan.Record{}), "is not a number")
	put("expiry", "soon")
	_, err = a.Acquire(ctx, time.Second)
	assert.ErrorContains(t, err, `expiry "soon" is not a time`)
}

// refusing fails every write as an app profile with multi-cluster routing
// fails CheckAndMutateRow, and every read with err when set.
type refusing struct {
	bigtable.TableAPI
	read error
}

func (r refusing) Apply(context.Context, string, *bigtable.Mutation, ...bigtable.ApplyOption) error {
	return status.Error(codes.FailedPrecondition, "Single-row transactions are not allowed by this app profile")
}

func (r refusing) ReadRow(ctx context.Context, row string, opts ...bigtable.ReadOption) (bigtable.Row, error) {
	if r.read != nil {
		return nil, r.read
	}
	return r.TableAPI.ReadRow(ctx, row, opts...)
}

func TestMultiClusterRoutingIsRefused(t *testing.T) {
	_, tbl, clock := setup(t)
	c, err := lease.Open(ctx, nil, refusing{TableAPI: tbl}, "sweeps", "orders", lease.Options{Now: clock.Now})
	require.NoError(t, err)
	_, err = c.Acquire(ctx, time.Minute)
	require.ErrorIs(t, err, ttl.ErrTransactionNotAllowed)
	assert.Contains(t, err.Error(), "single-cluster routing")
	var se interface{ GRPCStatus() *status.Status }
	require.True(t, errors.As(err, &se), "the server's status stays visible")
	assert.Equal(t, codes.FailedPrecondition, se.GRPCStatus().Code())
	err = c.Save(ctx, &scan.Record{})
	assert.ErrorIs(t, err, ttl.ErrTransactionNotAllowed)
	assert.True(t, strings.Contains(err.Error(), "bigtable:sweeps/orders"), err)
}

func TestReadErrors(t *testing.T) {
	_, tbl, clock := setup(t)
	boom := status.Error(codes.Unavailable, "down")
	_, err := lease.Open(ctx, nil, refusing{TableAPI: tbl, read: boom}, "sweeps", "orders", lease.Options{})
	assert.ErrorIs(t, err, boom)
	c, err := lease.Open(ctx, nil, tbl, "sweeps", "orders", lease.Options{Now: clock.Now})
	require.NoError(t, err)
	_, err = c.Load(ctx)
	require.NoError(t, err)
	down := lease.Reopen(c, refusing{TableAPI: tbl, read: boom})
	_, err = down.Load(ctx)
	assert.ErrorIs(t, err, boom)
	_, err = down.Acquire(ctx, time.Minute)
	assert.ErrorIs(t, err, boom)
}

func TestHoldThroughAnOutage(t *testing.T) {
	e, tbl, clock := setup(t)
	a := open(t, e, tbl, clock, "a")
	const d = 30 * time.Second
	ok, err := a.Hold(ctx, d)
	require.NoError(t, err)
	require.True(t, ok)
	boom := status.Error(codes.Unavailable, "down")
	down := lease.Reopen(a, failingWrites{TableAPI: tbl, err: boom})
	clock.Advance(lease.RenewEvery(d))
	ok, err = down.Hold(ctx, d)
	assert.NoError(t, err, "a renewal that failed is tried again; the lease is held until its deadline")
	assert.True(t, ok)
	clock.Advance(lease.RenewEvery(d))
	ok, err = down.Hold(ctx, d)
	assert.NoError(t, err)
	assert.False(t, ok, "past the deadline without a renewal, not held")
	clock.Advance(d)
	ok, err = down.Hold(ctx, d)
	assert.ErrorIs(t, err, boom, "taking it again fails to write")
	assert.False(t, ok)
}

// failingWrites fails every write with err.
type failingWrites struct {
	bigtable.TableAPI
	err error
}

func (f failingWrites) Apply(context.Context, string, *bigtable.Mutation, ...bigtable.ApplyOption) error {
	return f.err
}
