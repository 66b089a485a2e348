package sweep_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

// TestSweepBadInputs: every sweep that cannot work is refused with its
// sentinel and a message naming what is at fault, before it reads or
// writes anything.
func TestSweepBadInputs(t *testing.T) {
	f := newFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	one := map[string]ttl.Strategy{"sess": ttl.OneSecond()}
	for _, tt := range []struct {
		name string
		data bigtable.TableAPI
		fams map[string]ttl.Strategy
		opts sweep.Options
		want error
		msg  string
	}{
		{"nil table", nil, one, sweep.Options{}, ttl.ErrNilArgument, "nil table"},
		{"a nil *bigtable.Table", (*bigtable.Table)(nil), one, sweep.Options{}, ttl.ErrNilArgument, "nil table"},
		{"no family", f.raw, nil, sweep.Options{}, ttl.ErrInvalidOption, `no family to sweep in table "t"`},
		{"sequence numbers", f.raw, map[string]ttl.Strategy{"v": ttl.SequenceNumbers(3)}, sweep.Options{}, ttl.ErrInvalidStrategy, `family "v" (SequenceNumbers(3))`},
		{"no strategy", f.raw, map[string]ttl.Strategy{"raw": nil}, sweep.Options{}, ttl.ErrInvalidStrategy, `family "raw" has no strategy`},
		{"a move that never expires", f.raw, map[string]ttl.Strategy{"m": ttl.Move{To: ttl.SequenceNumbers(2), Start: base}}, sweep.Options{}, ttl.ErrInvalidStrategy, `family "m"`},
		{"an invalid strategy", f.raw, map[string]ttl.Strategy{"sess": ttl.DefaultExpiration(0)}, sweep.Options{}, ttl.ErrInvalidStrategy, `family "sess"`},
		{"a negative grace", f.raw, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), -time.Hour)}, sweep.Options{}, ttl.ErrInvalidStrategy, `Grace(OneSecond(), -1h0m0s)`},
		{"a bad family name", f.raw, map[string]ttl.Strategy{"a:b": ttl.OneSecond()}, sweep.Options{}, ttl.ErrInvalidStrategy, `"a:b"`},
		{"a negative margin", f.raw, one, sweep.Options{Margin: -time.Second}, ttl.ErrInvalidOption, "margin -1s"},
		{"a negative batch", f.raw, one, sweep.Options{Batch: -1}, ttl.ErrInvalidOption, "batch -1"},
		{"a granularity", f.raw, one, sweep.Options{Granularity: 7}, ttl.ErrInvalidOption, "granularity Granularity(7)"},
		{"a watermark in the future", f.raw, one, sweep.Options{Since: base.Add(time.Second)}, ttl.ErrInvalidOption, "since 2030-04-30T09:00:01Z is after now (2030-04-30T09:00:00Z)"},
		{"a sample", f.raw, one, sweep.Options{Scan: scan.Options{Sample: 0.5}}, ttl.ErrInvalidOption, "not a sample"},
		{"bad workers", f.raw, one, sweep.Options{Scan: scan.Options{Workers: -1}}, ttl.ErrInvalidOption, "-1"},
	} {
		if tt.opts.Now == nil {
			tt.opts.Now = f.clock.Now
		}
		s, err := sweep.New(f.e.Admin, tt.data, "t", tt.fams, tt.opts)
		assert.ErrorIs(t, err, tt.want, tt.name)
		assert.ErrorContains(t, err, tt.msg, tt.name)
		assert.Nil(t, s, tt.name)
	}

	s := f.sweeper(t, sweep.Options{})
	var c collector
	//lint:ignore SA1012 a nil context is what is tested
	_, err := s.Once(nil, c.deliver)
	assert.ErrorIs(t, err, ttl.ErrNilArgument)
	_, err = s.Once(ctx, nil)
	assert.ErrorIs(t, err, ttl.ErrNilArgument)
	assert.ErrorIs(t, s.Every(ctx, -time.Second, c.deliver, nil), ttl.ErrInvalidOption)
	assert.ErrorContains(t, s.Every(ctx, 0, c.deliver, nil), "period 0s: want a positive duration")
	assert.ErrorIs(t, s.Every(ctx, time.Second, nil, nil), ttl.ErrNilArgument)
	_, err = s.Round(base, base)
	assert.ErrorIs(t, err, ttl.ErrInvalidOption)

	// A family the table does not have, seen through the admin client.
	missing, err := sweep.New(f.e.Admin, f.raw, "t", map[string]ttl.Strategy{"gone": ttl.OneSecond()}, sweep.Options{Now: f.clock.Now})
	require.NoError(t, err)
	_, err = missing.Once(ctx, c.deliver)
	assert.ErrorIs(t, err, policy.ErrFamilyMismatch)
	assert.ErrorContains(t, err, `table "t" has no family "gone"`)
	noTable, err := sweep.New(f.e.Admin, f.e.Client.Open("nope"), "nope", one, sweep.Options{Now: f.clock.Now})
	require.NoError(t, err)
	_, err = noTable.Once(ctx, c.deliver)
	assert.ErrorContains(t, err, `table "nope" does not exist`)

	// Another sweep's checkpoint.
	path := filepath.Join(t.TempDir(), "cp.json")
	rows, err := sweep.New(nil, f.raw, "t", f.fams, sweep.Options{Now: f.clock.Now, Granularity: sweep.Row, Checkpoint: scan.FileCheckpoint(path)})
	require.NoError(t, err)
	_, err = rows.Once(ctx, c.deliver)
	require.NoError(t, err)
	cells, err := sweep.New(nil, f.raw, "t", f.fams, sweep.Options{Now: f.clock.Now, Checkpoint: scan.FileCheckpoint(path)})
	require.NoError(t, err)
	_, err = cells.Once(ctx, c.deliver)
	assert.ErrorIs(t, err, ttl.ErrInvalidOption)
	assert.ErrorContains(t, err, "row events")
	assert.ErrorIs(t, cells.Every(ctx, time.Second, c.deliver, nil), ttl.ErrInvalidOption, "Every ends on an error no retry heals")

	// A clock that went back past Since.
	clock := base
	back, err := sweep.New(nil, f.raw, "t", one, sweep.Options{Now: func() time.Time { return clock }, Since: base})
	require.NoError(t, err)
	clock = base.Add(-time.Hour)
	_, err = back.Once(ctx, c.deliver)
	assert.ErrorIs(t, err, ttl.ErrInvalidOption)
	assert.Empty(t, c.events)

	// A cancelled context.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	f.clock.Set(base.Add(time.Minute))
	_, err = f.sweeper(t, sweep.Options{}).Once(cancelled, c.deliver)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
}
