package ttl_test

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
)

// base is the fake clocks' starting instant: far enough in the future that
// the emulator's GC loop, which runs on the real clock, never reaches a
// cell written in a test.
var base = time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)

// fakeClock is a clock that moves only when told to.
type fakeClock struct {
	mu    sync.Mutex
	t     time.Time
	reads int
}

func newClock(t time.Time) *fakeClock { return &fakeClock{t: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func (c *fakeClock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// Reads returns how many times the clock has been read.
func (c *fakeClock) Reads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

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
