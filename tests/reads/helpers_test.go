package reads_test

import (
	"testing"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/testkit"
)

// Short names for the testkit helpers these tests share, as they were
// spelled when the tests stood in package ttl, and the few helpers that
// need a type of these tests' own.

// base is the fake clocks' starting instant.
var base = testkit.Base

// fakeClock is testkit's clock, which moves only when told.
type fakeClock = testkit.Clock

// recorder is testkit's bigtable.TableAPI that records the calls it passes
// on.
type recorder = testkit.Recorder

var (
	newClock = testkit.NewClock
	newTable = testkit.NewTable
	values   = testkit.Values
	ms       = testkit.MS
	set      = testkit.Set
	add      = testkit.Add
)

// cell is a testkit.Cell of the package's own, which the tests spell
// without field names.
type cell struct {
	Column string
	Value  string
	TS     bigtable.Timestamp
}

// cells flattens a row, sorted by column then newest first.
func cells(r bigtable.Row) []cell {
	var out []cell
	for _, c := range testkit.Cells(r) {
		out = append(out, cell(c))
	}
	return out
}

// rawRow reads every stored cell of a row through the raw client.
func rawRow(t testing.TB, raw *bigtable.Table, row string) bigtable.Row {
	t.Helper()
	return testkit.RawRow(t, raw, row)
}
