package sweep_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

// unreachable is a table whose reads wait, as the client's retries wait
// while Bigtable cannot be reached, until it is reachable again or the
// call's context ends.
type unreachable struct {
	bigtable.TableAPI
	down atomic.Bool
}

func (u *unreachable) ReadRows(ctx context.Context, rs bigtable.RowSet, f func(bigtable.Row) bool, opts ...bigtable.ReadOption) error {
	if u.down.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	return u.TableAPI.ReadRows(ctx, rs, f, opts...)
}

// A round that cannot reach Bigtable fails at its RoundTimeout, saying so
// and delivering nothing; the next round, once Bigtable answers, delivers
// everything, once.
func TestRoundTimeout(t *testing.T) {
	f := newFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	f.set(t, "u1", "sess", "a", "v", ttl.For(5*time.Second))
	f.set(t, "u2", "sess", "a", "v", ttl.For(6*time.Second))
	u := &unreachable{TableAPI: f.raw}
	cp := scan.MemoryCheckpoint()
	s, err := sweep.New(nil, u, "t", f.fams, sweep.Options{Since: base, Margin: time.Second,
		Checkpoint: cp, RoundTimeout: 50 * time.Millisecond, Scan: scan.Options{Now: f.clock.Now}})
	require.NoError(t, err)
	f.clock.Set(base.Add(time.Minute))
	u.down.Store(true)
	var c collector
	rep, err := s.Once(ctx, c.deliver)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, sweep.ErrRoundTimeout)
	require.ErrorContains(t, err, "did not finish within its timeout of 50ms")
	if rep != nil && rep.Complete() {
		t.Errorf("a round that timed out reports itself complete: %v", rep)
	}
	require.Empty(t, c.take())

	u.down.Store(false)
	rep, err = s.Once(ctx, c.deliver)
	require.NoError(t, err)
	require.True(t, rep.Complete(), "%v", rep)
	require.Equal(t, []string{
		`cell expired ` + at(5*time.Second) + `: table "t" row "u1" sess:"a"`,
		`cell expired ` + at(6*time.Second) + `: table "t" row "u2" sess:"a"`,
	}, c.take())

	// The caller's own cancellation is not called a timeout.
	u.down.Store(true)
	f.clock.Set(base.Add(2 * time.Minute))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.Once(cctx, c.deliver)
	if err == nil || errors.Is(err, sweep.ErrRoundTimeout) || !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled round: %v, want context.Canceled, not a timeout", err)
	}
}

func TestRoundTimeoutNegative(t *testing.T) {
	f := newFixture(t, map[string]ttl.Strategy{"sess": ttl.OneSecond()})
	_, err := sweep.New(nil, f.raw, "t", f.fams, sweep.Options{RoundTimeout: -time.Second})
	require.ErrorIs(t, err, ttl.ErrInvalidOption)
	require.ErrorContains(t, err, "round timeout -1s")
}
