package sweep_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

// TestEvery runs a sweep every 10 seconds on a fake clock, with writes
// between the rounds: each round reports what expired since the last, and
// waits out the rest of its period; a round that fails is resumed by the
// next; Every ends with its context.
func TestEvery(t *testing.T) {
	f := newFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	// Two shards, read in turn: the first, empty, is recorded before the
	// second's delivery fails, so that the failed round has begun (the
	// emulator's own tablets are random, and a round that recorded nothing
	// is begun again rather than resumed).
	s, err := sweep.New(f.e.Admin, testkit.Tablets{TableAPI: f.raw, Keys: []string{"m"}}, "t", f.fams,
		sweep.Options{Margin: time.Second, Since: base, Scan: scan.Options{Now: f.clock.Now, Workers: 1}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var waits []time.Duration
	sweep.SetSleep(s, func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		f.clock.Advance(d)
		return nil
	})
	for i := range 5 {
		f.set(t, "u", "sess", string(rune('a'+i)), "v", ttl.For(time.Duration(5+10*i)*time.Second))
	}
	var c collector
	down := true
	deliver := func(ctx context.Context, events []sweep.Event) error {
		if down && len(c.events) > 0 {
			down = false
			return errors.New("the consumer is down")
		}
		f.clock.Advance(2 * time.Second) // delivering takes time
		return c.deliver(ctx, events)
	}
	var reports []*sweep.Report
	var errs []error
	err = s.Every(ctx, 10*time.Second, deliver, func(r *sweep.Report, err error) {
		reports, errs = append(reports, r), append(errs, err)
		if len(reports) == 7 {
			cancel()
		}
	})
	assert.ErrorIs(t, err, context.Canceled)
	require.Len(t, reports, 7)
	var events []int64
	for _, r := range reports {
		events = append(events, r.Events)
	}
	// The first round starts the watermark at base; then each reports what
	// expired in its window: the third fails, and the fourth resumes it,
	// whose window ended at 19s: the fifth is due at once (at 32s, up to
	// 31s), not a period later.
	assert.Equal(t, []int64{0, 1, 0, 1, 1, 1, 1}, events, "events round by round")
	assert.NoError(t, errs[1])
	assert.ErrorContains(t, errs[2], "the consumer is down")
	assert.True(t, reports[3].Resumed)
	assert.Len(t, c.events, 5, "every expiry, once")
	assert.Equal(t, []time.Duration{10 * time.Second, 8 * time.Second, 10 * time.Second, 8 * time.Second, 8 * time.Second}, waits,
		"the rest of each period; none after the resumed round")
}

// TestSleep checks the wait Every uses: it ends after its duration, or
// sooner with its context.
func TestSleep(t *testing.T) {
	assert.NoError(t, sweep.Sleep(ctx, time.Nanosecond))
	done, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, sweep.Sleep(done, time.Hour), context.Canceled)
}

// TestEveryAfterOutage restarts a sweep an hour after a round failed: the
// round it resumes ends where that round did, and the next, which covers
// the outage, starts at once, not a period later; then each waits its
// period.
func TestEveryAfterOutage(t *testing.T) {
	f := newFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), 2*hour)})
	f.set(t, "u", "sess", "a", "v", ttl.For(5*time.Second))
	f.set(t, "u", "sess", "b", "v", ttl.For(30*time.Minute)) // expires during the outage
	cp := scan.MemoryCheckpoint()
	opts := sweep.Options{Margin: time.Second, Since: base, Checkpoint: cp, Scan: scan.Options{Now: f.clock.Now, Workers: 1}}
	// Two shards, so that the failed round has begun (see TestEvery).
	tablets := testkit.Tablets{TableAPI: f.raw, Keys: []string{"m"}}
	before, err := sweep.New(f.e.Admin, tablets, "t", f.fams, opts)
	require.NoError(t, err)
	_, err = before.Once(ctx, (&collector{}).deliver)
	require.NoError(t, err)
	f.clock.Set(base.Add(10 * time.Second))
	_, err = before.Once(ctx, (&failing{n: 1}).deliver)
	require.ErrorContains(t, err, "the consumer is down")

	f.clock.Set(base.Add(hour)) // the sweeper restarts
	s, err := sweep.New(f.e.Admin, tablets, "t", f.fams, opts)
	require.NoError(t, err)
	var waits []time.Duration
	sweep.SetSleep(s, func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		f.clock.Advance(d)
		return nil
	})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var delivered []time.Duration // since base, each event's delivery
	deliver := func(_ context.Context, events []sweep.Event) error {
		for range events {
			delivered = append(delivered, f.clock.Now().Sub(base))
		}
		return nil
	}
	var reports []*sweep.Report
	err = s.Every(ctx, 10*time.Second, deliver, func(r *sweep.Report, err error) {
		require.NoError(t, err)
		reports = append(reports, r)
		if len(reports) == 3 {
			cancel()
		}
	})
	assert.ErrorIs(t, err, context.Canceled)
	require.Len(t, reports, 3)
	assert.True(t, reports[0].Resumed)
	assert.Equal(t, base.Add(9*time.Second), reports[0].Until, "the resumed round ends where the failed one did")
	assert.Equal(t, base.Add(hour-time.Second), reports[1].Until, "the next covers the outage")
	assert.Equal(t, []time.Duration{hour, hour}, delivered, "both at the restart: the round after the resumed one did not wait")
	assert.Equal(t, []time.Duration{10 * time.Second}, waits, "a period after the catching-up round")
	assert.Equal(t, base.Add(hour+9*time.Second), reports[2].Until)
}
