package ttl

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/internal/text"
)

// Rewriting a move's old cells in the new encoding, cell by cell, each
// only if it is still there unchanged: a writer always wins.

// A Rewrite counts what rewriting cells did.
type Rewrite struct {
	// Rewritten counts the cells rewritten in the new encoding (in a dry
	// run, those that would be).
	Rewritten int64 `json:"rewritten"`
	// Kept counts the cells left as they were: changed or deleted by a
	// writer meanwhile, or kept below a newer cell of their column that
	// the rewritten cell would outrank.
	Kept int64 `json:"kept"`
	// Expired counts the old cells already expired, left for GC.
	Expired int64 `json:"expired"`
}

func (r *Rewrite) add(o Rewrite) {
	r.Rewritten += o.Rewritten
	r.Kept += o.Kept
	r.Expired += o.Expired
}

// rewritable reports whether the move's old cells can be rewritten in the
// new encoding: times to times. Sequence numbers have no times, and
// versions rewritten as times would collapse into one cell.
func (m Move) rewritable() error {
	if !m.rules().Rewritable() {
		return fmt.Errorf("%w: %v: cells cannot be rewritten between sequence numbers and times; the old cells stay readable by their rule until they expire",
			ErrInvalidOption, m)
	}
	return nil
}

// RewriteFilter returns the filter to read a family's old cells with for
// RewriteRow: the cells below or above the boundary that the old rule
// reads, with their values.
func (m Move) RewriteFilter(family string) bigtable.Filter {
	old, _, _ := m.sides()
	return bigtable.ChainFilters(bigtable.ColumnRangeFilter(family, "", ""), old.Span.Filter())
}

// RewriteRow rewrites in the new encoding the cells of family in row, read
// with RewriteFilter, that are live by the old rule for a reader whose
// clock lags now by the move's Skew (as FinishMove judges): each keeps its
// value and its expiry, and is rewritten only if it is still there
// unchanged and no cell of its column stamped between its old and new
// timestamps would be outranked (a newer value stays on top). With dryRun
// it only counts. This is RewriteMove's work for one row, for pipelines
// that spread the rewrite over many machines.
func (m Move) RewriteRow(ctx context.Context, tbl bigtable.TableAPI, family string, row bigtable.Row, now time.Time, dryRun bool) (Rewrite, error) {
	if err := m.valid(); err != nil {
		return Rewrite{}, err
	}
	if err := m.rewritable(); err != nil {
		return Rewrite{}, err
	}
	var done Rewrite
	old, new, _ := m.sides()
	items := row[family]
	for _, it := range items { // by column, newest first: a newer cell moves before an older one
		if !old.Span.Contains(it.Timestamp) {
			continue
		}
		if !old.LiveAt(it.Timestamp, 0, now.Add(-m.Skew)) {
			done.Expired++
			continue
		}
		to, ok := old.Restamp(new, it.Timestamp)
		if !ok {
			done.Kept++
			continue
		}
		if dryRun {
			done.Rewritten++
			continue
		}
		_, qualifier := rules.SplitColumn(it.Column)
		moved, err := moveCell(ctx, tbl, row.Key(), family, qualifier, it.Timestamp, to, it.Value)
		if err != nil {
			return done, err
		}
		if moved {
			done.Rewritten++
		} else {
			done.Kept++
		}
	}
	return done, nil
}

// moveCell rewrites the cell of family:column in row stamped ts, holding
// value, at to instead, atomically and only if the cell is still there
// unchanged and no other cell of its column is stamped between ts and to
// (to included): a cell that would be outranked, or would outrank, stays
// in its place. It reports whether the cell moved.
func moveCell(ctx context.Context, tbl bigtable.TableAPI, row, family, column string, ts, to bigtable.Timestamp, value []byte) (bool, error) {
	col := bigtable.ColumnRangeFilter(family, column, column+"\x00")
	present := bigtable.ChainFilters(col, bigtable.TimestampRangeFilterMicros(ts, ts+1000),
		bigtable.ValueRangeFilter(value, append(append([]byte(nil), value...), 0)))
	between := rules.Range{Lo: ts + 1000, Hi: to + 1000}
	if to < ts {
		between = rules.Range{Lo: to, Hi: ts}
	}
	if to+1000 < to { // the last millisecond: no end
		between = rules.Range{Lo: between.Lo, Open: true}
	}
	pred := present
	if !between.Empty() {
		pred = bigtable.ConditionFilter(bigtable.ChainFilters(col, between.Filter()), bigtable.BlockAllFilter(), present)
	}
	m := bigtable.NewMutation()
	m.DeleteTimestampRange(family, column, ts, ts+1000)
	m.Set(family, column, to, value)
	var moved bool
	if err := tbl.Apply(ctx, row, bigtable.NewCondMutation(pred, m, nil), bigtable.GetCondMutationResult(&moved)); err != nil {
		return false, fmt.Errorf("ttl: rewriting row %q, %s:%s at %d: %w", row, family, column, ts, err)
	}
	return moved, nil
}

// RewriteMove rewrites, after m.Start, the cells of family that are live
// by the old rule in the new encoding, so that the move can end now rather
// than when they expire: each keeps its value and expiry, and is rewritten
// only if still there unchanged and without outranking a newer cell of its
// column (see Move.RewriteRow). The family is read shard by shard with
// opts.Scan. With opts.Checkpoint, each batch of changes is recorded
// before it is made and each shard's progress after: an interrupted run
// given the same checkpoint resumes where it stopped, finds out which of
// the recorded changes were made, makes the others, and counts each
// exactly once. A cell rewritten is no longer an old cell, so nothing is
// rewritten twice. With opts.DryRun it counts and writes nothing.
//
// Moves between sequence numbers and times cannot be rewritten: their old
// cells stay readable by their rule.
func RewriteMove(ctx context.Context, admin *bigtable.AdminClient, table string, data bigtable.TableAPI, family string, m Move, opts MoveOptions) (*MoveReport, error) {
	r, err := moveReport(ctx, admin, table, data, family, m, opts, "RewriteMove")
	if err != nil {
		return r, err
	}
	if err := m.rewritable(); err != nil {
		return r, fmt.Errorf("RewriteMove: %w", err)
	}
	if !r.Started {
		return r, fmt.Errorf("%w: RewriteMove: the move starts at %s; until then the old encoding is still written", ErrInvalidOption, text.Time(m.Start))
	}
	old, new, _ := m.sides()
	c := converter{data: data, family: family, dryRun: opts.DryRun, plan: func(row bigtable.Row) ([]conversion, int64) {
		var out []conversion
		var expired int64
		for _, it := range row[family] {
			switch to, ok := old.Restamp(new, it.Timestamp); {
			case !old.Span.Contains(it.Timestamp):
			case !old.LiveAt(it.Timestamp, 0, r.Now.Add(-m.Skew)):
				expired++
			case ok:
				out = append(out, conversion{Row: row.Key(), Column: it.Column, From: it.Timestamp, To: to, value: it.Value})
			default:
				// Live, but its new timestamp would fall on the old side:
				// kept where it is, as RewriteRow counts it.
				out = append(out, conversion{Row: row.Key(), Column: it.Column, From: it.Timestamp, To: it.Timestamp})
			}
		}
		return out, expired
	}}
	done, read, err := c.run(ctx, m.RewriteFilter(family), fmt.Sprintf("rewrite table %q family %q %v", table, family, m), opts)
	r.Rewritten, r.Kept, r.Scan = done.Rewritten, done.Kept, read
	verb := "rewrote"
	if opts.DryRun {
		verb = "would rewrite"
	}
	r.Actions = append(r.Actions, fmt.Sprintf("%s %s in the new encoding; %s left (changed meanwhile, or below a newer cell); %s already expired",
		verb, text.Plural(int(done.Rewritten), "old cell", "old cells"), text.Plural(int(done.Kept), "cell", "cells"), text.Plural(int(done.Expired), "cell", "cells")))
	if err != nil {
		return r, fmt.Errorf("ttl: table %q, family %q: the rewrite stopped after %d of %d shards (resume it with the same checkpoint): %w",
			table, family, read.ShardsRead, read.planned(), err)
	}
	return r, nil
}

// rewriteMisplaced rewrites, before the start of a move from
// DefaultExpiration, the old cells stamped on the new side in the new
// encoding. A rewritten cell stays on the new side and cannot be told from
// one still to rewrite: the checkpoint's record of the changes made is
// what keeps a resumed run from rewriting a cell twice.
func rewriteMisplaced(ctx context.Context, data bigtable.TableAPI, family string, m Move, r *MoveReport, opts MoveOptions) error {
	old, new, _ := m.sides()
	c := converter{data: data, family: family, plan: func(row bigtable.Row) ([]conversion, int64) {
		var out []conversion
		for _, it := range row[family] {
			to, ok := old.Restamp(new, it.Timestamp)
			if !ok {
				to = it.Timestamp // kept where it is: counted as kept
			}
			out = append(out, conversion{Row: row.Key(), Column: it.Column, From: it.Timestamp, To: to, value: it.Value})
		}
		return out, 0
	}}
	filter := bigtable.ChainFilters(bigtable.ColumnRangeFilter(family, "", ""), new.Span.Filter())
	done, _, err := c.run(ctx, filter, startWork(r.Table, r.Family, m), opts)
	r.Rewritten, r.Kept = done.Rewritten, done.Kept
	if err != nil {
		return fmt.Errorf("ttl: table %q, family %q: rewriting the misplaced cells stopped (run StartMove again with the same checkpoint): %w", r.Table, r.Family, err)
	}
	return nil
}

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
}

// run converts every row of the table that filter passes. With a
// checkpoint in opts (not in a dry run) it records, under work, the shards,
// each batch of conversions before making it, and each shard's progress
// after: a run given the same checkpoint skips the finished shards and
// rows, keeps their counts, and settles the batch in flight.
func (c converter) run(ctx context.Context, filter bigtable.Filter, work string, opts MoveOptions) (Rewrite, Scan, error) {
	cp := opts.Checkpoint
	if cp == nil || c.dryRun {
		cp = &memoryCheckpoint{}
	}
	j, err := openJournal(cp, work, func() ([]Shard, error) { return Shards(ctx, c.data) })
	if err != nil {
		return Rewrite{}, Scan{}, err
	}
	var done Rewrite
	read := Scan{Shards: len(j.rec.Shards)}
	var todo []Shard
	var index []int
	for i, s := range j.rec.Shards {
		if !s.Done {
			todo, index = append(todo, s.Shard), append(index, i)
			continue
		}
		var prior Rewrite
		if err := json.Unmarshal(s.Result, &prior); err != nil {
			return done, read, fmt.Errorf("ttl: the checkpoint's shard %v: %w", s.Shard, err)
		}
		done.add(prior)
		read.ShardsRead++
	}
	type shardResult struct {
		done Rewrite
		read Scan
	}
	_, err = runShards(ctx, todo, opts.Scan, func(ctx context.Context, s Shard, counter *shardCounter) (shardResult, error) {
		i := index[shardIndex(todo, s)]
		acc, read, err := c.shard(ctx, j, i, filter, counter)
		return shardResult{acc, read}, err
	}, func(_ int, res shardResult) error {
		done.add(res.done)
		read.add(res.read)
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

// shard converts the rows of shard i from where its record says it
// stopped, and records it finished. The record's result always counts the
// rows up to its After, exactly.
func (c converter) shard(ctx context.Context, j *journal, i int, filter bigtable.Filter, counter *shardCounter) (Rewrite, Scan, error) {
	state := j.state(i)
	var acc Rewrite // the rows up to after
	if state.Result != nil {
		if err := json.Unmarshal(state.Result, &acc); err != nil {
			return acc, Scan{}, fmt.Errorf("ttl: the checkpoint's shard %v: %w", state.Shard, err)
		}
	}
	after := state.After
	if state.Pending != nil {
		// A batch was in flight when the last run stopped: some of it was
		// made. Find out which, make the rest.
		var b batch
		if err := json.Unmarshal(state.Pending, &b); err != nil {
			return acc, Scan{}, fmt.Errorf("ttl: the checkpoint's shard %v: %w", state.Shard, err)
		}
		for _, cv := range b.Conversions {
			n, err := c.settle(ctx, cv)
			if err != nil {
				return acc, Scan{}, err
			}
			acc.add(n)
		}
		acc.Expired += b.Expired
		after = b.Last
		if err := j.progress(i, after, acc, nil, false); err != nil {
			return acc, Scan{}, err
		}
	}
	rows := state.Shard
	if after != "" {
		rows.Start = after + "\x00" // the rows after it
	}
	var b batch // the rows read since after
	var failed error
	flush := func() {
		if failed != nil || len(b.Conversions) == 0 {
			return
		}
		if !c.dryRun {
			if failed = j.progress(i, after, acc, b, false); failed != nil {
				return
			}
		}
		for _, cv := range b.Conversions {
			n, err := c.convert(ctx, cv)
			if err != nil {
				failed = err
				return
			}
			acc.add(n)
		}
		acc.Expired += b.Expired
		after, b = b.Last, batch{}
		if !c.dryRun {
			failed = j.progress(i, after, acc, nil, false)
		}
	}
	read, err := readShard(ctx, c.data, rows, filter, counter, func(r bigtable.Row) {
		if failed != nil {
			return
		}
		convs, expired := c.plan(r)
		if len(b.Conversions) == 0 && len(convs) == 0 {
			acc.Expired += expired // nothing to make: the row is done
			after = r.Key()
			return
		}
		b.Conversions = append(b.Conversions, convs...)
		b.Expired += expired
		b.Last = r.Key()
		if len(b.Conversions) >= convertBatch {
			flush()
		}
	})
	if err == nil {
		flush()
		err = failed
	}
	if err == nil && !c.dryRun {
		err = j.progress(i, after, acc, nil, true)
	}
	return acc, read, err
}

// convert makes one conversion of a row just read.
func (c converter) convert(ctx context.Context, cv conversion) (Rewrite, error) {
	if c.dryRun {
		return Rewrite{Rewritten: 1}, nil
	}
	if cv.To == cv.From {
		return Rewrite{Kept: 1}, nil
	}
	_, qualifier := rules.SplitColumn(cv.Column)
	moved, err := moveCell(ctx, c.data, cv.Row, c.family, qualifier, cv.From, cv.To, cv.value)
	if err != nil || !moved {
		return Rewrite{Kept: 1}, err
	}
	return Rewrite{Rewritten: 1}, nil
}

// settle finds out whether a recorded conversion was made, and makes it if
// it was not and the cell is still there.
func (c converter) settle(ctx context.Context, cv conversion) (Rewrite, error) {
	_, qualifier := rules.SplitColumn(cv.Column)
	row, err := c.data.ReadRow(ctx, cv.Row, bigtable.RowFilter(bigtable.ColumnRangeFilter(c.family, qualifier, qualifier+"\x00")))
	if err != nil {
		return Rewrite{}, fmt.Errorf("ttl: settling a rewrite of row %q: %w", cv.Row, err)
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
		return Rewrite{Rewritten: 1}, nil
	}
	return Rewrite{Kept: 1}, nil
}

// shardIndex returns the index of s in shards.
func shardIndex(shards []Shard, s Shard) int {
	for i, x := range shards {
		if x == s {
			return i
		}
	}
	return -1
}
