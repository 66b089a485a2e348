package model_test

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
)

// The operations of a model run: lifetimes, mutations (plain and
// conditional), row sets, reads and clock moves, as concrete recipes that
// make the library's values and print themselves, so that any sub-list of
// a run can be replayed and a failure reads as code.

type lifeKind uint8

const (
	lkDefault lifeKind = iota
	lkFor
	lkUntil
	lkVersion
	lkForever
)

// lifeSpec is a Lifetime the model can compute with and a failure can print.
type lifeSpec struct {
	kind lifeKind
	d    time.Duration
	t    time.Time
	seq  int64
}

func (l lifeSpec) lifetime() ttl.Lifetime {
	switch l.kind {
	case lkFor:
		return ttl.For(l.d)
	case lkUntil:
		return ttl.Until(l.t)
	case lkVersion:
		return ttl.Version(l.seq)
	case lkForever:
		return ttl.Forever
	}
	return ttl.Default
}

func (l lifeSpec) String() string { return l.lifetime().String() }

type mutKind uint8

const (
	mkSet mutKind = iota
	mkReplace
	mkDeleteColumn
	mkDeleteFamily
	mkDeleteRow
)

type mutOp struct {
	kind     mutKind
	fam, col string
	value    string
	life     lifeSpec
}

func (o mutOp) String() string {
	switch o.kind {
	case mkSet:
		return fmt.Sprintf("Set(%s:%q, %q, %v)", o.fam, o.col, o.value, o.life)
	case mkReplace:
		return fmt.Sprintf("Replace(%s:%q, %q, %v)", o.fam, o.col, o.value, o.life)
	case mkDeleteColumn:
		return fmt.Sprintf("DeleteCellsInColumn(%s:%q)", o.fam, o.col)
	case mkDeleteFamily:
		return fmt.Sprintf("DeleteCellsInFamily(%s)", o.fam)
	}
	return "DeleteRow()"
}

// mutSpec is a Mutation recipe: nil, plain (ops) or conditional.
type mutSpec struct {
	isNil bool
	ops   []mutOp
	cond  *condSpec
}

type condSpec struct {
	filter  mfilter // nil: any live cell
	yes, no *mutSpec
}

func (s *mutSpec) mutation() *ttl.Mutation {
	if s == nil || s.isNil {
		return nil
	}
	if s.cond != nil {
		var f bigtable.Filter
		if s.cond.filter != nil {
			f = s.cond.filter.bt()
		}
		return ttl.NewCondMutation(f, s.cond.yes.mutation(), s.cond.no.mutation())
	}
	m := ttl.NewMutation()
	for _, o := range s.ops {
		switch o.kind {
		case mkSet:
			m.Set(o.fam, o.col, []byte(o.value), o.life.lifetime())
		case mkReplace:
			m.Replace(o.fam, o.col, []byte(o.value), o.life.lifetime())
		case mkDeleteColumn:
			m.DeleteCellsInColumn(o.fam, o.col)
		case mkDeleteFamily:
			m.DeleteCellsInFamily(o.fam)
		case mkDeleteRow:
			m.DeleteRow()
		}
	}
	return m
}

func (s *mutSpec) String() string {
	switch {
	case s == nil || s.isNil:
		return "nil"
	case s.cond != nil:
		f := "nil"
		if s.cond.filter != nil {
			f = s.cond.filter.String()
		}
		return fmt.Sprintf("Cond(%s, %v, %v)", f, s.cond.yes, s.cond.no)
	}
	parts := make([]string, len(s.ops))
	for i, o := range s.ops {
		parts[i] = o.String()
	}
	return "{" + strings.Join(parts, "; ") + "}"
}

type opKind uint8

const (
	opClock opKind = iota
	opApply
	opBulk
	opReadRow
	opReadRows
	opTouch // model_sliding_rules_test.go
)

// rowSetSpec is a bigtable.RowSet: every row, a list, or a range.
type rowSetSpec struct {
	list       []string // when non-nil
	start, end string   // a range when list is nil; "" end: unbounded
}

func (rs rowSetSpec) rowSet() bigtable.RowSet {
	if rs.list != nil {
		return bigtable.RowList(rs.list)
	}
	if rs.end == "" {
		return bigtable.InfiniteRange(rs.start)
	}
	return bigtable.NewRange(rs.start, rs.end)
}

func (rs rowSetSpec) contains(row string) bool {
	if rs.list != nil {
		return slices.Contains(rs.list, row)
	}
	return row >= rs.start && (rs.end == "" || row < rs.end)
}

func (rs rowSetSpec) String() string {
	if rs.list != nil {
		return fmt.Sprintf("RowList%q", rs.list)
	}
	return fmt.Sprintf("Range(%q, %q)", rs.start, rs.end)
}

type readSpec struct {
	row        string     // ReadRow
	rows       rowSetSpec // ReadRows
	filter     mfilter    // the caller's RowFilter, or nil
	limit      int64      // LimitRows, or 0
	reverse    bool
	writeTimes bool
	idle       time.Duration // KeepAlive(idle), or 0
}

func (r readSpec) options() []ttl.ReadOption {
	var opts []ttl.ReadOption
	if r.filter != nil {
		opts = append(opts, ttl.RowFilter(r.filter.bt()))
	}
	if r.limit > 0 {
		opts = append(opts, bigtable.LimitRows(r.limit))
	}
	if r.reverse {
		opts = append(opts, bigtable.ReverseScan())
	}
	if r.writeTimes {
		opts = append(opts, ttl.WithWriteTimes())
	}
	if r.idle > 0 {
		opts = append(opts, ttl.KeepAlive(r.idle))
	}
	return opts
}

func (r readSpec) optionString() string {
	var s []string
	if r.filter != nil {
		s = append(s, "RowFilter("+r.filter.String()+")")
	}
	if r.limit > 0 {
		s = append(s, fmt.Sprintf("LimitRows(%d)", r.limit))
	}
	if r.reverse {
		s = append(s, "ReverseScan()")
	}
	if r.writeTimes {
		s = append(s, "WithWriteTimes()")
	}
	if r.idle > 0 {
		s = append(s, fmt.Sprintf("KeepAlive(%v)", r.idle))
	}
	if len(s) == 0 {
		return ""
	}
	return ", " + strings.Join(s, ", ")
}

// op is one step of a run. Everything in it is concrete (absolute clock
// instants, values), so that any sub-list of a run can be replayed.
type op struct {
	kind opKind
	at   time.Time  // opClock: the clock is set to at
	row  string     // opApply
	mut  *mutSpec   // opApply
	rows []string   // opBulk
	muts []*mutSpec // opBulk
	read readSpec   // opReadRow, opReadRows
	// opTouch; inject also for a read with KeepAlive (nil: none)
	touch  touchSpec
	inject *injectSpec
}

func (o op) String() string {
	if o.inject != nil {
		return o.plainString() + ", with " + o.inject.String()
	}
	return o.plainString()
}

func (o op) plainString() string {
	switch o.kind {
	case opClock:
		return "clock.Set(" + o.at.UTC().Format(time.RFC3339Nano) + ")"
	case opApply:
		return fmt.Sprintf("Apply(%q, %v)", o.row, o.mut)
	case opBulk:
		parts := make([]string, len(o.rows))
		for i := range o.rows {
			parts[i] = fmt.Sprintf("%q: %v", o.rows[i], o.muts[i])
		}
		return "ApplyBulk(" + strings.Join(parts, ", ") + ")"
	case opReadRow:
		return fmt.Sprintf("ReadRow(%q%s)", o.read.row, o.read.optionString())
	case opTouch:
		return fmt.Sprintf("Touch(%q, %s, %q, %v)", o.touch.row, o.touch.fam, o.touch.col, o.touch.life)
	}
	return fmt.Sprintf("ReadRows(%v%s)", o.read.rows, o.read.optionString())
}
