package sweep_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/lease"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

const (
	leaseFor = 30 * time.Second
	period   = 10 * time.Second
)

// replica returns a sweeper of f's families named name, its checkpoint
// and lease in row "t" of table "sweeps", with a lease of leaseFor.
func (f *fixture) replica(t *testing.T, name string, mp *sdkmetric.MeterProvider) (*sweep.Sweeper, *lease.Checkpoint) {
	t.Helper()
	if _, err := f.e.Admin.TableInfo(ctx, "sweeps"); err != nil {
		f.e.TableForTest(t, "sweeps", map[string]bigtable.GCPolicy{lease.Family: bigtable.MaxVersionsPolicy(1)})
	}
	cp, err := lease.Open(ctx, f.e.Admin, f.e.Client.Open("sweeps"), "sweeps", "t", lease.Options{Holder: name, Now: f.clock.Now})
	require.NoError(t, err)
	o := sweep.Options{Lease: leaseFor, Checkpoint: cp, Margin: time.Second, Batch: 1, Scan: scan.Options{Workers: 1}}
	if mp != nil {
		o.Scan.MeterProvider = mp
	}
	return f.sweeper(t, o), cp
}

// byReplica collects, per replica, the rows of the events it delivered.
type byReplica map[string][]string

func (d byReplica) to(name string) sweep.Deliver {
	return func(_ context.Context, events []sweep.Event) error {
		for _, e := range events {
			d[name] = append(d[name], e.Row)
		}
		return nil
	}
}

func (d byReplica) all() []string {
	var out []string
	for _, rows := range d {
		out = append(out, rows...)
	}
	return out
}

// TestLeaseOneReplicaDelivers runs three replicas of one sweep round
// after round: in each, exactly one delivers and the others stand by,
// and every expiry is delivered once.
func TestLeaseOneReplicaDelivers(t *testing.T) {
	f := newFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	names := []string{"a", "b", "c"}
	reps := map[string]*sweep.Sweeper{}
	for _, n := range names {
		reps[n], _ = f.replica(t, n, nil)
		assert.Equal(t, sweep.StandsBy, reps[n].Status().Role, "a replica stands by until it holds the lease")
	}
	got := byReplica{}
	var want []string
	for round := range 6 {
		for i := range 3 {
			row := fmt.Sprintf("r%d-%d", round, i)
			want = append(want, row)
			f.set(t, row, "sess", "c", "v", ttl.For(time.Duration(1+i)*time.Second))
		}
		f.clock.Advance(period)
		ran := 0
		for _, n := range names {
			rep, err := reps[n].Once(ctx, got.to(n))
			if errors.Is(err, sweep.ErrStandby) {
				assert.Nil(t, rep)
				assert.Equal(t, sweep.StandsBy, reps[n].Status().Role)
				assert.Equal(t, "a", reps[n].Status().Holder)
				continue
			}
			require.NoError(t, err)
			ran++
			assert.Equal(t, sweep.HoldsLease, reps[n].Status().Role)
			assert.Equal(t, f.clock.Now(), reps[n].Status().Finished)
		}
		assert.Equal(t, 1, ran, "round %d: exactly one replica runs", round)
	}
	assert.ElementsMatch(t, want, got.all(), "every expiry once")
	assert.Len(t, got["a"], len(want), "the first to take the lease keeps it while it renews")
}

// TestLeaseTakeover stops the holder: a replica standing by takes over
// within the lease and one period of its last renewal, and delivers what
// expired meanwhile, once; the old holder, back, stands by.
func TestLeaseTakeover(t *testing.T) {
	f := newFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	a, _ := f.replica(t, "a", mp)
	b, _ := f.replica(t, "b", nil)
	c, _ := f.replica(t, "c", nil)
	got := byReplica{}
	_, err := a.Once(ctx, got.to("a"))
	require.NoError(t, err)
	renewed := f.clock.Now() // a's last renewal: it stops here
	f.set(t, "late", "sess", "c", "v", ttl.For(5*time.Second))
	var took time.Time
	for took.IsZero() {
		f.clock.Advance(period)
		require.Less(t, f.clock.Now().Sub(renewed), 10*leaseFor, "nobody took over")
		for name, s := range map[string]*sweep.Sweeper{"b": b, "c": c} {
			if _, err := s.Once(ctx, got.to(name)); err == nil {
				require.True(t, took.IsZero(), "two replicas ran in one period")
				took = f.clock.Now()
			} else {
				require.ErrorIs(t, err, sweep.ErrStandby)
			}
		}
	}
	assert.LessOrEqual(t, took.Sub(renewed), leaseFor+period, "taken over within the lease and a period")
	assert.ElementsMatch(t, []string{"late"}, got.all())

	_, err = a.Once(ctx, got.to("a"))
	assert.ErrorIs(t, err, sweep.ErrStandby, "the old holder stands by")
	assert.ElementsMatch(t, []string{"late"}, got.all())
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(ctx, &rm))
	values := map[string]int64{}
	for _, m := range rm.ScopeMetrics {
		for _, in := range m.Metrics {
			switch d := in.Data.(type) {
			case metricdata.Sum[int64]:
				values[in.Name] = d.DataPoints[0].Value
			case metricdata.Gauge[int64]:
				values[in.Name] = d.DataPoints[0].Value
			}
		}
	}
	assert.Equal(t, int64(0), values["cellttl.sweep.lease.held"])
	assert.Equal(t, int64(1), values["cellttl.sweep.lease.acquired"])
	assert.Equal(t, int64(1), values["cellttl.sweep.lease.lost"])
}

// TestLeasePausedHolder pauses the holder while it delivers a batch, past
// its lease (SIGSTOP, SIGCONT): another replica takes over meanwhile. The
// paused one delivers nothing after the batch it was delivering, and
// saves nothing: the checkpoint stays the new holder's.
func TestLeasePausedHolder(t *testing.T) {
	f := newFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	a, _ := f.replica(t, "a", nil)
	b, _ := f.replica(t, "b", nil)
	got := byReplica{}
	_, err := a.Once(ctx, got.to("a"))
	require.NoError(t, err)
	for _, row := range []string{"p", "q", "r", "s"} {
		f.set(t, row, "sess", "c", "v", ttl.For(time.Second))
	}
	f.clock.Advance(period)
	paused := false
	var bReport *sweep.Report
	_, err = a.Once(ctx, func(ctx context.Context, events []sweep.Event) error {
		if err := got.to("a")(ctx, events); err != nil || paused {
			return err
		}
		paused = true
		f.clock.Advance(2 * leaseFor) // stopped, then continued
		var err error
		bReport, err = b.Once(ctx, got.to("b"))
		require.NoError(t, err, "b takes over while a is stopped")
		return nil
	})
	require.ErrorIs(t, err, sweep.ErrLeaseLost)
	assert.Len(t, got["a"], 1, "a delivers only the batch it was delivering when paused")
	assert.ElementsMatch(t, []string{"p", "q", "r", "s"}, got["b"], "b resumes the round from its last save: a's batch again, and the rest")
	assert.True(t, bReport.Complete())
	assert.Equal(t, sweep.StandsBy, a.Status().Role)
	assert.Equal(t, "b", a.Status().Holder)

	// b's checkpoint stands: b's next round starts where its last ended.
	f.clock.Advance(period)
	rep, err := b.Once(ctx, got.to("b"))
	require.NoError(t, err)
	assert.Equal(t, bReport.Until, rep.From, "a saved nothing over b's record")
}

// TestLeaseEvery runs the holder with Every at a period longer than the
// lease: it renews while it waits, so a replica standing by cannot take
// over; on a clean stop it releases the lease, and the other takes it at
// once.
func TestLeaseEvery(t *testing.T) {
	f := newFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	a, _ := f.replica(t, "a", nil)
	b, _ := f.replica(t, "b", nil)
	got := byReplica{}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	waits, standby := 0, 0
	sweep.SetSleep(a, func(ctx context.Context, d time.Duration) error {
		assert.LessOrEqual(t, d, leaseFor/3, "the holder wakes to renew")
		f.clock.Advance(d)
		waits++
		if _, err := b.Once(ctx, got.to("b")); errors.Is(err, sweep.ErrStandby) {
			standby++
		}
		if waits == 12 {
			cancel()
		}
		return ctx.Err()
	})
	reports := 0
	err := a.Every(ctx, 2*leaseFor, got.to("a"), func(*sweep.Report, error) { reports++ })
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 12, standby, "b stood by throughout")
	assert.Equal(t, 2, reports)
	_, err = b.Once(context.Background(), got.to("b"))
	assert.NoError(t, err, "a released the lease: b takes it at once")

	// A replica standing by under Every reports nothing, and tries each period.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	tries := 0
	sweep.SetSleep(a, func(ctx context.Context, d time.Duration) error {
		assert.Equal(t, period, d)
		f.clock.Advance(d)
		if tries++; tries == 3 {
			cancel2()
		}
		return ctx.Err()
	})
	err = a.Every(ctx2, period, got.to("a"), func(*sweep.Report, error) { t.Error("a standby reports nothing") })
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, sweep.StandsBy, a.Status().Role)
}

func TestLeaseRefusals(t *testing.T) {
	f := newFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	_, err := sweep.New(nil, f.raw, "t", f.fams, sweep.Options{Lease: time.Minute, Checkpoint: scan.MemoryCheckpoint()})
	require.ErrorIs(t, err, ttl.ErrInvalidOption)
	assert.Contains(t, err.Error(), "Options.Lease")
	_, err = sweep.New(nil, f.raw, "t", f.fams, sweep.Options{Lease: -time.Minute})
	assert.ErrorIs(t, err, ttl.ErrInvalidOption)

	s := f.sweeper(t, sweep.Options{})
	assert.Equal(t, sweep.Status{Role: sweep.RunsAlone}, s.Status())
	_, err = s.Once(ctx, byReplica{}.to("x"))
	require.NoError(t, err)
	assert.Equal(t, sweep.RunsAlone, s.Status().Role)
	assert.Equal(t, f.clock.Now(), s.Status().Finished)
	assert.Equal(t, "alone", sweep.RunsAlone.String())
	assert.Equal(t, "holds the lease", sweep.HoldsLease.String())
	assert.Equal(t, "stands by", sweep.StandsBy.String())
}

// flakyLease is a LeaseCheckpoint in memory whose Hold and Save answer
// as told.
type flakyLease struct {
	scan.Checkpoint
	holds   int // calls of Hold that return true before held, err
	held    bool
	err     error
	saveErr error
}

func (l *flakyLease) Hold(context.Context, time.Duration) (bool, error) {
	if l.holds > 0 {
		l.holds--
		return true, nil
	}
	return l.held, l.err
}
func (l *flakyLease) Release(context.Context) error { return nil }
func (l *flakyLease) Holder() (string, time.Time)   { return "x", time.Time{} }
func (l *flakyLease) Save(ctx context.Context, r *scan.Record) error {
	if l.saveErr != nil {
		return l.saveErr
	}
	return l.Checkpoint.Save(ctx, r)
}

func TestLeaseFailures(t *testing.T) {
	f := newFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	boom := errors.New("boom")
	l := &flakyLease{Checkpoint: scan.MemoryCheckpoint(), err: boom}
	s := f.sweeper(t, sweep.Options{Lease: leaseFor, Checkpoint: l, Margin: time.Second})
	_, err := s.Once(ctx, byReplica{}.to("s"))
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "taking the lease")

	l.held, l.err, l.saveErr = true, nil, boom
	f.clock.Advance(period)
	_, err = s.Once(ctx, byReplica{}.to("s"))
	require.ErrorIs(t, err, boom, "a save that fails fails the round")

	l.saveErr = nil
	f.set(t, "r", "sess", "c", "v", ttl.For(time.Second))
	f.clock.Advance(period)
	l.holds, l.held, l.err = 2, false, boom // the round's start and its first save
	_, err = s.Once(ctx, func(context.Context, []sweep.Event) error {
		t.Error("delivered without the lease")
		return nil
	})
	require.ErrorIs(t, err, sweep.ErrLeaseLost)
	assert.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "before ")
}

// singleRowRefused fails every write as an app profile with multi-cluster
// routing fails CheckAndMutateRow.
type singleRowRefused struct{ bigtable.TableAPI }

func (singleRowRefused) Apply(context.Context, string, *bigtable.Mutation, ...bigtable.ApplyOption) error {
	return status.Error(codes.FailedPrecondition, "Single-row transactions are not allowed by this app profile")
}

// TestLeaseMultiClusterRouting: Every ends at once on a lease the app
// profile cannot take, naming what to use.
func TestLeaseMultiClusterRouting(t *testing.T) {
	f := newFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	f.e.TableForTest(t, "sweeps", map[string]bigtable.GCPolicy{lease.Family: bigtable.MaxVersionsPolicy(1)})
	cp, err := lease.Open(ctx, f.e.Admin, singleRowRefused{f.e.Client.Open("sweeps")}, "sweeps", "t", lease.Options{Now: f.clock.Now})
	require.NoError(t, err)
	s := f.sweeper(t, sweep.Options{Lease: leaseFor, Checkpoint: cp})
	sweep.SetSleep(s, func(context.Context, time.Duration) error {
		t.Error("Every waited: the refusal cannot heal")
		return nil
	})
	err = s.Every(ctx, period, byReplica{}.to("s"), nil)
	require.ErrorIs(t, err, ttl.ErrTransactionNotAllowed)
	assert.Contains(t, err.Error(), "single-cluster routing")
}
