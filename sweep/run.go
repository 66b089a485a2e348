package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/scan"
)

// state is what a sweep keeps in its checkpoint besides the shards: the
// window of its round, and Start, the From of the first round recorded
// in the checkpoint, carried from round to round: the rounds since have
// served every expiry after it, without a gap (see entries). A checkpoint
// written before Start was recorded has none: the next round records its
// own From. Once every shard is done, Until is the watermark.
type state struct {
	From  time.Time `json:"from"`
	Until time.Time `json:"until"`
	Start time.Time `json:"start"`
}

// tally is what a round did in one shard, as its checkpoint records it.
type tally struct {
	Events  int64      `json:"events"`
	Expired scan.Count `json:"expired"`
	Deleted int64      `json:"deleted"`
	// Unscheduled counts the events of a reconcile round: those with no
	// entry in the schedule.
	Unscheduled int64 `json:"unscheduled,omitempty"`
}

// add adds o to t.
func (t *tally) add(o tally) {
	t.Events += o.Events
	t.Expired.Add(o.Expired)
	t.Deleted += o.Deleted
	t.Unscheduled += o.Unscheduled
}

// A run is one call of Sweeper.Once.
type run struct {
	s       *Sweeper
	deliver Deliver
	j       *scan.Journal
	round   *Round
	filter  bigtable.Filter

	// flushing is held from a batch's delivery until it is recorded, so
	// that one batch at most is delivered and not recorded: the one a
	// resumed run delivers again. failed is the error of the first flush
	// that failed, set under it: no batch is delivered after that. ahead
	// reports that it was a Save: the journal then holds a batch the
	// checkpoint does not, and no shard is recorded after it, lest a
	// later Save record that batch as well.
	flushing sync.Mutex
	failed   error
	ahead    bool

	// deletesEntries: a scheduled round that deletes also deletes the
	// entries it serves (see ownsEntries), of the seconds after start
	// (state.Start).
	deletesEntries bool
	start          time.Time

	mu       sync.Mutex         // guards the fields below
	read     scan.Stats         // by the shards read, whether they finished or not
	saved    bool               // the run recorded progress in the checkpoint
	recorded []scan.ShardRecord // each shard as the checkpoint records it
}

// do runs the round the checkpoint records as begun, or the next one.
func (r *run) do(ctx context.Context) (*Report, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.s
	cp := s.o.Checkpoint
	prev, err := cp.Load(ctx)
	if err != nil {
		return nil, err
	}
	if r.j, err = scan.OpenJournal(ctx, cp, s.work, func() ([]scan.Shard, error) { return nil, nil }); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	var st state
	began, err := r.j.LoadState(&st)
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	resumed := began && !finished(r.j.Shards())
	policies, err := r.policies(ctx)
	if err != nil {
		return nil, err
	}
	if !resumed {
		next, ok, err := r.next(ctx, began, st)
		if err != nil {
			return nil, err
		}
		if !ok {
			return &Report{Table: s.table, Granularity: s.o.Granularity, From: next.From, Until: next.From}, nil
		}
		shards, err := r.split(ctx)
		if err != nil {
			return nil, err
		}
		if err := r.j.NextRound(ctx, shards, next); err != nil {
			return nil, err
		}
		st = next
	}
	r.round, err = s.Round(st.From, st.Until)
	if err != nil {
		return nil, err
	}
	r.start = st.Start
	if r.start.IsZero() { // a round begun before rounds recorded their start
		r.start = st.From
	}
	r.recorded = r.j.Shards()
	r.filter = r.round.Filter()
	err = r.shards(ctx)
	if err != nil && !resumed && !r.saved && prev != nil {
		// Nothing was delivered: leave the checkpoint as it was, even
		// when the round's context is done.
		if rerr := cp.Save(context.WithoutCancel(ctx), prev); rerr != nil {
			err = fmt.Errorf("%w (and restoring the checkpoint: %v)", err, rerr)
		}
	}
	return r.report(resumed, policies), err
}

// next returns the window of the round after st, and false when it would
// be empty: the watermark is within the margin of now. A sweep that has
// not begun records where its first round starts.
func (r *run) next(ctx context.Context, began bool, st state) (state, bool, error) {
	s := r.s
	now := s.now()
	end := now.Add(-s.o.Margin).Truncate(time.Millisecond)
	from, start := st.Until, st.Start
	if !began {
		if err := s.checkOptions(now); err != nil {
			return state{From: from}, false, fmt.Errorf("sweep: %w", err)
		}
		from = s.o.Since
		if from.IsZero() {
			from = end
		}
		start = from
	}
	if start.IsZero() {
		start = from // the checkpoint's rounds recorded no start
	}
	if !end.After(from) {
		if !began {
			if err := r.j.NextRound(ctx, nil, state{From: from, Until: from, Start: start}); err != nil {
				return state{From: from}, false, err
			}
		}
		return state{From: from}, false, nil
	}
	return state{From: from, Until: end, Start: start}, true, nil
}

// finished reports whether every shard of a round is done.
func finished(shards []scan.ShardRecord) bool {
	for _, s := range shards {
		if !s.Done {
			return false
		}
	}
	return true
}

// shards reads the shards of the round not done yet.
func (r *run) shards(ctx context.Context) error {
	if r.filter == nil {
		// Nothing can have expired in the window: the round is done.
		for i := range r.j.Shards() {
			if err := r.j.Update(ctx, i, "", tally{}, nil, true); err != nil {
				return err
			}
			r.record(i)
		}
		return nil
	}
	var todo []scan.Shard
	index := map[scan.Shard]int{}
	for i, rec := range r.j.Shards() {
		if !rec.Done {
			todo = append(todo, rec.Shard)
			index[rec.Shard] = i
		}
	}
	_, err := scan.Run(ctx, todo, r.s.o.Scan, func(ctx context.Context, sh scan.Shard, c *scan.ShardProgress) (struct{}, error) {
		return struct{}{}, r.shard(ctx, index[sh], c)
	}, func(int, struct{}) error { return nil })
	return err
}

// shard reads shard i from where its record says it stopped, delivering
// its events in batches and recording each batch once delivered (and its
// cells deleted, when the sweep deletes).
func (r *run) shard(ctx context.Context, i int, c *scan.ShardProgress) error {
	rec := r.j.State(i)
	var t tally
	if len(rec.Result) > 0 {
		if err := json.Unmarshal(rec.Result, &t); err != nil {
			return fmt.Errorf("sweep: the checkpoint's shard %v: %w", rec.Shard, err)
		}
	}
	if r.s.scheduled() {
		return r.salt(ctx, i, rec.After, &t, c)
	}
	sh := rec.Shard
	if rec.After != "" {
		sh.Start = rec.After + "\x00" // the first key after it
	}
	b := batch{after: rec.After}
	read, err := scan.ReadShard(ctx, r.s.data, sh, r.filter, c, func(row bigtable.Row) error {
		return r.judge(ctx, i, &t, &b, row)
	})
	r.addRead(read)
	if err != nil {
		return err
	}
	return r.flush(ctx, i, &t, &b, true)
}

// judge adds what row, read through the round's filter, holds to b: its
// events, its expired cells, its deletions; and flushes b once full.
func (r *run) judge(ctx context.Context, i int, t *tally, b *batch, row bigtable.Row) error {
	cols := r.round.columnsOf(row)
	b.events = r.round.appendEvents(b.events, row.Key(), cols)
	b.tally.Expired.Add(r.round.count(row.Key(), cols))
	if r.s.o.Delete {
		if m := r.round.deletes(cols); m != nil {
			b.keys, b.muts = append(b.keys, row.Key()), append(b.muts, m)
			if r.s.o.Reconcile {
				b.expiries = append(b.expiries, expiries(cols))
			}
		}
	}
	b.after = row.Key()
	if b.full(r.s.o.Batch) {
		return r.flush(ctx, i, t, b, false)
	}
	return nil
}

// addRead adds what a read read to the run's.
func (r *run) addRead(read scan.Stats) {
	r.mu.Lock()
	r.read.Add(read)
	r.mu.Unlock()
}

// A batch is what a shard read since its last record: the events to
// deliver, the deletions to make, and the last row read.
type batch struct {
	events []Event
	keys   []string
	muts   []*bigtable.Mutation
	tally  tally
	after  string

	expiries [][]time.Time // of the expired cells of each row of keys, for a reconcile round
	entries  []string      // the schedule's entries served, to delete
}

// full reports whether the batch holds n events, deletions or entries.
func (b *batch) full(n int) bool {
	return len(b.events) >= n || len(b.keys) >= n || len(b.entries) >= n
}

// flush delivers the batch, makes its deletions, and records it, adding
// it to t, the shard's tally; done records the shard as finished. Flushes
// are made one at a time, and no batch is delivered once one failed or
// ctx is done; a batch of no events is still recorded, which delivers
// nothing twice, unless a Save failed.
func (r *run) flush(ctx context.Context, i int, t *tally, b *batch, done bool) error {
	r.flushing.Lock()
	defer r.flushing.Unlock()
	switch {
	case r.failed != nil && (len(b.events) > 0 || r.ahead):
		return r.failed // the run stops with the first error, whichever shard returns it first
	case len(b.events) > 0 && ctx.Err() != nil:
		return ctx.Err()
	}
	if err := r.flushLocked(ctx, i, t, b, done); err != nil {
		if r.failed == nil {
			r.failed = err
		}
		return err
	}
	return nil
}

// flushLocked is flush, with r.flushing held.
func (r *run) flushLocked(ctx context.Context, i int, t *tally, b *batch, done bool) error {
	if r.s.o.Reconcile {
		if err := r.reconcile(ctx, b); err != nil {
			return err
		}
	}
	if len(b.events) > 0 {
		if err := r.s.stillHeld(ctx, "delivering a batch"); err != nil {
			return err
		}
		if err := r.deliver(ctx, b.events); err != nil {
			return fmt.Errorf("sweep: delivering %s: %w", text.Plural(len(b.events), "event", "events"), err)
		}
		r.s.m.delivered(ctx, b.events, r.s.now())
		if r.s.o.Reconcile {
			r.s.m.unscheduled(ctx, b.events)
		}
	}
	if len(b.keys) > 0 {
		errs, err := r.s.data.ApplyBulk(ctx, b.keys, b.muts)
		if err != nil {
			return fmt.Errorf("sweep: deleting the expired cells of %s: %w", text.Plural(len(b.keys), "row", "rows"), err)
		}
		for k, err := range errs {
			if err != nil {
				return fmt.Errorf("sweep: deleting the expired cells of row %q: %w", b.keys[k], err)
			}
		}
		r.s.m.deleted(ctx, len(b.keys))
	}
	if err := r.unschedule(ctx, b.entries); err != nil {
		return err
	}
	b.tally.Events, b.tally.Deleted = int64(len(b.events)), int64(len(b.keys))
	t.add(b.tally)
	if err := r.j.Update(ctx, i, b.after, t, nil, done); err != nil {
		r.ahead = true
		return err
	}
	r.record(i)
	*b = batch{after: b.after}
	return nil
}

// record notes that the checkpoint records shard i as the journal has it:
// a journal whose Save failed holds what the checkpoint does not, and the
// report counts only what was recorded.
func (r *run) record(i int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.saved = true
	r.recorded[i] = r.j.State(i)
}

// report returns the report of the round as the checkpoint records it,
// with what this run read, and what GC may have deleted first under
// policies, judged now.
func (r *run) report(resumed bool, policies map[string]bigtable.GCPolicy) *Report {
	rep := &Report{Table: r.s.table, Granularity: r.s.o.Granularity, From: r.round.From, Until: r.round.Until, Resumed: resumed}
	r.mu.Lock()
	rep.Read = r.read
	recorded := r.recorded
	r.mu.Unlock()
	var total tally
	for _, rec := range recorded {
		var t tally
		if len(rec.Result) > 0 && json.Unmarshal(rec.Result, &t) == nil {
			total.add(t)
		}
		rep.Read.Shards++
		if rec.Done {
			rep.Read.ShardsRead++
		}
	}
	rep.Events, rep.Expired, rep.Deleted, rep.Unscheduled = total.Events, total.Expired, total.Deleted, total.Unscheduled
	now := r.s.now()
	for _, f := range r.s.fams {
		keep, ok := f.keep(policies[f.name])
		if !ok {
			continue
		}
		if horizon := now.Add(-keep); horizon.After(rep.From) {
			rep.Missed = append(rep.Missed, Missed{Family: f.name, From: rep.From, Until: minTime(horizon, rep.Until), Keep: keep})
		}
	}
	return rep
}

// minTime returns the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
