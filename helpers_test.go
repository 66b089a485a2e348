package ttl_test

import (
	"context"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
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

// cell is a cell as tests compare them: "family:column=value@timestamp".
type cell struct {
	Column string
	Value  string
	TS     bigtable.Timestamp
}

// cells flattens a row, sorted by column then newest first.
func cells(r bigtable.Row) []cell {
	var out []cell
	for _, items := range r {
		for _, it := range items {
			out = append(out, cell{it.Column, string(it.Value), it.Timestamp})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Column != out[j].Column {
			return out[i].Column < out[j].Column
		}
		return out[i].TS > out[j].TS
	})
	return out
}

// values lists a row's "family:column=value" of each cell, in cells order.
func values(r bigtable.Row) []string {
	var out []string
	for _, c := range cells(r) {
		out = append(out, c.Column+"="+c.Value)
	}
	return out
}

// rawRow reads every stored cell of a row, expired or not, through the
// raw client.
func rawRow(t testing.TB, raw *bigtable.Table, row string) bigtable.Row {
	t.Helper()
	r, err := raw.ReadRow(context.Background(), row)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// ms is the Bigtable timestamp of t, which tests keep on whole milliseconds.
func ms(t time.Time) bigtable.Timestamp { return bigtable.Time(t) }

// set returns a mutation of one Set.
func set(family, column, value string, life ttl.Lifetime) *ttl.Mutation {
	m := ttl.NewMutation()
	m.Set(family, column, []byte(value), life)
	return m
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
