package sweep_test

import (
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
	"github.com/cellttl/ttl/sweep"
)

// A schedFixture is a fixture with a schedule: table "s", its family
// given schedule.Policy of the families' grace.
type schedFixture struct {
	*fixture
	sched bigtable.TableAPI
}

func newSchedFixture(t *testing.T, fams map[string]ttl.Strategy) *schedFixture {
	t.Helper()
	f := newFixture(t, fams)
	require.NoError(t, f.e.Admin.CreateTableFromConf(ctx, &bigtable.TableConf{TableID: "s",
		ColumnFamilies: map[string]bigtable.Family{schedule.Family: {GCPolicy: schedule.Policy(hour)}}}))
	return &schedFixture{fixture: f, sched: f.e.Client.Open("s")}
}

// entry writes the entry of row's cells that expire at expiry.
func (f *schedFixture) entry(t *testing.T, row string, expiry time.Time) {
	t.Helper()
	var b schedule.Batch
	b.Add(row, expiry)
	require.NoError(t, b.Write(ctx, f.sched))
}

// sset writes as set does, after the entry of the cell, as a writer given
// the schedule does.
func (f *schedFixture) sset(t *testing.T, row, family, column, value string, life time.Duration) {
	t.Helper()
	f.entry(t, row, f.clock.Now().Add(life))
	f.set(t, row, family, column, value, ttl.For(life))
}

// deleteRow deletes row.
func (f *schedFixture) deleteRow(t *testing.T, row string) {
	t.Helper()
	m := ttl.NewMutation()
	m.DeleteRow()
	require.NoError(t, f.tbl.Apply(ctx, row, m))
}

// scheduled returns a sweep through the schedule, as sweeper does.
func (f *schedFixture) scheduled(t *testing.T, opts sweep.Options) *sweep.Sweeper {
	t.Helper()
	opts.Schedule, opts.ScheduleTable = f.sched, "s"
	return f.sweeper(t, opts)
}

// entries returns the keys of the schedule's entries.
func (f *schedFixture) entries(t *testing.T) []string {
	t.Helper()
	out := []string{}
	require.NoError(t, f.sched.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		out = append(out, r.Key())
		return true
	}))
	return out
}

// inSalt returns n row keys of salt's, with prefix.
func inSalt(salt, n int, prefix string) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		if k := fmt.Sprintf("%s%04d", prefix, i); schedule.Salt(k) == salt {
			out = append(out, k)
		}
	}
	return out
}

// TestScheduledSameAsScan sweeps one table, written with its schedule,
// with a scanning and a scheduled sweep, round by round, for each
// granularity: the two report the same events and count the same cells,
// through renewals, deletions, several families and an entry whose second
// straddles a round's end; the scheduled one reads far fewer cells.
func TestScheduledSameAsScan(t *testing.T) {
	for _, g := range []sweep.Granularity{sweep.Cell, sweep.Column, sweep.Row} {
		t.Run(g.String(), func(t *testing.T) {
			f := newSchedFixture(t, map[string]ttl.Strategy{
				"sess": ttl.Grace(ttl.OneSecond(), hour),
				"prof": ttl.Grace(ttl.OneSecond(), hour),
			})
			sec := time.Second
			f.sset(t, "a", "sess", "c", "1", 10*sec)
			f.sset(t, "b", "sess", "c", "1", 10*sec) // renewed by a newer Set
			f.sset(t, "c", "sess", "c", "1", 10*sec) // another column keeps the row
			f.sset(t, "c", "sess", "d", "1", time.Minute)
			f.sset(t, "d", "sess", "c", "1", 10*sec) // another family keeps the row
			f.sset(t, "d", "prof", "x", "1", time.Minute)
			f.sset(t, "e", "sess", "c", "1", 10*sec)
			f.sset(t, "e", "sess", "c2", "1", 20*sec)
			f.sset(t, "f", "sess", "c", "1", 10*sec)         // Touch renews it
			f.sset(t, "g", "sess", "c", "1", 14500*sec/1000) // straddles the first round's end
			f.sset(t, "h", "sess", "c", "1", 10*sec)         // deleted
			for i := range 30 {
				f.sset(t, fmt.Sprintf("n%02d", i), "prof", "p", "v", time.Duration(1+i*3)*sec)
			}
			for i := range 100 { // live all along: a scan reads them, a scheduled round does not
				f.set(t, fmt.Sprintf("z%03d", i), "sess", "c", "v", ttl.For(hour))
			}
			f.clock.Advance(5 * sec)
			f.sset(t, "b", "sess", "c", "2", time.Minute)
			f.entry(t, "f", f.clock.Now().Add(time.Minute))
			touched, err := f.tbl.Touch(ctx, "f", "sess", "c", ttl.For(time.Minute))
			require.NoError(t, err)
			require.True(t, touched)
			f.deleteRow(t, "h")

			opts := sweep.Options{Granularity: g, Margin: time.Second}
			scanning, scheduled := f.sweeper(t, opts), f.scheduled(t, opts)
			var total int64
			for _, now := range []time.Duration{15 * sec, 30 * sec, 2 * time.Minute} {
				f.clock.Set(base.Add(now))
				var a, b collector
				ra, err := scanning.Once(ctx, a.deliver)
				require.NoError(t, err)
				rb, err := scheduled.Once(ctx, b.deliver)
				require.NoError(t, err)
				want := a.take()
				assert.Equal(t, want, b.take(), "%v: the round up to %v", g, rb.Until)
				assert.Equal(t, ra.From, rb.From)
				assert.Equal(t, ra.Until, rb.Until)
				assert.Equal(t, ra.Events, rb.Events)
				assert.Equal(t, ra.Expired, rb.Expired)
				assert.True(t, rb.Complete(), "%v", rb)
				assert.Equal(t, schedule.Salts, rb.Read.Shards, "a scheduled round's shards are the salts")
				assert.Less(t, rb.Read.CellsSeen, ra.Read.CellsSeen, "the scheduled round reads less")
				total += rb.Events
			}
			assert.NotZero(t, total)
		})
	}
}

// TestScheduledStale: entries whose cells were never written (a writer
// that failed after its entries), were deleted or renewed report nothing,
// and cost a read each.
func TestScheduledStale(t *testing.T) {
	f := newSchedFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	f.entry(t, "crashed", base.Add(10*time.Second)) // and no data
	f.sset(t, "deleted", "sess", "c", "v", 10*time.Second)
	f.deleteRow(t, "deleted")
	f.sset(t, "renewed", "sess", "c", "v", 10*time.Second)
	f.sset(t, "renewed", "sess", "c", "w", time.Minute)
	f.entry(t, "later", base.Add(time.Hour)) // a second the round does not cover

	f.clock.Set(base.Add(30 * time.Second))
	var c collector
	r, err := f.scheduled(t, sweep.Options{Granularity: sweep.Column, Margin: time.Second}).Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Empty(t, c.take())
	assert.True(t, r.Complete())
	assert.Zero(t, r.Events)
	assert.Equal(t, int64(1), r.Expired.Cells, "renewed's first cell expired, in a live column")
	assert.Equal(t, 3+2, r.Read.CellsSeen, "three entries read, and renewed's expired cell and its live one")
	assert.Len(t, f.entries(t), 5, "a sweep that does not delete keeps them")
}

// TestScheduledResume stops a scheduled sweep at each batch in turn, by a
// delivery that fails, in the middle of a salt, and runs it again on the
// same checkpoint: the two runs deliver every event exactly once.
func TestScheduledResume(t *testing.T) {
	for n := 1; n <= 7; n++ { // 7 batches: 14 rows of salt 7, 6 of salt 40, 3 a batch
		t.Run(fmt.Sprintf("fails at delivery %d", n), func(t *testing.T) {
			f := newSchedFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
			rows := append(inSalt(7, 14, "k"), inSalt(40, 6, "k")...)
			for _, row := range rows {
				f.sset(t, row, "sess", "c", "v", 10*time.Second)
			}
			f.clock.Set(base.Add(time.Minute))
			cp := scan.MemoryCheckpoint()
			opts := sweep.Options{Batch: 3, Margin: time.Second, Checkpoint: cp, Delete: n%2 == 0, Scan: scan.Options{Workers: 1}}
			first := &failing{n: n}
			r, err := f.scheduled(t, opts).Once(ctx, first.deliver)
			require.ErrorContains(t, err, "the consumer is down")
			assert.False(t, r.Complete())
			assert.Equal(t, int64(len(first.events)), r.Events)

			var second collector
			r, err = f.scheduled(t, opts).Once(ctx, second.deliver)
			require.NoError(t, err)
			assert.True(t, r.Complete())
			assert.True(t, r.Resumed || n == 1, "resumed")
			assert.Equal(t, int64(len(rows)), r.Events)
			all := lines(append(first.events, second.events...))
			require.Len(t, all, len(rows))
			for i := 1; i < len(all); i++ {
				assert.NotEqual(t, all[i-1], all[i], "delivered twice")
			}
			if opts.Delete {
				assert.Empty(t, f.entries(t), "every entry served and deleted")
			}
		})
	}
}

// TestScheduledDelete: a scheduled sweep that deletes deletes the expired
// cells and the entries it served, but keeps an entry whose second
// straddles the round's end, which the next round serves and deletes:
// the sweep has then served the whole second (issue 33.10; before, GC
// collected it).
func TestScheduledDelete(t *testing.T) {
	f := newSchedFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	f.sset(t, "a", "sess", "c", "v", 10*time.Second)
	f.sset(t, "a", "sess", "d", "v", 12*time.Second)
	f.sset(t, "b", "sess", "c", "v", 14500*time.Millisecond)
	f.sset(t, "c", "sess", "c", "v", time.Minute)
	f.entry(t, "stale", base.Add(11*time.Second))
	s := f.scheduled(t, sweep.Options{Margin: time.Second, Delete: true})

	f.clock.Set(base.Add(15 * time.Second)) // up to 14s
	var c collector
	r, err := s.Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Len(t, c.take(), 2)
	assert.Equal(t, int64(1), r.Deleted)
	assert.Empty(t, testkit.RawRow(t, f.raw, "a"), "a's expired cells deleted")
	assert.ElementsMatch(t, []string{schedule.Key("b", base.Add(14*time.Second)), schedule.Key("c", base.Add(time.Minute))}, f.entries(t),
		"the entries served deleted, stale among them; b's, whose second ends after 14s, kept")

	f.clock.Set(base.Add(30 * time.Second))
	r, err = s.Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Equal(t, []string{`cell expired ` + at(14500*time.Millisecond) + `: table "t" row "b" sess:"c"`}, c.take())
	assert.Equal(t, int64(1), r.Deleted)
	assert.Equal(t, []string{schedule.Key("c", base.Add(time.Minute))}, f.entries(t), "b's, served whole by the two rounds, deleted")
}
