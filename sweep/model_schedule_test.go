package sweep_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
)

// The sweep model with a schedule (issue 26): the table is written
// through a ttl.Table given WithSchedule, and each of a run's four
// scanning sweeps has a twin, the same sweep given the schedule
// (Options.Schedule), with a checkpoint of its own, which the generator
// calls, stops and resumes as it does the scanning ones. Both are checked
// call by call against the same model (model_check_test.go), so each
// reports exactly the model's expirations of the rows it reads, and the
// scheduled one reads every row the schedule names in its window:
//
//   - the model keeps the schedule's entries: an entry (row, second of
//     the expiry) for every cell a write, a Touch or a KeepAlive renewal
//     stamps with an expiry (not Forever), written even when its data then
//     fails; none for a write refused, or for a cell written raw; GC
//     removes an entry as the schedule's policy says; a scheduled sweep
//     that deletes removes those it served;
//   - a scheduled round owes, for a row with an entry in the seconds of
//     its window, exactly what a scanning round owes; for a row without,
//     nothing (a cell written raw there is the reconcile sweep's);
//   - 0 missed: every cell written with its entry that expired in a
//     scheduled round's window and is still stored still has its entry
//     when the round begins, so the round reads its row; with the check
//     above, every event a scanning round owes for a cell written with
//     an entry, the scheduled round owes too;
//   - every few operations the schedule table holds exactly the model's
//     entries.
//
// The generator adds ApplyBulk over several rows and crashes between an
// entry and its data: an Apply, an ApplyBulk or a Touch whose entries
// land and whose data request then fails. It must return an error, leave
// the data as it was, and leave its entries, which the scheduled sweeps
// read and report nothing for (the row's other cells aside).

// schedSeed is the seed of TestSweepModelScheduled unless
// CELLTTL_SCHED_SEED says otherwise.
const schedSeed = 2026112826

// schedName is the schedule table's name.
const schedName = "s"

// errCrash is the failure of a write's data after its entries.
var errCrash = errors.New("the writer crashed after its entries")

// TestSweepModelScheduled runs the sweep model with a schedule (see
// above): each history is swept by scanning and scheduled sweeps alike,
// and both must report exactly the model's expirations, each once but
// for the batch in flight: so each the same as the other.
//
// CELLTTL_SCHED_OPS sets the number of operations over all runs (default
// 1,200 in two runs; 500 in one with -short), CELLTTL_SCHED_RUNS the
// number of runs (default: one per 12,500 operations, at least the
// default's), CELLTTL_SCHED_SEED the seed (default schedSeed; run i uses
// seed + i), CELLTTL_SCHED_RUN=i runs run i alone. 10⁵ operations:
//
//	CELLTTL_SCHED_OPS=100000 CELLTTL_SCHED_SEED=1 go test -count=1 -run 'TestSweepModelScheduled$' -v ./sweep
func TestSweepModelScheduled(t *testing.T) {
	// Each call of Once of a scheduled sweep reads 64 salts: a few
	// seconds by default, the long runs by the variables.
	total, runs := 1_200, 2
	if testing.Short() {
		total, runs = 500, 1
	}
	total = int(envInt(t, "CELLTTL_SCHED_OPS", int64(total)))
	runs = int(envInt(t, "CELLTTL_SCHED_RUNS", int64(max(runs, total/12_500))))
	seed := uint64(envInt(t, "CELLTTL_SCHED_SEED", schedSeed))
	only := int(envInt(t, "CELLTTL_SCHED_RUN", -1))
	t.Logf("CELLTTL_SCHED_SEED=%d CELLTTL_SCHED_OPS=%d CELLTTL_SCHED_RUNS=%d", seed, total, runs)
	all := runModels(t, "SCHED", seed, total, runs, only, true)
	if all == nil || only >= 0 {
		return
	}
	s := all.sched
	if s.bulks == 0 || s.crashed == 0 || s.events == 0 || s.rows == 0 || all.stopped == 0 || all.resumed == 0 {
		t.Errorf("the runs exercised too little: %v", all)
	}
	if total >= 10_000 && (s.unscheduled == 0 || s.split == 0 || s.fresh == 0 || s.stale == 0 || s.unread == 0) {
		t.Errorf("the runs exercised too little: %v", all)
	}
}

// schedStats counts what the schedule's part of a run exercised.
type schedStats struct {
	bulks, crashed int // ApplyBulk calls; writes whose data failed after their entries
	events         int // events scheduled sweeps recorded
	rows           int // rows scheduled rounds owed a read, for an entry
	stale          int // of those, rows read for an entry that owed nothing
	unread         int // rows with expired cells a scheduled round had no entry for
	unscheduled    int // entries scheduled sweeps deleted
	split          int // of those, entries of a second begun before the round's window
	fresh          int // calls of Once on a new checkpoint
}

func (s *schedStats) add(o schedStats) {
	s.bulks += o.bulks
	s.crashed += o.crashed
	s.events += o.events
	s.rows += o.rows
	s.stale += o.stale
	s.unread += o.unread
	s.unscheduled += o.unscheduled
	s.split += o.split
	s.fresh += o.fresh
}

func (s schedStats) String() string {
	if s == (schedStats{}) {
		return ""
	}
	return fmt.Sprintf("; schedule: %d ApplyBulk, %d crashes after the entries; scheduled sweeps recorded %d events, "+
		"owed a read of %d rows (%d of them for stale entries), had no entry for %d rows with expired cells (written raw); "+
		"deleted %d entries (%d of a second begun before the round's window); %d calls on a new checkpoint",
		s.bulks, s.crashed, s.events, s.rows, s.stale, s.unread, s.unscheduled, s.split, s.fresh)
}

// withTwins gives each sweep of v a twin that reads the schedule, and
// makes the Table write it.
func (v *variant) withTwins() {
	v.sched = true
	for _, c := range v.sweeps {
		c.scheduled = true
		v.sweeps = append(v.sweeps, c)
	}
}

// saltShards returns the shards of a scheduled round: one per salt, its
// entries' keys, as package schedule lays them out.
func saltShards() []scan.Shard {
	out := make([]scan.Shard, schedule.Salts)
	for i := range out {
		out[i] = scan.Shard{Start: fmt.Sprintf("%02x#", i), End: fmt.Sprintf("%02x#", i+1)}
	}
	return out
}

// An entryKey is a schedule's entry: a row and the second (Unix) of an
// expiry.
type entryKey struct {
	row  string
	slot int64
}

// key returns the entry's key in the schedule table.
func (k entryKey) key() string { return schedule.Key(k.row, time.Unix(k.slot, 0)) }

// slotOf returns the second of an expiry in microseconds.
func slotOf(us int64) int64 { return max(us, 0) / 1e6 }

// schedule adds the entry of the cell of fam stamped ts in row when the
// Table writes a schedule and the cell expires, and reports whether it
// did.
func (m *model) schedule(row, fam string, ts int64) bool {
	if m.entries == nil {
		return false
	}
	e, ok := m.fams[fam].expiry(ts)
	if ok {
		m.entries[entryKey{row, slotOf(e)}] = true
	}
	return ok
}

// entryIn reports whether the schedule has an entry of row in the
// seconds from lo to hi.
func (m *model) entryIn(row string, lo, hi int64) bool {
	for k := range m.entries {
		if k.row == row && k.slot >= lo && k.slot <= hi {
			return true
		}
	}
	return false
}

// schedTable is the schedule as the scheduled sweeps see it: the table,
// and a record of the entries the attempt under way deleted, made as
// sweepData makes deletions (none if the context is done before, all if
// during).
type schedTable struct {
	bigtable.TableAPI
	d *sweepData // whose attempt is under way
}

func (s *schedTable) ApplyBulk(ctx context.Context, rows []string, muts []*bigtable.Mutation, opts ...bigtable.ApplyOption) ([]error, error) {
	a := s.d.h.Load()
	if a == nil {
		return s.TableAPI.ApplyBulk(ctx, rows, muts, opts...)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	errs, err := s.TableAPI.ApplyBulk(context.WithoutCancel(ctx), rows, muts, opts...)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	for i, row := range rows {
		if errs == nil || errs[i] == nil {
			a.log = append(a.log, action{unscheduled: row})
		}
	}
	a.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return errs, nil
}

// crashTable is the data table the Table writes: armed, it fails the
// next request that writes (Apply, ApplyBulk), as a writer that crashed
// after its entries landed.
type crashTable struct {
	bigtable.TableAPI
	armed atomic.Bool
}

func (c *crashTable) Apply(ctx context.Context, row string, m *bigtable.Mutation, opts ...bigtable.ApplyOption) error {
	if c.armed.CompareAndSwap(true, false) {
		return errCrash
	}
	return c.TableAPI.Apply(ctx, row, m, opts...)
}

func (c *crashTable) ApplyBulk(ctx context.Context, rows []string, muts []*bigtable.Mutation, opts ...bigtable.ApplyOption) ([]error, error) {
	if c.armed.CompareAndSwap(true, false) {
		return nil, errCrash
	}
	return c.TableAPI.ApplyBulk(ctx, rows, muts, opts...)
}

// withSchedule creates the run's schedule table, its family given
// schedule.Policy of the longest keep of the families, and the data
// table the Table writes.
func (mr *modelRun) withSchedule(rules []*famRule) error {
	keep := time.Duration(0)
	for _, f := range rules {
		keep = max(keep, f.keep)
	}
	err := mr.e.Admin.CreateTableFromConf(mr.ctx, &bigtable.TableConf{TableID: schedName,
		ColumnFamilies: map[string]bigtable.Family{schedule.Family: {GCPolicy: schedule.Policy(keep)}}})
	if err != nil {
		return err
	}
	mr.schedAge = max(time.Second, keep)
	mr.schedRaw = mr.e.Client.Open(schedName)
	mr.sched = &schedTable{TableAPI: mr.schedRaw, d: mr.data}
	mr.crash = &crashTable{TableAPI: mr.raw}
	mr.m.entries = map[entryKey]bool{}
	return nil
}

// A bulkRow is one row of an ApplyBulk.
type bulkRow struct {
	row     string
	changes []change
}

func bulkString(rows []bulkRow) string {
	parts := make([]string, len(rows))
	for i, b := range rows {
		parts[i] = (&op{kind: opWrite, row: b.row, changes: b.changes}).String()
	}
	return "ApplyBulk(" + strings.Join(parts, "; ") + ")"
}

// schedOp returns, now and then, an ApplyBulk or a crash after the
// entries; otherwise nil.
func (g *gen) schedOp(row string) *op {
	switch x := g.r.IntN(100); {
	case x < 5:
		return g.bulkOp(row)
	case x < 9:
		var o *op
		switch y := g.r.IntN(10); {
		case y < 5:
			o = &op{kind: opWrite, row: row, changes: g.changes()}
		case y < 7:
			o = g.bulkOp(row)
		default:
			o = g.touch(row)
		}
		return &op{kind: opCrash, crashed: o}
	}
	return nil
}

// bulkOp returns an ApplyBulk of two to four rows, row first.
func (g *gen) bulkOp(row string) *op {
	rows := []string{row}
	for _, i := range g.r.Perm(len(g.rows))[:1+g.r.IntN(3)] {
		if g.rows[i] != row {
			rows = append(rows, g.rows[i])
		}
	}
	o := &op{kind: opBulk}
	for _, r := range rows {
		o.bulk = append(o.bulk, bulkRow{row: r, changes: g.changes()})
	}
	return o
}

// stepSched runs an ApplyBulk or a crash on the table and on the model,
// and returns what differs.
func (mr *modelRun) stepSched(o *op) string {
	if o.kind == opBulk {
		mr.st.sched.bulks++
		return mr.bulk(o, mr.m.apply)
	}
	// The model applies the write and keeps its entries, not its cells.
	m := mr.m
	saved := m.rows.clone()
	defer func() { m.rows = saved }()
	mr.crash.armed.Store(true)
	defer mr.crash.armed.Store(false)
	c := o.crashed
	switch c.kind {
	case opBulk:
		sent := false
		msg := mr.bulk(c, func(row string, changes []change) error {
			if err := m.apply(row, changes); err != nil {
				return err
			}
			sent = true
			return errCrash
		})
		if sent {
			mr.st.sched.crashed++
		}
		return msg
	case opTouch:
		touched, want := m.touch(c.row, c.fam, c.col, c.life)
		if touched {
			want = errCrash
			mr.st.sched.crashed++
		}
		return compareErr(c.applyTo(mr.ctx, mr.tbl), want)
	}
	want := m.apply(c.row, c.changes)
	if want == nil {
		want = errCrash
		mr.st.sched.crashed++
	}
	return compareErr(c.applyTo(mr.ctx, mr.tbl), want)
}

// bulk makes o's ApplyBulk through the Table, and compares each row's
// error with want's for it.
func (mr *modelRun) bulk(o *op, want func(row string, changes []change) error) string {
	rows := make([]string, len(o.bulk))
	muts := make([]*ttl.Mutation, len(o.bulk))
	for i, b := range o.bulk {
		rows[i], muts[i] = b.row, mutation(b.changes)
	}
	errs, err := mr.tbl.ApplyBulk(mr.ctx, rows, muts)
	if errs != nil && len(errs) != len(rows) {
		return fmt.Sprintf("ApplyBulk returned %d errors for %d rows", len(errs), len(rows))
	}
	written := false
	for i, b := range o.bulk {
		w := want(b.row, b.changes)
		written = written || w == nil || errors.Is(w, errCrash)
		var got error
		if errs != nil {
			got = errs[i]
		}
		if msg := compareErr(got, w); msg != "" {
			return fmt.Sprintf("row %q: %s", b.row, msg)
		}
	}
	if err != nil && !errors.Is(err, errCrash) {
		return fmt.Sprintf("ApplyBulk returned %v", err)
	}
	if err != nil && !written {
		return fmt.Sprintf("ApplyBulk returned %v, and sent no row", err)
	}
	return ""
}

// gcEntries is a pass of GC of the schedule at the fake clock's now, as
// its policy says: each entry stamped (the end of its second) before now
// − its max age goes.
func (mr *modelRun) gcEntries() string {
	cutoff := mr.m.now.Add(-mr.schedAge).Truncate(time.Millisecond).UnixMicro()
	var keys []string
	for k := range mr.m.entries {
		if (k.slot+1)*1e6 < cutoff {
			keys = append(keys, k.key())
			delete(mr.m.entries, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	muts := make([]*bigtable.Mutation, len(keys))
	for i := range muts {
		muts[i] = bigtable.NewMutation()
		muts[i].DeleteTimestampRange(schedule.Family, schedule.Column, 0, bigtable.Timestamp(cutoff))
	}
	errs, err := mr.schedRaw.ApplyBulk(mr.ctx, keys, muts)
	if err == nil && errs != nil {
		err = errors.Join(errs...)
	}
	if err != nil {
		return fmt.Sprintf("GC of the schedule: %v", err)
	}
	return ""
}

// checkEntries compares the schedule's entries with the model's.
func (mr *modelRun) checkEntries() []string {
	got := map[string]bool{}
	err := mr.schedRaw.ReadRows(mr.ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		got[r.Key()] = true
		return true
	})
	if err != nil {
		return []string{fmt.Sprintf("reading the schedule: %v", err)}
	}
	var diffs []string
	for k := range mr.m.entries {
		if !got[k.key()] {
			diffs = append(diffs, fmt.Sprintf("the model has entry %q (row %q, %v), not stored", k.key(), k.row, time.Unix(k.slot, 0).UTC()))
		}
		delete(got, k.key())
	}
	for k := range got {
		diffs = append(diffs, fmt.Sprintf("the schedule holds entry %q, the model none", k))
	}
	return diffs
}

// scheduledReads restricts reads, what a scanning round over (from,
// until] owes for each row of the table as found, to what a scheduled
// round owes: the rows with an entry in the window's seconds. It reports
// a cell written with its entry, expired in the window and stored, whose
// entry is gone: a scheduled round would miss it.
func (mr *modelRun) scheduledReads(sw *sweeper, found table, reads map[string]rowRead, from, until time.Time) string {
	m, st := mr.m, &mr.st.sched
	lo, hi := from.UnixMicro(), until.UnixMicro()
	for _, row := range modelRows {
		for _, fam := range sw.cfg.spec.fams {
			f := m.fams[fam]
			for col, cells := range found[row][fam] {
				for _, c := range cells {
					e, ok := f.expiry(c.ts)
					if c.sched && ok && e > lo && e <= hi && !m.entries[entryKey{row, slotOf(e)}] {
						return fmt.Sprintf("row %q, %s:%s@%d (%q), written with its entry, expired at %v in the round's window, has no entry: the scheduled round misses it",
							row, fam, col, c.ts, c.value, time.UnixMicro(e).UTC().Format(time.RFC3339Nano))
					}
				}
			}
		}
		r := reads[row]
		if !m.entryIn(row, slotOf(lo), slotOf(hi)) {
			if r.expired > 0 {
				st.unread++
			}
			reads[row] = rowRead{}
			continue
		}
		st.rows++
		if r.expired == 0 {
			st.stale++
		}
	}
	return ""
}

// unscheduled applies to the model the deletion of the entry key by a
// scheduled sweep's round over (from, until], which must delete, sweep
// every family, and delete only an entry the schedule holds whose second
// the sweep has served whole by until: one that ends by until and begins
// after the From of the first round its checkpoint recorded (sw.start),
// its rounds since having served every expiry after it. A sweep of some
// families that deleted entries would hide the others' cells from the
// scheduled sweeps of those, and one that deleted the entry of a second
// begun before its span, a cell it never read from a sweep further
// behind (TestScheduledDelete*).
func (mr *modelRun) unscheduled(sw *sweeper, key string, from, until time.Time) string {
	e, err := schedule.Parse(key)
	if err != nil {
		return fmt.Sprintf("deleted %q from the schedule: %v", key, err)
	}
	k := entryKey{e.Row, e.Slot.Unix()}
	switch {
	case !sw.cfg.scheduled || !sw.cfg.delete:
		return fmt.Sprintf("a sweep that does not delete through the schedule deleted entry %q", key)
	case len(sw.cfg.spec.fams) < len(mr.m.names):
		return fmt.Sprintf("a sweep of families %q deleted entry %q, which may name a cell of another", sw.cfg.spec.fams, key)
	case !mr.m.entries[k]:
		return fmt.Sprintf("deleted entry %q, which the schedule does not hold", key)
	case !e.Slot.After(sw.start) || e.Slot.Add(time.Second).After(until):
		return fmt.Sprintf("deleted entry %q, of %v, not served whole by the round up to %v: its sweep served from %v",
			key, e.Slot, until.UTC(), sw.start.UTC())
	}
	if !e.Slot.After(from) {
		mr.st.sched.split++
	}
	delete(mr.m.entries, k)
	mr.st.sched.unscheduled++
	return ""
}

// freshOp makes s, a call of Once on a new Sweeper, one on a new
// checkpoint too, now and then: from its first round's end, or from a
// Since up to four seconds behind now, mostly within a second.
func (g *gen) freshOp(s *sweepOp) {
	if g.r.IntN(3) > 0 {
		return
	}
	s.fresh = true
	if g.r.IntN(3) > 0 {
		s.since = g.m.now.Add(-time.Duration(g.r.IntN(4000)) * time.Millisecond)
	}
}

// fresh gives sw a new, empty checkpoint and since: the sweep starts
// anew, a new span, and may deliver again what it delivered before.
func (mr *modelRun) fresh(sw *sweeper, since time.Time) {
	mr.st.sched.fresh++
	sw.cfg.since = since
	sw.mem = scan.MemoryCheckpoint()
	sw.cp = &faultyCheckpoint{Checkpoint: sw.mem}
	sw.watermark, sw.start, sw.open, sw.round = time.Time{}, time.Time{}, false, tally{}
	sw.ledger = map[string]bool{}
}
