package model_test

import (
	"sort"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
)

// The table configurations the model runs against: which families, with
// which rule, and which of the Table's options.

// variant is one table configuration the model runs against.
type variant struct {
	name       string
	families   map[string]rule
	declared   bool // OtherFamilies(the families without a strategy)
	margin     time.Duration
	writeTimes bool
	move       *moveSpec // the Move of the family whose rule is ruleMove
}

var modelVariants = []variant{
	{name: "undeclared", families: map[string]rule{"os": ruleOneSecond, "de": ruleDefault, "sn": ruleSequence, "un": ruleNone}},
	{name: "declared", families: map[string]rule{"os": ruleOneSecond, "os2": ruleOneSecond, "de": ruleDefault, "sn": ruleSequence, "un": ruleNone}, declared: true},
	{name: "margin+writetimes", families: map[string]rule{"os": ruleOneSecond, "de": ruleDefault, "sn": ruleSequence, "un": ruleNone},
		margin: 2*time.Second + 500*time.Microsecond, writeTimes: true},
	{name: "one strategy", families: map[string]rule{"os": ruleOneSecond, "os2": ruleOneSecond}, declared: true},
	{name: "one strategy+writetimes", families: map[string]rule{"de": ruleDefault, "de2": ruleDefault}, declared: true, writeTimes: true},
}

func (v *variant) familyNames() []string {
	names := make([]string, 0, len(v.families))
	for f := range v.families {
		names = append(names, f)
	}
	sort.Strings(names)
	return names
}

// strategy returns the strategy of family, nil for none.
func (v *variant) strategy(family string) ttl.Strategy {
	if r := v.families[family]; r == ruleMove {
		return v.move.move()
	}
	return v.families[family].strategy()
}

// newTable makes the variant's Table on a fresh table of e, reading clock.
func (v *variant) newTable(t testing.TB, e *emulator.Emulator, name string, clock *testkit.Clock) (*ttl.Table, *bigtable.Table) {
	t.Helper()
	raw := v.newRaw(t, e, name)
	return v.open(t, raw, clock.Now), raw
}

// newRaw makes a fresh table of e with the variant's families.
func (v *variant) newRaw(t testing.TB, e *emulator.Emulator, name string) *bigtable.Table {
	t.Helper()
	fams := map[string]bigtable.GCPolicy{}
	for _, f := range v.familyNames() {
		fams[f] = nil // no GC: the emulator's GC runs on the real clock
	}
	return e.TableForTest(t, name, fams)
}

// open makes the variant's Table on raw, reading the clock now: each
// process that shares raw opens its own.
func (v *variant) open(t testing.TB, raw bigtable.TableAPI, now func() time.Time) *ttl.Table {
	t.Helper()
	managed := map[string]ttl.Strategy{}
	var others []string
	for _, f := range v.familyNames() {
		if s := v.strategy(f); s != nil {
			managed[f] = s
		} else {
			others = append(others, f)
		}
	}
	opts := []ttl.Option{ttl.WithClock(now)}
	if v.declared {
		opts = append(opts, ttl.OtherFamilies(others...))
	}
	if v.margin > 0 {
		opts = append(opts, ttl.WithReadMargin(v.margin))
	}
	if v.writeTimes {
		opts = append(opts, ttl.RecordWriteTime())
	}
	tbl, err := ttl.NewTable(raw, managed, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}
