package model_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
)

// Running Touch and KeepAlive reads in a model run: the Table reads and
// writes through an injector, which counts each operation's requests and
// puts another process's write before the one the operation names; the
// model runs DESIGN.md's rules (model_sliding_rules_test.go) with the
// write at the same point. After each such operation the outcome, the
// cells read, their expiries, the number of requests and the stored cells
// must be the model's, and DESIGN.md's promises are checked on what was
// returned and stored: no expired cell returned, no newer write lost,
// every cell a KeepAlive read returned live for idle after the read unless
// a newer write replaced it.

// injector is the bigtable.TableAPI a model run's Table uses.
type injector struct {
	bigtable.TableAPI
	other *ttl.Table // another process, on the same table

	inject   *injectSpec
	requests int
	injected bool
	row      string // where the injected write went
	err      error  // its error
}

// start begins an operation whose requests are counted, with the write to
// inject (nil: none).
func (x *injector) start(i *injectSpec) {
	x.inject, x.requests, x.injected, x.row, x.err = i, 0, false, "", nil
}

// end ends the operation, landing the injected write after it if no
// request came after its point.
func (x *injector) end() {
	if x.inject != nil && !x.injected {
		x.land(x.inject.row)
	}
	x.inject = nil
}

// before counts a request to row, landing the injected write first if
// this is the request it comes before.
func (x *injector) before(row string) {
	if x.inject != nil && !x.injected && x.requests == x.inject.at {
		x.land(row)
	}
	x.requests++
}

func (x *injector) land(row string) {
	x.injected, x.row = true, row
	x.err = x.other.Apply(context.Background(), row, x.inject.mut.mutation())
}

func (x *injector) ReadRow(ctx context.Context, row string, opts ...bigtable.ReadOption) (bigtable.Row, error) {
	x.before(row)
	return x.TableAPI.ReadRow(ctx, row, opts...)
}

func (x *injector) ReadRows(ctx context.Context, rs bigtable.RowSet, f func(bigtable.Row) bool, opts ...bigtable.ReadOption) error {
	x.before("")
	return x.TableAPI.ReadRows(ctx, rs, f, opts...)
}

func (x *injector) Apply(ctx context.Context, row string, m *bigtable.Mutation, opts ...bigtable.ApplyOption) error {
	x.before(row)
	return x.TableAPI.Apply(ctx, row, m, opts...)
}

func (x *injector) ApplyBulk(ctx context.Context, rows []string, muts []*bigtable.Mutation, opts ...bigtable.ApplyOption) ([]error, error) {
	x.before("")
	return x.TableAPI.ApplyBulk(ctx, rows, muts, opts...)
}

func (x *injector) ApplyReadModifyWrite(ctx context.Context, row string, m *bigtable.ReadModifyWrite) (bigtable.Row, error) {
	x.before(row)
	return x.TableAPI.ApplyReadModifyWrite(ctx, row, m)
}

// slides tells whether o is an operation of sliding expiration.
func (o op) slides() bool {
	return o.kind == opTouch || (o.kind == opReadRow || o.kind == opReadRows) && o.read.idle > 0
}

// stepSliding runs o, a Touch or a read with KeepAlive, on tbl and on the
// model, and compares them; then the stored cells, and DESIGN.md's
// promises.
func stepSliding(tbl *ttl.Table, raw *bigtable.Table, x *injector, m *model, o op, st *runStats) string {
	s := &slide{now: m.now, inject: o.inject}
	var msg string
	var got readResult
	if o.kind == opTouch {
		msg = stepTouch(tbl, x, m, o, s)
	} else {
		got, msg = stepKeepAlive(tbl, x, m, o, s)
	}
	if msg != "" {
		return msg
	}
	switch {
	case x.requests != s.requests:
		return fmt.Sprintf("%d requests sent, want %d", x.requests, s.requests)
	case o.inject != nil && x.row != s.injectRow:
		return fmt.Sprintf("the injected write went to row %q, want %q", x.row, s.injectRow)
	}
	if o.inject != nil {
		if msg := compareErr(x.err, s.injectErr); msg != "" {
			return "the injected write: " + msg
		}
	}
	if msg := checkRaw(raw, m); msg != "" {
		return msg
	}
	// The stored cells are the model's: check the promises on them. A
	// newer write stands: its value is still stored, expiring no earlier.
	// (A read that stripped values may renew it: it cannot tell a write
	// stamped with the timestamp it read, which replaces the cell, from
	// the cell, and the outcome is the one of the write landing before
	// the read.)
	for _, w := range s.winners {
		if !slices.ContainsFunc(m.rows[s.injectRow][w.Fam][w.Col], func(c storedCell) bool { return c.ts >= w.TS && c.value == w.Value }) {
			return fmt.Sprintf("the newer write %v to row %q was lost", w, s.injectRow)
		}
	}
	if o.kind != opTouch {
		var late []flatCell // the injected write's cells, when it landed after the read
		if o.inject != nil && o.inject.at > 0 {
			late = s.winners
		}
		if msg := keptAlive(m, got, o.read.idle, s.now, late); msg != "" {
			return msg
		}
	}
	st.slid(o, s)
	return ""
}

// stepTouch runs a Touch.
func stepTouch(tbl *ttl.Table, x *injector, m *model, o op, s *slide) string {
	t := o.touch
	x.start(o.inject)
	touched, err := tbl.Touch(context.Background(), t.row, t.fam, t.col, t.life.lifetime())
	x.end()
	wantTouched, want := m.touch(t, s)
	m.finish(s)
	if msg := compareErr(err, want); msg != "" {
		return msg
	}
	if touched != wantTouched {
		return fmt.Sprintf("touched = %v, want %v", touched, wantTouched)
	}
	return ""
}

// stepKeepAlive runs a read with KeepAlive: the rows must be those a
// plain read returns, with the due cells the model renews carrying their
// new timestamps. Where a row may come back in more than one way (a
// CellsPerRowLimitFilter depends on the order the emulator takes the
// families), the model renews the way that was returned.
func stepKeepAlive(tbl *ttl.Table, x *injector, m *model, o op, s *slide) (readResult, string) {
	single := o.kind == opReadRow
	want := m.read(o.read, single) // before any renewal or injected write
	x.start(o.inject)
	got, expiries, err := readThrough(tbl, m, o)
	x.end()
	m.request(s, o.read.row) // the read
	if !slices.Equal(got.keys, want.keys) {
		return got, fmt.Sprintf("read at %v returned\n%s\nwant the rows of\n%v", m.now.UTC().Format(time.RFC3339Nano), formatResult(got), want)
	}
	for _, k := range want.keys {
		var tried []string
		matched := false
		for _, cells := range want.cells[k] {
			c, cs := m.clone(), *s
			cs.winners = slices.Clone(s.winners)
			renewed := c.keepAlive(k, cells, o.read.idle, o.read.writeTimes, &cs)
			if slices.Equal(renewed, got.cells[k]) {
				m.rows, *s, matched = c.rows, cs, true
				break
			}
			tried = append(tried, fmt.Sprint(renewed))
		}
		if !matched {
			return got, fmt.Sprintf("read at %v returned row %q as\n  %v\nwant one of\n  %s", m.now.UTC().Format(time.RFC3339Nano), k, got.cells[k], strings.Join(tried, "\n  "))
		}
	}
	m.finish(s)
	var wantErr error
	if s.failed {
		wantErr = ttl.ErrRenewal
	}
	if msg := compareErr(err, wantErr); msg != "" {
		return got, msg
	}
	if len(expiries) > 0 {
		return got, strings.Join(expiries, "\n")
	}
	return got, ""
}

// readThrough reads as o says through tbl, and returns the rows, in order,
// and where the Table's ExpiresAt of a cell returned differs from the
// model's.
func readThrough(tbl *ttl.Table, m *model, o op) (readResult, []string, error) {
	ctx := context.Background()
	got := readResult{cells: map[string][]flatCell{}}
	families := m.v.familyNames()
	var expiries []string
	add := func(r bigtable.Row) bool {
		got.keys = append(got.keys, r.Key())
		got.cells[r.Key()] = flatRow(r, families)
		for _, items := range r {
			for _, it := range items {
				e, ok := tbl.ExpiresAt(it)
				we, wok := m.expiry(it)
				if ok != wok || !e.Equal(we) {
					expiries = append(expiries, fmt.Sprintf("ExpiresAt(%s@%d) = %v, %v want %v, %v", it.Column, it.Timestamp, e, ok, we, wok))
				}
			}
		}
		return true
	}
	var err error
	if o.kind == opReadRow {
		var r bigtable.Row
		if r, err = tbl.ReadRow(ctx, o.read.row, o.read.options()...); r != nil {
			add(r)
		}
	} else {
		err = tbl.ReadRows(ctx, o.read.rows.rowSet(), add, o.read.options()...)
	}
	return got, expiries, err
}

// keptAlive checks KeepAlive's promises on what a read at now returned
// and what is stored after it: no cell returned had expired, and each
// column's newest returned cell of a family whose cells expire by time is
// live for idle after the read — it expires no earlier than now + margin
// + idle — unless it is no longer the column's newest live cell: a newer
// write, or one the caller's filter hid, stands instead. late holds the
// cells another process wrote after the read: one stamped with the
// timestamp a stripped cell was read at replaces it unseen, and the
// renewal, conditional on the value it reads again, may lose to it.
func keptAlive(m *model, got readResult, idle time.Duration, now time.Time, late []flatCell) string {
	hide := now.Add(m.v.margin)
	for _, k := range got.keys {
		cells := got.cells[k]
		for i, c := range cells {
			e, ok := m.expiry(bigtable.ReadItem{Column: c.Fam + ":" + c.Col, Timestamp: bigtable.Timestamp(c.TS)})
			if !ok {
				continue
			}
			if !e.After(hide) {
				return fmt.Sprintf("row %q: %v was returned at %v, expired (at %v)", k, c, now.UTC().Format(time.RFC3339Nano), e.UTC().Format(time.RFC3339Nano))
			}
			if i > 0 && cells[i-1].Fam == c.Fam && cells[i-1].Col == c.Col {
				continue // not its column's newest returned cell
			}
			stored, ok := m.newestLive(k, c.Fam, c.Col, now)
			if !ok || stored.ts != c.TS || c.Value != "" && stored.value != c.Value {
				continue // another cell is the newest now
			}
			if c.Value == "" && slices.ContainsFunc(late, func(w flatCell) bool {
				return w.Fam == c.Fam && w.Col == c.Col && w.TS == stored.ts && w.Value == stored.value
			}) {
				continue // replaced after the read, at the timestamp read
			}
			if e.Before(hide.Add(idle)) {
				return fmt.Sprintf("row %q: %v was returned with KeepAlive(%v) at %v and expires at %v, before %v", k, c, idle,
					now.UTC().Format(time.RFC3339Nano), e.UTC().Format(time.RFC3339Nano), hide.Add(idle).UTC().Format(time.RFC3339Nano))
			}
		}
	}
	return ""
}

// slideStats counts what the Touch and KeepAlive operations of a run
// exercised.
type slideStats struct {
	touches, touched, conflicts int
	keepAlives, renewed, lost   int
	injectedBetween             int // injected writes that landed between two requests
}

func (st *runStats) slid(o op, s *slide) {
	if st == nil {
		return
	}
	x := &st.sliding
	if o.kind == opTouch {
		x.touches++
		x.touched += s.renewed
		x.conflicts += s.lost
	} else {
		x.keepAlives++
	}
	x.renewed += s.renewed
	x.lost += s.lost
	if s.inject != nil && s.inject.at < s.requests {
		x.injectedBetween++
	}
}

func (x *slideStats) add(o slideStats) {
	x.touches, x.touched, x.conflicts = x.touches+o.touches, x.touched+o.touched, x.conflicts+o.conflicts
	x.keepAlives, x.renewed, x.lost = x.keepAlives+o.keepAlives, x.renewed+o.renewed, x.lost+o.lost
	x.injectedBetween += o.injectedBetween
}

func (x slideStats) String() string {
	return fmt.Sprintf("%d touches (%d touched, %d conflicts), %d KeepAlive reads (%d cells renewed, %d renewals beaten), %d writes injected between two requests",
		x.touches, x.touched, x.conflicts, x.keepAlives, x.renewed, x.lost, x.injectedBetween)
}
