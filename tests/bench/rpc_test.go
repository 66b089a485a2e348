package bench_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
)

// dataAPI prefixes the methods of the Bigtable data API; the admin client
// shares the connection, and its calls are not counted.
const dataAPI = "/google.bigtable.v2.Bigtable/"

// wire counts what a client connection sends to the Bigtable data API:
// calls by method, seen by interceptors, and payload bytes each way, seen by
// a stats handler, as they go on the wire (protobuf plus gRPC's 5-byte
// message framing; HTTP/2 frames not included).
type wire struct {
	mu     sync.Mutex
	calls  map[string]int
	sent   int
	recv   int
	sentBy map[string]int // payload bytes sent, by method (without the service)
}

// traffic is a snapshot of a wire: what one operation cost.
type traffic struct {
	Calls      map[string]int // method (without the service) → calls
	Sent, Recv int            // payload bytes on the wire
	SentBy     map[string]int // method → payload bytes sent
}

func (t traffic) String() string {
	return fmt.Sprintf("%v, %d B sent, %d B received", t.Calls, t.Sent, t.Recv)
}

// dialOptions returns the options that make a connection report to w.
func (w *wire) dialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			w.call(method)
			return invoker(ctx, method, req, reply, cc, opts...)
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			w.call(method)
			return streamer(ctx, desc, cc, method, opts...)
		}),
		grpc.WithStatsHandler(wireStats{w}),
	}
}

func (w *wire) call(method string) {
	name, ok := strings.CutPrefix(method, dataAPI)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls[name]++
}

// measure returns the traffic of op alone.
func (w *wire) measure(t testing.TB, op func() error) traffic {
	t.Helper()
	w.mu.Lock()
	w.calls, w.sent, w.recv, w.sentBy = map[string]int{}, 0, 0, map[string]int{}
	w.mu.Unlock()
	require.NoError(t, op())
	w.mu.Lock()
	defer w.mu.Unlock()
	return traffic{Calls: maps.Clone(w.calls), Sent: w.sent, Recv: w.recv, SentBy: maps.Clone(w.sentBy)}
}

// wireStats is the stats handler of a wire.
type wireStats struct{ w *wire }

type methodKey struct{}

func (s wireStats) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	return context.WithValue(ctx, methodKey{}, info.FullMethodName)
}

func (s wireStats) HandleRPC(ctx context.Context, st stats.RPCStats) {
	full, _ := ctx.Value(methodKey{}).(string)
	method, ok := strings.CutPrefix(full, dataAPI)
	if !ok {
		return
	}
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	switch p := st.(type) {
	case *stats.OutPayload:
		s.w.sent += p.WireLength
		s.w.sentBy[method] += p.WireLength
	case *stats.InPayload:
		s.w.recv += p.WireLength
	}
}

func (wireStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (wireStats) HandleConn(context.Context, stats.ConnStats)                       {}

// wiredTable returns a fresh emulator table with families f (OneSecond),
// d (DefaultExpiration(48h)) and u (no strategy), whose client reports to
// the returned wire, and a ttl.Table on it with the given options.
func wiredTable(t *testing.T, clock *testkit.Clock, opts ...ttl.Option) (*ttl.Table, *bigtable.Table, *wire) {
	t.Helper()
	w := &wire{calls: map[string]int{}, sentBy: map[string]int{}}
	raw := emulator.StartForTest(t, w.dialOptions()...).TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil, "d": nil, "u": nil})
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"f": ttl.OneSecond(), "d": ttl.DefaultExpiration(48 * time.Hour)},
		append([]ttl.Option{ttl.WithClock(clock.Now), ttl.OtherFamilies("u")}, opts...)...)
	require.NoError(t, err)
	return tbl, raw, w
}

// hand3 is the hand-written read filter of wiredTable's table at now.
func hand3(now time.Time) bigtable.Filter {
	return bigtable.InterleaveFilters(
		bigtable.ChainFilters(bigtable.ColumnRangeFilter("d", "", ""), bigtable.TimestampRangeFilterMicros(bigtable.Time(now.Add(-48*time.Hour))+1000, 0)),
		bigtable.ChainFilters(bigtable.ColumnRangeFilter("f", "", ""), bigtable.TimestampRangeFilterMicros(bigtable.Time(now)+1000, 0)),
		bigtable.ColumnRangeFilter("u", "", ""))
}

// rpcCase is one operation done by hand on the raw client and through the
// library, on rows that hold the same cells before each.
type rpcCase struct {
	name string
	raw  func() error
	ttl  func() error
	// same is true when the requests must be byte for byte the same, and
	// so the responses.
	same bool
	// large is true for a case of over 100,000 mutations, which -short skips
	// (CI's run on the minimum versions, under the race detector); the
	// run without -short checks it.
	large bool
}

// TestRPCCounts checks that every Table operation makes exactly the calls
// its raw equivalent makes, and, where the two send the same request, that
// the bytes each way are the same: the library adds no round trip and no
// byte. The one deliberate exception, read-modify-write in a

// checkSameRPCs runs a case's raw and library operations and checks that
// they make the same calls, and, where the case says so, send and receive
// the same bytes.
func checkSameRPCs(t *testing.T, w *wire, c rpcCase) {
	t.Helper()
	if c.large && testing.Short() {
		t.Skip("100,000 mutations: checked without -short")
	}
	byHand := w.measure(t, c.raw)
	lib := w.measure(t, c.ttl)
	t.Logf("raw: %v; ttl: %v", byHand, lib)
	assert.NotEmpty(t, byHand.Calls)
	assert.Equal(t, byHand.Calls, lib.Calls, "calls")
	if c.same {
		assert.Equal(t, byHand.Sent, lib.Sent, "request bytes")
		assert.Equal(t, byHand.Recv, lib.Recv, "response bytes")
	}
}

// DefaultExpiration family, is checked on its own.
func TestRPCCounts(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	now := testkit.Base
	tbl, raw, w := wiredTable(t, clock)
	f := func(col string, life time.Duration) (*bigtable.Mutation, *ttl.Mutation) {
		h := bigtable.NewMutation()
		h.Set("f", col, bigtable.Time(now.Add(life)), benchValue)
		r := ttl.NewMutation()
		r.Set("f", col, benchValue, ttl.For(life))
		return h, r
	}
	five := func() (*bigtable.Mutation, *ttl.Mutation) {
		return handMutation(now, time.Hour), ttlMutation(time.Hour)
	}
	bulk := func(n int) ([]string, []*bigtable.Mutation, []*ttl.Mutation) {
		h, r := five()
		hs, rs := make([]*bigtable.Mutation, n), make([]*ttl.Mutation, n)
		for i := range hs {
			hs[i], rs[i] = h, r
		}
		return rowKeys(n), hs, rs
	}
	// bulk1 is n rows of one small cell each, so that 100,000 of them fit
	// the emulator's 4 MiB limit on a request.
	bulk1 := func(n int) ([]string, []*bigtable.Mutation, []*ttl.Mutation) {
		h := bigtable.NewMutation()
		h.Set("f", "x", bigtable.Time(now.Add(time.Hour)), []byte("x"))
		r := ttl.NewMutation()
		r.Set("f", "x", []byte("x"), ttl.For(time.Hour))
		keys := rowKeys(n)
		hs, rs := make([]*bigtable.Mutation, n), make([]*ttl.Mutation, n)
		for i := range hs {
			keys[i] = "b" + keys[i]
			hs[i], rs[i] = h, r
		}
		return keys, hs, rs
	}
	require.Equal(t, hand3(now).String(), tbl.ReadFilter(now).String())
	// The conditional mutations find the lock taken: both apply the same
	// branch and get the same answer.
	lock := bigtable.ColumnRangeFilter("f", "lock", "lock\x00")
	seed, _ := f("lock", time.Hour)
	require.NoError(t, raw.Apply(ctx, "a", seed))
	var rawRows, libRows int
	count := func(n *int) func(bigtable.Row) bool {
		return func(bigtable.Row) bool { *n++; return true }
	}

	cases := []rpcCase{{
		name: "Apply",
		raw:  func() error { h, _ := five(); return raw.Apply(ctx, "a", h) },
		ttl:  func() error { _, r := five(); return tbl.Apply(ctx, "a", r) },
		same: true,
	}, {
		name: "Apply(cond)",
		raw: func() error {
			ht, _ := f("hb", time.Minute)
			hf, _ := f("lock", time.Hour)
			return raw.Apply(ctx, "a", bigtable.NewCondMutation(bigtable.ChainFilters(hand3(now), lock), ht, hf))
		},
		ttl: func() error {
			_, rt := f("hb", time.Minute)
			_, rf := f("lock", time.Hour)
			return tbl.Apply(ctx, "a", ttl.NewCondMutation(lock, rt, rf))
		},
		same: true,
	}, {
		name: "ApplyBulk(500)",
		raw:  func() error { k, h, _ := bulk(500); return noErrors(raw.ApplyBulk(ctx, k, h)) },
		ttl:  func() error { k, _, r := bulk(500); return noErrors(tbl.ApplyBulk(ctx, k, r)) },
		same: true,
	}, {
		// 100,001 one-cell mutations: the client sends them in two
		// requests, of 100,000 and 1.
		name: "ApplyBulk(100001)",
		raw: func() error {
			k, h, _ := bulk1(100001)
			return noErrors(raw.ApplyBulk(ctx, k, h))
		},
		ttl: func() error {
			k, _, r := bulk1(100001)
			return noErrors(tbl.ApplyBulk(ctx, k, r))
		},
		same:  true,
		large: true,
	}, {
		name: "ReadRow",
		raw:  func() error { _, err := raw.ReadRow(ctx, "a", bigtable.RowFilter(hand3(now))); return err },
		ttl:  func() error { _, err := tbl.ReadRow(ctx, "a"); return err },
		same: true,
	}, {
		name: "ReadRows",
		raw: func() error {
			return raw.ReadRows(ctx, bigtable.PrefixRange("r"), count(&rawRows), bigtable.RowFilter(hand3(now)))
		},
		ttl:  func() error { return tbl.ReadRows(ctx, bigtable.PrefixRange("r"), count(&libRows)) },
		same: true,
	}, {
		name: "ReadRows(limit)",
		raw: func() error {
			return raw.ReadRows(ctx, bigtable.PrefixRange("r"), count(new(int)), bigtable.LimitRows(10), bigtable.RowFilter(hand3(now)))
		},
		ttl: func() error {
			return tbl.ReadRows(ctx, bigtable.PrefixRange("r"), count(new(int)), bigtable.LimitRows(10))
		},
		same: true,
	}, {
		// The emulator samples keys at random: the responses differ.
		name: "SampleRowKeys",
		raw:  func() error { _, err := raw.SampleRowKeys(ctx); return err },
		ttl:  func() error { _, err := tbl.SampleRowKeys(ctx); return err },
	}, {
		// The counter grows by one each time: the responses differ in
		// value, not in size.
		name: "ApplyReadModifyWrite(unmanaged)",
		raw: func() error {
			m := bigtable.NewReadModifyWrite()
			m.Increment("u", "n", 1)
			_, err := raw.ApplyReadModifyWrite(ctx, "a", m)
			return err
		},
		ttl: func() error {
			m := ttl.NewReadModifyWrite()
			m.Increment("u", "n", 1)
			_, err := tbl.ApplyReadModifyWrite(ctx, "a", m)
			return err
		},
		same: true,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkSameRPCs(t, w, c) })
	}
	assert.Equal(t, 500, rawRows, "rows the raw scan read")
	assert.Equal(t, 500, libRows, "rows the library's scan read")

	t.Run("ApplyReadModifyWrite(DefaultExpiration)", func(t *testing.T) {
		// The library first deletes the column's expired cells, so that
		// an expired counter restarts: one MutateRow more than by hand.
		byHand := w.measure(t, func() error {
			m := bigtable.NewReadModifyWrite()
			m.Increment("d", "n", 1)
			_, err := raw.ApplyReadModifyWrite(ctx, "b", m)
			return err
		})
		lib := w.measure(t, func() error {
			m := ttl.NewReadModifyWrite()
			m.Increment("d", "n", 1)
			_, err := tbl.ApplyReadModifyWrite(ctx, "c", m)
			return err
		})
		t.Logf("raw: %v; ttl: %v", byHand, lib)
		assert.Equal(t, map[string]int{"ReadModifyWriteRow": 1}, byHand.Calls)
		assert.Equal(t, map[string]int{"MutateRow": 1, "ReadModifyWriteRow": 1}, lib.Calls)
	})
}

// TestRPCCountsWriteTimes checks that recording write times costs no call:
// the companions travel in the same mutation and come back in the same
// read.
func TestRPCCountsWriteTimes(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, raw, w := wiredTable(t, clock, ttl.RecordWriteTime())
	for _, c := range []rpcCase{{
		name: "Apply",
		raw:  func() error { return raw.Apply(ctx, "a", handMutation(testkit.Base, time.Hour)) },
		ttl:  func() error { return tbl.Apply(ctx, "a", ttlMutation(time.Hour)) },
	}, {
		name: "ReadRow(WithWriteTimes)",
		raw:  func() error { _, err := raw.ReadRow(ctx, "a", bigtable.RowFilter(hand3(testkit.Base))); return err },
		ttl:  func() error { _, err := tbl.ReadRow(ctx, "a", ttl.WithWriteTimes()); return err },
	}, {
		name: "ReadRows(WithWriteTimes)",
		raw: func() error {
			return raw.ReadRows(ctx, bigtable.InfiniteRange(""), func(bigtable.Row) bool { return true }, bigtable.RowFilter(hand3(testkit.Base)))
		},
		ttl: func() error {
			return tbl.ReadRows(ctx, bigtable.InfiniteRange(""), func(bigtable.Row) bool { return true }, ttl.WithWriteTimes())
		},
	}, {
		// A Replace with its companion is 4 changes: 25,001 rows are
		// 100,004, which the client sends in two requests.
		name: "ApplyBulk(25001 Replace)",
		raw: func() error {
			ts := bigtable.Time(testkit.Base.Add(time.Hour))
			m := bigtable.NewMutation()
			m.DeleteCellsInColumn("f", "x")
			m.DeleteCellsInColumn("f", "\xff\xffwt:x")
			m.Set("f", "x", ts, []byte("x"))
			m.Set("f", "\xff\xffwt:x", ts, binary.BigEndian.AppendUint64(nil, uint64(testkit.Base.UnixMicro())))
			keys, muts := rowKeys(25001), make([]*bigtable.Mutation, 25001)
			for i := range muts {
				muts[i] = m
			}
			return noErrors(raw.ApplyBulk(ctx, keys, muts))
		},
		ttl: func() error {
			m := ttl.NewMutation()
			m.Replace("f", "x", []byte("x"), ttl.For(time.Hour))
			keys, muts := rowKeys(25001), make([]*ttl.Mutation, 25001)
			for i := range muts {
				muts[i] = m
			}
			return noErrors(tbl.ApplyBulk(ctx, keys, muts))
		},
		same:  true,
		large: true,
	}} {
		t.Run(c.name, func(t *testing.T) { checkSameRPCs(t, w, c) })
	}
}

// noErrors turns ApplyBulk's per-row errors into one error.
func noErrors(errs []error, err error) error {
	if err == nil && errs != nil {
		err = fmt.Errorf("errors: %v", errs)
	}
	return err
}

// TestReadBytes measures the response bytes of a scan of 500 rows of 5
// cells, 4 of them expired: the library's read returns only the live cell
// of each row, exactly as the hand-written filter does, and a fraction of
// what an unfiltered read returns.
func TestReadBytes(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base.Add(-2 * time.Minute))
	tbl, raw, w := wiredTable(t, clock)
	keys := rowKeys(benchRows)
	write := func(life time.Duration, cols []string) {
		m := ttl.NewMutation()
		for _, c := range cols {
			m.Set("f", c, benchValue, ttl.For(life))
		}
		muts := make([]*ttl.Mutation, len(keys))
		for i := range muts {
			muts[i] = m
		}
		errs, err := tbl.ApplyBulk(ctx, keys, muts)
		require.NoError(t, err)
		require.Nil(t, errs)
	}
	write(time.Minute, benchColumns[:4])
	clock.Set(testkit.Base)
	write(time.Hour, benchColumns[4:])

	var cells int
	count := func(r bigtable.Row) bool { cells += len(r["f"]); return true }
	scan := func(opts ...bigtable.ReadOption) func() error {
		return func() error { cells = 0; return raw.ReadRows(ctx, bigtable.InfiniteRange(""), count, opts...) }
	}
	all := w.measure(t, scan())
	require.Equal(t, 5*benchRows, cells)
	byHand := w.measure(t, scan(bigtable.RowFilter(hand3(testkit.Base))))
	require.Equal(t, benchRows, cells)
	lib := w.measure(t, func() error { cells = 0; return tbl.ReadRows(ctx, bigtable.InfiniteRange(""), count) })
	require.Equal(t, benchRows, cells)

	ratio := float64(lib.Recv) / float64(all.Recv)
	t.Logf("response bytes, %d rows of 5 cells (%d-byte values), 4 expired: unfiltered %d, hand-written filter %d, library %d; library/unfiltered = %.3f",
		benchRows, len(benchValue), all.Recv, byHand.Recv, lib.Recv, ratio)
	assert.Equal(t, byHand.Recv, lib.Recv, "the library returns what the hand-written filter returns")
	// One live cell in five; each row's key and framing come with it.
	assert.Less(t, ratio, 0.3)
}

// TestWriteTimeStorage measures what RecordWriteTime stores: one companion
// cell per data cell, in the same family at the same timestamp, holding an
// 8-byte write time under the data cell's qualifier prefixed with
// "\xff\xffwt:".
func TestWriteTimeStorage(t *testing.T) {
	ctx := context.Background()
	stored := func(opts ...ttl.Option) (cells, bytes, recv int) {
		tbl, raw, w := wiredTable(t, testkit.NewClock(testkit.Base), opts...)
		require.NoError(t, tbl.Apply(ctx, "r", ttlMutation(time.Hour)))
		var r bigtable.Row
		tr := w.measure(t, func() (err error) { r, err = raw.ReadRow(ctx, "r"); return err })
		for _, items := range r {
			for _, it := range items {
				_, qual, _ := strings.Cut(it.Column, ":")
				cells++
				bytes += len(qual) + len(it.Value) + 8 // qualifier, value, timestamp
			}
		}
		return cells, bytes, tr.Recv
	}
	plainCells, plainBytes, plainRecv := stored()
	wtCells, wtBytes, wtRecv := stored(ttl.RecordWriteTime())
	t.Logf("5 cells of %d-byte values in columns c0..c4: without companions %d cells, %d B (qualifier+value+timestamp), read %d B; with RecordWriteTime %d cells, %d B, read %d B",
		len(benchValue), plainCells, plainBytes, plainRecv, wtCells, wtBytes, wtRecv)
	assert.Equal(t, 5, plainCells)
	assert.Equal(t, 10, wtCells)
	companion := len("\xff\xffwt:") + len("c0") + 8 + 8 // qualifier, 8-byte value, timestamp
	assert.Equal(t, plainBytes+5*companion, wtBytes)
}
