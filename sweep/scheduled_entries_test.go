package sweep_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/lease"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
	"github.com/cellttl/ttl/sweep"
)

// Which entries a scheduled sweep that deletes may delete: an entry names
// a row and a second, not a family, and several sweeps may read one
// schedule. Found by TestSweepModelScheduled, where a deleting Row sweep
// of one family deleted the entry of another family's cell, which the
// scheduled sweeps of that family then never read, and the scanning ones
// reported.

// schedSweep returns a scheduled sweep of families of the fixture's
// table, with admin unless noAdmin.
func (f *schedFixture) schedSweep(t *testing.T, families []string, noAdmin bool, opts sweep.Options) *sweep.Sweeper {
	t.Helper()
	fams := map[string]ttl.Strategy{}
	for _, name := range families {
		fams[name] = f.fams[name]
	}
	opts.Scan.Now, opts.Schedule, opts.ScheduleTable = f.clock.Now, f.sched, "s"
	admin := f.e.Admin
	if noAdmin {
		admin = nil
	}
	s, err := sweep.New(admin, f.raw, "t", fams, opts)
	require.NoError(t, err)
	return s
}

// TestScheduledDeleteKeepsOtherFamilies: a scheduled sweep of one family
// that deletes keeps the entries it served, which name the cells of the
// table's other family too: a scheduled sweep of that family reports its
// cell.
func TestScheduledDeleteKeepsOtherFamilies(t *testing.T) {
	f := newSchedFixture(t, map[string]ttl.Strategy{
		"sess": ttl.Grace(ttl.OneSecond(), hour),
		"prof": ttl.Grace(ttl.OneSecond(), hour),
	})
	f.sset(t, "r", "sess", "c", "v", 10*time.Second)
	f.sset(t, "r", "prof", "p", "v", 10500*time.Millisecond) // the same second
	f.clock.Set(base.Add(15 * time.Second))

	var c collector
	_, err := f.schedSweep(t, []string{"sess"}, false, sweep.Options{Margin: time.Second, Since: base, Delete: true}).Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Equal(t, []string{`cell expired ` + at(10*time.Second) + `: table "t" row "r" sess:"c"`}, c.take())
	assert.Equal(t, []string{schedule.Key("r", base.Add(10*time.Second))}, f.entries(t), "the entry of prof's cell kept")

	_, err = f.schedSweep(t, []string{"prof"}, false, sweep.Options{Margin: time.Second, Since: base}).Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Equal(t, []string{`cell expired ` + at(10500*time.Millisecond) + `: table "t" row "r" prof:"p"`}, c.take())

	// Given both families, a sweep that deletes deletes it.
	_, err = f.schedSweep(t, []string{"prof", "sess"}, false, sweep.Options{Margin: time.Second, Since: base, Delete: true}).Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Len(t, c.take(), 1, "prof's cell; sess's was deleted")
	assert.Empty(t, f.entries(t))
}

// TestScheduledDeleteKeepsEntriesBeforeWindow: a sweep that deletes, whose
// first window starts within a second, keeps that second's entry, which
// names a cell that expired before the window (never read, never
// deleted), for a sweep further behind on the same schedule.
func TestScheduledDeleteKeepsEntriesBeforeWindow(t *testing.T) {
	f := newSchedFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	f.sset(t, "r", "sess", "c", "v", 10200*time.Millisecond)
	all := []string{"sess"}
	ahead := f.schedSweep(t, all, false, sweep.Options{Margin: time.Millisecond, Delete: true}) // from its first round on
	var c collector
	f.clock.Set(base.Add(10300 * time.Millisecond))
	r, err := ahead.Once(ctx, c.deliver)
	require.NoError(t, err)
	require.Equal(t, r.From, r.Until, "the first round starts the watermark")
	f.clock.Set(base.Add(12 * time.Second))
	_, err = ahead.Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Empty(t, c.take(), "the cell expired before its window")
	assert.Equal(t, []string{schedule.Key("r", base.Add(10*time.Second))}, f.entries(t), "the entry of a second begun before the window kept")

	_, err = f.schedSweep(t, all, false, sweep.Options{Margin: time.Millisecond, Since: base}).Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Equal(t, []string{`cell expired ` + at(10200*time.Millisecond) + `: table "t" row "r" sess:"c"`}, c.take())
}

// TestScheduledDeleteWithoutAdmin: without an admin client a sweep does
// not know the table's families, and keeps the entries it served (GC
// collects them); it still deletes the expired cells.
func TestScheduledDeleteWithoutAdmin(t *testing.T) {
	f := newSchedFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	f.sset(t, "r", "sess", "c", "v", 10*time.Second)
	f.clock.Set(base.Add(15 * time.Second))
	var c collector
	r, err := f.schedSweep(t, []string{"sess"}, true, sweep.Options{Margin: time.Second, Since: base, Delete: true}).Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Len(t, c.take(), 1)
	assert.Equal(t, int64(1), r.Deleted)
	assert.Equal(t, []string{schedule.Key("r", base.Add(10*time.Second))}, f.entries(t))
}

// TestScheduledDeleteKeepsMovingFamily (issue 33.1): a family in a move
// whose GC collects nothing by age during the move (here from no
// strategy) still has entries, so a scheduled sweep of another family that
// deletes keeps them: the scheduled sweep of the moving family then
// reports what its scanning sweep reports.
func TestScheduledDeleteKeepsMovingFamily(t *testing.T) {
	f := newSchedFixture(t, map[string]ttl.Strategy{
		"sess": ttl.Grace(ttl.OneSecond(), hour),
		"mv":   ttl.Move{To: ttl.OneSecond(), Start: base.Add(-hour)},
	})
	// mv keeps cells until deleted during the move: so must the schedule.
	require.NoError(t, f.e.Admin.SetGCPolicy(ctx, "s", schedule.Family, bigtable.NoGcPolicy()))
	f.sset(t, "r", "sess", "c", "v", 10*time.Second)
	f.sset(t, "r", "mv", "m", "v", 10*time.Second)
	f.clock.Set(base.Add(15 * time.Second))

	var c collector
	_, err := f.schedSweep(t, []string{"sess"}, false, sweep.Options{Margin: time.Second, Since: base, Delete: true}).Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Equal(t, []string{`cell expired ` + at(10*time.Second) + `: table "t" row "r" sess:"c"`}, c.take())
	assert.Equal(t, []string{schedule.Key("r", base.Add(10*time.Second))}, f.entries(t), "the entry of mv's cell kept")

	want := []string{`cell expired ` + at(10*time.Second) + `: table "t" row "r" mv:"m"`}
	_, err = f.schedSweep(t, []string{"mv"}, false, sweep.Options{Margin: time.Second, Since: base}).Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Equal(t, want, c.take(), "the scheduled sweep of mv")
	scanning, err := sweep.New(f.e.Admin, f.raw, "t", map[string]ttl.Strategy{"mv": f.fams["mv"]},
		sweep.Options{Margin: time.Second, Since: base, Scan: scan.Options{Now: f.clock.Now}})
	require.NoError(t, err)
	_, err = scanning.Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Equal(t, want, c.take(), "the scanning sweep of mv")
}

// TestScheduledDeleteSplitSecond (issue 33.10): a round's end splits a
// second; the next round, which serves the rest of it, deletes that
// second's entries, once this sweep has served the whole second: the
// part before the first round's end as well, its window starting before
// the second. Before, they waited for the schedule's GC. The checkpoint
// carries where the sweep's span starts, to a new Sweeper (a restarted
// process), in a file as in Bigtable (package lease).
func TestScheduledDeleteSplitSecond(t *testing.T) {
	for _, kind := range []string{"memory", "file", "lease"} {
		t.Run(kind, func(t *testing.T) {
			f := newSchedFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
			var cp scan.Checkpoint
			switch kind {
			case "memory":
				cp = scan.MemoryCheckpoint()
			case "file":
				cp = scan.FileCheckpoint(filepath.Join(t.TempDir(), "sweep.json"))
			case "lease":
				f.e.TableForTest(t, "sweeps", map[string]bigtable.GCPolicy{lease.Family: bigtable.MaxVersionsPolicy(1)})
				l, err := lease.Open(ctx, f.e.Admin, f.e.Client.Open("sweeps"), "sweeps", "t", lease.Options{Now: f.clock.Now})
				require.NoError(t, err)
				cp = l
			}
			f.sset(t, "a", "sess", "c", "v", 10200*time.Millisecond) // before the split
			f.sset(t, "b", "sess", "c", "v", 10700*time.Millisecond) // after it
			split := []string{schedule.Key("a", base.Add(10*time.Second)), schedule.Key("b", base.Add(10*time.Second))}
			opts := sweep.Options{Margin: time.Millisecond, Since: base, Delete: true, Checkpoint: cp}

			var c collector
			f.clock.Set(base.Add(10501 * time.Millisecond))
			r, err := f.schedSweep(t, []string{"sess"}, false, opts).Once(ctx, c.deliver)
			require.NoError(t, err)
			require.Equal(t, base.Add(10500*time.Millisecond), r.Until, "the round's end splits second 10")
			assert.Equal(t, []string{`cell expired ` + at(10200*time.Millisecond) + `: table "t" row "a" sess:"c"`}, c.take())
			assert.ElementsMatch(t, split, f.entries(t), "the second is not served whole yet")

			f.clock.Set(base.Add(12 * time.Second))
			_, err = f.schedSweep(t, []string{"sess"}, false, opts).Once(ctx, c.deliver) // a new process
			require.NoError(t, err)
			assert.Equal(t, []string{`cell expired ` + at(10700*time.Millisecond) + `: table "t" row "b" sess:"c"`}, c.take())
			assert.Empty(t, f.entries(t), "the split second's entries, served whole by the two rounds")
		})
	}
}

// TestScheduledDeleteKeepsSplitSecondBeforeSince: a sweep whose first
// round starts within a second (Since) never read that second's cells
// that expired before Since: it keeps the second's entries, for a sweep
// further behind, round after round.
func TestScheduledDeleteKeepsSplitSecondBeforeSince(t *testing.T) {
	f := newSchedFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	f.sset(t, "a", "sess", "c", "v", 10200*time.Millisecond) // before Since
	f.sset(t, "b", "sess", "c", "v", 10700*time.Millisecond) // after it, in the same second
	split := []string{schedule.Key("a", base.Add(10*time.Second)), schedule.Key("b", base.Add(10*time.Second))}
	all := []string{"sess"}
	f.clock.Set(base.Add(12 * time.Second))
	s := f.schedSweep(t, all, false, sweep.Options{Margin: time.Millisecond, Since: base.Add(10500 * time.Millisecond), Delete: true})

	var c collector
	for _, now := range []time.Duration{12 * time.Second, 14 * time.Second} {
		f.clock.Set(base.Add(now))
		_, err := s.Once(ctx, c.deliver)
		require.NoError(t, err)
		assert.ElementsMatch(t, split, f.entries(t), "at %v: the second begun before Since", now)
	}
	assert.Equal(t, []string{`cell expired ` + at(10700*time.Millisecond) + `: table "t" row "b" sess:"c"`}, c.take())

	_, err := f.schedSweep(t, all, false, sweep.Options{Margin: time.Millisecond, Since: base}).Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Equal(t, []string{`cell expired ` + at(10200*time.Millisecond) + `: table "t" row "a" sess:"c"`}, c.take(),
		"a sweep further behind reads the cell before Since")
}

// TestScheduledDeleteSplitSecondOldCheckpoint: a checkpoint written
// before rounds recorded where the span they served starts has no such
// start: the next round keeps the entries of the second begun before its
// window, as rounds did, and records its own From as the start; the
// round after deletes the second the next round's end splits.
func TestScheduledDeleteSplitSecondOldCheckpoint(t *testing.T) {
	f := newSchedFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	f.sset(t, "a", "sess", "c", "v", 10700*time.Millisecond)
	f.sset(t, "b", "sess", "c", "v", 11700*time.Millisecond)
	cp := scan.MemoryCheckpoint()
	s := f.schedSweep(t, []string{"sess"}, false, sweep.Options{Margin: time.Millisecond, Since: base, Delete: true, Checkpoint: cp})

	var c collector
	f.clock.Set(base.Add(10501 * time.Millisecond))
	_, err := s.Once(ctx, c.deliver)
	require.NoError(t, err)
	rec, err := cp.Load(ctx)
	require.NoError(t, err)
	var st map[string]any
	require.NoError(t, json.Unmarshal(rec.State, &st))
	require.Contains(t, st, "start")
	delete(st, "start") // as an older version wrote it
	rec.State, err = json.Marshal(st)
	require.NoError(t, err)
	require.NoError(t, cp.Save(ctx, rec))

	f.clock.Set(base.Add(11501 * time.Millisecond))
	_, err = s.Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Len(t, c.take(), 1, "a's cell")
	assert.ElementsMatch(t, []string{schedule.Key("a", base.Add(10*time.Second)), schedule.Key("b", base.Add(11*time.Second))}, f.entries(t),
		"second 10, begun before the round's window and its recorded span")

	f.clock.Set(base.Add(13 * time.Second))
	_, err = s.Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Len(t, c.take(), 1, "b's cell")
	assert.Equal(t, []string{schedule.Key("a", base.Add(10*time.Second))}, f.entries(t),
		"second 11, served whole since the round that recorded the start")
}

// TestScheduledDeleteSplitSecondResumed: a round that stopped (here its
// delivery failed) and is resumed keeps where the sweep's span starts:
// it deletes the entries of the second the round before split.
func TestScheduledDeleteSplitSecondResumed(t *testing.T) {
	f := newSchedFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	f.sset(t, "a", "sess", "c", "v", 10700*time.Millisecond)
	opts := sweep.Options{Margin: time.Millisecond, Since: base, Delete: true, Checkpoint: scan.MemoryCheckpoint()}
	var c collector
	f.clock.Set(base.Add(10501 * time.Millisecond))
	_, err := f.schedSweep(t, []string{"sess"}, false, opts).Once(ctx, c.deliver)
	require.NoError(t, err)

	f.clock.Set(base.Add(12 * time.Second))
	boom := errors.New("the consumer is down")
	_, err = f.schedSweep(t, []string{"sess"}, false, opts).Once(ctx, func(context.Context, []sweep.Event) error { return boom })
	require.ErrorIs(t, err, boom)
	assert.Equal(t, []string{schedule.Key("a", base.Add(10*time.Second))}, f.entries(t), "not served yet")

	r, err := f.schedSweep(t, []string{"sess"}, false, opts).Once(ctx, c.deliver)
	require.NoError(t, err)
	require.True(t, r.Resumed)
	assert.Len(t, c.take(), 1)
	assert.Empty(t, f.entries(t), "the split second, served whole")
}
