package ttltest

import (
	"context"
	"fmt"
	"sort"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
)

// A cellKey is a stored cell: its row, "family:qualifier" and timestamp.
type cellKey struct {
	row, column string
	ts          bigtable.Timestamp
}

// FastForward moves the Env's clock on by d, then removes every cell that
// Bigtable's garbage collection must have removed by the new instant: a
// cell that the family's GC policy, as the table has it now, has let GC
// delete for at least the Env's GC lag ([DefaultGCLag], a week, unless
// [WithGCLag]). Cells GC only may have deleted stay stored, as they can
// in Bigtable: reading them raw shows what a reader that forgets the
// expiry filter would see. [Env.CollectGarbage] removes those too.
//
// A negative d is refused (the clock only moves forward). A failure
// fails the test of an Env made by New, or is kept for Err. Call it when
// no write is in flight: the Env reads the whole table, then deletes.
func (e *Env) FastForward(d time.Duration) {
	if e != nil && e.t != nil {
		e.t.Helper()
	}
	e.advance("FastForward", d, true)
}

// CollectGarbage removes, at the clock's now, every cell that Bigtable's
// garbage collection may remove: every cell the family's GC policy lets
// GC delete, however recently it became collectable, as if GC ran with
// no delay at all. A test of physical deletion (what a reader that does
// not use package ttl sees once GC has run) calls it after FastForward.
// A failure fails the test of an Env made by New, or is kept for Err.
func (e *Env) CollectGarbage() {
	if e != nil && e.t != nil {
		e.t.Helper()
	}
	e.advance("CollectGarbage", 0, false)
}

// advance moves the clock d forward and removes the cells GC may remove:
// those collectable for the Env's GC lag when lagged, or at all. The
// cells are seen before the clock moves: each was written at the clock's
// reading now, since the clock moves only here.
func (e *Env) advance(op string, d time.Duration, lagged bool) {
	if e == nil {
		return
	}
	if e.t != nil {
		e.t.Helper()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.usable(op) {
		return
	}
	if d < 0 {
		e.fail(fmt.Errorf("%w: ttltest: %s(%v): the clock only moves forward", ttl.ErrInvalidOption, op, d))
		return
	}
	cells, err := e.observe()
	if err != nil {
		e.fail(err)
		return
	}
	now := e.clock.Now().Add(d)
	e.clock.Set(now)
	if lagged {
		now = now.Add(-e.lag)
	}
	if err := e.collect(cells, now); err != nil {
		e.fail(err)
	}
}

// usable reports whether a collection may run: not on a closed Env nor
// after a failure kept for Err. e.mu is held.
func (e *Env) usable(op string) bool {
	if e.closed {
		e.fail(errClosed(op))
		return false
	}
	return e.err == nil
}

// A stored is a cell as a collection judges it: where it is, and when
// the Env first saw it stored.
type stored struct {
	key  cellKey
	seen time.Time
}

// observe reads every stored cell and returns them grouped by row and
// column, each column's newest first. A cell the Env has not seen before
// is recorded as seen at the clock's now; a cell no longer stored is
// forgotten. e.mu is held.
func (e *Env) observe() ([][]stored, error) {
	now := e.clock.Now()
	var columns [][]stored
	seen := make(map[cellKey]time.Time, len(e.seen))
	err := e.raw.ReadRows(context.Background(), bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		for _, items := range r {
			byColumn := map[string][]stored{}
			for _, it := range items {
				k := cellKey{row: r.Key(), column: it.Column, ts: it.Timestamp}
				at, ok := e.seen[k]
				if !ok {
					at = now
				}
				seen[k] = at
				byColumn[it.Column] = append(byColumn[it.Column], stored{key: k, seen: at})
			}
			for _, cells := range byColumn {
				sort.Slice(cells, func(i, j int) bool { return cells[i].key.ts > cells[j].key.ts })
				columns = append(columns, cells)
			}
		}
		return true
	}, bigtable.RowFilter(bigtable.StripValueFilter()))
	if err != nil {
		return nil, fmt.Errorf("ttltest: reading table %q: %w", e.name, err)
	}
	e.seen = seen
	return columns, nil
}

// collect deletes every cell of columns that the GC policy of its family
// let GC delete at the instant at. e.mu is held.
func (e *Env) collect(columns [][]stored, at time.Time) error {
	ctx := context.Background()
	info, err := e.emu.Admin.TableInfo(ctx, e.name)
	if err != nil {
		return fmt.Errorf("ttltest: reading the GC policies of table %q: %w", e.name, err)
	}
	policies := make(map[string]bigtable.GCPolicy, len(info.FamilyInfos))
	for _, f := range info.FamilyInfos {
		policies[f.Name] = f.FullGCPolicy
	}
	muts := map[string]*bigtable.Mutation{}
	var rows []string
	for _, cells := range columns {
		family, qualifier := rules.SplitColumn(cells[0].key.column)
		for i, c := range cells {
			if !collectable(policies[family], cells, i, at) {
				continue
			}
			m := muts[c.key.row]
			if m == nil {
				m = bigtable.NewMutation()
				muts[c.key.row] = m
				rows = append(rows, c.key.row)
			}
			m.DeleteTimestampRange(family, qualifier, c.key.ts, end(c.key.ts))
			delete(e.seen, c.key)
		}
	}
	sort.Strings(rows)
	for _, row := range rows {
		if err := e.raw.Apply(ctx, row, muts[row]); err != nil {
			return fmt.Errorf("ttltest: deleting the collectable cells of row %q of table %q: %w", row, e.name, err)
		}
	}
	return nil
}

// end is the end of the timestamp range [ts, end) that holds the one
// millisecond of ts; 0, no end, for the last millisecond Bigtable has.
func end(ts bigtable.Timestamp) bigtable.Timestamp {
	if ts >= ttl.MaxTimestamp {
		return 0
	}
	return ts + 1000
}

// collectable reports whether GC policy p lets GC delete cells[i] at the
// instant at, judging the column as it stood then: cells[i] and the
// newer versions counted against it must have been stored (seen) by
// then. Bigtable's rules, per cell: MaxAge(a) when its timestamp is before
// at − a; MaxVersions(n) when n newer versions of its column are stored;
// a union when any of its rules does; an intersection when all of them
// do (one with no rules never does); no policy never.
func collectable(p bigtable.GCPolicy, cells []stored, i int, at time.Time) bool {
	c := cells[i]
	if c.seen.After(at) {
		return false
	}
	switch p := p.(type) {
	case bigtable.MaxAgeGCPolicy:
		return int64(c.key.ts) < at.UnixMicro()-time.Duration(p).Microseconds()
	case bigtable.MaxVersionsGCPolicy:
		newer := 0
		for _, n := range cells[:i] {
			if !n.seen.After(at) {
				newer++
			}
		}
		return newer >= int(p)
	case bigtable.UnionGCPolicy:
		for _, sub := range p.Children {
			if collectable(sub, cells, i, at) {
				return true
			}
		}
		return false
	case bigtable.IntersectionGCPolicy:
		for _, sub := range p.Children {
			if !collectable(sub, cells, i, at) {
				return false
			}
		}
		return len(p.Children) > 0
	}
	return false
}
