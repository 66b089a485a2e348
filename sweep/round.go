package sweep

import (
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/scan"
)

// A Round is one window of a sweep: the cells that expire after From and
// up to Until. It says how to read them (Filter) and what each row read
// holds (Events) and may lose (Deletes); Sweeper.Once runs rounds over a
// whole table, and the Beam pipeline of this module runs the same rounds
// past one machine.
type Round struct {
	// Table is the table swept, as events name it.
	Table string
	// From and Until bound the expiries the round reports: after From,
	// up to Until.
	From, Until time.Time

	g          Granularity
	values     bool
	writeTimes bool
	fams       []roundFamily
}

// A roundFamily is one family of a round, with the timestamps of its
// cells that expire in the round's window.
type roundFamily struct {
	family
	window []rules.Range
}

// inWindow reports whether the family's cell stamped ts expires in the
// round's window.
func (f roundFamily) inWindow(ts bigtable.Timestamp) bool {
	for _, r := range f.window {
		if r.Contains(ts) {
			return true
		}
	}
	return false
}

// Filter returns the filter that reads what the round needs, and nil when
// no cell can have expired in its window (nothing to read). It passes the
// cells that expire in the window, selected by timestamp on the server,
// with their values only when the sweep reads values; for column and row
// events, also the newest live cell of each column (of each row, for row
// events) of the rows that hold such a cell, values stripped, which
// decide whether the column or row is still live.
func (r *Round) Filter() bigtable.Filter {
	var expired, found, live []bigtable.Filter
	for _, f := range r.fams {
		if len(f.window) > 0 {
			window := bigtable.ChainFilters(r.columns(f.name), ranges(f.window))
			found = append(found, bigtable.ChainFilters(window, bigtable.CellsPerRowLimitFilter(1)))
			if !r.values {
				window = bigtable.ChainFilters(window, bigtable.StripValueFilter())
			}
			expired = append(expired, window)
		}
		newest := bigtable.LatestNFilter(1)
		if r.g == Row {
			newest = bigtable.CellsPerRowLimitFilter(1)
		}
		live = append(live, bigtable.ChainFilters(r.columns(f.name), f.s.Filter(r.Until), newest, bigtable.StripValueFilter()))
	}
	switch {
	case len(expired) == 0:
		return nil
	case r.g == Cell:
		return interleave(expired)
	}
	return bigtable.ConditionFilter(interleave(found), interleave(append(expired, live...)), nil)
}

// columns selects the family's columns, without the write-time companions
// when the sweep is told the table records write times.
func (r *Round) columns(family string) bigtable.Filter {
	if r.writeTimes {
		return bigtable.ColumnRangeFilter(family, "", ttl.WriteTimePrefix[:2])
	}
	return bigtable.ColumnRangeFilter(family, "", "")
}

// ranges passes the cells of any of rs.
func ranges(rs []rules.Range) bigtable.Filter {
	fs := make([]bigtable.Filter, len(rs))
	for i, r := range rs {
		fs[i] = r.Filter()
	}
	return interleave(fs)
}

// interleave passes what any of fs passes.
func interleave(fs []bigtable.Filter) bigtable.Filter {
	if len(fs) == 1 {
		return fs[0]
	}
	return bigtable.InterleaveFilters(fs...)
}

// A column is what a row read through the round's filter holds of one
// column: its cells that expired in the window, the one that expired last,
// and whether a cell is live.
type column struct {
	family, name string
	expired      []expiredCell // in the window, in the order read
	last         expiredCell   // the one that expired last
	live         bool          // a cell is live at the round's Until
}

// An expiredCell is a cell that expired in the window, with its expiry.
type expiredCell struct {
	bigtable.ReadItem
	expiry time.Time
}

// Events returns the events of a row read through Filter, in the order of
// its families and columns: each cell that expired in the window, or each
// column or the row, by the round's granularity.
func (r *Round) Events(row bigtable.Row) []Event {
	return r.appendEvents(nil, row.Key(), r.columnsOf(row))
}

// Deletes returns the mutation that deletes, in the columns of a row read
// through Filter where a cell expired in the window, every cell expired at
// the round's Until (and its write-time companion, when the sweep is told
// of them), and nil when there are none. Each deletion is a range of
// timestamps that only expired cells occupy: it cannot delete a live cell,
// nor one written after the read with a later expiry.
func (r *Round) Deletes(row bigtable.Row) *bigtable.Mutation { return r.deletes(r.columnsOf(row)) }

// appendEvents appends the events of the columns of row key to out.
func (r *Round) appendEvents(out []Event, key string, cols []column) []Event {
	var last *column // of the row
	for i := range cols {
		c := &cols[i]
		switch {
		case r.g == Cell:
			for _, cell := range c.expired {
				out = append(out, r.event(Cell, key, c.family, cell))
			}
		case r.g == Column && len(c.expired) > 0 && !c.live:
			out = append(out, r.event(Column, key, c.family, c.last))
		case r.g == Row && c.live:
			return out
		case r.g == Row && len(c.expired) > 0 && (last == nil || c.last.expiry.After(last.last.expiry)):
			last = c
		}
	}
	if last != nil {
		out = append(out, r.event(Row, key, last.family, last.last))
	}
	return out
}

// count returns the number and size of the cells of row key that expired
// in the window.
func (r *Round) count(key string, cols []column) scan.Count {
	var n scan.Count
	for _, c := range cols {
		for _, cell := range c.expired {
			n.Add(scan.CountCell(key, cell.ReadItem))
		}
	}
	return n
}

// deletes returns the mutation that deletes the expired cells of cols.
func (r *Round) deletes(cols []column) *bigtable.Mutation {
	var m *bigtable.Mutation
	for _, c := range cols {
		if len(c.expired) == 0 {
			continue
		}
		for _, rg := range r.family(c.family).expiredAt(r.Until) {
			if rg.Open && rg.Lo == 0 {
				continue // never "every cell": no expired range is one
			}
			hi := rg.Hi
			if rg.Open {
				hi = 0 // no end
			}
			if m == nil {
				m = bigtable.NewMutation()
			}
			m.DeleteTimestampRange(c.family, c.name, rg.Lo, hi)
			if r.writeTimes {
				m.DeleteTimestampRange(c.family, ttl.WriteTimePrefix+c.name, rg.Lo, hi)
			}
		}
	}
	return m
}

// family returns the round's family named name.
func (r *Round) family(name string) roundFamily {
	for _, f := range r.fams {
		if f.name == name {
			return f
		}
	}
	return roundFamily{}
}

// columnsOf sorts the cells of a row read through Filter into columns, in
// family and column order.
func (r *Round) columnsOf(row bigtable.Row) []column {
	var out []column
	for _, f := range r.fams {
		items := row[f.name]
		first := len(out)
		var cells cellSet
		var cols columnSet
		for k, it := range items {
			if cells.seen(items, k) {
				continue // passed by two branches of an interleave
			}
			name := qualifier(it.Column, f.name)
			i, ok := cols.find(out, first, name)
			if !ok {
				out = append(out, column{family: f.name, name: name})
				cols.add(name, i)
			}
			c := &out[i]
			expiry, expires := f.expiry(it.Timestamp)
			if !expires || !f.inWindow(it.Timestamp) {
				c.live = true
				continue
			}
			c.expired = append(c.expired, expiredCell{it, expiry})
			if len(c.expired) == 1 || expiry.After(c.last.expiry) {
				c.last = c.expired[len(c.expired)-1]
			}
		}
		if part := out[first:]; len(part) > 1 {
			slices.SortStableFunc(part, func(a, b column) int { return strings.Compare(a.name, b.name) })
		}
	}
	return out
}

// lookBack is how many cells or columns of a family columnsOf compares
// one by one before it keeps a map: most rows a round reads hold a few.
const lookBack = 16

// A cellSet tells which cells of a family's items columnsOf has sorted in.
type cellSet struct{ m map[cellKey]bool }

type cellKey struct {
	column string
	ts     bigtable.Timestamp
}

// seen reports whether items[k] is a cell of items[:k], and notes it.
func (s *cellSet) seen(items []bigtable.ReadItem, k int) bool {
	it := items[k]
	key := cellKey{it.Column, it.Timestamp}
	if s.m == nil && k < lookBack {
		for _, p := range items[:k] {
			if p.Column == it.Column && p.Timestamp == it.Timestamp {
				return true
			}
		}
		return false
	}
	if s.m == nil {
		s.m = make(map[cellKey]bool, 2*k)
		for _, p := range items[:k] {
			s.m[cellKey{p.Column, p.Timestamp}] = true
		}
	}
	if s.m[key] {
		return true
	}
	s.m[key] = true
	return false
}

// A columnSet finds a family's columns in out[first:] by name.
type columnSet struct{ m map[string]int }

// find returns the index in out of the column named name, or else
// len(out) and false.
func (s *columnSet) find(out []column, first int, name string) (int, bool) {
	if s.m == nil && len(out)-first < lookBack {
		for j := first; j < len(out); j++ {
			if out[j].name == name {
				return j, true
			}
		}
		return len(out), false
	}
	if s.m == nil {
		s.m = make(map[string]int, 2*(len(out)-first))
		for j := first; j < len(out); j++ {
			s.m[out[j].name] = j
		}
	}
	if j, ok := s.m[name]; ok {
		return j, true
	}
	return len(out), false
}

// add notes the column named name at index i, once find kept a map.
func (s *columnSet) add(name string, i int) {
	if s.m != nil {
		s.m[name] = i
	}
}

// qualifier returns the column of a cell read from family: its name
// without the "family:" the client prefixes it with.
func qualifier(column, family string) string {
	if len(column) > len(family) && column[len(family)] == ':' && column[:len(family)] == family {
		return column[len(family)+1:]
	}
	return column
}

// event returns the event of kind for the expired cell c of row key.
func (r *Round) event(kind Granularity, key, family string, c expiredCell) Event {
	e := Event{Kind: kind, Table: r.Table, Row: key, Family: family, Column: qualifier(c.Column, family),
		Timestamp: c.Timestamp, Expired: c.expiry}
	if r.values && kind != Row {
		e.Value = c.Value
	}
	return e
}
