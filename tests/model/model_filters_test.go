package model_test

import (
	"fmt"
	"regexp"
	"slices"
	"sort"

	"cloud.google.com/go/bigtable"
)

// The caller's filters the model can evaluate: each is a bigtable.Filter
// for the Table and a function on the cells of a row for the model, with
// flatCell, the cell both sides compare.

// flatCell is one cell of a row as the model and the comparisons see it.
// WT is the write time in microseconds, -1 when there is none.
type flatCell struct {
	Fam, Col string
	TS       int64
	Value    string
	WT       int64
}

func (c flatCell) String() string {
	s := fmt.Sprintf("%s:%q=%q@%d", c.Fam, c.Col, c.Value, c.TS)
	if c.WT >= 0 {
		s += fmt.Sprintf(" written %d", c.WT)
	}
	return s
}

// sortFlat sorts cells in the order Bigtable returns them, with the
// families in order: by family, column, newest first.
func sortFlat(cs []flatCell, order []string) {
	rank := func(f string) int { return slices.Index(order, f) }
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.Fam != b.Fam {
			return rank(a.Fam) < rank(b.Fam)
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		if a.TS != b.TS {
			return a.TS > b.TS
		}
		return a.Value < b.Value
	})
}

// mfilter is a bigtable.Filter with the model's evaluation of it. eval
// takes and returns cells sorted with the families in order.
type mfilter interface {
	bt() bigtable.Filter
	eval(cs []flatCell, order []string) []flatCell
	// rowLimit tells whether the result depends on the family order:
	// the emulator takes a row's families in map order for
	// CellsPerRowLimitFilter.
	rowLimit() bool
	String() string
}

type fLatest int

func (f fLatest) bt() bigtable.Filter { return bigtable.LatestNFilter(int(f)) }
func (f fLatest) rowLimit() bool      { return false }
func (f fLatest) String() string      { return f.bt().String() }
func (f fLatest) eval(cs []flatCell, _ []string) []flatCell {
	var out []flatCell
	n := 0
	for i, c := range cs {
		if i == 0 || c.Fam != cs[i-1].Fam || c.Col != cs[i-1].Col {
			n = 0
		}
		if n < int(f) {
			out = append(out, c)
		}
		n++
	}
	return out
}

type fRowLimit int

func (f fRowLimit) bt() bigtable.Filter { return bigtable.CellsPerRowLimitFilter(int(f)) }
func (f fRowLimit) rowLimit() bool      { return true }
func (f fRowLimit) String() string      { return f.bt().String() }
func (f fRowLimit) eval(cs []flatCell, _ []string) []flatCell {
	return slices.Clone(cs[:min(len(cs), int(f))])
}

type fColumns struct{ fam, start, end string }

func (f fColumns) bt() bigtable.Filter { return bigtable.ColumnRangeFilter(f.fam, f.start, f.end) }
func (f fColumns) rowLimit() bool      { return false }
func (f fColumns) String() string {
	return fmt.Sprintf("columnRangeFilter(%s,%q,%q)", f.fam, f.start, f.end)
}
func (f fColumns) eval(cs []flatCell, _ []string) []flatCell {
	var out []flatCell
	for _, c := range cs {
		if c.Fam == f.fam && c.Col >= f.start && (f.end == "" || c.Col < f.end) {
			out = append(out, c)
		}
	}
	return out
}

type fFamily string

func (f fFamily) bt() bigtable.Filter { return bigtable.FamilyFilter(string(f)) }
func (f fFamily) rowLimit() bool      { return false }
func (f fFamily) String() string      { return f.bt().String() }
func (f fFamily) eval(cs []flatCell, _ []string) []flatCell {
	var out []flatCell
	for _, c := range cs {
		if c.Fam == string(f) {
			out = append(out, c)
		}
	}
	return out
}

type fValue string

func (f fValue) bt() bigtable.Filter { return bigtable.ValueFilter(regexp.QuoteMeta(string(f))) }
func (f fValue) rowLimit() bool      { return false }
func (f fValue) String() string      { return f.bt().String() }
func (f fValue) eval(cs []flatCell, _ []string) []flatCell {
	var out []flatCell
	for _, c := range cs {
		if c.Value == string(f) {
			out = append(out, c)
		}
	}
	return out
}

type fChain [2]mfilter

func (f fChain) bt() bigtable.Filter { return bigtable.ChainFilters(f[0].bt(), f[1].bt()) }
func (f fChain) rowLimit() bool      { return f[0].rowLimit() || f[1].rowLimit() }
func (f fChain) String() string      { return f.bt().String() }
func (f fChain) eval(cs []flatCell, order []string) []flatCell {
	return f[1].eval(f[0].eval(cs, order), order)
}

// fInterleave holds no CellsPerRowLimitFilter: the emulator would take
// the families in a different order in each branch.
type fInterleave [2]mfilter

func (f fInterleave) bt() bigtable.Filter { return bigtable.InterleaveFilters(f[0].bt(), f[1].bt()) }
func (f fInterleave) rowLimit() bool      { return false }
func (f fInterleave) String() string      { return f.bt().String() }
func (f fInterleave) eval(cs []flatCell, order []string) []flatCell {
	out := append(f[0].eval(cs, order), f[1].eval(cs, order)...)
	sortFlat(out, order)
	return out
}

// fStrip strips values, as a caller reading keys or timestamps alone does.
type fStrip struct{}

func (fStrip) bt() bigtable.Filter { return bigtable.StripValueFilter() }
func (fStrip) rowLimit() bool      { return false }
func (fStrip) String() string      { return bigtable.StripValueFilter().String() }
func (fStrip) eval(cs []flatCell, _ []string) []flatCell {
	out := slices.Clone(cs)
	for i := range out {
		out[i].Value = ""
	}
	return out
}
