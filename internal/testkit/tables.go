package testkit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
)

// Tables the tests of package ttl share, on the in-process emulator, and
// the bigtable.TableAPI wrappers that let a test see or race the requests
// the library sends.

// NewTable makes a ttl.Table on a fresh emulator table that has the
// managed families (without GC) and the other ones, reading clock.
func NewTable(t testing.TB, clock *Clock, managed map[string]ttl.Strategy, others []string, opts ...ttl.Option) (*ttl.Table, *bigtable.Table) {
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

// RecordedTable is a Table of one OneSecond family "f" on a fresh emulator
// table, read and written through a Recorder, at a fake clock reading
// Base.
func RecordedTable(t testing.TB) (*ttl.Table, *Recorder, *bigtable.Table) {
	t.Helper()
	raw := emulator.StartForTest(t).TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	rec := &Recorder{TableAPI: raw}
	tbl, err := ttl.NewTable(rec, map[string]ttl.Strategy{"f": ttl.OneSecond()}, ttl.WithClock(NewClock(Base).Now))
	if err != nil {
		t.Fatal(err)
	}
	return tbl, rec, raw
}

// A Recorder is a bigtable.TableAPI that records the calls it passes on,
// as an authorized view or any other implementation would receive them.
// It is safe for simultaneous use.
type Recorder struct {
	bigtable.TableAPI
	mu    sync.Mutex
	calls []string
}

func (r *Recorder) record(call string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call)
}

// Calls returns the calls passed on so far, by method name; ApplyBulk
// with its number of rows, as "ApplyBulk(3)".
func (r *Recorder) Calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

// Reset forgets the calls recorded so far.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = nil
}

// ReadRows records the call and passes it on.
func (r *Recorder) ReadRows(ctx context.Context, rs bigtable.RowSet, f func(bigtable.Row) bool, opts ...bigtable.ReadOption) error {
	r.record("ReadRows")
	return r.TableAPI.ReadRows(ctx, rs, f, opts...)
}

// ReadRow records the call and passes it on.
func (r *Recorder) ReadRow(ctx context.Context, row string, opts ...bigtable.ReadOption) (bigtable.Row, error) {
	r.record("ReadRow")
	return r.TableAPI.ReadRow(ctx, row, opts...)
}

// SampleRowKeys records the call and passes it on.
func (r *Recorder) SampleRowKeys(ctx context.Context) ([]string, error) {
	r.record("SampleRowKeys")
	return r.TableAPI.SampleRowKeys(ctx)
}

// Apply records the call and passes it on.
func (r *Recorder) Apply(ctx context.Context, row string, m *bigtable.Mutation, opts ...bigtable.ApplyOption) error {
	r.record("Apply")
	return r.TableAPI.Apply(ctx, row, m, opts...)
}

// ApplyBulk records the call, with its number of rows, and passes it on.
func (r *Recorder) ApplyBulk(ctx context.Context, rows []string, muts []*bigtable.Mutation, opts ...bigtable.ApplyOption) ([]error, error) {
	r.record(fmt.Sprintf("ApplyBulk(%d)", len(rows)))
	return r.TableAPI.ApplyBulk(ctx, rows, muts, opts...)
}

// ApplyReadModifyWrite records the call and passes it on.
func (r *Recorder) ApplyReadModifyWrite(ctx context.Context, row string, m *bigtable.ReadModifyWrite) (bigtable.Row, error) {
	r.record("ApplyReadModifyWrite")
	return r.TableAPI.ApplyReadModifyWrite(ctx, row, m)
}

// Hooked is a bigtable.TableAPI that calls Before before every Apply: a
// writer racing the library between its read and its write.
type Hooked struct {
	bigtable.TableAPI
	Before func()
}

// Apply calls h.Before, then passes the call on.
func (h Hooked) Apply(ctx context.Context, row string, m *bigtable.Mutation, opts ...bigtable.ApplyOption) error {
	h.Before()
	return h.TableAPI.Apply(ctx, row, m, opts...)
}

// Captured is a bigtable.TableAPI that keeps the rows and mutations it is
// handed, and sends nothing: what a writer hands over, to compare.
type Captured struct {
	bigtable.TableAPI
	Rows []string
	Muts []*bigtable.Mutation
}

// Apply keeps row and m.
func (c *Captured) Apply(_ context.Context, row string, m *bigtable.Mutation, _ ...bigtable.ApplyOption) error {
	c.Rows, c.Muts = append(c.Rows, row), append(c.Muts, m)
	return nil
}

// ApplyBulk keeps rows and muts, and reports every row applied.
func (c *Captured) ApplyBulk(_ context.Context, rows []string, muts []*bigtable.Mutation, _ ...bigtable.ApplyOption) ([]error, error) {
	c.Rows, c.Muts = append(c.Rows, rows...), append(c.Muts, muts...)
	return nil, nil
}

// Nop is a bigtable.TableAPI that sends nothing and succeeds: the
// client-side benchmarks measure what the library adds before a request
// leaves.
type Nop struct{ bigtable.TableAPI }

// Apply does nothing.
func (Nop) Apply(context.Context, string, *bigtable.Mutation, ...bigtable.ApplyOption) error {
	return nil
}

// ApplyBulk does nothing, and reports every row applied.
func (Nop) ApplyBulk(context.Context, []string, []*bigtable.Mutation, ...bigtable.ApplyOption) ([]error, error) {
	return nil, nil
}

// ReadRow reads nothing: an empty row.
func (Nop) ReadRow(context.Context, string, ...bigtable.ReadOption) (bigtable.Row, error) {
	return nil, nil
}

// FailFirst is a bigtable.TableAPI whose first ApplyBulk fails whole and
// whose others succeed, sending nothing; Calls records how many rows each
// ApplyBulk carried.
type FailFirst struct {
	bigtable.TableAPI
	Calls []int
}

// ApplyBulk records the number of rows; it fails the first call whole.
func (f *FailFirst) ApplyBulk(_ context.Context, rows []string, _ []*bigtable.Mutation, _ ...bigtable.ApplyOption) ([]error, error) {
	f.Calls = append(f.Calls, len(rows))
	if len(f.Calls) == 1 {
		return nil, errors.New("unavailable")
	}
	return nil, nil
}
