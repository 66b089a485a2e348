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

// TestSweepDelete: after delivering, a sweep that deletes removes every
// expired cell of the columns where it found one, and nothing live: a
// newer cell of the same column, a cell that expires within the margin,
// a Forever cell, another column and the write-time companions of the
// live cells all stay, as a reader without the library sees.
func TestSweepDelete(t *testing.T) {
	f := newFixture(t, map[string]ttl.Strategy{
		"sess": ttl.Grace(ttl.OneSecond(), hour),
		"cart": ttl.Grace(ttl.DefaultExpiration(48*hour), hour),
		"hits": ttl.Counter(ttl.Grace(ttl.OneSecond(), hour)),
	}, ttl.RecordWriteTime())
	f.set(t, "u", "sess", "c", "early", ttl.For(5*time.Second)) // expires before Since: deleted, not reported
	f.set(t, "u", "sess", "c", "old", ttl.For(10*time.Second))
	f.set(t, "u", "sess", "c", "new", ttl.For(time.Hour))
	f.set(t, "u", "sess", "soon", "s", ttl.For(29500*time.Millisecond)) // within the margin
	f.set(t, "u", "sess", "keep", "k", ttl.Forever)
	f.set(t, "u", "cart", "item", "i", ttl.For(20*time.Second))
	f.set(t, "v", "sess", "c", "other row", ttl.For(time.Hour))
	m := ttl.NewMutation()
	m.Add("hits", "req", 1, ttl.Window{Size: 10 * time.Second})
	require.NoError(t, f.tbl.Apply(ctx, "u", m))

	f.clock.Set(base.Add(30 * time.Second))
	var c collector
	s := f.sweeper(t, sweep.Options{Margin: time.Second, Delete: true, WriteTimes: true, Since: base.Add(6 * time.Second)})
	r, err := s.Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Equal(t, []string{
		`cell expired ` + at(20*time.Second) + `: table "t" row "u" cart:"item"`,
		`cell expired ` + at(10*time.Second) + `: table "t" row "u" hits:"req"`,
		`cell expired ` + at(10*time.Second) + `: table "t" row "u" sess:"c"`,
	}, c.take(), "no companion is reported")
	assert.Equal(t, int64(1), r.Deleted, "rows")

	stored := testkit.Values(testkit.RawRow(t, f.raw, "u"))
	assert.Equal(t, []string{
		"sess:c=new", "sess:keep=k", "sess:soon=s",
		"sess:\xff\xffwt:c=" + string(be(base)), // the companion of "new"
		"sess:\xff\xffwt:keep=" + string(be(base)),
		"sess:\xff\xffwt:soon=" + string(be(base)),
	}, stored)
	assert.Len(t, testkit.RawRow(t, f.raw, "v")["sess"], 2, "another row is untouched")
}

// be is t in microseconds as an 8-byte big-endian integer: a write-time
// companion's value.
func be(t time.Time) []byte {
	us := t.UnixMicro()
	b := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b[i] = byte(us)
		us >>= 8
	}
	return b
}
