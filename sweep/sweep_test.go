package sweep_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/sweep"
)

// TestSweepCells sweeps families of every time strategy, a counter among
// them: each round reports each cell that expired in its window, once,
// reads only those cells, and the watermark moves on round by round.
func TestSweepCells(t *testing.T) {
	f := newFixture(t, map[string]ttl.Strategy{
		"sess": ttl.Grace(ttl.OneSecond(), hour),
		"cart": ttl.Grace(ttl.DefaultExpiration(48*hour), hour),
		"hits": ttl.Counter(ttl.Grace(ttl.OneSecond(), hour)),
	})
	f.set(t, "u1", "sess", "token", "t1", ttl.For(10*time.Second))
	f.set(t, "u1", "sess", "name", "n1", ttl.For(time.Minute))
	f.set(t, "u2", "sess", "token", "t2", ttl.Forever)
	f.set(t, "u3", "cart", "item", "i3", ttl.For(20*time.Second))
	f.set(t, "u3", "cart", "other", "o3", ttl.Default) // 48h
	m := ttl.NewMutation()
	m.Add("hits", "req", 3, ttl.Window{Size: 10 * time.Second})
	require.NoError(t, f.tbl.Apply(ctx, "u4", m))

	s := f.sweeper(t, sweep.Options{Margin: time.Second})
	var c collector
	f.clock.Set(base.Add(30 * time.Second))
	r, err := s.Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Equal(t, []string{
		`cell expired ` + at(10*time.Second) + `: table "t" row "u1" sess:"token"`,
		`cell expired ` + at(20*time.Second) + `: table "t" row "u3" cart:"item"`,
		`cell expired ` + at(10*time.Second) + `: table "t" row "u4" hits:"req"`,
	}, c.take())
	assert.True(t, r.Complete(), "complete: %v", r)
	assert.Equal(t, base, r.From)
	assert.Equal(t, base.Add(29*time.Second), r.Until, "a margin behind now")
	assert.Equal(t, int64(3), r.Events)
	assert.Equal(t, int64(3), r.Expired.Cells)
	assert.Equal(t, 3, r.Read.CellsReturned, "only the cells reported cross the network")
	assert.False(t, r.Resumed)

	f.clock.Set(base.Add(2 * time.Minute))
	r, err = s.Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Equal(t, []string{`cell expired ` + at(time.Minute) + `: table "t" row "u1" sess:"name"`}, c.take())
	assert.Equal(t, base.Add(29*time.Second), r.From, "the next round starts at the watermark")

	r, err = s.Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Empty(t, c.take(), "a round within the margin of the last reads nothing")
	assert.Equal(t, r.From, r.Until)
	assert.Zero(t, r.Read.Reads)
	assert.True(t, r.Complete())

	f.clock.Set(base.Add(49 * hour))
	_, err = s.Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Equal(t, []string{`cell expired ` + at(48*hour) + `: table "t" row "u3" cart:"other"`}, c.take(), "Forever never")
}

// TestSweepGranularity sweeps the same rows for cells, columns and rows: a
// column or row is reported only once nothing in it is live, and values
// kept alive by Touch, a newer Set or Replace make no column or row
// event.
func TestSweepGranularity(t *testing.T) {
	f := newFixture(t, map[string]ttl.Strategy{
		"sess": ttl.Grace(ttl.OneSecond(), hour),
		"prof": ttl.Grace(ttl.OneSecond(), hour),
	})
	ten, minute := ttl.For(10*time.Second), ttl.For(time.Minute)
	f.set(t, "a", "sess", "c", "1", ten)    // column and row expire
	f.set(t, "b", "sess", "c", "1", ten)    // a newer Set keeps the column
	f.set(t, "c", "sess", "c", "1", ten)    // another column keeps the row
	f.set(t, "c", "sess", "d", "1", minute) //
	f.set(t, "d", "sess", "c", "1", ten)    // another swept family keeps the row
	f.set(t, "d", "prof", "x", "1", minute) //
	f.set(t, "e", "sess", "c", "1", ten)    // two columns; the row expires with the later
	f.set(t, "e", "sess", "c2", "1", ttl.For(20*time.Second))
	f.set(t, "f", "sess", "c", "1", ten) // Touch renews it
	f.set(t, "g", "sess", "c", "1", ten) // Replace renews it
	f.clock.Advance(5 * time.Second)
	f.set(t, "b", "sess", "c", "2", minute)
	touched, err := f.tbl.Touch(ctx, "f", "sess", "c", minute)
	require.NoError(t, err)
	require.True(t, touched)
	rm := ttl.NewMutation()
	rm.Replace("sess", "c", []byte("2"), minute)
	require.NoError(t, f.tbl.Apply(ctx, "g", rm))

	f.clock.Set(base.Add(30 * time.Second))
	want := map[sweep.Granularity][]string{
		sweep.Cell: {
			`cell expired ` + at(10*time.Second) + `: table "t" row "a" sess:"c"`,
			`cell expired ` + at(10*time.Second) + `: table "t" row "b" sess:"c"`,
			`cell expired ` + at(10*time.Second) + `: table "t" row "c" sess:"c"`,
			`cell expired ` + at(10*time.Second) + `: table "t" row "d" sess:"c"`,
			`cell expired ` + at(10*time.Second) + `: table "t" row "e" sess:"c"`,
			`cell expired ` + at(20*time.Second) + `: table "t" row "e" sess:"c2"`,
		},
		sweep.Column: {
			`column expired ` + at(10*time.Second) + `: table "t" row "a" sess:"c"`,
			`column expired ` + at(10*time.Second) + `: table "t" row "c" sess:"c"`,
			`column expired ` + at(10*time.Second) + `: table "t" row "d" sess:"c"`,
			`column expired ` + at(10*time.Second) + `: table "t" row "e" sess:"c"`,
			`column expired ` + at(20*time.Second) + `: table "t" row "e" sess:"c2"`,
		},
		sweep.Row: {
			`row expired ` + at(10*time.Second) + `: table "t" row "a"`,
			`row expired ` + at(20*time.Second) + `: table "t" row "e"`,
		},
	}
	for g, lines := range want {
		var c collector
		r, err := f.sweeper(t, sweep.Options{Granularity: g, Margin: time.Second}).Once(ctx, c.deliver)
		require.NoError(t, err)
		assert.Equal(t, lines, c.take(), "%v events", g)
		assert.Equal(t, int64(len(lines)), r.Events)
		assert.Equal(t, int64(6), r.Expired.Cells, "%v: the cells expired in the window", g)
	}

	// Past the minute, what was kept alive expires too.
	f.clock.Set(base.Add(2 * time.Minute))
	var c collector
	s := f.sweeper(t, sweep.Options{Granularity: sweep.Row, Margin: time.Second, Since: base.Add(29 * time.Second)})
	_, err = s.Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Equal(t, []string{
		`row expired ` + at(65*time.Second) + `: table "t" row "b"`,
		`row expired ` + at(time.Minute) + `: table "t" row "c"`,
		`row expired ` + at(time.Minute) + `: table "t" row "d"`,
		`row expired ` + at(65*time.Second) + `: table "t" row "f"`,
		`row expired ` + at(65*time.Second) + `: table "t" row "g"`,
	}, c.take())
}

// TestSweepMove sweeps a family in a strategy move by each side's rule:
// the old cells, real write times that live 30 minutes, and the new ones,
// one-second expiries.
func TestSweepMove(t *testing.T) {
	start := base.Add(time.Minute)
	m := ttl.Move{To: ttl.OneSecond(), Start: start, Old: ttl.For(30 * time.Minute)}
	f := newFixture(t, map[string]ttl.Strategy{"m": m})
	testkit.Put(t, f.raw, "m", testkit.Stored{Row: "old", Column: "c", TS: testkit.MS(base.Add(-10 * time.Minute))})
	f.clock.Set(start)
	f.set(t, "new", "m", "c", "v", ttl.For(10*time.Second))
	f.set(t, "new", "m", "later", "v", ttl.For(2*hour))

	var c collector
	f.clock.Set(base.Add(hour))
	r, err := f.sweeper(t, sweep.Options{Margin: time.Second}).Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Equal(t, []string{
		`cell expired ` + at(time.Minute+10*time.Second) + `: table "t" row "new" m:"c"`,
		`cell expired ` + at(20*time.Minute) + `: table "t" row "old" m:"c"`,
	}, c.take())
	assert.Equal(t, 2, r.Read.CellsReturned)
}
