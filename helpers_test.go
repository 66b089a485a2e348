package ttl_test

import (
	"math/rand/v2"
	"testing"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/testkit"
)

// Small helpers the package's tests share: a Table on a fresh emulator
// table, a mutation of one Set, the cells of a row as tests compare them,
// and a random pick.

// newTable makes a ttl.Table on a fresh emulator table that has the
// managed families (without GC) and the other ones, reading clock.
func newTable(t testing.TB, clock *fakeClock, managed map[string]ttl.Strategy, others []string, opts ...ttl.Option) (*ttl.Table, *bigtable.Table) {
	t.Helper()
	fams := map[string]bigtable.GCPolicy{}
	for f := range managed {
		fams[f] = nil
	}
	for _, f := range others {
		fams[f] = nil
	}
	raw := emulator.StartForTest(t).TableForTest(t, "t", fams)
	tbl, err := ttl.NewTable(raw, managed, append([]ttl.Option{ttl.WithClock(clock.Now)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return tbl, raw
}

// The cells of a row as tests compare them, raw reads, timestamps and
// one-Set mutations: testkit's.
var (
	values = testkit.Values
	ms     = testkit.MS
	set    = testkit.Set
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

// pick returns one of xs, chosen with r.
func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// recordedTable is a Table of one OneSecond family "f" on a fresh emulator
// table, read and written through a recorder, at a fake clock reading base.
func recordedTable(t *testing.T) (*ttl.Table, *recorder, *bigtable.Table) {
	t.Helper()
	raw := emulator.StartForTest(t).TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	rec := &recorder{TableAPI: raw}
	tbl, err := ttl.NewTable(rec, map[string]ttl.Strategy{"f": ttl.OneSecond()}, ttl.WithClock(newClock(base).Now))
	if err != nil {
		t.Fatal(err)
	}
	return tbl, rec, raw
}
