package bench_test

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
	set      = testkit.Set
)

// rawRow reads every stored cell of a row through the raw client.
func rawRow(t testing.TB, raw *bigtable.Table, row string) bigtable.Row {
	t.Helper()
	return testkit.RawRow(t, raw, row)
}
