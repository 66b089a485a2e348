// Package testkit holds the helpers this module's own tests share; services test with package ttltest.
//
// It has a clock that moves only when told, the instant the fake clocks
// start at, helpers that write cells raw and read them back as tests
// compare them, Tables on the emulator, bigtable.TableAPI wrappers that
// record, race, capture or drop the requests the library sends, stream
// faults, an emulator in a child process, heap and CPU measurements,
// whether the race detector runs, and a meter provider that refuses every
// instrument. Package ttl's tests in tests/ stand on it. It makes no
// promise of compatibility: it changes with the tests.
package testkit

import (
	"context"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
)

// Base is the fake clocks' starting instant: far enough in the future that
// the emulator's GC loop, which runs on the real clock, never reaches a
// cell written in a test.
var Base time.Time = time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)

// A Clock is a clock that moves only when told to. It is safe for
// simultaneous use.
type Clock struct {
	mu    sync.Mutex
	t     time.Time
	reads int
}

// NewClock returns a clock reading t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time, and counts the reading.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	return c.t
}

// Set sets the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// Reads returns how many times the clock has been read.
func (c *Clock) Reads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// MS is the Bigtable timestamp of t, which tests keep on whole
// milliseconds.
func MS(t time.Time) bigtable.Timestamp { return bigtable.Time(t) }

// Set returns a mutation of one Set.
func Set(family, column, value string, life ttl.Lifetime) *ttl.Mutation {
	m := ttl.NewMutation()
	m.Set(family, column, []byte(value), life)
	return m
}

// Add returns a mutation of one Add to a counter.
func Add(family, column string, delta int64, w ttl.Window) *ttl.Mutation {
	m := ttl.NewMutation()
	m.Add(family, column, delta, w)
	return m
}

// A Stored is a cell written raw, with its own timestamp, as a writer that
// does not use the library writes it.
type Stored struct {
	Row, Column string
	TS          bigtable.Timestamp
}

// Put writes cells to family of raw, each with the value "v".
func Put(t testing.TB, raw bigtable.TableAPI, family string, cells ...Stored) {
	t.Helper()
	for _, c := range cells {
		m := bigtable.NewMutation()
		m.Set(family, c.Column, c.TS, []byte("v"))
		if err := raw.Apply(context.Background(), c.Row, m); err != nil {
			t.Fatal(err)
		}
	}
}

// RawRow reads every stored cell of a row, expired or not, through the raw
// client.
func RawRow(t testing.TB, raw bigtable.TableAPI, row string) bigtable.Row {
	t.Helper()
	r, err := raw.ReadRow(context.Background(), row)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A Cell is a cell as tests compare them.
type Cell struct {
	Column string
	Value  string
	TS     bigtable.Timestamp
}

// Cells flattens a row, sorted by column then newest first.
func Cells(r bigtable.Row) []Cell {
	var out []Cell
	for _, items := range r {
		for _, it := range items {
			out = append(out, Cell{it.Column, string(it.Value), it.Timestamp})
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

// Values lists a row's "family:column=value" of each cell, in Cells order.
func Values(r bigtable.Row) []string {
	var out []string
	for _, c := range Cells(r) {
		out = append(out, c.Column+"="+c.Value)
	}
	return out
}

// Tablets is a table whose SampleRowKeys reports fixed tablet boundaries,
// for tests that count shards: the emulator samples row keys at random.
// Nil Keys make the whole table one shard.
type Tablets struct {
	bigtable.TableAPI
	Keys []string
}

// SampleRowKeys returns t.Keys.
func (t Tablets) SampleRowKeys(context.Context) ([]string, error) { return t.Keys, nil }

// Pick returns one of xs chosen by r, for the randomized tests' choices.
// It panics when xs is empty, as indexing an empty slice would.
func Pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }
