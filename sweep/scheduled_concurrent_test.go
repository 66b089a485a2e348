package sweep_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
	"github.com/cellttl/ttl/sweep"
)

// A scheduled round reads the rows each salt names a few requests at once
// (issue 32): these tests hold it to what the same round reads one
// request after the other delivers.

// concurrentRows is how many expired rows the tests load: with
// concurrentPerRead rows a request, each salt's rows take several
// requests, more than the read-ahead keeps in flight.
const (
	concurrentRows    = 1500
	concurrentPerRead = 5
	concurrentBatch   = 7
)

// loadExpired writes n rows of one cell in family "f", row i expiring i
// milliseconds after base plus a second, each with its entry, and sets the
// clock past the last expiry and the margin.
func loadExpired(t *testing.T, f *schedFixture, n int) {
	t.Helper()
	keys := make([]string, n)
	muts := make([]*bigtable.Mutation, n)
	var entries schedule.Batch
	for i := range keys {
		keys[i] = fmt.Sprintf("row%05d", i)
		at := base.Add(time.Second + time.Duration(i)*time.Millisecond)
		entries.Add(keys[i], at)
		muts[i] = bigtable.NewMutation()
		muts[i].Set("f", "c", bigtable.Time(at), []byte("v"))
	}
	require.NoError(t, entries.Write(ctx, f.sched))
	errs, err := f.raw.ApplyBulk(ctx, keys, muts)
	require.NoError(t, err)
	require.Nil(t, errs)
	f.clock.Set(base.Add(time.Minute))
}

// batches records each delivered batch as the rows of its events, in
// order; fail, when set, is called with the batch's number (from 1) and
// returns the delivery's error.
type batches struct {
	mu   sync.Mutex
	got  [][]string
	fail func(ctx context.Context, n int) error
}

func (b *batches) deliver(ctx context.Context, events []sweep.Event) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	rows := make([]string, len(events))
	for i, e := range events {
		rows[i] = e.Row
	}
	b.got = append(b.got, rows)
	if b.fail != nil {
		return b.fail(ctx, len(b.got))
	}
	return nil
}

// bySalt returns the batches of each salt, in the order delivered, and
// fails the test if a batch holds rows of two salts or is out of key
// order.
func (b *batches) bySalt(t *testing.T) map[int][][]string {
	t.Helper()
	out := map[int][][]string{}
	for _, rows := range b.got {
		salt := schedule.Salt(rows[0])
		for i, row := range rows {
			require.Equal(t, salt, schedule.Salt(row), "a batch of one salt")
			if i > 0 {
				require.Less(t, rows[i-1], row, "a batch in key order")
			}
		}
		out[salt] = append(out[salt], rows)
	}
	return out
}

// round runs one scheduled round over the loaded rows with workers
// workers, ahead requests of rows in flight a salt, into b.
func concurrentRound(t *testing.T, f *schedFixture, cp scan.Checkpoint, workers, ahead int, b *batches) (*sweep.Report, error) {
	t.Helper()
	s := f.scheduled(t, sweep.Options{Batch: concurrentBatch, Margin: time.Second, Checkpoint: cp, Scan: scan.Options{Workers: workers}})
	sweep.SetRowReads(s, ahead, concurrentPerRead)
	return s.Once(ctx, b.deliver)
}

// TestScheduledConcurrentSameAsSequential: reading the rows of a salt a
// few requests at once delivers the same batches, of the same events in
// the same order, as reading them one request after the other: with one
// worker, the very same sequence of batches; with eight, which read
// salts at once, the same sequence within each salt.
func TestScheduledConcurrentSameAsSequential(t *testing.T) {
	f := newSchedFixture(t, map[string]ttl.Strategy{"f": ttl.Grace(ttl.OneSecond(), hour)})
	loadExpired(t, f, concurrentRows)

	var seq batches
	r, err := concurrentRound(t, f, nil, 1, 1, &seq)
	require.NoError(t, err)
	require.True(t, r.Complete())
	require.Equal(t, int64(concurrentRows), r.Events)
	assert.Greater(t, r.Read.Reads, 2*schedule.Salts, "salts of several requests")

	var one batches
	r1, err := concurrentRound(t, f, nil, 1, 4, &one)
	require.NoError(t, err)
	assert.Equal(t, seq.got, one.got, "one worker: the same batches in the same order")
	assert.Equal(t, r.Read, r1.Read, "the same reads")

	var eight batches
	r8, err := concurrentRound(t, f, nil, 8, 4, &eight)
	require.NoError(t, err)
	assert.True(t, r8.Complete())
	assert.Equal(t, seq.bySalt(t), eight.bySalt(t), "eight workers: the same batches in each salt")
	assert.Equal(t, r.Read, r8.Read, "the same reads")
}

// TestScheduledConcurrentResume: a round whose delivery fails mid-way,
// while the next requests of rows are in flight, and that is run again
// with its checkpoint, delivers every row, and again only the rows of the
// batch that failed.
func TestScheduledConcurrentResume(t *testing.T) {
	for _, at := range []int{1, 30, 150} {
		t.Run(fmt.Sprintf("fails at batch %d", at), func(t *testing.T) {
			f := newSchedFixture(t, map[string]ttl.Strategy{"f": ttl.Grace(ttl.OneSecond(), hour)})
			loadExpired(t, f, concurrentRows)
			cp := scan.MemoryCheckpoint()
			down := errors.New("the consumer is down")
			first := batches{fail: func(_ context.Context, n int) error {
				if n == at {
					return down
				}
				return nil
			}}
			r, err := concurrentRound(t, f, cp, 8, 4, &first)
			require.ErrorIs(t, err, down)
			require.False(t, r.Complete())
			require.Len(t, first.got, at, "no batch delivered after the one that failed")
			inFlight := map[string]bool{}
			for _, row := range first.got[at-1] {
				inFlight[row] = true
			}

			var second batches
			r, err = concurrentRound(t, f, cp, 8, 4, &second)
			require.NoError(t, err)
			require.True(t, r.Complete())
			require.Equal(t, int64(concurrentRows), r.Events)
			seen := map[string]int{}
			for _, b := range append(first.got, second.got...) {
				for _, row := range b {
					seen[row]++
				}
			}
			assert.Len(t, seen, concurrentRows, "every row delivered")
			for row, n := range seen {
				if n > 1 {
					assert.True(t, inFlight[row] && n == 2, "row %s delivered %d times, not in the batch that failed", row, n)
				}
			}
		})
	}
}

// TestScheduledConcurrentCancel: a round cancelled while requests of rows
// are in flight returns the cancellation once every request has ended,
// and a run again delivers the rest, nothing twice.
func TestScheduledConcurrentCancel(t *testing.T) {
	f := newSchedFixture(t, map[string]ttl.Strategy{"f": ttl.Grace(ttl.OneSecond(), hour)})
	loadExpired(t, f, concurrentRows)
	cp := scan.MemoryCheckpoint()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var first batches
	first.fail = func(context.Context, int) error {
		if len(first.got) == 10 {
			cancel() // after its delivery: the batch is delivered, and recorded
		}
		return nil
	}
	s := f.scheduled(t, sweep.Options{Batch: concurrentBatch, Margin: time.Second, Checkpoint: cp})
	sweep.SetRowReads(s, 4, concurrentPerRead)
	_, err := s.Once(cctx, first.deliver)
	// The cancel reaches a read in flight as the client's own error: older
	// clients return gRPC's Canceled status without wrapping ctx's error.
	require.True(t, errors.Is(err, context.Canceled) || status.Code(errors.Unwrap(err)) == codes.Canceled || status.Code(err) == codes.Canceled,
		"Once after the cancel: %v", err)

	var second batches
	r, err := concurrentRound(t, f, cp, 8, 4, &second)
	require.NoError(t, err)
	require.True(t, r.Complete())
	seen := map[string]int{}
	for _, b := range append(first.got, second.got...) {
		for _, row := range b {
			seen[row]++
		}
	}
	assert.Len(t, seen, concurrentRows, "every row delivered")
	for row, n := range seen {
		assert.Equal(t, 1, n, "row %s", row)
	}
}
