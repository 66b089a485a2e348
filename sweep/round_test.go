package sweep_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

// TestRound checks a round as a pipeline uses it, on rows it is handed:
// the events of each granularity, values where asked, and the deletions,
// which reach every expired cell of the columns and no live one.
func TestRound(t *testing.T) {
	fams := map[string]ttl.Strategy{"f": ttl.OneSecond()}
	at := func(d time.Duration) bigtable.Timestamp { return testkit.MS(base.Add(d)) }
	row := bigtable.Row{"f": {
		{Row: "r", Column: "f:a", Timestamp: at(20 * time.Second), Value: []byte("a20")},
		{Row: "r", Column: "f:a", Timestamp: at(20 * time.Second), Value: []byte("a20")}, // twice, from an interleave
		{Row: "r", Column: "f:a", Timestamp: at(10 * time.Second), Value: []byte("a10")},
		{Row: "r", Column: "f:b", Timestamp: at(hour), Value: []byte("live")},
		{Row: "r", Column: "f:b", Timestamp: at(15 * time.Second), Value: []byte("b15")},
	}}
	for _, tt := range []struct {
		g     sweep.Granularity
		want  []string
		value string
	}{
		{sweep.Cell, []string{"f:a 20s", "f:a 10s", "f:b 15s"}, "a20"},
		{sweep.Column, []string{"f:a 20s"}, "a20"},
		{sweep.Row, nil, ""},
	} {
		s, err := sweep.New(nil, testkit.Tablets{}, "t", fams, sweep.Options{Granularity: tt.g, Values: true, Scan: scan.Options{Now: func() time.Time { return base.Add(time.Minute) }}})
		require.NoError(t, err)
		r, err := s.Round(base, base.Add(30*time.Second))
		require.NoError(t, err)
		require.NotNil(t, r.Filter())
		var got []string
		events := r.Events(row)
		for _, e := range events {
			got = append(got, e.Family+":"+e.Column+" "+e.Expired.Sub(base).String())
		}
		assert.Equal(t, tt.want, got, "%v", tt.g)
		if len(events) > 0 {
			assert.Equal(t, tt.value, string(events[0].Value))
		}
		m := r.Deletes(row)
		require.NotNil(t, m, "%v", tt.g)
	}

	// Applied, the deletions leave only the live cell.
	e := newFixture(t, map[string]ttl.Strategy{"f": ttl.OneSecond()})
	for _, it := range row["f"] {
		testkit.Put(t, e.raw, "f", testkit.Stored{Row: "r", Column: it.Column[2:], TS: it.Timestamp})
	}
	testkit.Put(t, e.raw, "f", testkit.Stored{Row: "r", Column: "a", TS: at(40 * time.Second)}) // after the round
	s, err := sweep.New(nil, e.raw, "t", fams, sweep.Options{Scan: scan.Options{Now: e.clock.Now}})
	require.NoError(t, err)
	r, err := s.Round(base, base.Add(30*time.Second))
	require.NoError(t, err)
	require.NoError(t, e.raw.Apply(ctx, "r", r.Deletes(row)))
	assert.Equal(t, []testkit.Cell{{Column: "f:a", Value: "v", TS: at(40 * time.Second)}, {Column: "f:b", Value: "v", TS: at(hour)}},
		testkit.Cells(testkit.RawRow(t, e.raw, "r")))
	assert.Nil(t, r.Deletes(bigtable.Row{}), "nothing expired, nothing to delete")
	assert.Empty(t, r.Events(bigtable.Row{"other": row["f"]}), "a family not swept")
}

// TestRoundNothingExpires: a round in which no cell of the families can
// expire (a move's new side, before its start) reads nothing, and is done.
func TestRoundNothingExpires(t *testing.T) {
	start := base.Add(time.Hour)
	f := newFixture(t, map[string]ttl.Strategy{"m": ttl.Move{To: ttl.OneSecond(), Start: start}})
	f.clock.Set(base.Add(time.Minute))
	s := f.sweeper(t, sweep.Options{Margin: time.Second})
	r, err := s.Round(base, base.Add(time.Minute))
	require.NoError(t, err)
	assert.Nil(t, r.Filter())
	var c collector
	rep, err := s.Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.True(t, rep.Complete())
	assert.Zero(t, rep.Read.Reads)
	assert.Equal(t, rep.Read.Shards, rep.Read.ShardsRead)
}

// TestSweepMoveDeletes deletes the old cells of a move once their Until
// has passed: the whole old side, and nothing of the new.
func TestSweepMoveDeletes(t *testing.T) {
	start := base.Add(time.Minute)
	m := ttl.Move{To: ttl.OneSecond(), Start: start, Old: ttl.Until(base.Add(10 * time.Minute))}
	f := newFixture(t, map[string]ttl.Strategy{"m": m})
	testkit.Put(t, f.raw, "m", testkit.Stored{Row: "r", Column: "c", TS: testkit.MS(base.Add(-hour))})
	f.clock.Set(start)
	f.set(t, "r", "m", "c", "new", ttl.For(hour))
	f.clock.Set(base.Add(20 * time.Minute))
	var c collector
	rep, err := f.sweeper(t, sweep.Options{Margin: time.Second, Delete: true, Granularity: sweep.Column}).Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Empty(t, c.take(), "the column is live")
	assert.Equal(t, int64(1), rep.Expired.Cells)
	assert.Equal(t, []string{"m:c=new"}, testkit.Values(testkit.RawRow(t, f.raw, "r")))
}

// bulkFails is a table whose ApplyBulk fails, whole or for one row.
type bulkFails struct {
	bigtable.TableAPI
	whole bool
}

func (b bulkFails) ApplyBulk(_ context.Context, keys []string, _ []*bigtable.Mutation, _ ...bigtable.ApplyOption) ([]error, error) {
	if b.whole {
		return nil, errors.New("unavailable")
	}
	errs := make([]error, len(keys))
	errs[len(keys)-1] = errors.New("row too large")
	return errs, nil
}

// TestSweepDeleteFails: a deletion that fails stops the sweep, which
// names the rows, and resumes with that batch.
func TestSweepDeleteFails(t *testing.T) {
	f, _ := resumeFixture(t)
	for _, whole := range []bool{true, false} {
		cp := scan.MemoryCheckpoint()
		oneShard := testkit.Tablets{TableAPI: bulkFails{f.raw, whole}}
		s, err := sweep.New(nil, oneShard, "t", f.fams, sweep.Options{Since: base, Delete: true, Checkpoint: cp, Scan: scan.Options{Now: f.clock.Now}})
		require.NoError(t, err)
		var c collector
		r, err := s.Once(ctx, c.deliver)
		if whole {
			assert.ErrorContains(t, err, "sweep: deleting the expired cells of 20 rows: unavailable")
		} else {
			assert.ErrorContains(t, err, `sweep: deleting the expired cells of row "k19": row too large`)
		}
		assert.False(t, r.Complete())
		assert.Zero(t, r.Events, "delivered but not recorded: delivered again")
		assert.Len(t, c.events, 20)
	}
}
