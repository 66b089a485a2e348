package move_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/move"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
)

// The steps' arguments, refusals and failures, and what each says it did
// or would do: the cases the whole moves of move_test.go do not reach.

var errBoom = errors.New("boom")

// faulty is a table of one shard whose calls fail with errBoom where told
// to (sample: splitting it into shards). before, if set, runs once ahead
// of the first Apply: a writer that gets in between a step's read of a
// cell and its rewrite.
type faulty struct {
	bigtable.TableAPI
	sample, readRows, readRow, apply bool
	before                           func()
	once                             sync.Once
}

func (f *faulty) SampleRowKeys(ctx context.Context) ([]string, error) {
	if f.sample {
		return nil, errBoom
	}
	return nil, nil // the whole table, one shard
}

func (f *faulty) ReadRows(ctx context.Context, rs bigtable.RowSet, each func(bigtable.Row) bool, opts ...bigtable.ReadOption) error {
	if f.readRows {
		return errBoom
	}
	return f.TableAPI.ReadRows(ctx, rs, each, opts...)
}

func (f *faulty) ReadRow(ctx context.Context, row string, opts ...bigtable.ReadOption) (bigtable.Row, error) {
	if f.readRow {
		return nil, errBoom
	}
	return f.TableAPI.ReadRow(ctx, row, opts...)
}

func (f *faulty) Apply(ctx context.Context, row string, m *bigtable.Mutation, opts ...bigtable.ApplyOption) error {
	if f.before != nil {
		f.once.Do(f.before)
	}
	if f.apply {
		return errBoom
	}
	return f.TableAPI.Apply(ctx, row, m, opts...)
}

// adminFault fails the admin RPC it is set to (a method name such as
// "ModifyColumnFamilies", which sets GC policies) with PermissionDenied.
type adminFault struct {
	mu     sync.Mutex
	method string
}

func (a *adminFault) fail(method string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.method = method
}

func (a *adminFault) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	a.mu.Lock()
	fail := a.method
	a.mu.Unlock()
	if fail != "" && strings.HasSuffix(method, "/"+fail) {
		return status.Errorf(codes.PermissionDenied, "%s denied", method)
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// newFaultyAdminTable is newMoveTable with an admin client whose calls
// fail as the returned adminFault says.
func newFaultyAdminTable(t *testing.T, p bigtable.GCPolicy) (*moveTable, *adminFault) {
	a := &adminFault{}
	e := emulator.StartForTest(t, grpc.WithChainUnaryInterceptor(a.intercept))
	return &moveTable{t, e, e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": p}), testkit.NewClock(testkit.Base)}, a
}

// cell is a mutation that writes one raw cell of family "f". The hooks of
// a faulty table run on the steps' goroutines, where a test may not stop:
// they write with it and assert, rather than with moveTable.put.
func cell(column, value string, ts bigtable.Timestamp) *bigtable.Mutation {
	m := bigtable.NewMutation()
	m.Set("f", column, ts, []byte(value))
	return m
}

// at spells an instant as the reports do.
func at(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// oneHour is the move of most of these tests: real timestamps, each old
// cell living an hour after its write, to OneSecond.
var oneHour = ttl.Move{To: ttl.OneSecond(), Start: start, Old: ttl.For(time.Hour), Skew: time.Minute}

// TestNewRefuses checks every refusal of move.New, which does no I/O.
func TestNewRefuses(t *testing.T) {
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	var nilTable *bigtable.Table
	for _, tt := range []struct {
		name   string
		admin  *bigtable.AdminClient
		data   bigtable.TableAPI
		family string
		m      ttl.Move
		opts   move.Options
		want   error
	}{
		{"nil admin client", nil, raw, "f", oneHour, move.Options{}, ttl.ErrNilArgument},
		{"nil table", e.Admin, nil, "f", oneHour, move.Options{}, ttl.ErrNilArgument},
		{"nil *bigtable.Table", e.Admin, nilTable, "f", oneHour, move.Options{}, ttl.ErrNilArgument},
		{"empty family name", e.Admin, raw, "", oneHour, move.Options{}, ttl.ErrInvalidStrategy},
		{"bad family name", e.Admin, raw, "f:g", oneHour, move.Options{}, ttl.ErrInvalidStrategy},
		{"no strategy to move to", e.Admin, raw, "f", ttl.Move{Start: start}, move.Options{}, ttl.ErrInvalidStrategy},
		{"a move no move makes", e.Admin, raw, "f", ttl.Move{From: ttl.OneSecond(), To: ttl.DefaultExpiration(time.Hour), Start: start}, move.Options{}, ttl.ErrInvalidStrategy},
		{"negative workers", e.Admin, raw, "f", oneHour, move.Options{Scan: scan.Options{Workers: -1}}, ttl.ErrInvalidOption},
		{"a sample", e.Admin, raw, "f", oneHour, move.Options{Scan: scan.Options{Sample: 0.5}}, ttl.ErrInvalidOption},
	} {
		f, err := move.New(tt.admin, tt.data, "t", tt.family, tt.m, tt.opts)
		assert.ErrorIs(t, err, tt.want, tt.name)
		assert.Nil(t, f, tt.name)
		assert.ErrorContains(t, err, "move.New:", tt.name)
	}
	f, err := move.New(e.Admin, raw, "t", "f", oneHour, move.Options{Scan: scan.Options{Workers: 2}})
	require.NoError(t, err)
	assert.NotNil(t, f)
}

// TestBoundaryAndEndsBy: the boundary between a move's encodings and the
// end of its old cells, for each kind of old side, and nothing for an
// invalid move.
func TestBoundaryAndEndsBy(t *testing.T) {
	for _, tt := range []struct {
		m        ttl.Move
		boundary bigtable.Timestamp
		ends     time.Time // zero: never by time
	}{
		{oneHour, testkit.MS(start), start.Add(time.Hour + time.Minute)},
		{ttl.Move{To: ttl.OneSecond(), Start: start, Old: ttl.Until(start.Add(3 * time.Hour)), Skew: time.Second}, testkit.MS(start), start.Add(3*time.Hour + time.Second)},
		{ttl.Move{To: ttl.OneSecond(), Start: start, Old: ttl.Forever}, testkit.MS(start), time.Time{}},
		{ttl.Move{From: ttl.SequenceNumbers(1), To: ttl.OneSecond(), Start: start, Old: ttl.Forever}, 946_684_800_000_000, time.Time{}},
		{ttl.Move{From: ttl.DefaultExpiration(48 * time.Hour), To: ttl.OneSecond(), Start: start}, testkit.MS(start), start.Add(48 * time.Hour)},
		{ttl.Move{Start: start}, 0, time.Time{}}, // invalid: nothing to move to
	} {
		assert.Equal(t, tt.boundary, move.Boundary(tt.m), "%v", tt.m)
		end, ok := move.EndsBy(tt.m)
		assert.Equal(t, !tt.ends.IsZero(), ok, "%v", tt.m)
		assert.True(t, end.Equal(tt.ends), "%v: EndsBy %v, want %v", tt.m, end, tt.ends)
	}
}

// TestRewriteRow rewrites one row as a pipeline does: the filter reads the
// old cells only, a dry run counts, the rewrite moves the live one, and an
// invalid move, a move that cannot be rewritten and a failed write are
// refused.
func TestRewriteRow(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	m := oneHour
	x.put("r", "c", "live", testkit.MS(start.Add(-30*time.Minute)))
	x.put("r", "d", "expired", testkit.MS(start.Add(-2*time.Hour)))
	x.put("r", "e", "new", testkit.MS(start.Add(10*time.Minute)))
	now := start.Add(time.Minute)

	row, err := x.raw.ReadRow(ctx, "r", bigtable.RowFilter(move.RewriteFilter(m, "f")))
	require.NoError(t, err)
	assert.Equal(t, []string{"f:c=live", "f:d=expired"}, testkit.Values(row), "the old cells, with their values")

	n, err := move.RewriteRow(ctx, x.raw, "f", m, row, now, true)
	require.NoError(t, err)
	assert.Equal(t, move.Counts{Rewritten: 1, Expired: 1}, n)
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(-30 * time.Minute))}, x.stamps("r", "c"), "a dry run writes nothing")

	failing := &faulty{TableAPI: x.raw, apply: true}
	n, err = move.RewriteRow(ctx, failing, "f", m, row, now, false)
	assert.ErrorIs(t, err, errBoom)
	assert.Equal(t, move.Counts{}, n, "the failed cell is not counted")
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(-30 * time.Minute))}, x.stamps("r", "c"))

	n, err = move.RewriteRow(ctx, x.raw, "f", m, row, now, false)
	require.NoError(t, err)
	assert.Equal(t, move.Counts{Rewritten: 1, Expired: 1}, n)
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(30 * time.Minute))}, x.stamps("r", "c"), "stored as its expiry")
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(-2 * time.Hour))}, x.stamps("r", "d"), "left to GC")
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(10 * time.Minute))}, x.stamps("r", "e"), "not an old cell")

	// A row read whole: its cells of the new side are not the rewrite's.
	n, err = move.RewriteRow(ctx, x.raw, "f", m, testkit.RawRow(t, x.raw, "r"), now, true)
	require.NoError(t, err)
	assert.Equal(t, move.Counts{Expired: 1}, n, "the rewritten cell and the new one are left alone")

	// The same row again: the rewritten cell is no longer old.
	n, err = move.RewriteRow(ctx, x.raw, "f", m, row, now, false)
	require.NoError(t, err)
	assert.Equal(t, move.Counts{Kept: 1, Expired: 1}, n, "the cell read is gone: a writer's change wins")

	invalid := ttl.Move{Start: start}
	row, err = x.raw.ReadRow(ctx, "r", bigtable.RowFilter(move.RewriteFilter(invalid, "f")))
	require.NoError(t, err)
	assert.Empty(t, row, "an invalid move's filter passes nothing")
	_, err = move.RewriteRow(ctx, x.raw, "f", invalid, testkit.RawRow(t, x.raw, "r"), now, false)
	assert.ErrorIs(t, err, ttl.ErrInvalidStrategy)
	seq := ttl.Move{From: ttl.SequenceNumbers(1), To: ttl.OneSecond(), Start: start, Old: ttl.Forever}
	_, err = move.RewriteRow(ctx, x.raw, "f", seq, testkit.RawRow(t, x.raw, "r"), now, true)
	assert.ErrorIs(t, err, ttl.ErrInvalidOption, "sequence numbers cannot be rewritten as times")
}

// TestStepsRefuseNilContext: every step refuses a nil context, and
// returns no report.
func TestStepsRefuseNilContext(t *testing.T) {
	x := newMoveTable(t, nil)
	f := x.family(x.raw, oneHour, x.opts(time.Minute))
	var none context.Context
	for name, step := range map[string]func(context.Context) (*move.Report, error){
		"Plan": f.Plan, "Start": f.Start, "Rewrite": f.Rewrite, "Finish": f.Finish,
	} {
		r, err := step(none)
		assert.ErrorIs(t, err, ttl.ErrNilArgument, name)
		assert.ErrorContains(t, err, "move.Family."+name+": nil context")
		assert.Nil(t, r, name)
	}
}

// TestStepsRefuseMissingTableOrFamily: every step refuses a table that
// does not exist, a family the table lacks, and reports the admin
// client's other errors as they are.
func TestStepsRefuseMissingTableOrFamily(t *testing.T) {
	ctx := context.Background()
	x, fault := newFaultyAdminTable(t, nil)
	steps := func(f *move.Family) map[string]func(context.Context) (*move.Report, error) {
		return map[string]func(context.Context) (*move.Report, error){"Plan": f.Plan, "Start": f.Start, "Rewrite": f.Rewrite, "Finish": f.Finish}
	}
	opts := x.opts(time.Minute)

	noTable, err := move.New(x.e.Admin, x.e.Client.Open("nope"), "nope", "f", oneHour, opts)
	require.NoError(t, err, "New does no I/O")
	for name, step := range steps(noTable) {
		r, err := step(ctx)
		assert.Equal(t, codes.NotFound, status.Code(err), "%s: %v", name, err)
		assert.ErrorIs(t, err, policy.ErrTableNotFound, name)
		assert.ErrorContains(t, err, `table "nope" does not exist`, name)
		require.NotNil(t, r, name)
		assert.Equal(t, "nope", r.Table, name)
		assert.False(t, r.Counted, "%s: nothing read", name)
	}

	noFamily, err := move.New(x.e.Admin, x.raw, "t", "g", oneHour, opts)
	require.NoError(t, err)
	for name, step := range steps(noFamily) {
		r, err := step(ctx)
		assert.ErrorIs(t, err, policy.ErrFamilyMismatch, name)
		assert.ErrorContains(t, err, `table "t" has no family "g"`, name)
		require.NotNil(t, r, name)
		assert.Nil(t, r.Found, name)
		assert.Equal(t, "missing", policy.Describe(r.Found), name)
	}

	fault.fail("GetTable")
	for name, step := range steps(x.family(x.raw, oneHour, opts)) {
		_, err := step(ctx)
		assert.Equal(t, codes.PermissionDenied, status.Code(err), "%s: %v", name, err)
		assert.NotContains(t, err.Error(), "does not exist", name)
	}
}

// TestReportString: the one line a report sums itself up in, its state
// as the report carries it.
func TestReportString(t *testing.T) {
	r := &move.Report{Table: "sessions", Family: "sess", Now: start, State: move.NotStarted}
	assert.Equal(t, `family "sess" of table "sessions" at 2030-05-01T09:00:00.000Z: not started`, r.String())

	r.State, r.Counted, r.OldLive.Cells, r.Blockers = move.Started, true, 120, []string{"x"}
	assert.Equal(t, `family "sess" of table "sessions" at 2030-05-01T09:00:00.000Z: started, 120 old cells live, 1 blocker`, r.String())

	r.State, r.OldLive.Cells, r.Blockers = move.Finished, 1, nil
	assert.Equal(t, `family "sess" of table "sessions" at 2030-05-01T09:00:00.000Z: finished, 1 old cell live`, r.String())
	assert.NotContains(t, r.String(), "\n", "one line")

	r = &move.Report{Table: "t", Family: "f", Now: start, Blockers: []string{"x", "y"}}
	assert.Equal(t, `family "f" of table "t" at 2030-05-01T09:00:00.000Z: not started, 2 blockers`, r.String())

	// A plan's.
	x := newMoveTable(t, nil)
	x.put("a", "c", "live", testkit.MS(start.Add(-30*time.Minute)))
	r, err := x.family(x.raw, oneHour, x.opts(-2*time.Hour)).Plan(context.Background())
	require.NoError(t, err)
	assert.Equal(t, `family "f" of table "t" at 2030-05-01T07:00:00.000Z: not started, 1 old cell live, 2 blockers`, r.String())
}

// TestReportTyped: a step reports the move, the policies and the state as
// values, not as text; a move whose policy is its final one is not
// finished by having it.
func TestReportTyped(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		policy bigtable.GCPolicy
		m      ttl.Move
		now    time.Duration // from the start
		want   move.State
	}{
		{"before the start", nil, oneHour, -2 * time.Hour, move.NotStarted},
		{"before the start, with the move's policy", bigtable.MaxAgePolicy(time.Hour), oneHour, -2 * time.Hour, move.NotStarted},
		{"started", bigtable.MaxAgePolicy(time.Hour), oneHour, time.Minute, move.Started},
		{"finished", bigtable.MaxAgePolicy(time.Second), oneHour, 2 * time.Hour, move.Finished},
		{"finished before the start", bigtable.MaxAgePolicy(time.Second), oneHour, -2 * time.Hour, move.Finished},
		{"the move's policy is the final one", bigtable.MaxAgePolicy(48 * time.Hour),
			ttl.Move{To: ttl.DefaultExpiration(48 * time.Hour), Start: start, Old: ttl.For(30 * time.Minute)},
			time.Minute, move.Started},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x := newMoveTable(t, tt.policy)
			r, err := x.family(x.raw, tt.m, x.opts(tt.now)).Plan(ctx)
			require.NoError(t, err)
			assert.Equal(t, tt.want, r.State)
			assert.Equal(t, tt.m, r.Move)
			if tt.policy == nil {
				assert.Equal(t, "never", policy.Describe(r.Found), "no GC policy")
			} else {
				assert.Equal(t, policy.Describe(tt.policy), policy.Describe(r.Found))
			}
			assert.Equal(t, policy.Describe(tt.m.GCPolicy()), policy.Describe(r.Window))
			if tt.name == "the move's policy is the final one" {
				assert.Equal(t, policy.Describe(r.Final), policy.Describe(r.Window), "the case this one tests")
			}
			assert.Equal(t, policy.Describe(tt.m.To.GCPolicy()), policy.Describe(r.Final))
		})
	}

	// Finish sets the final policy: its report says finished.
	x := newMoveTable(t, bigtable.MaxAgePolicy(time.Hour))
	r, err := x.family(x.raw, oneHour, x.opts(2*time.Hour)).Finish(ctx)
	require.NoError(t, err)
	assert.Equal(t, move.Finished, r.State)
	assert.Equal(t, "maxage=1s", policy.Describe(r.Found))
}

// TestStateText: each state's name, in String and in JSON, and back.
func TestStateText(t *testing.T) {
	for s, name := range map[move.State]string{move.NotStarted: "not started", move.Started: "started", move.Finished: "finished"} {
		assert.Equal(t, name, s.String())
		b, err := s.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, name, string(b))
		var back move.State
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, s, back)
	}
	assert.Equal(t, "State(7)", move.State(7).String())
	_, err := move.State(7).MarshalText()
	assert.ErrorContains(t, err, "no state 7")
	var s move.State
	assert.ErrorContains(t, s.UnmarshalText([]byte("done")), `no state "done"`)
}

// TestReportJSON: the move and the policies are written as text, as
// before they were values; the state by its name.
func TestReportJSON(t *testing.T) {
	r := &move.Report{Table: "t", Family: "f", Move: oneHour, Now: start, State: move.Started,
		Found: bigtable.MaxAgePolicy(time.Hour), Window: oneHour.GCPolicy(), Final: oneHour.To.GCPolicy()}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got), string(b))
	assert.Equal(t, oneHour.String(), got["move"])
	assert.Equal(t, "maxage=1h", got["found"])
	assert.Equal(t, "maxage=1h", got["window"])
	assert.Equal(t, "maxage=1s", got["final"])
	assert.Equal(t, "started", got["state"])
	assert.Equal(t, "t", got["table"])

	assert.Regexp(t, `^\{"table":"t","family":"f","move":"[^"]+","now":"[^"]+","dry_run":false,"state":"started","found":"maxage=1h","window":"maxage=1h","final":"maxage=1s","started":false,`, string(b),
		"the fields in the order they had as strings")
	assert.Equal(t, strings.Count(string(b), `"table":`), 1, "each field once")

	r.Found = nil
	b, err = json.Marshal(r)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"found":"missing"`)
}

// TestPlanSaysWhatComesNext: the plan's actions and blockers at each
// stage of a move.
func TestPlanSaysWhatComesNext(t *testing.T) {
	ctx := context.Background()
	lastExpiry := start.Add(-30*time.Minute + time.Hour)
	for _, tt := range []struct {
		name     string
		policy   bigtable.GCPolicy
		m        ttl.Move
		cell     time.Duration // the old cell's timestamp, from the start
		now      time.Duration
		actions  []string
		blockers []string
	}{
		{"before the start, without the move's policy", nil, oneHour, -30 * time.Minute, -2 * time.Hour,
			[]string{"before " + at(start) + ": configure every process with the move, then start it: GC policy never → maxage=1h"},
			[]string{"the move has not started: it cannot finish before " + at(start),
				"1 cell of the old rule live until " + at(lastExpiry.Add(time.Minute)) + " (the skew included): wait, or rewrite them"}},
		{"before the start, with the move's policy", bigtable.MaxAgePolicy(time.Hour), oneHour, -30 * time.Minute, -2 * time.Hour,
			[]string{"at " + at(start) + " writers switch to OneSecond()"},
			[]string{"the move has not started: it cannot finish before " + at(start),
				"1 cell of the old rule live until " + at(lastExpiry.Add(time.Minute)) + " (the skew included): wait, or rewrite them"}},
		{"less than the skew before the start", bigtable.MaxAgePolicy(time.Hour), oneHour, -30 * time.Minute, -30 * time.Second,
			[]string{"at " + at(start) + " writers switch to OneSecond()"},
			[]string{"the start, " + at(start) + ", is less than the skew (1m0s) away: processes whose clocks run ahead may have started",
				"the move has not started: it cannot finish before " + at(start),
				"1 cell of the old rule live until " + at(lastExpiry.Add(time.Minute)) + " (the skew included): wait, or rewrite them"}},
		{"started, an old cell live", bigtable.MaxAgePolicy(time.Hour), oneHour, -30 * time.Minute, time.Minute,
			nil,
			[]string{"1 cell of the old rule live until " + at(lastExpiry.Add(time.Minute)) + " (the skew included): wait, or rewrite them"}},
		{"started, no old cell live", bigtable.MaxAgePolicy(time.Hour), oneHour, -2 * time.Hour, time.Minute,
			[]string{"finish: no cell of the old rule is live; GC policy maxage=1h → maxage=1s"},
			nil},
		{"finished", bigtable.MaxAgePolicy(time.Second), oneHour, -30 * time.Minute, 2 * time.Hour,
			[]string{"finished: the family has the new strategy's policy; configure the processes with OneSecond()"},
			nil},
		{"old cells that never expire", nil, ttl.Move{To: ttl.OneSecond(), Start: start, Old: ttl.Forever}, -30 * time.Minute, time.Minute,
			nil,
			[]string{"1 live cell of the old rule never expires: rewrite them (or finish with data loss)"}},
	} {
		x := newMoveTable(t, tt.policy)
		x.put("a", "c", "old", testkit.MS(start.Add(tt.cell)))
		r, err := x.family(x.raw, tt.m, x.opts(tt.now)).Plan(ctx)
		require.NoError(t, err, tt.name)
		assert.True(t, r.DryRun, tt.name)
		assert.True(t, r.Counted, tt.name)
		assert.Equal(t, tt.actions, r.Actions, tt.name)
		assert.Equal(t, tt.blockers, r.Blockers, tt.name)
	}
}

// TestPlanCountsOldVersionsByRank: in a move from sequence numbers, an
// old version is live while fewer than the old rule's versions of its
// column are newer.
func TestPlanCountsOldVersionsByRank(t *testing.T) {
	x := newMoveTable(t, nil)
	m := ttl.Move{From: ttl.SequenceNumbers(2), To: ttl.OneSecond(), Start: start, Old: ttl.Forever}
	for _, ts := range []bigtable.Timestamp{3000, 4000, 5000} {
		x.put("a", "c", "v", ts)
	}
	x.put("a", "d", "v", 1000)
	x.put("a", "c", "new", testkit.MS(start.Add(time.Hour)))
	r, err := x.family(x.raw, m, x.opts(time.Minute)).Plan(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(3), r.OldLive.Cells, "c's two newest old versions, d's only one")
	assert.Equal(t, int64(1), r.OldExpired.Cells, "c's third")
	assert.Equal(t, int64(3), r.OldNeverExpire.Cells)
	assert.Equal(t, int64(1), r.New.Cells)
}

// TestPlanAndStartStopOnAFailedScan: a scan that fails leaves partial
// counts, says so, and changes nothing.
func TestPlanAndStartStopOnAFailedScan(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	x.put("a", "c", "old", testkit.MS(start.Add(-30*time.Minute)))
	for _, data := range []*faulty{{TableAPI: x.raw, readRows: true}, {TableAPI: x.raw, sample: true}} {
		f := x.family(data, oneHour, x.opts(-time.Hour))
		r, err := f.Plan(ctx)
		assert.ErrorIs(t, err, errBoom)
		assert.ErrorContains(t, err, "its counts are partial and nothing was changed")
		if data.readRows {
			assert.False(t, r.Read.Complete(), "the shard was not read")
		}
		assert.Equal(t, int64(0), r.OldLive.Cells)
		assert.Empty(t, r.Actions, "no plan from partial counts")
		_, err = f.Start(ctx)
		assert.ErrorIs(t, err, errBoom)
		assert.Equal(t, "", x.policy(), "Start changed nothing")
	}
}

// TestStartDryRun: a dry run of a start that must rewrite misplaced cells
// refuses, as the real run does, without a checkpoint (issue 28); with
// one it says what it would do, and does nothing, recording nothing.
func TestStartDryRun(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	m := ttl.Move{From: ttl.DefaultExpiration(48 * time.Hour), To: ttl.OneSecond(), Start: start}
	x.put("b", "c", "long", testkit.MS(start.Add(23*time.Hour)))

	r, err := x.family(x.raw, m, x.opts(-time.Hour)).Plan(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"before " + at(start) + ": configure every process with the move, then start it: GC policy never → maxage=2d",
		"start rewrites 1 old cell stamped at or above the boundary in the new encoding",
	}, r.Actions)

	opts := x.opts(-time.Hour)
	opts.DryRun = true
	r, err = x.family(x.raw, m, opts).Start(ctx)
	assert.ErrorIs(t, err, ttl.ErrInvalidOption)
	assert.ErrorContains(t, err, "1 old cell stamped above the boundary must be rewritten, and that needs a checkpoint: a rewritten cell cannot be told from one still to rewrite (allow it with Options.Checkpoint)")
	assert.Empty(t, r.Actions)
	opts.DryRun = false
	_, err = x.family(x.raw, m, opts).Start(ctx)
	assert.ErrorIs(t, err, ttl.ErrInvalidOption, "the same refusal as the real run")

	cp := scan.MemoryCheckpoint()
	opts.Checkpoint, opts.DryRun = cp, true
	r, err = x.family(x.raw, m, opts).Start(ctx)
	require.NoError(t, err)
	rec, err := cp.Load(context.Background())
	require.NoError(t, err)
	assert.Nil(t, rec, "a dry run records nothing")
	assert.True(t, r.DryRun)
	assert.Equal(t, []string{"rewrite 1 old cell stamped at or above the boundary", "GC policy never → maxage=2d"}, r.Actions)
	assert.Equal(t, int64(0), r.Rewritten)
	assert.Equal(t, "never", policy.Describe(r.Found))
	assert.Equal(t, "", x.policy())
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(23 * time.Hour))}, x.stamps("b", "c"))
}

// TestStartKeepsACellChangedMeanwhile: a misplaced cell a writer changes
// between the start's read and its rewrite stays as the writer left it,
// and the start refuses to set the move's policy.
func TestStartKeepsACellChangedMeanwhile(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, bigtable.MaxAgePolicy(48*time.Hour))
	m := ttl.Move{From: ttl.DefaultExpiration(48 * time.Hour), To: ttl.OneSecond(), Start: start, Skew: time.Minute}
	ts := testkit.MS(start.Add(23 * time.Hour))
	x.put("b", "c", "long", ts)
	writer := &faulty{TableAPI: x.raw, before: func() { assert.NoError(t, x.raw.Apply(ctx, "b", cell("c", "changed", ts))) }}
	opts := x.opts(-time.Hour)
	opts.Checkpoint = scan.MemoryCheckpoint()
	r, err := x.family(writer, m, opts).Start(ctx)
	assert.ErrorIs(t, err, policy.ErrDataLoss)
	assert.ErrorContains(t, err, "1 old cell stamped above the boundary could not be rewritten")
	assert.Equal(t, [2]int64{0, 1}, [2]int64{r.Rewritten, r.Kept})
	assert.Equal(t, []string{"f:c=changed"}, testkit.Values(testkit.RawRow(t, x.raw, "b")))
	assert.Equal(t, []bigtable.Timestamp{ts}, x.stamps("b", "c"), "the writer's cell is where it wrote it")
	assert.Equal(t, "maxage=2d", policy.Describe(r.Found))
	assert.Equal(t, "age() > 2d", x.policy())
}

// TestStartWithNothingToDo: a family that has the move's policy, or the
// new strategy's, needs no start.
func TestStartWithNothingToDo(t *testing.T) {
	for _, p := range []bigtable.GCPolicy{bigtable.MaxAgePolicy(time.Hour), bigtable.MaxAgePolicy(time.Second)} {
		x := newMoveTable(t, p)
		x.put("a", "c", "old", testkit.MS(start.Add(-30*time.Minute)))
		r, err := x.family(x.raw, oneHour, x.opts(-time.Hour)).Start(context.Background())
		require.NoError(t, err, "%v", p)
		assert.Equal(t, []string{"nothing to do: the family has the move's policy"}, r.Actions, "%v", p)
		assert.Equal(t, p.String(), x.policy())
	}
}

// TestStepsReportAFailedPolicyChange: Start and Finish return the admin
// client's refusal to set a policy, and report the policy unchanged.
func TestStepsReportAFailedPolicyChange(t *testing.T) {
	ctx := context.Background()
	x, fault := newFaultyAdminTable(t, nil)
	fault.fail("ModifyColumnFamilies")
	r, err := x.family(x.raw, oneHour, x.opts(-time.Hour)).Start(ctx)
	assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
	assert.Equal(t, "never", policy.Describe(r.Found))
	assert.Equal(t, "", x.policy())

	fault.fail("")
	opts := x.opts(-time.Hour)
	opts.IgnoreWarnings = true
	r, err = x.family(x.raw, oneHour, opts).Start(ctx)
	require.NoError(t, err)
	assert.Equal(t, "maxage=1h", policy.Describe(r.Found))

	fault.fail("ModifyColumnFamilies")
	r, err = x.family(x.raw, oneHour, x.opts(2*time.Hour)).Finish(ctx)
	assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
	assert.Equal(t, "maxage=1h", policy.Describe(r.Found))
	assert.Equal(t, "age() > 1h", x.policy())
}

// TestRewriteDryRun counts what a rewrite would do, and does nothing.
func TestRewriteDryRun(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	x.put("a", "c", "live", testkit.MS(start.Add(-30*time.Minute)))
	x.put("b", "c", "live", testkit.MS(start.Add(-10*time.Minute)))
	x.put("b", "d", "expired", testkit.MS(start.Add(-2*time.Hour)))
	opts := x.opts(time.Minute)
	opts.DryRun = true
	r, err := x.family(x.raw, oneHour, opts).Rewrite(ctx)
	require.NoError(t, err)
	assert.True(t, r.DryRun)
	assert.False(t, r.Counted, "a rewrite reads the old cells only")
	assert.Equal(t, [2]int64{2, 0}, [2]int64{r.Rewritten, r.Kept})
	assert.Equal(t, []string{"would rewrite 2 old cells in the new encoding; 0 cells would be left (below a newer cell); 1 cell already expired"}, r.Actions)
	assert.True(t, r.Read.Complete())
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(-30 * time.Minute))}, x.stamps("a", "c"))
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(-10 * time.Minute))}, x.stamps("b", "c"))

	r, err = x.family(x.raw, oneHour, x.opts(time.Minute)).Rewrite(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"rewrote 2 old cells in the new encoding; 0 cells left (changed meanwhile, or below a newer cell); 1 cell already expired"}, r.Actions)
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(30 * time.Minute))}, x.stamps("a", "c"))
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(50 * time.Minute))}, x.stamps("b", "c"))
}

// TestRewriteKeepsACellChangedMeanwhile: a writer always wins.
func TestRewriteKeepsACellChangedMeanwhile(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	ts := testkit.MS(start.Add(-30 * time.Minute))
	x.put("a", "c", "old", ts)
	writer := &faulty{TableAPI: x.raw, before: func() { assert.NoError(t, x.raw.Apply(ctx, "a", cell("c", "changed", ts))) }}
	r, err := x.family(writer, oneHour, x.opts(time.Minute)).Rewrite(ctx)
	require.NoError(t, err)
	assert.Equal(t, [2]int64{0, 1}, [2]int64{r.Rewritten, r.Kept})
	assert.Equal(t, []string{"f:c=changed"}, testkit.Values(testkit.RawRow(t, x.raw, "a")))
	assert.Equal(t, []bigtable.Timestamp{ts}, x.stamps("a", "c"))
}

// TestRewriteStops: a rewrite whose write, or whose split of the table,
// fails says where it stopped and how to go on.
func TestRewriteStops(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	ts := testkit.MS(start.Add(-30 * time.Minute))
	x.put("a", "c", "old", ts)

	r, err := x.family(&faulty{TableAPI: x.raw, apply: true}, oneHour, x.opts(time.Minute)).Rewrite(ctx)
	assert.ErrorIs(t, err, errBoom)
	assert.ErrorContains(t, err, `move: table "t", family "f": the rewrite stopped after 0 of 1 shards (resume it with the same checkpoint)`)
	assert.False(t, r.Read.Complete())
	assert.Equal(t, [2]int64{0, 0}, [2]int64{r.Rewritten, r.Kept})
	assert.Equal(t, []bigtable.Timestamp{ts}, x.stamps("a", "c"))

	_, err = x.family(&faulty{TableAPI: x.raw, sample: true}, oneHour, x.opts(time.Minute)).Rewrite(ctx)
	assert.ErrorIs(t, err, errBoom)
	assert.Equal(t, []bigtable.Timestamp{ts}, x.stamps("a", "c"))
}

// TestRewriteRefusesACheckpointOfOtherWork: a checkpoint is for one piece
// of work.
func TestRewriteRefusesACheckpointOfOtherWork(t *testing.T) {
	x := newMoveTable(t, nil)
	x.put("a", "c", "old", testkit.MS(start.Add(-30*time.Minute)))
	cp := scan.MemoryCheckpoint()
	require.NoError(t, cp.Save(context.Background(), &scan.Record{Work: "something else"}))
	opts := x.opts(time.Minute)
	opts.Checkpoint = cp
	for _, dry := range []bool{false, true} {
		opts.DryRun = dry
		r, err := x.family(x.raw, oneHour, opts).Rewrite(context.Background())
		assert.ErrorIs(t, err, ttl.ErrInvalidOption, "dry run %v: refused as the real run is", dry)
		assert.ErrorContains(t, err, "the checkpoint records other work")
		assert.NotContains(t, err.Error(), "stopped after", "nothing was read: no shard count to report, no run to resume")
		require.NotNil(t, r)
		assert.Empty(t, r.Actions, "nothing reported done before the refusal (issue 28)")
		assert.Zero(t, r.Read.Reads, "refused before reading")
	}
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(-30 * time.Minute))}, x.stamps("a", "c"))
}

// TestStepsRefuseEachOthersCheckpoint is issue 28's third stumble: the
// checkpoint Start used (which Status reads) given to Rewrite, or
// Rewrite's to Start, is refused before anything is read or reported.
func TestStepsRefuseEachOthersCheckpoint(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	m := ttl.Move{From: ttl.DefaultExpiration(48 * time.Hour), To: ttl.OneSecond(), Start: start}
	x.put("b", "c", "long", testkit.MS(start.Add(23*time.Hour)))
	startCP, rewriteCP := scan.MemoryCheckpoint(), scan.MemoryCheckpoint()
	opts := x.opts(-time.Hour)
	opts.Checkpoint = startCP
	_, err := x.family(x.raw, m, opts).Start(ctx)
	require.NoError(t, err)

	opts = x.opts(time.Hour)
	opts.Checkpoint = startCP
	r, err := x.family(x.raw, m, opts).Rewrite(ctx)
	assert.ErrorIs(t, err, ttl.ErrInvalidOption)
	assert.ErrorContains(t, err, `move.Family.Rewrite: the checkpoint records other work (start table "t" family "f"`)
	assert.ErrorContains(t, err, "give each step a checkpoint of its own")
	assert.Empty(t, r.Actions)
	opts.Checkpoint = rewriteCP
	_, err = x.family(x.raw, m, opts).Rewrite(ctx)
	require.NoError(t, err)

	opts = x.opts(-time.Hour)
	opts.Checkpoint = rewriteCP
	opts.DryRun = true
	r, err = x.family(x.raw, m, opts).Start(ctx)
	assert.ErrorIs(t, err, ttl.ErrInvalidOption)
	assert.ErrorContains(t, err, `move.Family.Start: the checkpoint records other work (rewrite table "t" family "f"`)
	assert.Nil(t, r, "refused before reading")

}

// diesAfterRecording saves through cp, and fails once it has saved a
// record with a batch of changes in flight: the process dies after
// recording the batch, before making any of it.
type diesAfterRecording struct{ scan.Checkpoint }

func (c diesAfterRecording) Save(ctx context.Context, r *scan.Record) error {
	if err := c.Checkpoint.Save(ctx, r); err != nil {
		return err
	}
	for _, s := range r.Shards {
		if s.Pending != nil {
			return errCrash
		}
	}
	return nil
}

// TestRewriteSettlesABatchRecordedButNotMade: a run that resumes a batch
// recorded and not made makes it, except the cells gone meanwhile; it
// stops, changing nothing, when it cannot read them.
func TestRewriteSettlesABatchRecordedButNotMade(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	for i, row := range []string{"a", "b", "c"} {
		x.put(row, "c", row, testkit.MS(start.Add(-time.Duration(i+1)*time.Minute)))
	}
	file := scan.FileCheckpoint(filepath.Join(t.TempDir(), "rewrite.json"))
	opts := x.opts(time.Minute)
	opts.Checkpoint = diesAfterRecording{file}
	_, err := x.family(testkit.Tablets{TableAPI: x.raw}, oneHour, opts).Rewrite(ctx)
	require.ErrorIs(t, err, errCrash)
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(-time.Minute))}, x.stamps("a", "c"), "recorded, not made")

	gone := bigtable.NewMutation()
	gone.DeleteRow()
	require.NoError(t, x.raw.Apply(ctx, "c", gone), "a writer deletes the row")
	opts.Checkpoint = file
	_, err = x.family(&faulty{TableAPI: x.raw, readRow: true}, oneHour, opts).Rewrite(ctx)
	assert.ErrorIs(t, err, errBoom)
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(-time.Minute))}, x.stamps("a", "c"), "nothing made")

	r, err := x.family(testkit.Tablets{TableAPI: x.raw}, oneHour, opts).Rewrite(ctx)
	require.NoError(t, err)
	assert.Equal(t, [2]int64{2, 1}, [2]int64{r.Rewritten, r.Kept}, "the deleted cell is kept: a writer's change wins")
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(-time.Minute + time.Hour))}, x.stamps("a", "c"))
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(-2*time.Minute + time.Hour))}, x.stamps("b", "c"))
	assert.Empty(t, x.stamps("c", "c"))
}

// TestRewriteRefusesACorruptCheckpoint: a checkpoint whose record of a
// shard cannot be read stops the rewrite before it changes anything.
func TestRewriteRefusesACorruptCheckpoint(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		corrupt func(*scan.ShardRecord)
	}{
		{"a finished shard's result", func(s *scan.ShardRecord) { s.Result = []byte(`"x"`) }},
		{"a started shard's result", func(s *scan.ShardRecord) { s.Done, s.Result = false, []byte(`"x"`) }},
		{"a batch in flight", func(s *scan.ShardRecord) { s.Done, s.Pending = false, []byte(`"x"`) }},
	} {
		x := newMoveTable(t, nil)
		x.put("a", "c", "old", testkit.MS(start.Add(-time.Minute)))
		x.put("c", "c", "old", testkit.MS(start.Add(-time.Minute)))
		tbl := testkit.Tablets{TableAPI: x.raw, Keys: []string{"b"}} // 2 shards
		cp := scan.MemoryCheckpoint()
		opts := x.opts(time.Minute)
		opts.Checkpoint = cp
		opts.DryRun = true
		_, err := x.family(tbl, oneHour, opts).Rewrite(ctx)
		require.NoError(t, err)
		rec, err := cp.Load(context.Background())
		require.NoError(t, err)
		assert.Nil(t, rec, "%s: a dry run records nothing", tt.name)

		opts.DryRun = false
		_, err = x.family(tbl, oneHour, opts).Rewrite(ctx)
		require.NoError(t, err, tt.name)
		rec, err = cp.Load(context.Background())
		require.NoError(t, err)
		require.Len(t, rec.Shards, 2)
		tt.corrupt(&rec.Shards[1])
		require.NoError(t, cp.Save(context.Background(), rec))
		_, err = x.family(tbl, oneHour, opts).Rewrite(ctx)
		assert.ErrorContains(t, err, "move: the checkpoint's shard", tt.name)
	}
}

// TestRewriteInBatches rewrites more cells than one batch holds: a run
// that dies recording its first batch changes nothing, and the resumed
// run rewrites every cell once.
func TestRewriteInBatches(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	const n = 1200 // two batches and part of a third
	keys := make([]string, n)
	muts := make([]*bigtable.Mutation, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("r%04d", i)
		muts[i] = bigtable.NewMutation()
		muts[i].Set("f", "c", testkit.MS(start.Add(-time.Minute)), []byte("old"))
	}
	errs, err := x.raw.ApplyBulk(ctx, keys, muts)
	require.NoError(t, err)
	require.Nil(t, errs)
	stored := func() (old, rewritten int) {
		require.NoError(t, x.raw.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
			for _, it := range r["f"] {
				switch it.Timestamp {
				case testkit.MS(start.Add(-time.Minute)):
					old++
				case testkit.MS(start.Add(59 * time.Minute)):
					rewritten++
				}
			}
			return true
		}))
		return old, rewritten
	}

	tbl := testkit.Tablets{TableAPI: x.raw}
	dry := x.opts(time.Minute)
	dry.DryRun = true
	r, err := x.family(tbl, oneHour, dry).Rewrite(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(n), r.Rewritten)

	file := scan.FileCheckpoint(filepath.Join(t.TempDir(), "rewrite.json"))
	opts := x.opts(time.Minute)
	opts.Checkpoint = &failingCheckpoint{Checkpoint: file, failAfter: 1} // the record of the shards only
	_, err = x.family(tbl, oneHour, opts).Rewrite(ctx)
	require.ErrorIs(t, err, errCrash)
	old, rewritten := stored()
	assert.Equal(t, [2]int{n, 0}, [2]int{old, rewritten}, "nothing made")

	opts.Checkpoint = file
	r, err = x.family(tbl, oneHour, opts).Rewrite(ctx)
	require.NoError(t, err)
	assert.Equal(t, [2]int64{n, 0}, [2]int64{r.Rewritten, r.Kept})
	old, rewritten = stored()
	assert.Equal(t, [2]int{0, n}, [2]int{old, rewritten})
}

// TestFinishWithNothingToDo: a family that has the new strategy's policy
// is finished.
func TestFinishWithNothingToDo(t *testing.T) {
	x := newMoveTable(t, bigtable.MaxAgePolicy(time.Second))
	x.put("a", "c", "old", testkit.MS(start.Add(-30*time.Minute)))
	r, err := x.family(x.raw, oneHour, x.opts(time.Minute)).Finish(context.Background())
	require.NoError(t, err, "the live old cell is the operator's business once the policy is set")
	assert.Equal(t, []string{"nothing to do: the family has the new strategy's policy"}, r.Actions)
}

// TestFinishWithDataLoss: allowed, a finish while old cells are live says
// what is lost and sets the new policy.
func TestFinishWithDataLoss(t *testing.T) {
	x := newMoveTable(t, nil)
	x.put("a", "c", "live", testkit.MS(start.Add(-30*time.Minute)))
	x.put("b", "c", "live", testkit.MS(start.Add(-10*time.Minute)))
	opts := x.opts(time.Minute)
	opts.AllowDataLoss = true
	r, err := x.family(x.raw, oneHour, opts).Finish(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(2), r.OldLive.Cells)
	assert.Equal(t, []string{"2 live cells of the old rule are lost", "GC policy never → maxage=1s"}, r.Actions)
	assert.Equal(t, int64(0), r.Purged, "OneSecond alone reads them as expired: nothing comes back")
	assert.Equal(t, "maxage=1s", policy.Describe(r.Found))
	assert.Equal(t, "age() > 1000000", x.policy())
}

// TestFinishPurges: the expired old cells the new strategy alone would
// read as live go before its policy comes: a dry run counts them, a
// failed deletion stops the finish before the policy changes.
func TestFinishPurges(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	m := ttl.Move{To: ttl.DefaultExpiration(time.Hour), Start: start, Old: ttl.For(time.Minute)}
	x.put("a", "c", "old", testkit.MS(start.Add(-time.Second)))
	x.put("b", "c", "old", testkit.MS(start.Add(-2*time.Second)))

	opts := x.opts(2 * time.Minute)
	opts.DryRun = true
	r, err := x.family(x.raw, m, opts).Finish(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), r.Purged)
	assert.Equal(t, []string{"delete 2 cells of the old rule, expired, which DefaultExpiration(1h0m0s) alone would read as live", "GC policy never → maxage=1h"}, r.Actions)
	assert.Equal(t, "never", policy.Describe(r.Found))
	assert.Equal(t, "", x.policy())
	assert.Len(t, x.stamps("a", "c"), 1)

	opts.DryRun = false
	opts.Scan.Workers = 1
	_, err = x.family(&faulty{TableAPI: x.raw, apply: true}, m, opts).Finish(ctx)
	assert.ErrorIs(t, err, errBoom)
	assert.ErrorContains(t, err, `move: deleting the expired old cells of family "f"`)
	assert.Equal(t, "", x.policy(), "the policy waits for the deletion")
	assert.Len(t, x.stamps("a", "c"), 1)
	assert.Len(t, x.stamps("b", "c"), 1)

	r, err = x.family(x.raw, m, x.opts(2*time.Minute)).Finish(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), r.Purged)
	assert.Equal(t, []string{"deleted 2 cells of the old rule, expired, which DefaultExpiration(1h0m0s) alone would read as live", "GC policy never → maxage=1h"}, r.Actions)
	assert.Equal(t, "age() > 1h", x.policy())
	assert.Empty(t, x.stamps("a", "c"))
	assert.Empty(t, x.stamps("b", "c"))
}

// TestStartSkipsACellAlreadyInPlace: a misplaced cell that the new
// encoding would stamp exactly where it is (a cell a raw writer put at
// ttl.MaxTimestamp in a move from DefaultExpiration, which both rules read
// as never expiring) needs no rewrite, and must not keep the start from
// setting the move's policy.
func TestStartSkipsACellAlreadyInPlace(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, bigtable.MaxAgePolicy(48*time.Hour))
	m := ttl.Move{From: ttl.DefaultExpiration(48 * time.Hour), To: ttl.OneSecond(), Start: start}
	x.put("a", "c", "pinned", ttl.MaxTimestamp)
	x.put("b", "c", "long", testkit.MS(start.Add(23*time.Hour)))
	opts := x.opts(-time.Hour)
	opts.Checkpoint = scan.MemoryCheckpoint()
	r, err := x.family(x.raw, m, opts).Start(ctx)
	require.NoError(t, err)
	assert.Equal(t, [2]int64{1, 0}, [2]int64{r.Rewritten, r.Kept}, "the long cell rewritten, the pinned one left where it belongs")
	assert.Equal(t, []bigtable.Timestamp{ttl.MaxTimestamp}, x.stamps("a", "c"))
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(23*time.Hour + 48*time.Hour))}, x.stamps("b", "c"), "its expiry, under OneSecond")
	assert.Equal(t, "age() > 2d", x.policy(), "the move's policy is set")
}

// unreadable is a checkpoint that cannot be read.
type unreadable struct{ scan.Checkpoint }

func (unreadable) Load(ctx context.Context) (*scan.Record, error) { return nil, errBoom }

// TestStepsRefuseAnUnreadableCheckpoint: Start and Rewrite stop before
// reading the table when their checkpoint cannot be read.
func TestStepsRefuseAnUnreadableCheckpoint(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	opts := x.opts(time.Minute)
	opts.Checkpoint = unreadable{scan.MemoryCheckpoint()}
	_, err := x.family(x.raw, oneHour, opts).Rewrite(ctx)
	assert.ErrorIs(t, err, errBoom)
	assert.ErrorContains(t, err, "move.Family.Rewrite: reading the checkpoint")
	_, err = x.family(x.raw, oneHour, opts).Start(ctx)
	assert.ErrorIs(t, err, errBoom)
}
