package ttltest

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/internal/testkit"
)

// Project and Instance name the emulated instance, for code under test
// that makes its own clients (with BIGTABLE_EMULATOR_HOST set to
// Env.Addr).
const (
	Project  = "proj"
	Instance = "inst"
)

// An Env is an in-process Bigtable emulator holding one table whose
// families have the GC policies their strategies need, a [ttl.Table] over
// it on a fake clock, and the garbage collection that Bigtable would do,
// run when the clock moves ([Env.FastForward]) or when asked
// ([Env.CollectGarbage]). Make one with [New] in a test, or [Start]
// elsewhere.
//
// The clock starts at [DefaultStart] (or [WithStart]) and moves only
// through FastForward: pass [Env.Now] to the code under test (ttl.WithClock,
// sweep.Options.Now) so that it reads the same clock.
//
// The fields are for the test to use; the Env keeps its own copies.
type Env struct {
	// Table is the table on the Env's clock, with the strategies given to
	// New and the options of WithTableOptions. The families of WithFamily
	// are declared to it (ttl.OtherFamilies), so that a write to a family
	// the Env did not create is ttl.ErrUnknownFamily, naming the nearest.
	Table *ttl.Table
	// Raw is the same table read and written raw: every stored cell,
	// expired or not, as a reader that does not use package ttl sees it.
	Raw bigtable.TableAPI
	// Admin and Client are connected to the emulator.
	Admin  *bigtable.AdminClient
	Client *bigtable.Client
	// Name is the table's name.
	Name string
	// Addr is the emulator's host:port.
	Addr string

	t     testing.TB // New's; nil for Start
	emu   *emulator.Emulator
	raw   bigtable.TableAPI
	name  string
	clock *testkit.Clock
	lag   time.Duration

	mu     sync.Mutex // serializes collections, guards the fields below
	seen   map[cellKey]time.Time
	err    error // the first failure of an Env made by Start
	closed bool
}

// New starts an Env for the test t and closes it when the test ends. It
// creates the table with the given managed families, each with its
// strategy's GC policy (a ttl.Counter family as an aggregate of int64
// sums), and the families of WithFamily. A refused input (no family, a
// nil or invalid strategy, a bad option, as ttl.NewTable refuses them)
// or an emulator that cannot start fails t with t.Fatal, given the error,
// which wraps the ttl sentinel (ttl.ErrInvalidStrategy,
// ttl.ErrInvalidOption) and names the family or option at fault.
//
// The Env then fails t too when FastForward or CollectGarbage cannot
// read or delete cells. Call them, like New, from the test's goroutine.
// A nil t panics: there is nothing else to report to.
func New(t testing.TB, families map[string]ttl.Strategy, opts ...Option) *Env {
	if t == nil {
		panic("ttltest.New: nil testing.TB; outside a test use Start")
	}
	t.Helper()
	e, err := Start(families, opts...)
	if err != nil {
		t.Fatal(err)
		return nil // only a TB whose Fatal returns gets here
	}
	e.t = t
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("ttltest: closing the Env: %v", err)
		}
	})
	return e
}

// Start is New for code without a testing.TB: examples, TestMain, a
// program. Its refusals are returned (wrapping the same sentinels), the
// caller must Close the Env, and FastForward and CollectGarbage record
// their first failure for Err instead of failing a test.
func Start(families map[string]ttl.Strategy, opts ...Option) (*Env, error) {
	c := defaults()
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: ttltest: option %d is nil", ttl.ErrInvalidOption, i)
		}
		if err := o.apply(&c); err != nil {
			return nil, err
		}
	}
	for _, name := range c.order {
		if _, managed := families[name]; managed {
			return nil, fmt.Errorf("%w: ttltest.WithFamily: family %q has a strategy", ttl.ErrInvalidOption, name)
		}
	}
	emu, err := emulator.Start()
	if err != nil {
		return nil, fmt.Errorf("ttltest: %w", err)
	}
	e := &Env{Admin: emu.Admin, Client: emu.Client, Name: c.name, Addr: emu.Addr,
		emu: emu, name: c.name, clock: testkit.NewClock(c.start), lag: c.lag, seen: map[cellKey]time.Time{}}
	e.raw = emu.Client.Open(c.name)
	e.Raw = e.raw
	// The Env's clock goes last: it replaces any ttl.WithClock before it.
	// The Env's families are all the table has: declared, a misspelled
	// one is an unknown family, with the nearest name.
	topts := append(append([]ttl.Option{}, c.tableOpts...), ttl.OtherFamilies(c.order...), ttl.WithClock(e.Now))
	if e.Table, err = ttl.NewTable(e.raw, families, topts...); err != nil {
		emu.Close()
		return nil, fmt.Errorf("ttltest: %w", err)
	}
	if err := createTable(emu.Admin, c, families); err != nil {
		emu.Close()
		return nil, err
	}
	return e, nil
}

// createTable creates the table with all its families in one call: the
// emulator starts its own GC loop only when a family is modified by a
// call of its own, so it never starts for this table (see the package
// doc).
func createTable(admin *bigtable.AdminClient, c config, families map[string]ttl.Strategy) error {
	conf := &bigtable.TableConf{TableID: c.name, ColumnFamilies: map[string]bigtable.Family{}}
	for name, s := range families {
		f := bigtable.Family{GCPolicy: s.GCPolicy()}
		if r, _ := rules.Of(s); r.Counter {
			f.ValueType = bigtable.AggregateType{Input: bigtable.Int64Type{}, Aggregator: bigtable.SumAggregator{}}
		}
		conf.ColumnFamilies[name] = f
	}
	for name, p := range c.others {
		conf.ColumnFamilies[name] = bigtable.Family{GCPolicy: p}
	}
	if err := admin.CreateTableFromConf(context.Background(), conf); err != nil {
		names := make([]string, 0, len(conf.ColumnFamilies))
		for name := range conf.ColumnFamilies {
			names = append(names, name)
		}
		sort.Strings(names)
		return fmt.Errorf("ttltest: creating table %q with families %q: %w", c.name, names, err)
	}
	return nil
}

// Now returns the Env's clock: the instant it started at, moved on by
// every FastForward since. Pass the method value (env.Now) as a clock.
// It is safe for simultaneous use.
func (e *Env) Now() time.Time {
	if e == nil {
		return DefaultStart
	}
	return e.clock.Now()
}

// Close stops the emulator and closes its clients, and returns their
// errors. A second Close does nothing. New's Env is closed when its test
// ends.
func (e *Env) Close() error {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	return e.emu.Close()
}

// Err returns the first failure of FastForward or CollectGarbage on an
// Env made by Start, after which both do nothing; nil if none failed. An
// Env made by New fails its test instead, and Err returns nil.
func (e *Env) Err() error {
	if e == nil {
		return fmt.Errorf("%w: ttltest: a nil Env", ttl.ErrNilArgument)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// fail reports err: to the test of an Env made by New, or for Err. e.mu
// is held; it is released before t.Fatal ends the test's goroutine, by
// the caller's deferred Unlock.
func (e *Env) fail(err error) {
	if e.t != nil {
		e.t.Helper()
		e.t.Fatal(err)
		return
	}
	if e.err == nil {
		e.err = err
	}
}

// errClosed is the failure of a call on a closed Env.
func errClosed(op string) error {
	return fmt.Errorf("%w: ttltest: %s on a closed Env", ttl.ErrNilArgument, op)
}
