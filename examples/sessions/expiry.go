package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"
)

// Watching the sessions expire: reads through the Table around each
// expiry, and raw reads of what stays stored until GC deletes it.

// watched is what the polls around a session's expiry saw: the clock
// readings of the last read that returned it and of the first that did
// not.
type watched struct{ lastSeen, firstHidden time.Time }

// watchExpiries watches each expiring session vanish from reads through
// the Table, reads the raw cells once the first has (while GC cannot have
// removed it yet: not before its expiry + 1s), checks that the Forever
// session is still returned, and prints what it saw.
func (d *demo) watchExpiries(ctx context.Context) error {
	var (
		seen  = map[string]watched{}
		raw   []bigtable.Row
		rawAt time.Time
	)
	for _, s := range sessions {
		exp, ok := d.expiry[s.id]
		if !ok {
			continue
		}
		last, first, err := d.watch(ctx, s.id, exp)
		if err != nil {
			return err
		}
		seen[s.id] = watched{last, first}
		if raw == nil {
			rawAt = d.clock.Now()
			if raw, err = readRaw(ctx, d.raw, sessionRows()); err != nil {
				return err
			}
		}
	}
	r, err := d.tbl.ReadRow(ctx, "service")
	if err != nil {
		return err
	}
	serviceAt := d.clock.Last()

	fmt.Fprintln(d.out, "\nReads through the Table, polled around each expiry, at the clock readings")
	fmt.Fprintln(d.out, "the Table filtered with:")
	fmt.Fprintln(d.out)
	fmt.Fprintln(d.out, "session  last returned at  first not returned at")
	for _, s := range sessions {
		if w, ok := seen[s.id]; ok {
			fmt.Fprintf(d.out, "%-7s  expiry%-10s  expiry%s\n", s.id, signed(w.lastSeen.Sub(d.expiry[s.id])), signed(w.firstHidden.Sub(d.expiry[s.id])))
		}
	}
	if len(r) == 0 {
		return errors.New("the Forever session was not returned")
	}
	fmt.Fprintf(d.out, "%-7s  still returned at T+%v\n", "service", serviceAt.Sub(d.t0).Round(100*time.Millisecond))

	fmt.Fprintf(d.out, "\nRaw read at T+%v, plain bigtable client, no filter (expired cells stay stored):\n\n",
		rawAt.Sub(d.t0).Round(100*time.Millisecond))
	d.printRaw(raw, rawAt)
	return nil
}

// waitForGC polls the raw cells of the sessions until the emulator's GC
// has deleted every expired one, printing when each goes, and fails after
// gcDeadline from T.
func (d *demo) waitForGC(ctx context.Context) error {
	fmt.Fprintf(d.out, "\nWaiting (at most %v) for the emulator's GC, a pass every 0.5–1.5 s, to delete\n", gcDeadline)
	fmt.Fprintln(d.out, "the cells that expired more than 1s ago:")
	fmt.Fprintln(d.out)
	gone := map[string]bool{}
	var (
		raw   []bigtable.Row
		rawAt time.Time
		err   error
	)
	for len(gone) < len(d.expiry) {
		if d.clock.Now().Sub(d.t0) > gcDeadline {
			return fmt.Errorf("GC did not delete the expired cells within %v of writing them", gcDeadline)
		}
		d.clock.Sleep(50 * time.Millisecond)
		if raw, err = readRaw(ctx, d.raw, sessionRows()); err != nil {
			return err
		}
		rawAt = d.clock.Now()
		stored := map[string]bool{}
		for _, r := range raw {
			stored[r.Key()] = true
		}
		for _, s := range sessions {
			if _, expires := d.expiry[s.id]; expires && !stored[s.id] && !gone[s.id] {
				gone[s.id] = true
				fmt.Fprintf(d.out, "  T+%-4v  %s's cell is gone, %v after its expiry\n", rawAt.Sub(d.t0).Round(100*time.Millisecond),
					s.id, rawAt.Sub(d.expiry[s.id]).Round(100*time.Millisecond))
			}
		}
	}
	fmt.Fprintf(d.out, "\nRaw read at T+%v:\n\n", rawAt.Sub(d.t0).Round(100*time.Millisecond))
	d.printRaw(raw, rawAt)
	return nil
}

// watch reads row through the Table, back to back from shortly before
// exp, until a read no longer returns it, and returns the clock readings
// of the last read that returned it and the first that did not.
func (d *demo) watch(ctx context.Context, row string, exp time.Time) (lastSeen, firstHidden time.Time, err error) {
	d.clock.Sleep(exp.Add(-10 * time.Millisecond).Sub(d.clock.Now()))
	for {
		r, err := d.tbl.ReadRow(ctx, row)
		if err != nil {
			return lastSeen, firstHidden, err
		}
		at := d.clock.Last()
		if len(r) == 0 {
			return lastSeen, at, nil
		}
		lastSeen = at
		if at.Sub(exp) > 2*time.Second {
			return lastSeen, firstHidden, fmt.Errorf("%s was still returned %v after its expiry", row, at.Sub(exp))
		}
	}
}

// readRaw reads every stored cell of rows with the plain bigtable client.
func readRaw(ctx context.Context, tbl bigtable.TableAPI, rows []string) ([]bigtable.Row, error) {
	var out []bigtable.Row
	err := tbl.ReadRows(ctx, bigtable.RowList(rows), func(r bigtable.Row) bool {
		out = append(out, r)
		return true
	})
	return out, err
}

// printRaw prints one line per stored cell, and whether it had expired at
// the time of the read.
func (d *demo) printRaw(raw []bigtable.Row, at time.Time) {
	for _, r := range raw {
		for _, item := range r[family] {
			state := "live"
			if exp, ok := d.expiry[r.Key()]; ok && !at.Before(exp) {
				state = "expired"
			}
			fmt.Fprintf(d.out, "  %-7s  %-12s  %s\n", r.Key(), stamp(item.Timestamp), state)
		}
	}
}

// sessionRows returns the sessions' row keys.
func sessionRows() []string {
	rows := make([]string, len(sessions))
	for i, s := range sessions {
		rows[i] = s.id
	}
	return rows
}
