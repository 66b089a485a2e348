package move

import (
	"context"
	"encoding/json"
	"fmt"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/scan"
)

// A conversion moves one cell from one timestamp to another.
type conversion struct {
	Row    string             `json:"row"`
	Column string             `json:"column"` // family:qualifier
	From   bigtable.Timestamp `json:"from"`
	To     bigtable.Timestamp `json:"to"`
	value  []byte             // as read; not recorded
}

// convertBatch is how many cells a converter changes between two records
// of its progress.
const convertBatch = 500

// A converter makes the conversions plan returns for each row a filter
// passes, shard by shard, recording its progress in a checkpoint.
type converter struct {
	data   bigtable.TableAPI
	family string
	dryRun bool
	plan   func(bigtable.Row) ([]conversion, int64) // the conversions of a row, and its expired old cells

	profile string    // Options.AppProfile, for messages
	rec     *recorder // nil records nothing

	// entries writes the schedule entries of a batch's conversions
	// before they are made; nil writes none.
	entries *entryWriter
}

// run converts every row of the table that filter passes. With a
// checkpoint in opts (not in a dry run) it records, under work, the shards,
// each batch of conversions before making it, and each shard's progress
// after: a run given the same checkpoint skips the finished shards and
// rows, keeps their counts, and settles the batch in flight.
func (c converter) run(ctx context.Context, filter bigtable.Filter, work string, opts Options) (Counts, scan.Stats, error) {
	cp := opts.Checkpoint
	if cp == nil || c.dryRun {
		cp = scan.MemoryCheckpoint()
	}
	j, err := scan.OpenJournal(ctx, cp, work, func() ([]scan.Shard, error) { return scan.Shards(ctx, c.data) })
	if err != nil {
		return Counts{}, scan.Stats{}, err
	}
	var done Counts
	records := j.Shards()
	read := scan.Stats{Shards: len(records)}
	var todo []scan.Shard
	var index []int // of each shard of todo in the record
	for i, s := range records {
		if !s.Done {
			todo, index = append(todo, s.Shard), append(index, i)
			continue
		}
		var prior Counts
		if err := json.Unmarshal(s.Result, &prior); err != nil {
			return done, read, fmt.Errorf("move: the checkpoint's shard %v: %w", s.Shard, err)
		}
		done.Add(prior)
		read.ShardsRead++
	}
	type shardResult struct {
		done Counts
		read scan.Stats
	}
	_, err = scan.Run(ctx, todo, opts.Scan, func(ctx context.Context, s scan.Shard, counter *scan.ShardProgress) (shardResult, error) {
		w := &shardWork{converter: c, j: j, i: index[shardIndex(todo, s)], counter: counter}
		acc, read, err := w.run(ctx, filter)
		return shardResult{acc, read}, err
	}, func(_ int, res shardResult) error {
		done.Add(res.done)
		read.Add(res.read)
		read.ShardsRead++
		return nil
	})
	return done, read, err
}

// A batch is the conversions a converter makes between two records of a
// shard's progress, recorded before they are made: the rows it covers end
// at Last, and their expired old cells are counted in Expired.
type batch struct {
	Last        string       `json:"last"`
	Expired     int64        `json:"expired"`
	Conversions []conversion `json:"conversions"`
}

// shardWork is the conversion of one shard, i in the journal j. Its
// record's result always counts the rows up to after, exactly.
type shardWork struct {
	converter
	j       *scan.Journal
	i       int
	counter *scan.ShardProgress

	acc    Counts // the rows up to after
	after  string // the last row whose conversions are made and counted
	b      batch  // the rows read since after
	failed error
}

// run converts the rows of the shard from where its record says it
// stopped, and records it finished.
func (w *shardWork) run(ctx context.Context, filter bigtable.Filter) (Counts, scan.Stats, error) {
	state := w.j.State(w.i)
	if state.Result != nil {
		if err := json.Unmarshal(state.Result, &w.acc); err != nil {
			return w.acc, scan.Stats{}, fmt.Errorf("move: the checkpoint's shard %v: %w", state.Shard, err)
		}
	}
	w.after = state.After
	if state.Pending != nil {
		if err := w.settlePending(ctx, state); err != nil {
			return w.acc, scan.Stats{}, err
		}
	}
	rows := state.Shard
	if w.after != "" {
		rows.Start = w.after + "\x00" // the rows after it
	}
	read, err := scan.ReadShard(ctx, w.data, rows, filter, w.counter, func(r bigtable.Row) error {
		w.row(ctx, r)
		return nil
	})
	if err == nil {
		w.flush(ctx)
		err = w.failed
	}
	if err == nil && !w.dryRun {
		err = w.j.Update(ctx, w.i, w.after, w.acc, nil, true)
	}
	return w.acc, read, err
}

// settlePending settles the batch that was in flight when the last run
// stopped: some of it was made. It finds out which, and makes the rest.
func (w *shardWork) settlePending(ctx context.Context, state scan.ShardRecord) error {
	var b batch
	if err := json.Unmarshal(state.Pending, &b); err != nil {
		return fmt.Errorf("move: the checkpoint's shard %v: %w", state.Shard, err)
	}
	if err := w.entries.write(ctx, b.Conversions); err != nil {
		return err
	}
	for _, cv := range b.Conversions {
		n, err := w.settle(ctx, cv)
		if err != nil {
			return err
		}
		w.acc.Add(n)
	}
	w.acc.Expired += b.Expired
	w.after = b.Last
	return w.j.Update(ctx, w.i, w.after, w.acc, nil, false)
}

// row adds a row's conversions to the batch, and makes the batch once it
// is full.
func (w *shardWork) row(ctx context.Context, r bigtable.Row) {
	if w.failed != nil {
		return
	}
	convs, expired := w.plan(r)
	if len(w.b.Conversions) == 0 && len(convs) == 0 {
		w.acc.Expired += expired // nothing to make: the row is done
		w.rec.counts(ctx, Counts{Expired: expired})
		w.after = r.Key()
		return
	}
	w.b.Conversions = append(w.b.Conversions, convs...)
	w.b.Expired += expired
	w.b.Last = r.Key()
	if len(w.b.Conversions) >= convertBatch {
		w.flush(ctx)
	}
}

// flush records the batch, makes it, and records the shard's progress.
func (w *shardWork) flush(ctx context.Context) {
	if w.failed != nil || len(w.b.Conversions) == 0 {
		return
	}
	if !w.dryRun {
		if w.failed = w.j.Update(ctx, w.i, w.after, w.acc, w.b, false); w.failed != nil {
			return
		}
		if w.failed = w.entries.write(ctx, w.b.Conversions); w.failed != nil {
			return
		}
	}
	for _, cv := range w.b.Conversions {
		n, err := w.convert(ctx, cv)
		if err != nil {
			w.failed = err
			return
		}
		w.acc.Add(n)
	}
	w.acc.Expired += w.b.Expired
	w.rec.counts(ctx, Counts{Expired: w.b.Expired})
	w.after, w.b = w.b.Last, batch{}
	if !w.dryRun {
		w.failed = w.j.Update(ctx, w.i, w.after, w.acc, nil, false)
	}
}

// convert makes one conversion of a row just read.
func (c converter) convert(ctx context.Context, cv conversion) (Counts, error) {
	if c.dryRun {
		return Counts{Rewritten: 1}, nil
	}
	if cv.To == cv.From {
		c.rec.kept(ctx, false)
		return Counts{Kept: 1}, nil
	}
	_, qualifier := rules.SplitColumn(cv.Column)
	moved, err := moveCell(ctx, c.data, cv.Row, c.family, qualifier, cv.From, cv.To, cv.value, c.profile, "move.Options.AppProfile")
	switch {
	case err != nil:
		return Counts{Kept: 1}, err
	case !moved:
		c.rec.kept(ctx, true)
		return Counts{Kept: 1}, nil
	}
	c.rec.counts(ctx, Counts{Rewritten: 1})
	return Counts{Rewritten: 1}, nil
}

// settle finds out whether a recorded conversion was made, and makes it if
// it was not and the cell is still there.
func (c converter) settle(ctx context.Context, cv conversion) (Counts, error) {
	_, qualifier := rules.SplitColumn(cv.Column)
	row, err := c.data.ReadRow(ctx, cv.Row, bigtable.RowFilter(bigtable.ColumnRangeFilter(c.family, qualifier, qualifier+"\x00")))
	if err != nil {
		return Counts{}, fmt.Errorf("move: settling a rewrite of row %q: %w", cv.Row, err)
	}
	var from, to bool
	for _, it := range row[c.family] {
		switch it.Timestamp {
		case cv.From:
			from, cv.value = true, it.Value
		case cv.To:
			to = true
		}
	}
	switch {
	case from:
		return c.convert(ctx, cv)
	case to:
		return Counts{Rewritten: 1}, nil
	}
	return Counts{Kept: 1}, nil
}

// shardIndex returns the index of s in shards.
func shardIndex(shards []scan.Shard, s scan.Shard) int {
	for i, x := range shards {
		if x == s {
			return i
		}
	}
	return -1
}
