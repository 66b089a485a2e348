package ttl

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/routing"
	"github.com/cellttl/ttl/internal/rules"
)

// A Table is a Bigtable table, or an authorized view, whose cells have a
// time to live. It writes through recipes ([Mutation], [ReadModifyWrite])
// whose lifetimes it turns into timestamps, and reads through one
// server-side filter that passes only live cells. Each managed family has
// a [Strategy] whose GCPolicy the family must have; families without one
// are read back unchanged and take only [Default] writes.
//
// Each call reads the clock once and uses that instant for every cell of
// the call; a cell is hidden from its expiry on, at most 1ms early.
// A mutation with any invalid change is rejected whole before anything is
// sent, with an error wrapping one of this package's sentinels.
//
// A Table is safe for concurrent use; it starts no goroutines. Families,
// time and GC lag: docs/api-notes.md#ttltable.
type Table struct {
	tbl        bigtable.TableAPI
	now        func() time.Time
	managed    map[string]Strategy
	few        []familyRule           // managed again for writes, when they are few: a scan beats a map
	byName     map[string]*familyRule // or else in a map
	others     map[string]bool        // declared unmanaged families; nil when undeclared
	margin     time.Duration
	companions companions // RecordWriteTime
	plan       readPlan
	appProfile string            // WithAppProfile, for messages
	metrics    *metrics          // WithMeterProvider; nil records nothing
	schedule   bigtable.TableAPI // WithSchedule; nil writes none
}

// NewTable returns a Table that reads and writes tbl, a *bigtable.Table or
// any other bigtable.TableAPI, with the given strategy for each managed
// family. It refuses, with ErrInvalidStrategy, an empty map, a family name
// Bigtable would refuse, and a nil or invalid strategy; with
// ErrInvalidOption, an invalid option.
func NewTable(tbl bigtable.TableAPI, families map[string]Strategy, opts ...Option) (*Table, error) {
	if tbl == nil || rules.IsNilPointer(tbl) {
		return nil, fmt.Errorf("%w: NewTable: nil bigtable.TableAPI", ErrNilArgument)
	}
	managed, err := rules.CheckFamilies(families)
	if err != nil {
		return nil, fmt.Errorf("NewTable: %w", err)
	}
	t := &Table{tbl: tbl, now: time.Now, managed: managed}

	var c config
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: NewTable: option %d is nil", ErrInvalidOption, i)
		}
		if err := o.apply(&c); err != nil {
			return nil, err
		}
	}
	if c.now != nil {
		t.now = c.now
	}
	if c.others != nil {
		t.others = make(map[string]bool, len(c.others))
		for _, name := range c.others {
			if _, ok := t.managed[name]; ok {
				return nil, fmt.Errorf("%w: OtherFamilies: family %q has a strategy", ErrInvalidOption, name)
			}
			t.others[name] = true
		}
	}
	if len(managed) <= 4 {
		for name, s := range managed {
			t.few = append(t.few, newFamilyRule(name, s))
		}
	} else {
		t.byName = make(map[string]*familyRule, len(managed))
		for name, s := range managed {
			f := newFamilyRule(name, s)
			t.byName[name] = &f
		}
	}
	if err := t.setSchedule(tbl, c.schedule); err != nil {
		return nil, err
	}
	t.margin = c.margin
	t.companions = companions(c.writeTimes)
	t.plan = newReadPlan(managed, c.others, t.companions)
	t.appProfile = c.appProfile
	if t.metrics, err = newMetrics(c.metrics, managed); err != nil {
		return nil, err
	}
	return t, nil
}

// A familyRule is a managed family as writes look it up: its strategy,
// and what its rule tells a writer.
type familyRule struct {
	name     string
	s        Strategy
	time     rules.Time // the rule's, when timed
	timed    bool       // a time rule
	counter  bool       // a Counter family
	versions bool       // SequenceNumbers
	// scheduled: its cells' expiries are written to the table's schedule
	// (WithSchedule).
	scheduled bool
}

func newFamilyRule(name string, s Strategy) familyRule {
	f := familyRule{name: name, s: s}
	switch r := s.rule(); r.Kind {
	case rules.ByTime:
		f.time, f.timed, f.counter = r.Time, true, r.Counter
	case rules.ByVersions:
		f.versions = true
	}
	return f
}

// expiresAt returns the expiry of a cell of the family stamped ts, as its
// strategy's ExpiresAt does (a time rule's, called directly).
func (f *familyRule) expiresAt(ts bigtable.Timestamp) (time.Time, bool) {
	if f.timed {
		return f.time.Expiry(ts)
	}
	return f.s.ExpiresAt(ts)
}

// family returns family's rule, or nil for a family without a strategy.
func (t *Table) family(family string) *familyRule {
	if t.byName != nil {
		return t.byName[family]
	}
	for i := range t.few {
		if f := &t.few[i]; f.name == family {
			return f
		}
	}
	return nil
}

// check reports a call the table cannot make: on a Table not made by
// NewTable, or with a nil context.
func (t *Table) check(ctx context.Context, op string) error {
	switch {
	case t == nil || t.tbl == nil:
		return fmt.Errorf("%w: %s on a Table not made by NewTable", ErrNilArgument, op)
	case ctx == nil:
		return fmt.Errorf("%w: %s: nil context", ErrNilArgument, op)
	}
	return nil
}

// ReadFilter returns the filter the table's reads apply at now: for each
// managed family the cells its strategy keeps live at now (less the read
// margin), and the cells of the families without a strategy unchanged.
// Another reader can apply it to see what the Table sees; its String
// method prints it.
func (t *Table) ReadFilter(now time.Time) bigtable.Filter {
	if t == nil || t.tbl == nil {
		return bigtable.BlockAllFilter()
	}
	return t.plan.live(now.Add(t.margin))
}

// ExpiresAt returns the expiry of item, a cell read through the table: the
// instant from which reads hide it (with a read margin, reads hide it that
// much earlier). It reports false for a cell that does not expire by time:
// a Forever cell, a sequence number, a cell of a family without a strategy.
func (t *Table) ExpiresAt(item bigtable.ReadItem) (time.Time, bool) {
	if t == nil {
		return time.Time{}, false
	}
	family, _ := rules.SplitColumn(item.Column)
	s, ok := t.managed[family]
	if !ok {
		return time.Time{}, false
	}
	return s.ExpiresAt(item.Timestamp)
}

// SampleRowKeys returns a sample of the table's row keys, as
// bigtable.Table.SampleRowKeys does.
func (t *Table) SampleRowKeys(ctx context.Context) ([]string, error) {
	if err := t.check(ctx, "SampleRowKeys"); err != nil {
		return nil, err
	}
	return t.tbl.SampleRowKeys(ctx)
}

// Replicated instances: an app profile with multi-cluster routing refuses
// single-row transactions, which Touch, KeepAlive's renewals, conditional
// mutations and read-modify-writes are. The Table turns the server's
// refusal into ErrTransactionNotAllowed, naming the call, the app profile
// and the alternatives.

// transaction returns err, the result of op's single-row transaction, or,
// when the server refused the transaction for the app profile's routing,
// an error wrapping ErrTransactionNotAllowed and err. It inlines: a call
// that succeeded pays one comparison.
func (t *Table) transaction(err error, op string) error {
	if err != nil {
		return t.refused(err, op)
	}
	return nil
}

// refused returns err, or, when it is the server's refusal of op's
// transaction for routing, wraps it.
func (t *Table) refused(err error, op string) error {
	if !routing.Refused(err) {
		return err
	}
	return fmt.Errorf("%w: %s: %w", ErrTransactionNotAllowed, routing.Explain(op, t.appProfile, "ttl.WithAppProfile"), err)
}
