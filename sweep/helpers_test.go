package sweep_test

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

var (
	ctx  = context.Background()
	base = testkit.Base
	hour = time.Hour
)

// A fixture is a table "t" on a fresh emulator, its families created by
// policy.Ensure for their strategies, written through a ttl.Table on a
// fake clock.
type fixture struct {
	e     *emulator.Emulator
	raw   *bigtable.Table
	tbl   *ttl.Table
	clock *testkit.Clock
	fams  map[string]ttl.Strategy
}

func newFixture(t *testing.T, fams map[string]ttl.Strategy, opts ...ttl.Option) *fixture {
	t.Helper()
	e := emulator.StartForTest(t)
	if err := e.Admin.CreateTable(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	raw := e.Client.Open("t")
	clock := testkit.NewClock(base)
	tool, err := policy.New(e.Admin, raw, "t", fams, policy.Options{Scan: scan.Options{Now: clock.Now}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tool.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	tbl, err := ttl.NewTable(raw, fams, append([]ttl.Option{ttl.WithClock(clock.Now)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{e: e, raw: raw, tbl: tbl, clock: clock, fams: fams}
}

// set writes family:column=value of row with life, at the clock's now.
func (f *fixture) set(t *testing.T, row, family, column, value string, life ttl.Lifetime) {
	t.Helper()
	if err := f.tbl.Apply(ctx, row, testkit.Set(family, column, value, life)); err != nil {
		t.Fatal(err)
	}
}

// sweeper returns a sweep of the fixture's families with opts, on its
// clock, from base unless opts say otherwise.
func (f *fixture) sweeper(t *testing.T, opts sweep.Options) *sweep.Sweeper {
	t.Helper()
	if opts.Scan.Now == nil {
		opts.Scan.Now = f.clock.Now
	}
	if opts.Since.IsZero() {
		opts.Since = base
	}
	s, err := sweep.New(f.e.Admin, f.raw, "t", f.fams, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A collector is a Deliver that keeps what it is given.
type collector struct {
	mu     sync.Mutex
	events []sweep.Event
	calls  int
}

func (c *collector) deliver(_ context.Context, events []sweep.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	c.events = append(c.events, events...)
	return nil
}

// take returns the events delivered since the last take, as sorted lines.
func (c *collector) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := lines(c.events)
	c.events = nil
	return out
}

// lines returns events as their Strings, sorted by row, family, column
// and timestamp.
func lines(events []sweep.Event) []string {
	events = append([]sweep.Event(nil), events...)
	sort.Slice(events, func(i, j int) bool {
		a, b := events[i], events[j]
		switch {
		case a.Row != b.Row:
			return a.Row < b.Row
		case a.Family != b.Family:
			return a.Family < b.Family
		case a.Column != b.Column:
			return a.Column < b.Column
		}
		return a.Timestamp < b.Timestamp
	})
	out := []string{}
	for _, e := range events {
		out = append(out, e.String())
	}
	return out
}

// at formats an instant as events print it.
func at(d time.Duration) string { return base.Add(d).UTC().Format(time.RFC3339Nano) }
