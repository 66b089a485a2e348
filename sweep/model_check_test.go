package sweep_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
	"github.com/cellttl/ttl/sweep"
)

// Checking one call of Once against the model, from what the package doc
// and DESIGN.md promise, and what the checkpoint shows of its progress
// (each shard's last row recorded, scan.ShardRecord.After, and whether it
// is Done):
//
//   - the round: a call resumes the round the checkpoint records as
//     begun, or starts one after the watermark (Since, or its own end,
//     for the first) up to the margin before now, truncated to the
//     millisecond; a round that would be empty reads nothing;
//   - what it delivers: in each shard, the rows it records (after the
//     shard's last recorded row, up to its new one) were delivered, in
//     order, with exactly the events the model owes for them, read in the
//     table as the call found it; after them at most one batch is in
//     flight (a delivery that failed, or one the sweep did not record),
//     whose events are those the model owes for the rows that follow;
//     and no more than one such batch in the whole call;
//   - reported once: an event delivered and recorded is never delivered
//     again; one delivered in flight may be, once or more;
//   - what it deletes (Options.Delete): each row it records with a cell
//     expired in the window, in the columns where one did, every cell
//     expired at the window's end, and nothing else (the raw check);
//   - its report: resumed or not, the window, the events, expired cells
//     and rows deleted in that the round recorded, exactly; once the round
//     is done, Missed; a call that returns an error reports a round that
//     is not Complete.
//
// The model changes the table only between calls, and during a call
// only the rows of the batch being delivered (another writer) or deleted
// (the sweep): each row a call reads is read as the call found it.

// attempt runs one call of Once of sw as o says, checks it and brings the
// model up to date.
func (mr *modelRun) attempt(sw *sweeper, o *sweepOp) string {
	st := mr.st
	st.attempts++
	if o.restart {
		st.restarts++
	}
	rec0, _ := sw.mem.Load(context.Background())
	found := mr.m.rows.clone()
	now := mr.m.now
	ctx, cancel := context.WithCancel(mr.ctx)
	defer cancel()
	a := &attempt{op: o, cancel: cancel, perturb: mr.perturb}
	mr.last = a
	at, all := 0, false
	if o.fault == saveFailure {
		at, all = o.at, o.all
	}
	sw.cp.arm(at, all)
	mr.data.h.Store(a)
	rep, err := sw.s.Once(ctx, a.deliver(mr.tbl, mr.g.injected))
	if mr.idle != nil {
		mr.idle() // no stream of this call still read on the server when the next operation writes
	}
	mr.data.h.Store(nil)
	sw.cp.arm(0, false)
	rec1, _ := sw.mem.Load(context.Background())
	if err != nil {
		st.stopped++
	}
	msg := mr.check(sw, a, found, now, rep, err, rec0, rec1)
	if msg != "" {
		var b strings.Builder
		fmt.Fprintf(&b, "%s\nOnce returned %v\n%v", msg, err, rep)
		for i, d := range a.calls {
			fmt.Fprintf(&b, "\n  delivery %d (%v, %d taken):", i+1, d.err, d.accepted)
			for _, e := range d.events {
				fmt.Fprintf(&b, "\n    %v %s:%s@%d", e, e.Family, e.Column, e.Timestamp)
			}
		}
		for _, x := range a.log {
			switch {
			case x.inject != nil:
				fmt.Fprintf(&b, "\n  another writer: %v: %v", x.inject, x.err)
			case x.unscheduled != "":
				fmt.Fprintf(&b, "\n  deleted entry %q", x.unscheduled)
			default:
				fmt.Fprintf(&b, "\n  deleted in row %q", x.deleted)
			}
		}
		fmt.Fprintf(&b, "\nthe checkpoint before: %s\nafter: %s", formatRecord(rec0), formatRecord(rec1))
		if diff := mr.checkRaw(); diff != "" {
			fmt.Fprintf(&b, "\nthe stored cells now, and the model's before the call:\n%s", diff)
		}
		return b.String()
	}
	return ""
}

// pending reports whether rec records a round begun and not finished.
func pending(rec *scan.Record) bool {
	if rec == nil || len(rec.State) == 0 {
		return false
	}
	for _, s := range rec.Shards {
		if !s.Done {
			return true
		}
	}
	return false
}

func formatRecord(rec *scan.Record) string {
	if rec == nil {
		return "none"
	}
	var parts []string
	for _, s := range rec.Shards {
		parts = append(parts, fmt.Sprintf("%v done %v after %q", s.Shard, s.Done, s.After))
	}
	return fmt.Sprintf("state %s; %s", rec.State, strings.Join(parts, "; "))
}

// check checks a call of Once of sw, which found the table as found at
// now, returned rep and err, and left the checkpoint's record rec1 where
// it found rec0; and brings the model up to date.
func (mr *modelRun) check(sw *sweeper, a *attempt, found table, now time.Time, rep *sweep.Report, err error, rec0, rec1 *scan.Record) string {
	st := mr.st
	if rep == nil {
		switch {
		case err == nil:
			return "Once returned neither a report nor an error"
		case len(a.calls) > 0 || len(a.log) > 0:
			return "Once delivered or changed the table, and returned no report"
		}
		return ""
	}
	resumed := pending(rec0)
	from, until := sw.window(rec0, now)
	if rec0 == nil || len(rec0.State) == 0 {
		sw.start = from // the round, if it begins, is the checkpoint's first
	}
	if rep.Resumed != resumed || !rep.From.Equal(from) || !rep.Until.Equal(until) {
		return fmt.Sprintf("the report's round: resumed %v, after %v up to %v; want resumed %v, after %v up to %v",
			rep.Resumed, rep.From, rep.Until, resumed, from, until)
	}
	if resumed {
		st.resumed++
	}
	if from.Equal(until) { // nothing to read
		if len(a.calls) > 0 || len(a.log) > 0 || err == nil && (rep.Read.Reads > 0 || !rep.Complete()) {
			return "an empty round read, delivered or deleted, or is not complete"
		}
		if err == nil {
			sw.watermark = from
			st.empty++
		}
		return ""
	}

	// What the model owes for each row, and the shards' progress: as the
	// call found it, and as it left it (as it found it when it left the
	// record as it was: a round that did not begin).
	reads := map[string]rowRead{}
	for _, row := range modelRows {
		reads[row] = mr.m.read(found, &sw.cfg.spec, row, from.UnixMicro(), until.UnixMicro())
	}
	if sw.cfg.scheduled {
		if msg := mr.scheduledReads(sw, found, reads, from, until); msg != "" {
			return msg
		}
	}
	unchanged := reflect.DeepEqual(rec0, rec1)
	before := make([]scan.ShardRecord, len(sw.shards))
	for i, s := range sw.shards {
		before[i].Shard = s
	}
	if resumed {
		before = rec0.Shards
	}
	after := before
	if !unchanged && rec1 != nil && len(rec1.State) > 0 {
		after = rec1.Shards
	}
	if msg := sw.sameShards(before, after); msg != "" {
		return msg
	}
	if unchanged && !resumed {
		st.abandoned++
	}

	d, msg := mr.deliveries(sw, a, reads, before, after)
	if msg != "" {
		return msg
	}
	if msg := sw.remember(d, st); msg != "" {
		return msg
	}
	if sw.cfg.scheduled {
		st.sched.events += int(d.tally.events)
	}
	if msg := mr.changes(sw, a, reads, d.rows, from, until); msg != "" {
		return msg
	}

	// The report, and where the round stands.
	sw.round.events += d.tally.events
	sw.round.expired += d.tally.expired
	sw.round.deleted += d.tally.deleted
	finished := !unchanged && !pending(rec1)
	if msg := mr.checkReport(sw, rep, err, finished, from, until, now); msg != "" {
		return msg
	}
	switch {
	case finished:
		sw.watermark, sw.open, sw.round = until, false, tally{}
		st.rounds++
	case pending(rec1):
		sw.open, sw.from, sw.till = true, from, until
	default: // the record as it was: the round did not begin
		sw.open, sw.round = false, tally{}
	}
	return ""
}

// window returns the round a call of Once at now owes, when the
// checkpoint's record is rec: the one it records as begun; or after the
// watermark (Since, or the round's own end, for the first), up to the
// margin before now truncated to the millisecond, empty (from == until)
// if that is not after it.
func (sw *sweeper) window(rec *scan.Record, now time.Time) (from, until time.Time) {
	if pending(rec) {
		return sw.from, sw.till
	}
	until = now.Add(-sw.cfg.marginOrDefault()).Truncate(time.Millisecond)
	switch {
	case rec != nil && len(rec.State) > 0:
		from = sw.watermark
	case sw.cfg.since.IsZero():
		from = until
	default:
		from = sw.cfg.since
	}
	if !until.After(from) {
		return from, from
	}
	return from, until
}

// delivered is what a call delivered, sorted out by shard: the batches of
// the rows it recorded, those in flight when it stopped, and the rows it
// recorded with what they owed.
type delivered struct {
	recorded, inFlight []*delivery
	rows               map[string]bool
	tally              tally
}

// deliveries sorts out what a call delivered. In each shard, the rows
// the call recorded (after the last recorded before it, up to the last
// recorded after it) owe the events the model says, and the first
// batches delivered must be exactly those, in order; after them at most
// one batch, delivered when the call stopped, whose events are those the
// rows that follow owe. In the whole call, the consumer took at most one
// such batch.
func (mr *modelRun) deliveries(sw *sweeper, a *attempt, reads map[string]rowRead, before, after []scan.ShardRecord) (*delivered, string) {
	byShard := make([][]*delivery, len(sw.shards))
	for _, d := range a.calls {
		if len(d.events) == 0 {
			return nil, "a delivery of no events"
		}
		i := sw.shardOf(d.events[0].Row)
		for _, e := range d.events {
			if sw.shardOf(e.Row) != i {
				return nil, fmt.Sprintf("a delivery of rows of two shards: %q and %q", d.events[0].Row, e.Row)
			}
		}
		byShard[i] = append(byShard[i], d)
	}
	out := &delivered{rows: map[string]bool{}}
	for i := range sw.shards {
		b, f := before[i], after[i]
		if b.Done && !f.Done || !f.Done && f.After < b.After {
			return nil, fmt.Sprintf("shard %v went back: from %q (done %v) to %q (done %v)", b.Shard, b.After, b.Done, f.After, f.Done)
		}
		var rows []string // recorded by this call
		var next []string // after them, owing events
		want := 0
		for _, row := range modelRows {
			if sw.shardOf(row) != i || b.Done || b.After != "" && row <= b.After {
				continue
			}
			r := reads[row]
			if f.Done || f.After != "" && row <= f.After {
				rows = append(rows, row)
				out.rows[row] = true
				want += len(r.events)
				out.tally.events += int64(len(r.events))
				out.tally.expired += int64(r.expired)
				if sw.cfg.delete && len(r.columns) > 0 {
					out.tally.deleted++
				}
			} else if len(r.events) > 0 {
				next = append(next, row)
			}
		}
		calls := byShard[i]
		n, got := 0, 0
		for n < len(calls) && got < want {
			got += len(calls[n].events)
			n++
		}
		if got != want {
			var owed []string
			for _, row := range rows {
				for _, x := range reads[row].events {
					owed = append(owed, x.String())
				}
			}
			return nil, fmt.Sprintf("shard %v: rows %q recorded, which owe %d events, %d delivered before them; owed:\n  %s",
				b.Shard, rows, want, got, strings.Join(owed, "\n  "))
		}
		var events []sweep.Event
		for _, d := range calls[:n] {
			if d.err != nil {
				return nil, fmt.Sprintf("shard %v: a delivery that failed (%v) was recorded", b.Shard, d.err)
			}
			events = append(events, d.events...)
		}
		if msg := compareRows(sw, rows, events, reads); msg != "" {
			return nil, fmt.Sprintf("shard %v, the rows recorded %q: %s", b.Shard, rows, msg)
		}
		out.recorded = append(out.recorded, calls[:n]...)
		switch rest := calls[n:]; len(rest) {
		case 0:
		case 1:
			d := rest[0]
			rows := map[string]bool{}
			for _, e := range d.events {
				rows[e.Row] = true
			}
			if len(rows) > len(next) {
				return nil, fmt.Sprintf("shard %v: a batch in flight of rows %v, beyond those owing events (%q)", b.Shard, keys(rows), next)
			}
			if msg := compareRows(sw, next[:len(rows)], d.events, reads); msg != "" {
				return nil, fmt.Sprintf("shard %v, the batch in flight: %s", b.Shard, msg)
			}
			out.inFlight = append(out.inFlight, d)
		default:
			return nil, fmt.Sprintf("shard %v: %d batches delivered after the rows recorded", b.Shard, len(rest))
		}
	}
	taken := slices.DeleteFunc(slices.Clone(out.inFlight), func(d *delivery) bool { return d.accepted == 0 })
	if len(taken) > 1 {
		return nil, fmt.Sprintf("%d batches delivered and not recorded when the call stopped: a sweep delivers again at most one", len(taken))
	}
	return out, ""
}

// remember adds what a call delivered to the sweep's ledger of event IDs:
// an event delivered and recorded is never delivered again; one the
// consumer took from a batch in flight may be, once or more.
func (sw *sweeper) remember(d *delivered, st *modelStats) string {
	for _, b := range d.recorded {
		for _, e := range b.events {
			if inFlightOnly, seen := sw.ledger[e.ID()]; seen && !inFlightOnly {
				return fmt.Sprintf("%v (ID %s) delivered and recorded twice", e, e.ID())
			} else if seen {
				st.redelivered++
			}
			sw.ledger[e.ID()] = false
			st.events[e.Kind]++
		}
	}
	for _, b := range d.inFlight {
		st.inFlight++
		for _, e := range b.events[:b.accepted] {
			if inFlightOnly, seen := sw.ledger[e.ID()]; seen && !inFlightOnly {
				return fmt.Sprintf("%v (ID %s) delivered again after it was recorded", e, e.ID())
			}
			sw.ledger[e.ID()] = true
		}
	}
	return ""
}

// changes applies to the model what changed the table during a call, in
// the order it happened: another writer's changes, which must succeed or
// fail as the model says, and the sweep's deletions, which it makes only
// if it deletes, once per row, in rows where a cell expired in the
// window, and in each row it recorded with one.
func (mr *modelRun) changes(sw *sweeper, a *attempt, reads map[string]rowRead, recorded map[string]bool, from, until time.Time) string {
	deleted := map[string]bool{}
	for _, x := range a.log {
		if x.unscheduled != "" {
			if msg := mr.unscheduled(sw, x.unscheduled, from, until); msg != "" {
				return msg
			}
			continue
		}
		if x.inject != nil {
			mr.st.injected++
			var want error
			if x.inject.kind == opTouch {
				_, want = mr.m.touch(x.inject.row, x.inject.fam, x.inject.col, x.inject.life)
			} else {
				want = mr.m.apply(x.inject.row, x.inject.changes)
			}
			if msg := compareErr(x.err, want); msg != "" {
				return fmt.Sprintf("another writer's %v: %s", x.inject, msg)
			}
			continue
		}
		row := x.deleted
		switch {
		case !sw.cfg.delete:
			return fmt.Sprintf("a sweep that does not delete deleted in row %q", row)
		case len(reads[row].columns) == 0:
			return fmt.Sprintf("deleted in row %q, where no cell expired in the window", row)
		case deleted[row]:
			return fmt.Sprintf("deleted in row %q twice", row)
		}
		deleted[row] = true
		mr.st.deletedRows++
		mr.m.sweepDelete(row, reads[row].columns, until.UnixMicro())
	}
	for row := range recorded {
		if sw.cfg.delete && len(reads[row].columns) > 0 && !deleted[row] {
			return fmt.Sprintf("row %q recorded, with cells expired in the window, and not deleted in", row)
		}
	}
	return ""
}

// checkReport checks a call's report: it counts what the round recorded,
// by this call and those before it; with an error it is not Complete;
// without one the round is finished, and its Missed lists each family
// whose GC may have deleted a cell of the window first.
func (mr *modelRun) checkReport(sw *sweeper, rep *sweep.Report, err error, finished bool, from, until, now time.Time) string {
	if rep.Events != sw.round.events || rep.Expired.Cells != sw.round.expired || rep.Deleted != sw.round.deleted {
		return fmt.Sprintf("the report counts %d events, %d cells expired, deletions in %d rows; the round recorded %d, %d, %d",
			rep.Events, rep.Expired.Cells, rep.Deleted, sw.round.events, sw.round.expired, sw.round.deleted)
	}
	if err != nil {
		if rep.Complete() {
			return "Once returned an error with a Complete report"
		}
		return ""
	}
	missed := mr.missed(sw, from, until, now)
	got := slices.Clone(rep.Missed)
	sort.Slice(got, func(i, j int) bool { return got[i].Family < got[j].Family })
	switch {
	case !finished:
		return "Once returned no error, and the checkpoint records the round as not finished"
	case !rep.Read.Complete():
		return "a round read to the end reports Read not Complete"
	case (len(got) > 0 || len(missed) > 0) && !reflect.DeepEqual(got, missed):
		return fmt.Sprintf("Missed %+v, want %+v", got, missed)
	case rep.Complete() != (len(missed) == 0):
		return fmt.Sprintf("Complete() = %v with Missed %v", rep.Complete(), missed)
	}
	// Never complete when it is not: GC deleted no cell of the window in
	// a family the report does not list.
	for _, fam := range sw.cfg.spec.fams {
		listed := slices.ContainsFunc(missed, func(m sweep.Missed) bool { return m.Family == fam })
		if c := mr.m.collected[fam]; !listed && c > from.UnixMicro() {
			return fmt.Sprintf("family %q is not listed in Missed, and GC deleted a cell that expired at %v, after %v",
				fam, time.UnixMicro(c).UTC().Format(time.RFC3339Nano), from.UTC().Format(time.RFC3339Nano))
		}
	}
	if len(missed) > 0 {
		mr.st.missed++
	}
	return ""
}

// sameShards checks that the checkpoint's shards are the sweep's: the
// run's tablets, or the schedule's salts.
func (sw *sweeper) sameShards(recs ...[]scan.ShardRecord) string {
	for _, r := range recs {
		if len(r) != len(sw.shards) {
			return fmt.Sprintf("the checkpoint has %d shards, the sweep %d", len(r), len(sw.shards))
		}
		for i := range r {
			if r[i].Shard != sw.shards[i] {
				return fmt.Sprintf("the checkpoint's shard %d is %v, the sweep's %v", i, r[i].Shard, sw.shards[i])
			}
		}
	}
	return ""
}

// shardOf returns the index of the shard holding row: of the tablet
// holding it, or of its salt.
func (sw *sweeper) shardOf(row string) int {
	if sw.cfg.scheduled {
		return schedule.Salt(row)
	}
	for i, s := range sw.shards {
		if row >= s.Start && (s.End == "" || row < s.End) {
			return i
		}
	}
	return -1
}

// compareRows compares events, delivered in order, with what the model
// owes for rows, in order: the same events, row by row; within a row,
// in the order of their families and columns.
func compareRows(sw *sweeper, rows []string, events []sweep.Event, reads map[string]rowRead) string {
	byRow := map[string][]sweep.Event{}
	var order []string
	for i, e := range events {
		if i > 0 && e.Row < events[i-1].Row {
			return fmt.Sprintf("row %q delivered after %q", e.Row, events[i-1].Row)
		}
		if i > 0 && e.Row == events[i-1].Row && e.Family+":"+e.Column < events[i-1].Family+":"+events[i-1].Column {
			return fmt.Sprintf("in row %q, %s:%s delivered after %s:%s", e.Row, e.Family, e.Column, events[i-1].Family, events[i-1].Column)
		}
		if len(order) == 0 || order[len(order)-1] != e.Row {
			order = append(order, e.Row)
		}
		byRow[e.Row] = append(byRow[e.Row], e)
	}
	var owing []string
	for _, row := range rows {
		if len(reads[row].events) > 0 {
			owing = append(owing, row)
		}
	}
	if !slices.Equal(order, owing) {
		return fmt.Sprintf("events delivered for rows %q, the model owes events for %q", order, owing)
	}
	for _, row := range owing {
		if msg := matchRow(sw, byRow[row], reads[row].events); msg != "" {
			return fmt.Sprintf("row %q: %s", row, msg)
		}
	}
	return ""
}

// matchRow matches the events delivered for a row with those owed.
func matchRow(sw *sweeper, got []sweep.Event, want []expected) string {
	byKey := map[string]expected{}
	for _, x := range want {
		byKey[x.key()] = x
	}
	describe := func() string {
		var w []string
		for _, x := range want {
			w = append(w, x.String())
		}
		var g []string
		for _, e := range got {
			g = append(g, fmt.Sprintf("%v %s:%s@%d value %q", e, e.Family, e.Column, e.Timestamp, e.Value))
		}
		return fmt.Sprintf("delivered\n      %s\n    want\n      %s", strings.Join(g, "\n      "), strings.Join(w, "\n      "))
	}
	if len(got) != len(want) {
		return describe()
	}
	for _, e := range got {
		k := fmt.Sprintf("%s:%s@%d", e.Family, e.Column, e.Timestamp)
		switch e.Kind {
		case sweep.Column:
			k = e.Family + ":" + e.Column
		case sweep.Row:
			k = ""
		}
		x, ok := byKey[k]
		if !ok || e.Kind != x.kind || e.Table != "t" || e.Expired.UnixMicro() != x.expiry {
			return describe()
		}
		delete(byKey, k)
		named := slices.IndexFunc(x.alts, func(c cellRef) bool {
			return c.fam == e.Family && c.col == e.Column && c.ts == int64(e.Timestamp)
		})
		if named < 0 {
			return describe()
		}
		if sw.cfg.spec.values && e.Kind != sweep.Row {
			if string(e.Value) != x.alts[named].value {
				return describe()
			}
		} else if e.Value != nil {
			return describe()
		}
	}
	return ""
}

func (x expected) String() string {
	var alts []string
	for _, c := range x.alts {
		alts = append(alts, fmt.Sprintf("%s:%s@%d=%q", c.fam, c.col, c.ts, c.value))
	}
	return fmt.Sprintf("%v expired %s: row %q, one of %s", x.kind, time.UnixMicro(x.expiry).UTC().Format(time.RFC3339Nano), x.row, strings.Join(alts, " "))
}

// missed returns the Missed a round of sw over (from, until] judged at
// now reports: each family whose GC may have deleted a cell of the window
// first, its keep after expiry past, by family name.
func (mr *modelRun) missed(sw *sweeper, from, until, now time.Time) []sweep.Missed {
	var out []sweep.Missed
	for _, fam := range sw.cfg.spec.fams {
		keep := mr.m.fams[fam].keep
		if horizon := now.Add(-keep); horizon.After(from) {
			end := until
			if horizon.Before(until) {
				end = horizon
			}
			out = append(out, sweep.Missed{Family: fam, From: from, Until: end, Keep: keep})
		}
	}
	return out
}

func (c sweepConfig) marginOrDefault() time.Duration {
	if c.margin == 0 {
		return sweep.DefaultMargin
	}
	return c.margin
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
