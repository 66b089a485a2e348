package ttl_test

import (
	"context"
	"fmt"
	"sync"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/testkit"
)

// The test doubles the package's tests share: a clock that moves only when
// told (testkit's), and a bigtable.TableAPI that records the calls it
// passes on.

// base is the fake clocks' starting instant (testkit.Base); fakeClock is
// testkit's clock.
var base = testkit.Base

type fakeClock = testkit.Clock

var newClock = testkit.NewClock

// recorder is a bigtable.TableAPI that records the calls it passes on, as
// an authorized view or any other implementation would receive them.
type recorder struct {
	bigtable.TableAPI
	mu    sync.Mutex
	calls []string
}

func (r *recorder) record(call string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call)
}

func (r *recorder) Calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

func (r *recorder) ReadRows(ctx context.Context, rs bigtable.RowSet, f func(bigtable.Row) bool, opts ...bigtable.ReadOption) error {
	r.record("ReadRows")
	return r.TableAPI.ReadRows(ctx, rs, f, opts...)
}

func (r *recorder) ReadRow(ctx context.Context, row string, opts ...bigtable.ReadOption) (bigtable.Row, error) {
	r.record("ReadRow")
	return r.TableAPI.ReadRow(ctx, row, opts...)
}

func (r *recorder) SampleRowKeys(ctx context.Context) ([]string, error) {
	r.record("SampleRowKeys")
	return r.TableAPI.SampleRowKeys(ctx)
}

func (r *recorder) Apply(ctx context.Context, row string, m *bigtable.Mutation, opts ...bigtable.ApplyOption) error {
	r.record("Apply")
	return r.TableAPI.Apply(ctx, row, m, opts...)
}

func (r *recorder) ApplyBulk(ctx context.Context, rows []string, muts []*bigtable.Mutation, opts ...bigtable.ApplyOption) ([]error, error) {
	r.record(fmt.Sprintf("ApplyBulk(%d)", len(rows)))
	return r.TableAPI.ApplyBulk(ctx, rows, muts, opts...)
}

func (r *recorder) ApplyReadModifyWrite(ctx context.Context, row string, m *bigtable.ReadModifyWrite) (bigtable.Row, error) {
	r.record("ApplyReadModifyWrite")
	return r.TableAPI.ApplyReadModifyWrite(ctx, row, m)
}
