package sweep_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
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

// A context cancelled during the second delivery, while another worker
// is at each point of its shard in turn (issue 26: the sweep model once
// reported 2 of 3 events delivered at such a call). Two workers read the
// fixture's first two shards; the first shard's first batch is the first
// delivery, the second shard's first batch the second, which cancels the
// call while the first shard's worker is:
//
//   - waiting to flush its next batch, or about to (it reached the row
//     that fills it before the cancellation, or after);
//   - at the end of its read, with events not yet delivered;
//   - at the end of its read, with every event delivered.
//
// and the second delivery then returns nil (the consumer took the batch),
// the context's error (it gave up), or another error after the consumer
// took some of the events. Whatever the order, the checkpoint must record
// no row whose events were not delivered, no batch may be delivered once
// the call is cancelled, at most one batch is delivered and not
// recorded, and a second call delivers the rest: every event once, but
// for that batch.
func TestCancelDuringSecondDelivery(t *testing.T) {
	points := []struct {
		name  string
		batch int
		// where the first shard's worker waits: before the row that
		// fills its second batch (k03), or before its read returns; and
		// whether the second delivery lets it on before it cancels
		row, end  bool
		openFirst bool
		// how the checkpoint must record the first shard: its first
		// batch only, or (nothing left to deliver) finished
		wantS0Done  bool
		wantS0After string
	}{
		{name: "waiting to flush, reached before the cancellation", batch: 2, row: true, openFirst: true, wantS0After: "k01"},
		{name: "waiting to flush, reached after the cancellation", batch: 2, row: true, wantS0After: "k01"},
		{name: "read ended, events pending", batch: 3, end: true, wantS0After: "k02"},
		{name: "read ended, nothing pending", batch: 5, end: true, wantS0Done: true, wantS0After: "k04"},
	}
	returns := []string{"took it", "gave up", "failed after taking some"}
	for _, p := range points {
		for _, ret := range returns {
			t.Run(p.name+", "+ret, func(t *testing.T) {
				f, plain := resumeFixture(t)
				mem := scan.MemoryCheckpoint()
				ctx, cancel := context.WithCancel(ctx)
				defer cancel()
				// The second shard's worker waits for the first delivery
				// before its first row (k05), so that its first batch is
				// the second delivery.
				s0 := newGate()
				s1 := newGate()
				g := &gatedTablets{Tablets: plain, rows: map[string]*gate{"k05": s1}, ends: map[string]*gate{}}
				if p.row {
					g.rows["k03"] = s0
				}
				if p.end {
					g.ends["k00"] = s0
				}
				d := &cancelling{cancel: cancel, ret: ret, first: s1, second: func() {
					s0.reachedBy(t)
					if p.openFirst {
						s0.release()
					}
					cancel()
					s0.release()
				}}
				opts := sweep.Options{Since: base, Margin: time.Second, Batch: p.batch, Checkpoint: mem, Scan: scan.Options{Now: f.clock.Now, Workers: 2}}
				s, err := sweep.New(nil, g, "t", f.fams, opts)
				require.NoError(t, err)
				r, err := s.Once(ctx, d.deliver)
				require.False(t, s0.stuck.Load() || s1.stuck.Load(), "a worker waited at a gate no delivery opened")
				require.Error(t, err)
				assert.False(t, r.Complete(), "a call cancelled: %v", r)

				rec, err := mem.Load(context.Background())
				require.NoError(t, err)
				recorded := recordedRows(rec, 20)
				delivered, inFlight := d.outcome(recorded)
				for row := range recorded {
					assert.True(t, delivered[row], "row %s recorded, its event not delivered", row)
				}
				assert.LessOrEqual(t, inFlight, 1, "batches delivered and not recorded")
				for _, c := range d.calls {
					assert.False(t, c.late, "a batch of rows %v delivered after the call was cancelled", c.rows)
				}
				assert.Len(t, d.calls, 2, "deliveries: the first shard's next batch must not be delivered")
				assert.Equal(t, p.wantS0Done, rec.Shards[0].Done, "the first shard recorded finished")
				assert.Equal(t, p.wantS0After, rec.Shards[0].After, "the first shard's last row recorded")
				assert.Equal(t, int64(len(recorded)), r.Events, "the report counts what was recorded")

				// A second call resumes the round: it delivers every row not
				// recorded, and none that was.
				again, err := sweep.New(nil, plain, "t", f.fams, opts)
				require.NoError(t, err)
				var second collector
				r, err = again.Once(context.Background(), second.deliver)
				require.NoError(t, err)
				assert.True(t, r.Complete())
				assert.Equal(t, int64(20), r.Events)
				got := map[string]bool{}
				for _, e := range second.events {
					assert.False(t, recorded[e.Row], "row %s delivered again after it was recorded", e.Row)
					got[e.Row] = true
				}
				for i := range 20 {
					row := fmt.Sprintf("k%02d", i)
					assert.True(t, got[row] || recorded[row], "row %s never delivered", row)
				}
			})
		}
	}
}

// recordedRows returns the rows of kNN, n of them, that rec records as
// done: up to each shard's After, or all of a shard that is Done.
func recordedRows(rec *scan.Record, n int) map[string]bool {
	out := map[string]bool{}
	for i := range n {
		row := fmt.Sprintf("k%02d", i)
		for _, s := range rec.Shards {
			if in(s.Shard, row) && (s.Done || s.After != "" && row <= s.After) {
				out[row] = true
			}
		}
	}
	return out
}

// in reports whether row is in shard s.
func in(s scan.Shard, row string) bool { return row >= s.Start && (s.End == "" || row < s.End) }

// cancelling is a Deliver whose second call runs second (which cancels
// the call) and then returns as ret says; it opens first once the first
// call returned.
type cancelling struct {
	cancel func()
	ret    string
	first  *gate
	second func()

	mu    sync.Mutex
	calls []cancelCall
}

// A cancelCall is one call of a cancelling Deliver.
type cancelCall struct {
	rows  []string
	taken int  // events the consumer took
	late  bool // made once the context was done
}

func (d *cancelling) deliver(ctx context.Context, events []sweep.Event) error {
	c := cancelCall{late: ctx.Err() != nil}
	for _, e := range events {
		c.rows = append(c.rows, e.Row)
	}
	d.mu.Lock()
	n := len(d.calls) + 1
	d.mu.Unlock()
	var err error
	switch n {
	case 1:
		c.taken = len(events)
		defer d.first.release()
	case 2:
		d.second()
		switch d.ret {
		case "took it":
			c.taken = len(events)
		case "gave up":
			err = ctx.Err()
		default:
			c.taken, err = 1, errConsumer
		}
	default:
		if err = ctx.Err(); err == nil {
			c.taken = len(events)
		}
	}
	d.mu.Lock()
	d.calls = append(d.calls, c)
	d.mu.Unlock()
	return err
}

// outcome returns the rows whose events the consumer took, and how many
// batches it took some of without their rows being all recorded.
func (d *cancelling) outcome(recorded map[string]bool) (map[string]bool, int) {
	delivered := map[string]bool{}
	inFlight := 0
	for _, c := range d.calls {
		all := true
		for _, row := range c.rows[:c.taken] {
			delivered[row] = true
		}
		for _, row := range c.rows {
			all = all && recorded[row]
		}
		if c.taken > 0 && !all {
			inFlight++
		}
	}
	return delivered, inFlight
}

// A gate stops a worker at a point of its read until released; reached
// is closed as the worker arrives. A gate never released lets the worker
// on after a minute, and says so (stuck), rather than hang the test.
type gate struct {
	reached, open chan struct{}
	once          sync.Once
	stuck         atomic.Bool
}

func newGate() *gate { return &gate{reached: make(chan struct{}), open: make(chan struct{})} }

// wait marks the gate reached and waits until it is released.
func (g *gate) wait() {
	close(g.reached)
	select {
	case <-g.open:
	case <-time.After(time.Minute):
		g.stuck.Store(true)
	}
}

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

// reachedBy waits until a worker reached the gate, and fails t if none
// does within a minute: a schedule the test meant did not happen.
func (g *gate) reachedBy(t *testing.T) {
	select {
	case <-g.reached:
	case <-time.After(time.Minute):
		t.Error("no worker reached the gate")
	}
}

// gatedTablets is the fixture's table whose reads stop at gates: before
// handing over a row (rows, by key), and before a read that ended
// returns (ends, by a row of the shard). A read that stops at its end
// ran to the end unaffected by a cancellation meanwhile.
type gatedTablets struct {
	testkit.Tablets
	rows map[string]*gate
	ends map[string]*gate
}

func (t *gatedTablets) ReadRows(ctx context.Context, rs bigtable.RowSet, f func(bigtable.Row) bool, opts ...bigtable.ReadOption) error {
	var end *gate
	if r, ok := rs.(bigtable.RowRange); ok {
		for row, g := range t.ends {
			if r.Contains(row) {
				end, ctx = g, context.WithoutCancel(ctx)
			}
		}
	}
	err := t.Tablets.ReadRows(ctx, rs, func(r bigtable.Row) bool {
		if g := t.rows[r.Key()]; g != nil {
			g.wait()
		}
		return f(r)
	}, opts...)
	if end != nil {
		end.wait()
	}
	return err
}

// TestCancelAtSecondDeliveryOfThree is the shape of the call issue 26
// reported: one worker, three column events in one shard (rows r03, r05,
// r06 of a table split at r03 and r08), and the second delivery cancels
// the call after the consumer took its batch. With batches of one, the
// third event is read after the cancellation (the shard's read runs to
// its end regardless): it must be neither delivered nor recorded, so that
// the checkpoint records 2 of the 3 rows, the report counts 2 events, and
// the next call delivers the third, and only it.
func TestCancelAtSecondDeliveryOfThree(t *testing.T) {
	f := newFixture(t, map[string]ttl.Strategy{"a": ttl.Grace(ttl.OneSecond(), hour)})
	for _, row := range []string{"r03", "r05", "r06"} {
		f.set(t, row, "a", "c0", "v", ttl.For(10*time.Second))
	}
	f.set(t, "r04", "a", "c0", "live", ttl.For(hour)) // read, and owes nothing
	f.clock.Set(base.Add(time.Minute))
	plain := testkit.Tablets{TableAPI: f.raw, Keys: []string{"r03", "r08"}}
	end := newGate()
	end.release()
	g := &gatedTablets{Tablets: plain, ends: map[string]*gate{"r03": end}}
	mem := scan.MemoryCheckpoint()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d := &cancelling{cancel: cancel, ret: "took it", first: newGate(), second: cancel}
	opts := sweep.Options{Since: base, Margin: time.Second, Granularity: sweep.Column, Batch: 1, Checkpoint: mem, Scan: scan.Options{Now: f.clock.Now, Workers: 1}}
	s, err := sweep.New(nil, g, "t", f.fams, opts)
	require.NoError(t, err)
	r, err := s.Once(ctx, d.deliver)
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, r.Complete())
	require.Len(t, d.calls, 2, "deliveries")
	assert.Equal(t, []string{"r03"}, d.calls[0].rows)
	assert.Equal(t, []string{"r05"}, d.calls[1].rows)
	rec, err := mem.Load(context.Background())
	require.NoError(t, err)
	require.Len(t, rec.Shards, 3)
	assert.True(t, rec.Shards[0].Done, "the first shard, empty")
	assert.False(t, rec.Shards[1].Done, "the second shard: its third event was not delivered")
	assert.Equal(t, "r05", rec.Shards[1].After, "the last row recorded")
	assert.False(t, rec.Shards[2].Done, "the third shard is not read after the cancellation")
	assert.Equal(t, int64(2), r.Events, "the report counts what was recorded")

	again, err := sweep.New(nil, plain, "t", f.fams, opts)
	require.NoError(t, err)
	var second collector
	r, err = again.Once(context.Background(), second.deliver)
	require.NoError(t, err)
	assert.True(t, r.Resumed)
	assert.True(t, r.Complete())
	assert.Equal(t, int64(3), r.Events)
	require.Len(t, second.events, 1)
	assert.Equal(t, "r06", second.events[0].Row)
}
