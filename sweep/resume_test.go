package sweep_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

// resumeFixture writes 20 rows, k00 to k19, whose cells expire 10s after
// base, on a table split into four shards.
func resumeFixture(t *testing.T) (*fixture, testkit.Tablets) {
	f := newFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	for i := range 20 {
		f.set(t, fmt.Sprintf("k%02d", i), "sess", "c", "v", ttl.For(10*time.Second))
	}
	f.clock.Set(base.Add(time.Minute))
	return f, testkit.Tablets{TableAPI: f.raw, Keys: []string{"k05", "k10", "k15"}}
}

// failing is a Deliver that fails from its n-th call on, and keeps what
// the calls before delivered.
type failing struct {
	collector
	n int
}

func (d *failing) deliver(ctx context.Context, events []sweep.Event) error {
	d.mu.Lock()
	calls := d.calls + 1
	d.mu.Unlock()
	if calls >= d.n {
		return errors.New("the consumer is down")
	}
	return d.collector.deliver(ctx, events)
}

// TestSweepResume stops a sweep at each batch in turn, by a delivery that
// fails, and runs it again on the same checkpoint: the second run resumes
// the round, and the two deliver every event exactly once.
func TestSweepResume(t *testing.T) {
	for n := 1; n <= 8; n++ {
		t.Run(fmt.Sprintf("fails at delivery %d", n), func(t *testing.T) {
			f, tablets := resumeFixture(t)
			cp := scan.FileCheckpoint(filepath.Join(t.TempDir(), "sweep.json"))
			opts := sweep.Options{Since: base, Margin: time.Second, Batch: 3, Checkpoint: cp, Scan: scan.Options{Now: f.clock.Now, Workers: 1}}
			s, err := sweep.New(nil, tablets, "t", f.fams, opts)
			require.NoError(t, err)
			first := &failing{n: n}
			r, err := s.Once(ctx, first.deliver)
			require.ErrorContains(t, err, "the consumer is down")
			assert.False(t, r.Complete())
			assert.Equal(t, int64(len(first.events)), r.Events, "the report counts what was delivered")
			assert.Contains(t, r.String(), "run again to resume")

			again, err := sweep.New(nil, tablets, "t", f.fams, opts)
			require.NoError(t, err)
			var second collector
			r, err = again.Once(ctx, second.deliver)
			require.NoError(t, err)
			assert.True(t, r.Resumed || n == 1, "resumed")
			assert.True(t, r.Complete())
			assert.Equal(t, int64(20), r.Events)
			all := lines(append(first.events, second.events...))
			require.Len(t, all, 20)
			for i := 1; i < len(all); i++ {
				assert.NotEqual(t, all[i-1], all[i], "delivered twice")
			}
		})
	}
}

// saveFails is a checkpoint whose Saves fail from the n-th on.
type saveFails struct {
	scan.Checkpoint
	n, saves int
}

func (c *saveFails) Save(ctx context.Context, r *scan.Record) error {
	c.saves++
	if c.saves >= c.n {
		return errors.New("disk full")
	}
	return c.Checkpoint.Save(ctx, r)
}

// TestSweepRedelivers stops a sweep after a batch was delivered but
// before it was recorded: run again, it delivers that batch again, and
// only that one, with the same IDs.
func TestSweepRedelivers(t *testing.T) {
	f, tablets := resumeFixture(t)
	mem := scan.MemoryCheckpoint()
	// Saves: the journal's record, the round, the first batch of the
	// first shard (k00 to k02); its second (k03, k04) fails.
	cp := &saveFails{Checkpoint: mem, n: 4}
	opts := sweep.Options{Since: base, Margin: time.Second, Batch: 3, Checkpoint: cp, Scan: scan.Options{Now: f.clock.Now, Workers: 1}}
	s, err := sweep.New(nil, tablets, "t", f.fams, opts)
	require.NoError(t, err)
	var first collector
	_, err = s.Once(ctx, first.deliver)
	require.ErrorContains(t, err, "disk full")
	require.Len(t, first.events, 5, "two batches delivered, one recorded")

	opts.Checkpoint = mem
	again, err := sweep.New(nil, tablets, "t", f.fams, opts)
	require.NoError(t, err)
	var second collector
	_, err = again.Once(ctx, second.deliver)
	require.NoError(t, err)
	require.Len(t, second.events, 17, "the unrecorded batch again, and the rest")
	ids := map[string]int{}
	for _, e := range append(first.events, second.events...) {
		ids[e.ID()]++
	}
	assert.Len(t, ids, 20)
	twice := 0
	for _, n := range ids {
		if n == 2 {
			twice++
		}
	}
	assert.Equal(t, 2, twice, "one batch delivered twice, with the same IDs")
}

// TestSweepCheckpointUntouched: a round whose first delivery fails leaves
// the checkpoint as it was and deletes nothing.
func TestSweepCheckpointUntouched(t *testing.T) {
	f, tablets := resumeFixture(t)
	path := filepath.Join(t.TempDir(), "sweep.json")
	opts := sweep.Options{Since: base, Margin: time.Second, Delete: true, Checkpoint: scan.FileCheckpoint(path), Scan: scan.Options{Now: f.clock.Now}}
	s, err := sweep.New(nil, tablets, "t", f.fams, opts)
	require.NoError(t, err)
	f.clock.Set(base.Add(5 * time.Second)) // a first round, before anything expired
	_, err = s.Once(ctx, (&collector{}).deliver)
	require.NoError(t, err)
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	f.clock.Set(base.Add(time.Minute))
	_, err = s.Once(ctx, (&failing{n: 1}).deliver)
	require.ErrorContains(t, err, "the consumer is down")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the checkpoint")
	assert.Len(t, testkit.RawRow(t, f.raw, "k00")["sess"], 1, "nothing deleted")
}
