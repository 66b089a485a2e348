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
		sweep.Options{Margin: time.Second, Now: f.clock.Now, Since: base, Scan: scan.Options{Workers: 1}})
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
	// expired in its window: the third fails, and the fourth resumes it.
	assert.Equal(t, []int64{0, 1, 0, 1, 2, 1, 0}, events, "events round by round")
	assert.NoError(t, errs[1])
	assert.ErrorContains(t, errs[2], "the consumer is down")
	assert.True(t, reports[3].Resumed)
	assert.Len(t, c.events, 5, "every expiry, once")
	assert.Equal(t, []time.Duration{10 * time.Second, 8 * time.Second, 10 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second}, waits, "the rest of each period")
}

// TestSleep checks the wait Every uses: it ends after its duration, or
// sooner with its context.
func TestSleep(t *testing.T) {
	assert.NoError(t, sweep.Sleep(ctx, time.Nanosecond))
	done, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, sweep.Sleep(done, time.Hour), context.Canceled)
}
