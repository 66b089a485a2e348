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

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
	"github.com/cellttl/ttl/sweep"
)

// TestScheduleBadInputs: a schedule a sweep cannot work with is refused
// with its sentinel and a message naming the table at fault: by New, or
// at the round's start, before anything is read, delivered or recorded.
func TestScheduleBadInputs(t *testing.T) {
	f := newSchedFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	f.sset(t, "u", "sess", "c", "v", 10*time.Second)
	for _, tt := range []struct {
		name string
		opts sweep.Options
		want error
		msg  string
	}{
		{"a schedule without a name", sweep.Options{Schedule: f.sched}, ttl.ErrInvalidOption, `the schedule of table "t" has no name`},
		{"a name without a schedule", sweep.Options{ScheduleTable: "s"}, ttl.ErrInvalidOption, `schedule table "s" of table "t" is named but not given`},
		{"the data table", sweep.Options{Schedule: f.raw, ScheduleTable: "t"}, ttl.ErrInvalidOption, `schedule table "t" is the table swept`},
		{"reconcile without a schedule", sweep.Options{Reconcile: true}, ttl.ErrInvalidOption, `a reconcile sweep of table "t" needs its schedule`},
		{"a nil *bigtable.Table", sweep.Options{Schedule: (*bigtable.Table)(nil), ScheduleTable: "s"}, ttl.ErrNilArgument, `the schedule of table "t" is a nil table`},
	} {
		tt.opts.Scan.Now = f.clock.Now
		s, err := sweep.New(f.e.Admin, f.raw, "t", f.fams, tt.opts)
		assert.ErrorIs(t, err, tt.want, tt.name)
		assert.ErrorContains(t, err, tt.msg, tt.name)
		assert.Nil(t, s, tt.name)
	}

	create := func(name string, fams map[string]bigtable.Family) {
		require.NoError(t, f.e.Admin.CreateTableFromConf(ctx, &bigtable.TableConf{TableID: name, ColumnFamilies: fams}))
	}
	create("nofamily", map[string]bigtable.Family{"x": {GCPolicy: schedule.Policy(hour)}})
	create("short", map[string]bigtable.Family{schedule.Family: {GCPolicy: schedule.Policy(time.Minute)}})
	f.clock.Set(base.Add(time.Minute))
	for _, tt := range []struct {
		table, msg string
	}{
		{"nope", `schedule table "nope" of table "t" does not exist`},
		{"nofamily", `schedule table "nofamily" has no family "e"`},
		{"short", `schedule table "short" keeps entries 1m0s (family "e", GC policy age() > 1m), but family "sess" of table "t" keeps expired cells 1h0m0s after expiry: a sweep that fell behind would find cells without their entries; give family "e" of the schedule a policy of schedule.Policy(1h0m0s)`},
	} {
		cp := scan.MemoryCheckpoint()
		var c collector
		s := f.sweeper(t, sweep.Options{Schedule: f.e.Client.Open(tt.table), ScheduleTable: tt.table, Checkpoint: cp})
		r, err := s.Once(ctx, c.deliver)
		assert.ErrorIs(t, err, policy.ErrFamilyMismatch, tt.table)
		assert.ErrorContains(t, err, tt.msg, tt.table)
		assert.Nil(t, r)
		assert.Empty(t, c.events)
		rec, err := cp.Load(context.Background())
		require.NoError(t, err)
		assert.Empty(t, rec.State, "no round begun")
	}
}

// TestSchedulePolicyNoAge: a family whose GC does not delete by age keeps
// expired cells until deleted, which only a schedule that does not either
// keeps entries for.
func TestSchedulePolicyNoAge(t *testing.T) {
	f := newSchedFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	require.NoError(t, f.e.Admin.SetGCPolicy(ctx, "t", "sess", bigtable.MaxVersionsPolicy(5)))
	_, err := f.scheduled(t, sweep.Options{}).Once(ctx, (&collector{}).deliver)
	assert.ErrorIs(t, err, policy.ErrFamilyMismatch)
	assert.ErrorContains(t, err, `keeps expired cells until deleted: a sweep that fell behind would find cells without their entries; give family "e" of the schedule a policy of no MaxAge`)

	require.NoError(t, f.e.Admin.SetGCPolicy(ctx, "s", schedule.Family, bigtable.MaxVersionsPolicy(1)))
	_, err = f.scheduled(t, sweep.Options{}).Once(ctx, (&collector{}).deliver)
	assert.NoError(t, err, "entries kept until deleted")
}

// TestScheduleCheckpoints: a scanning, a scheduled and a reconcile sweep
// each refuse the others' checkpoints.
func TestScheduleCheckpoints(t *testing.T) {
	f := newSchedFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	kinds := map[string]sweep.Options{
		"scanning":  {},
		"scheduled": {Schedule: f.sched, ScheduleTable: "s"},
		"reconcile": {Schedule: f.sched, ScheduleTable: "s", Reconcile: true},
	}
	for first, a := range kinds {
		for then, b := range kinds {
			if first == then {
				continue
			}
			cp := scan.MemoryCheckpoint()
			a.Checkpoint, b.Checkpoint = cp, cp
			_, err := f.sweeper(t, a).Once(ctx, (&collector{}).deliver)
			require.NoError(t, err)
			_, err = f.sweeper(t, b).Once(ctx, (&collector{}).deliver)
			assert.ErrorIs(t, err, ttl.ErrInvalidOption, "%s, then %s", first, then)
			assert.ErrorContains(t, err, "the checkpoint records other work", "%s, then %s", first, then)
		}
	}
}

// brokenSchedule is a schedule whose reads or writes fail.
type brokenSchedule struct {
	bigtable.TableAPI
	read, apply, entry error
}

func (b brokenSchedule) ReadRows(ctx context.Context, rs bigtable.RowSet, f func(bigtable.Row) bool, opts ...bigtable.ReadOption) error {
	if b.read != nil {
		return b.read
	}
	return b.TableAPI.ReadRows(ctx, rs, f, opts...)
}

func (b brokenSchedule) ApplyBulk(ctx context.Context, keys []string, muts []*bigtable.Mutation, opts ...bigtable.ApplyOption) ([]error, error) {
	if b.apply != nil {
		return nil, b.apply
	}
	if b.entry != nil {
		return []error{b.entry}, nil
	}
	return b.TableAPI.ApplyBulk(ctx, keys, muts, opts...)
}

// TestScheduleFails: a schedule that cannot be read or written stops the
// round with an error naming it, and a run again resumes the round: the
// two deliver every event, and none twice but the batch in flight (none,
// when the round deleted its cells before it failed).
func TestScheduleFails(t *testing.T) {
	down := errors.New("unavailable")
	for _, tt := range []struct {
		name   string
		broken brokenSchedule
		opts   sweep.Options
		msg    string
	}{
		{"reading entries", brokenSchedule{read: down}, sweep.Options{}, `sweep: reading the entries of schedule table "s": unavailable`},
		{"deleting entries", brokenSchedule{apply: down}, sweep.Options{Delete: true}, `sweep: deleting 1 entry served from schedule table "s": unavailable`},
		{"deleting an entry", brokenSchedule{entry: down}, sweep.Options{Delete: true}, `sweep: deleting entry "`},
		{"looking up entries", brokenSchedule{read: down}, sweep.Options{Reconcile: true}, `sweep: looking up 1 entries in schedule table "s": unavailable`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newSchedFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
			f.sset(t, "u", "sess", "c", "v", 10*time.Second)
			f.set(t, "w", "sess", "c", "v", ttl.For(10*time.Second)) // no entry: only a reconcile reports it
			want := []string{`cell expired ` + at(10*time.Second) + `: table "t" row "u" sess:"c"`}
			if tt.opts.Reconcile {
				want = []string{`cell expired ` + at(10*time.Second) + `: table "t" row "w" sess:"c"`}
			}
			f.clock.Set(base.Add(time.Minute))
			tt.broken.TableAPI = f.sched
			opts := tt.opts
			opts.Checkpoint = scan.MemoryCheckpoint()
			opts.Schedule, opts.ScheduleTable = tt.broken, "s"
			var first collector
			r, err := f.sweeper(t, opts).Once(ctx, first.deliver)
			assert.ErrorContains(t, err, tt.msg)
			assert.False(t, r.Complete())

			opts.Schedule = f.sched
			var second collector
			r, err = f.sweeper(t, opts).Once(ctx, second.deliver)
			require.NoError(t, err)
			assert.True(t, r.Complete())
			all := lines(append(first.events, second.events...))
			assert.Subset(t, want, all)
			assert.Subset(t, all, want)
			assert.LessOrEqual(t, len(all), 2*len(want), "at most the batch in flight again")
		})
	}
}

// TestScheduleBadKey: a key in the schedule that is no entry stops the
// round with an error naming it and the schedule.
func TestScheduleBadKey(t *testing.T) {
	f := newSchedFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	other := (schedule.Salt("x") + 1) % schedule.Salts
	key := fmt.Sprintf("%02x#%013d#x", other, base.Unix()+10)
	testkit.Put(t, f.sched, schedule.Family, testkit.Stored{Row: key, Column: schedule.Column, TS: testkit.MS(base)})
	f.clock.Set(base.Add(time.Minute))
	_, err := f.scheduled(t, sweep.Options{}).Once(ctx, (&collector{}).deliver)
	assert.ErrorIs(t, err, schedule.ErrKey)
	assert.ErrorContains(t, err, `schedule table "s" holds a key that is no entry; delete it`)
	assert.ErrorContains(t, err, key)
}
