package schedule_test

import (
	"context"
	"testing"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/testkit"
)

// Short names for the testkit helpers these tests share, as they were
// spelled when the tests stood in package ttl, and the few helpers that
// need a type of these tests' own.

// The fake clocks' starting instant (base), a day after it (start), and
// the context of the tests' requests (ctx).
var (
	base = testkit.Base
	ctx  = context.Background()
)

// fakeClock is testkit's clock, which moves only when told.
type fakeClock = testkit.Clock

var (
	newClock = testkit.NewClock
	ms       = testkit.MS
	set      = testkit.Set
)

// rawRow reads every stored cell of a row through the raw client.
func rawRow(t testing.TB, raw *bigtable.Table, row string) bigtable.Row {
	t.Helper()
	return testkit.RawRow(t, raw, row)
}
