package model_test

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
)

// The reference model: the cells a table stores, expired ones included,
// kept as Bigtable keeps them; how a mutation (validated whole, plain or
// conditional) changes them; and what a read may return. It decides by
// the rules of model_rules_test.go and never calls the library.

// storedCell is a cell as the model stores it. wt is the write time in
// microseconds of a cell that has a write-time companion, -1 otherwise.
type storedCell struct {
	ts    int64
	value string
	wt    int64
}

// model is the reference: the cells a table stores, expired ones
// included, and DESIGN.md's rules for what a read returns.
type model struct {
	v    *variant
	now  time.Time
	rows map[string]map[string]map[string][]storedCell // row, family, column: newest first
}

func newModel(v *variant) *model {
	return &model{v: v, now: testkit.Base, rows: map[string]map[string]map[string][]storedCell{}}
}

// change is one validated op of a mutation, with its timestamp.
type change struct {
	mutOp
	ts int64
}

// build validates a mutation as a whole at now: any bad op refuses it.
func (m *model) build(s *mutSpec, now time.Time) ([]change, error) {
	if s == nil || s.isNil {
		return nil, ttl.ErrInvalidMutation
	}
	if s.cond != nil {
		return nil, ttl.ErrInvalidMutation // conditional: see applyCond
	}
	if len(s.ops) == 0 {
		return nil, ttl.ErrInvalidMutation
	}
	changes := make([]change, 0, len(s.ops))
	for _, o := range s.ops {
		c := change{mutOp: o}
		if o.kind == mkSet || o.kind == mkReplace {
			ts, err := m.timestamp(o.fam, o.life, now)
			if err != nil {
				return nil, err
			}
			c.ts = ts
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// empty tells whether a conditional branch has nothing to apply.
func (s *mutSpec) empty() bool { return s == nil || s.isNil || s.cond == nil && len(s.ops) == 0 }

// apply applies a plain or conditional mutation to row at now; matched
// is the predicate's result for a conditional one.
func (m *model) apply(row string, s *mutSpec, now time.Time) (matched bool, err error) {
	if s == nil || s.isNil || s.cond == nil {
		changes, err := m.build(s, now)
		if err != nil {
			return false, err
		}
		m.write(row, changes, now)
		return false, nil
	}
	var branches [2][]change
	for i, b := range []*mutSpec{s.cond.yes, s.cond.no} {
		if b.empty() {
			continue
		}
		if b.cond != nil {
			return false, ttl.ErrInvalidMutation // nested
		}
		if branches[i], err = m.build(b, now); err != nil {
			return false, err
		}
	}
	if branches[0] == nil && branches[1] == nil {
		return false, ttl.ErrInvalidMutation
	}
	live := m.liveCells(row, now.Add(m.v.margin))
	if s.cond.filter != nil {
		live = s.cond.filter.eval(live, m.v.familyNames())
	}
	matched = len(live) > 0
	if matched {
		m.write(row, branches[0], now)
	} else {
		m.write(row, branches[1], now)
	}
	return matched, nil
}

// write applies validated changes, in order.
func (m *model) write(row string, changes []change, now time.Time) {
	for _, c := range changes {
		fams := m.rows[row]
		switch c.kind {
		case mkDeleteRow:
			delete(m.rows, row)
			continue
		case mkDeleteFamily:
			delete(fams, c.fam)
			continue
		case mkDeleteColumn, mkReplace:
			delete(fams[c.fam], c.col)
			if c.kind == mkDeleteColumn {
				continue
			}
		}
		if fams == nil {
			fams = map[string]map[string][]storedCell{}
			m.rows[row] = fams
		}
		if fams[c.fam] == nil {
			fams[c.fam] = map[string][]storedCell{}
		}
		wt := int64(-1)
		if m.v.writeTimes && m.v.families[c.fam] != ruleNone {
			wt = now.UnixMicro()
		}
		cells := fams[c.fam][c.col]
		if m.v.families[c.fam] == ruleMove {
			cells = m.v.move.retire(cells, c.ts)
		}
		i := sort.Search(len(cells), func(i int) bool { return cells[i].ts <= c.ts })
		nc := storedCell{ts: c.ts, value: c.value, wt: wt}
		if i < len(cells) && cells[i].ts == c.ts {
			cells[i] = nc // the same timestamp replaces
		} else {
			cells = slices.Insert(cells, i, nc)
		}
		fams[c.fam][c.col] = cells
	}
	m.prune()
}

// prune drops the empty columns, families and rows, as Bigtable keeps none.
func (m *model) prune() {
	for row, fams := range m.rows {
		for f, cols := range fams {
			for c, cells := range cols {
				if len(cells) == 0 {
					delete(cols, c)
				}
			}
			if len(cols) == 0 {
				delete(fams, f)
			}
		}
		if len(fams) == 0 {
			delete(m.rows, row)
		}
	}
}

// liveCells returns the cells of row a read at instant at returns before
// the caller's filter, sorted.
func (m *model) liveCells(row string, at time.Time) []flatCell {
	var out []flatCell
	for f, cols := range m.rows[row] {
		for c, cells := range cols {
			for i, cell := range cells {
				if m.live(f, cells, i, at) {
					out = append(out, flatCell{f, c, cell.ts, cell.value, cell.wt})
				}
			}
		}
	}
	sortFlat(out, m.v.familyNames())
	return out
}

// rawCells returns every cell of row Bigtable stores, write-time
// companions included.
func (m *model) rawCells(row string) []flatCell {
	var out []flatCell
	for f, cols := range m.rows[row] {
		for c, cells := range cols {
			for _, cell := range cells {
				out = append(out, flatCell{f, c, cell.ts, cell.value, -1})
				if cell.wt >= 0 {
					out = append(out, flatCell{f, "\xff\xffwt:" + c, cell.ts, string(binary.BigEndian.AppendUint64(nil, uint64(cell.wt))), -1})
				}
			}
		}
	}
	sortFlat(out, m.v.familyNames())
	return out
}

// stored is the number of data cells row stores, live or not.
func (m *model) stored(row string) int {
	n := 0
	for _, cols := range m.rows[row] {
		for _, cells := range cols {
			n += len(cells)
		}
	}
	return n
}

func (m *model) rowKeys() []string {
	keys := make([]string, 0, len(m.rows))
	for k := range m.rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// readResult is what a read returns: each row's cells, in the order rows
// came.
type readResult struct {
	keys  []string
	cells map[string][]flatCell
}

func (r readResult) equal(o readResult) bool {
	if !slices.Equal(r.keys, o.keys) {
		return false
	}
	for _, k := range r.keys {
		if !slices.Equal(r.cells[k], o.cells[k]) {
			return false
		}
	}
	return true
}

// expected is what a read may return: the rows, in order, and for each
// the cells it may have. A row has more than one possible list of cells
// when a CellsPerRowLimitFilter makes it depend on the order in which the
// emulator takes the row's families (the order of a Go map).
type expected struct {
	keys  []string
	cells map[string][][]flatCell
}

func (w expected) matches(got readResult) bool {
	if !slices.Equal(got.keys, w.keys) {
		return false
	}
	for _, k := range w.keys {
		if !slices.ContainsFunc(w.cells[k], func(cs []flatCell) bool { return slices.Equal(cs, got.cells[k]) }) {
			return false
		}
	}
	return true
}

func (w expected) String() string {
	if len(w.keys) == 0 {
		return "  (no rows)"
	}
	var b strings.Builder
	for i, k := range w.keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		for j, cs := range w.cells[k] {
			if j > 0 {
				b.WriteString("\n    or ")
			} else {
				fmt.Fprintf(&b, "  %s: ", k)
			}
			fmt.Fprint(&b, cs)
		}
	}
	return b.String()
}

// read returns what a read may return.
func (m *model) read(r readSpec, single bool) expected {
	at := m.now.Add(m.v.margin)
	orders := [][]string{m.v.familyNames()}
	if r.filter != nil && r.filter.rowLimit() {
		orders = permutations(m.v.familyNames())
	}
	res := expected{cells: map[string][][]flatCell{}}
	keys := m.rowKeys()
	if r.reverse {
		slices.Reverse(keys)
	}
	sent := int64(0)
	for _, k := range keys {
		if single && k != r.row || !single && !r.rows.contains(k) {
			continue
		}
		if r.limit > 0 && sent >= r.limit {
			break
		}
		live := m.liveCells(k, at)
		// With write times the server also sends the companions of the
		// row's live cells: the row counts for LimitRows even when the
		// caller's filter keeps none of its cells.
		companions := r.writeTimes && slices.ContainsFunc(live, func(c flatCell) bool { return c.WT >= 0 })
		var options [][]flatCell
		for _, order := range orders {
			cs := slices.Clone(live)
			sortFlat(cs, order)
			if r.filter != nil {
				cs = r.filter.eval(cs, order)
			}
			if len(cs) == 0 {
				continue // not returned, whatever the order
			}
			if !r.writeTimes {
				for i := range cs {
					cs[i].WT = -1
				}
			}
			sortFlat(cs, m.v.familyNames())
			if !slices.ContainsFunc(options, func(o []flatCell) bool { return slices.Equal(o, cs) }) {
				options = append(options, cs)
			}
		}
		if len(options) > 0 || companions {
			sent++
		}
		if len(options) > 0 {
			res.keys = append(res.keys, k)
			res.cells[k] = options
		}
	}
	return res
}

func permutations(s []string) [][]string {
	if len(s) <= 1 {
		return [][]string{slices.Clone(s)}
	}
	var out [][]string
	for i := range s {
		rest := slices.Concat(s[:i:i], s[i+1:])
		for _, p := range permutations(rest) {
			out = append(out, append([]string{s[i]}, p...))
		}
	}
	return out
}
