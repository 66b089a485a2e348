package sweep_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

// Regression tests of bugs the model test (model_test.go) found.

// TestBugSaveFailsOnLastBatch: a Save that fails as a shard's last batch
// is recorded leaves the round unfinished in the checkpoint. The call's
// report was built from the journal, which had taken the batch in before
// the Save failed: it was Complete, with an error, and counted the batch
// the next call delivers again. It must be neither.
func TestBugSaveFailsOnLastBatch(t *testing.T) {
	f, _ := resumeFixture(t)
	mem := scan.MemoryCheckpoint()
	// Saves: the journal's record, the round, then the one batch of the
	// one shard, which fails.
	opts := sweep.Options{Since: base, Margin: time.Second, Checkpoint: &saveFails{Checkpoint: mem, n: 3}, Scan: scan.Options{Now: f.clock.Now}}
	s, err := sweep.New(nil, testkit.Tablets{TableAPI: f.raw}, "t", f.fams, opts)
	require.NoError(t, err)
	var first collector
	r, err := s.Once(ctx, first.deliver)
	require.ErrorContains(t, err, "disk full")
	require.Len(t, first.events, 20, "delivered, and not recorded")
	assert.False(t, r.Complete(), "a call that failed: %v", r)
	assert.False(t, r.Read.Complete(), "the shard is not recorded as read")
	assert.Zero(t, r.Events, "nothing recorded")

	opts.Checkpoint = mem
	again, err := sweep.New(nil, testkit.Tablets{TableAPI: f.raw}, "t", f.fams, opts)
	require.NoError(t, err)
	var second collector
	r, err = again.Once(ctx, second.deliver)
	require.NoError(t, err)
	assert.True(t, r.Resumed)
	assert.True(t, r.Complete())
	assert.Equal(t, int64(20), r.Events)
	assert.Equal(t, lines(first.events), lines(second.events), "the batch in flight, again")
}

// saveFailsOnce is a checkpoint whose n-th Save fails, and only that
// one; failed is closed as it fails.
type saveFailsOnce struct {
	scan.Checkpoint
	n, saves int
	failed   chan struct{}
}

func (c *saveFailsOnce) Save(ctx context.Context, r *scan.Record) error {
	if c.saves++; c.saves == c.n {
		close(c.failed)
		return errDisk
	}
	return c.Checkpoint.Save(ctx, r)
}

// afterFailure is a table split at "z" whose second shard, empty, is read
// once the checkpoint's Save failed (or after a second), to the end even
// if the sweep's context is cancelled meanwhile.
type afterFailure struct {
	testkit.Tablets
	failed chan struct{}
}

func (t afterFailure) ReadRows(ctx context.Context, rs bigtable.RowSet, f func(bigtable.Row) bool, opts ...bigtable.ReadOption) error {
	if r, ok := rs.(bigtable.RowRange); ok && r.Contains("z") {
		select {
		case <-t.failed:
		case <-time.After(time.Second):
		}
		ctx = context.WithoutCancel(ctx)
	}
	return t.Tablets.ReadRows(ctx, rs, f, opts...)
}

// TestBugSaveFailsBeforeAnotherShard: the journal takes a batch in before
// its Save, so after a Save that failed another shard's Save recorded
// that batch and the round as finished, while the call returned the
// error with a report that said otherwise; the next call then started a
// new round. The checkpoint must record no shard after a failed Save: the
// report is not Complete, and the next call resumes the round.
func TestBugSaveFailsBeforeAnotherShard(t *testing.T) {
	f, _ := resumeFixture(t)
	mem := scan.MemoryCheckpoint()
	// Saves: the journal's record, the round, then the batch of the
	// first shard, which fails; the second shard is empty.
	cp := &saveFailsOnce{Checkpoint: mem, n: 3, failed: make(chan struct{})}
	tablets := afterFailure{Tablets: testkit.Tablets{TableAPI: f.raw, Keys: []string{"z"}}, failed: cp.failed}
	opts := sweep.Options{Since: base, Margin: time.Second, Checkpoint: cp, Scan: scan.Options{Now: f.clock.Now, Workers: 2}}
	s, err := sweep.New(nil, tablets, "t", f.fams, opts)
	require.NoError(t, err)
	var first collector
	r, err := s.Once(ctx, first.deliver)
	require.ErrorIs(t, err, errDisk)
	assert.False(t, r.Complete(), "a call that failed: %v", r)
	assert.Zero(t, r.Events)
	rec, err := mem.Load(context.Background())
	require.NoError(t, err)
	for _, sh := range rec.Shards {
		assert.False(t, sh.Done, "shard %v recorded after a Save failed", sh.Shard)
	}

	var second collector
	r, err = s.Once(ctx, second.deliver)
	require.NoError(t, err)
	assert.True(t, r.Resumed)
	assert.True(t, r.Complete())
	assert.Equal(t, int64(20), r.Events)
	assert.Equal(t, lines(first.events), lines(second.events), "the batch in flight, again")
}

// stallingSave is a checkpoint whose Save of the first batch (the third
// Save of a new sweep) waits until a second batch is being delivered, or
// for wait, and then fails, as does every Save after it: a process that
// stops while recording a batch.
type stallingSave struct {
	scan.Checkpoint
	wait       time.Duration
	mu         sync.Mutex
	saves      int
	deliveries int
	second     chan struct{} // closed as the second delivery begins
}

func (c *stallingSave) Save(ctx context.Context, r *scan.Record) error {
	c.mu.Lock()
	c.saves++
	n := c.saves
	c.mu.Unlock()
	if n < 3 {
		return c.Checkpoint.Save(ctx, r)
	}
	if n == 3 {
		select {
		case <-c.second:
		case <-time.After(c.wait):
		}
	}
	return errDisk
}

func (c *stallingSave) deliver(context.Context, []sweep.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.deliveries++; c.deliveries == 2 {
		close(c.second)
	}
	return nil
}

// TestBugOneBatchInFlight: with several workers, one shard's batch was
// delivered while another's, delivered before it, was still being
// recorded; both went unrecorded when the run stopped, and both were
// delivered again, where the package doc promises at most the batch it
// was delivering. A batch must be recorded before the next is delivered,
// and none delivered after a batch failed.
func TestBugOneBatchInFlight(t *testing.T) {
	f, _ := resumeFixture(t)
	tablets := testkit.Tablets{TableAPI: f.raw, Keys: []string{"k10"}}
	mem := scan.MemoryCheckpoint()
	cp := &stallingSave{Checkpoint: mem, wait: 300 * time.Millisecond, second: make(chan struct{})}
	opts := sweep.Options{Since: base, Margin: time.Second, Batch: 3, Checkpoint: cp, Scan: scan.Options{Now: f.clock.Now, Workers: 2}}
	s, err := sweep.New(nil, tablets, "t", f.fams, opts)
	require.NoError(t, err)
	_, err = s.Once(ctx, cp.deliver)
	require.ErrorIs(t, err, errDisk)
	assert.Equal(t, 1, cp.deliveries, "batches delivered and not recorded")

	opts.Checkpoint = mem
	again, err := sweep.New(nil, tablets, "t", f.fams, opts)
	require.NoError(t, err)
	var second collector
	r, err := again.Once(ctx, second.deliver)
	require.NoError(t, err)
	assert.True(t, r.Complete())
	assert.Len(t, second.events, 20, "every event, the batch in flight among them")
}
