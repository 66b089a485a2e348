package writes_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	btpb "cloud.google.com/go/bigtable/apiv2/bigtablepb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
)

// TestForever checks cells that never expire in families whose other
// cells do, and the arithmetic at the top of the timestamp range.
func TestForever(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	d := 48 * time.Hour
	tbl, raw := testkit.NewTable(t, clock, map[string]ttl.Strategy{"s": ttl.OneSecond(), "d": ttl.DefaultExpiration(d), "v": ttl.SequenceNumbers(2)}, nil)
	m := ttl.NewMutation()
	m.Set("s", "forever", []byte("s"), ttl.Forever)
	m.Set("s", "hour", []byte("s"), ttl.For(time.Hour))
	m.Set("d", "forever", []byte("d"), ttl.Forever)
	m.Set("d", "default", []byte("d"), ttl.Default)
	require.NoError(t, tbl.Apply(ctx, "r", m))
	assert.ErrorIs(t, tbl.Apply(ctx, "r", testkit.Set("v", "c", "v", ttl.Forever)), ttl.ErrLifetime)

	stored := map[string]bigtable.Timestamp{}
	for _, c := range testkit.Cells(testkit.RawRow(t, raw, "r")) {
		stored[c.Column] = c.TS
	}
	assert.Equal(t, ttl.MaxTimestamp, stored["s:forever"], "OneSecond stores the largest timestamp")
	assert.Equal(t, ttl.MaxTimestamp-bigtable.Timestamp(d/time.Microsecond), stored["d:forever"], "DefaultExpiration stores it minus d")

	// The last finite expiry is one millisecond below Forever's.
	last := time.UnixMilli(int64(ttl.MaxTimestamp/1000) - 1)
	for _, s := range []ttl.Strategy{ttl.OneSecond(), ttl.DefaultExpiration(d)} {
		forever, _ := s.Timestamp(testkit.Base, ttl.Forever)
		finite, err := s.Timestamp(testkit.Base, ttl.Until(last))
		require.NoError(t, err)
		assert.Equal(t, forever-1000, finite, "%v: Until(the last millisecond)", s)
		_, err = s.Timestamp(testkit.Base, ttl.Until(last.Add(time.Millisecond)))
		assert.ErrorIs(t, err, ttl.ErrOutOfRange, "%v: Forever's millisecond", s)
		_, err = s.Timestamp(testkit.Base, ttl.Until(last.Add(2*time.Millisecond)))
		assert.ErrorIs(t, err, ttl.ErrOutOfRange, "%v: past the end of time", s)
	}

	for _, at := range []time.Time{testkit.Base, testkit.Base.Add(100 * 365 * 24 * time.Hour), time.Date(200000, 1, 1, 0, 0, 0, 0, time.UTC), last, last.Add(time.Hour)} {
		clock.Set(at)
		r, err := tbl.ReadRow(ctx, "r")
		require.NoError(t, err)
		got := testkit.Values(r)
		assert.Contains(t, got, "s:forever=s", "at %v", at)
		assert.Contains(t, got, "d:forever=d", "at %v", at)
		if at.After(testkit.Base.Add(d)) {
			assert.Equal(t, []string{"d:forever=d", "s:forever=s"}, got, "only Forever cells at %v", at)
		}
		for _, items := range r {
			for _, it := range items {
				if strings.HasSuffix(it.Column, ":forever") {
					_, ok := tbl.ExpiresAt(it)
					assert.False(t, ok, "ExpiresAt(%s) reports an expiry", it.Column)
				}
			}
		}
	}
}

// TestReadMargin checks that a margin hides cells that far before their
// expiry from reads and predicates, refuses writes born inside it, and
// leaves sequence numbers alone.
func TestReadMargin(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	margin := time.Minute
	tbl, _ := testkit.NewTable(t, clock, map[string]ttl.Strategy{"s": ttl.OneSecond(), "d": ttl.DefaultExpiration(time.Hour), "v": ttl.SequenceNumbers(1)}, nil,
		ttl.WithReadMargin(margin), ttl.OtherFamilies())
	m := ttl.NewMutation()
	m.Set("s", "c", []byte("s"), ttl.For(90*time.Second))
	m.Set("d", "c", []byte("d"), ttl.Default) // expires at base+1h
	m.Set("v", "c", []byte("v"), ttl.Version(1))
	require.NoError(t, tbl.Apply(ctx, "r", m))
	read := func(at time.Time) []string {
		clock.Set(at)
		r, err := tbl.ReadRow(ctx, "r")
		require.NoError(t, err)
		return testkit.Values(r)
	}
	assert.Equal(t, []string{"d:c=d", "s:c=s", "v:c=v"}, read(testkit.Base.Add(30*time.Second-time.Millisecond)))
	assert.Equal(t, []string{"d:c=d", "v:c=v"}, read(testkit.Base.Add(30*time.Second)), "s expires within the margin")
	assert.Equal(t, []string{"d:c=d", "v:c=v"}, read(testkit.Base.Add(59*time.Minute-time.Millisecond)))
	assert.Equal(t, []string{"v:c=v"}, read(testkit.Base.Add(59*time.Minute)), "d expires within the margin")
	assert.Equal(t, []string{"v:c=v"}, read(testkit.Base.Add(1000*time.Hour)), "sequence numbers do not depend on time")

	// Writes: inside the margin refused, just outside accepted.
	clock.Set(testkit.Base)
	assert.ErrorIs(t, tbl.Apply(ctx, "r", testkit.Set("s", "w", "x", ttl.For(margin))), ttl.ErrExpired)
	assert.ErrorIs(t, tbl.Apply(ctx, "r", testkit.Set("s", "w", "x", ttl.Until(testkit.Base.Add(margin)))), ttl.ErrExpired)
	require.NoError(t, tbl.Apply(ctx, "r", testkit.Set("s", "w", "x", ttl.For(margin+time.Millisecond))))
	assert.Contains(t, read(testkit.Base), "s:w=x")

	// Replace under a margin: the new value wins and is visible at once.
	rep := ttl.NewMutation()
	rep.Replace("s", "w", []byte("y"), ttl.For(margin+time.Second))
	require.NoError(t, tbl.Apply(ctx, "r", rep))
	assert.Contains(t, read(testkit.Base), "s:w=y")
	assert.NotContains(t, read(testkit.Base), "s:w=x")
	assert.NotContains(t, read(testkit.Base.Add(time.Second)), "s:w=y", "hidden a margin before its expiry")
}

// TestLockUnderMargin checks a conditional lock when readers may lag: the
// lock can be taken a margin before the holder's cell expires, so that no
// reader whose clock lags by up to the margin still sees it held.
func TestLockUnderMargin(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, _ := testkit.NewTable(t, clock, map[string]ttl.Strategy{"lock": ttl.OneSecond()}, nil, ttl.OtherFamilies(), ttl.WithReadMargin(2*time.Second))
	take := func(who string) bool {
		var held bool
		m := ttl.NewCondMutation(nil, nil, testkit.Set("lock", "owner", who, ttl.For(10*time.Second)))
		require.NoError(t, tbl.Apply(ctx, "job", m, bigtable.GetCondMutationResult(&held)))
		return !held
	}
	assert.True(t, take("ann"))
	clock.Set(testkit.Base.Add(8*time.Second - time.Millisecond))
	assert.False(t, take("bob"), "held until a margin before its expiry")
	clock.Set(testkit.Base.Add(8 * time.Second))
	assert.True(t, take("bob"), "free a margin before its expiry")
}

// requests records the filters of the ReadRows requests a client sends.
type requests struct {
	mu      sync.Mutex
	filters []string
}

func (rq *requests) interceptor() grpc.DialOption {
	return grpc.WithStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		s, err := streamer(ctx, desc, cc, method, opts...)
		return &recordingStream{ClientStream: s, rq: rq}, err
	})
}

func (rq *requests) last() string {
	rq.mu.Lock()
	defer rq.mu.Unlock()
	return rq.filters[len(rq.filters)-1]
}

type recordingStream struct {
	grpc.ClientStream
	rq *requests
}

func (s *recordingStream) SendMsg(m any) error {
	if req, ok := m.(*btpb.ReadRowsRequest); ok {
		s.rq.mu.Lock()
		s.rq.filters = append(s.rq.filters, req.GetFilter().String())
		s.rq.mu.Unlock()
	}
	return s.ClientStream.SendMsg(m)
}

// TestWriteTimes checks RecordWriteTime: companions written with each
// managed cell, kept consistent by Replace and deletes, never returned as
// data, and read back with WithWriteTimes without a regular expression.
func TestWriteTimes(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	rq := &requests{}
	raw := emulator.StartForTest(t, rq.interceptor()).TableForTest(t, "t", map[string]bigtable.GCPolicy{"s": nil, "d": nil, "v": nil, "u": nil})
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"s": ttl.OneSecond(), "d": ttl.DefaultExpiration(48 * time.Hour), "v": ttl.SequenceNumbers(2)},
		ttl.WithClock(clock.Now), ttl.RecordWriteTime(), ttl.OtherFamilies("u"))
	require.NoError(t, err)

	first := testkit.Base.Add(123 * time.Microsecond) // write times keep microseconds
	clock.Set(first)
	m := ttl.NewMutation()
	m.Set("s", "a", []byte("1"), ttl.For(time.Hour))
	m.Set("s", "forever", []byte("2"), ttl.Forever)
	m.Set("d", "a", []byte("3"), ttl.For(time.Hour))
	m.Set("v", "a", []byte("4"), ttl.Version(1))
	m.Set("u", "a", []byte("5"), ttl.Default)
	require.NoError(t, tbl.Apply(ctx, "r", m))
	second := first.Add(time.Minute)
	clock.Set(second)
	require.NoError(t, tbl.Apply(ctx, "r", testkit.Set("v", "a", "6", ttl.Version(2))))

	// Stored: one companion per managed cell, same timestamp, the write time.
	stored := testkit.Cells(testkit.RawRow(t, raw, "r"))
	data := map[string]bigtable.Timestamp{}
	companions := map[string]testkit.Cell{}
	for _, c := range stored {
		fam, qual, _ := strings.Cut(c.Column, ":")
		if col, ok := strings.CutPrefix(qual, "\xff\xffwt:"); ok {
			companions[fmt.Sprintf("%s:%s@%d", fam, col, c.TS)] = c
		} else {
			data[fmt.Sprintf("%s@%d", c.Column, c.TS)] = c.TS
		}
	}
	assert.Len(t, data, 6)
	assert.Len(t, companions, 5, "a companion per managed cell, none for the unmanaged one")
	for key, c := range companions {
		_, ok := data[key]
		assert.True(t, ok, "companion %s beside its cell", key)
		require.Len(t, c.Value, 8)
		us := int64(binary.BigEndian.Uint64([]byte(c.Value)))
		assert.Contains(t, []int64{first.UnixMicro(), second.UnixMicro()}, us, key)
	}

	// Read without write times: no companions, no labels.
	r, err := tbl.ReadRow(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, []string{"d:a=3", "s:a=1", "s:forever=2", "u:a=5", "v:a=6", "v:a=4"}, testkit.Values(r))
	for _, items := range r {
		for _, it := range items {
			_, ok := ttl.WriteTime(it)
			assert.False(t, ok, it.Column)
		}
	}

	// Read with write times: each managed cell has its own.
	want := map[string]time.Time{"d:a=3": first, "s:a=1": first, "s:forever=2": first, "v:a=4": first, "v:a=6": second}
	r, err = tbl.ReadRow(ctx, "r", ttl.WithWriteTimes())
	require.NoError(t, err)
	assert.Equal(t, []string{"d:a=3", "s:a=1", "s:forever=2", "u:a=5", "v:a=6", "v:a=4"}, testkit.Values(r))
	assert.NotRegexp(t, "regex", rq.last(), "a declared table reads write times without a regular expression")
	for _, items := range r {
		for _, it := range items {
			got, ok := ttl.WriteTime(it)
			w, has := want[it.Column+"="+string(it.Value)]
			assert.Equal(t, has, ok, it.Column)
			assert.True(t, got.Equal(w), "WriteTime(%s) = %v want %v", it.Column, got, w)
		}
	}

	// Replace swaps the companion too; a deleted column takes its own.
	third := second.Add(time.Minute)
	clock.Set(third)
	rep := ttl.NewMutation()
	rep.Replace("s", "a", []byte("7"), ttl.For(time.Minute))
	rep.DeleteCellsInColumn("d", "a")
	require.NoError(t, tbl.Apply(ctx, "r", rep))
	var left []string
	for _, c := range testkit.Cells(testkit.RawRow(t, raw, "r")) {
		if strings.HasPrefix(c.Column, "s:") || strings.HasPrefix(c.Column, "d:") {
			left = append(left, c.Column+"="+c.Value)
		}
	}
	assert.Equal(t, []string{"s:a=7", "s:forever=2", "s:\xff\xffwt:a=" + string(binary.BigEndian.AppendUint64(nil, uint64(third.UnixMicro()))),
		"s:\xff\xffwt:forever=" + string(binary.BigEndian.AppendUint64(nil, uint64(first.UnixMicro())))}, left)

	// A caller's filter applies to data only; a row left with none is not returned.
	r, err = tbl.ReadRow(ctx, "r", ttl.WithWriteTimes(), ttl.RowFilter(bigtable.ColumnRangeFilter("s", "forever", "forever\x00")))
	require.NoError(t, err)
	require.Equal(t, []string{"s:forever=2"}, testkit.Values(r))
	got, ok := ttl.WriteTime(r["s"][0])
	assert.True(t, ok && got.Equal(first), "Forever cell's write time %v", got)
	r, err = tbl.ReadRow(ctx, "r", ttl.WithWriteTimes(), ttl.RowFilter(bigtable.BlockAllFilter()))
	require.NoError(t, err)
	assert.Nil(t, r)
	n := 0
	require.NoError(t, tbl.ReadRows(ctx, bigtable.InfiniteRange(""), func(bigtable.Row) bool { n++; return true },
		ttl.WithWriteTimes(), ttl.RowFilter(bigtable.ValueFilter("nothing"))))
	assert.Zero(t, n, "rows with companions only")

	// Expired cells take their companions out of sight with them.
	clock.Set(third.Add(time.Minute))
	r, err = tbl.ReadRow(ctx, "r", ttl.WithWriteTimes())
	require.NoError(t, err)
	assert.Equal(t, []string{"s:forever=2", "u:a=5", "v:a=6", "v:a=4"}, testkit.Values(r))
}

// TestWriteTimesUndeclared checks write times on a table whose other
// families are not declared, where the pass-through keeps its pattern.
func TestWriteTimesUndeclared(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, _ := testkit.NewTable(t, clock, map[string]ttl.Strategy{"s": ttl.OneSecond()}, []string{"u"}, ttl.RecordWriteTime())
	m := ttl.NewMutation()
	m.Set("s", "a", []byte("1"), ttl.For(time.Hour))
	m.Set("u", "a", []byte("2"), ttl.Default)
	require.NoError(t, tbl.Apply(ctx, "r", m))
	var rows []bigtable.Row
	require.NoError(t, tbl.ReadRows(ctx, bigtable.RowList{"r"}, func(r bigtable.Row) bool { rows = append(rows, r); return true }, ttl.WithWriteTimes()))
	require.Len(t, rows, 1)
	assert.Equal(t, []string{"s:a=1", "u:a=2"}, testkit.Values(rows[0]))
	got, ok := ttl.WriteTime(rows[0]["s"][0])
	assert.True(t, ok && got.Equal(testkit.Base))
	_, ok = ttl.WriteTime(rows[0]["u"][0])
	assert.False(t, ok, "no write time in a family without a strategy")
}

// TestWriteTimesLeaveOtherFamilies checks that a family without a strategy
// is read with WithWriteTimes exactly as without it, even with qualifiers
// that look like companions.
func TestWriteTimesLeaveOtherFamilies(t *testing.T) {
	ctx := context.Background()
	tbl, _ := testkit.NewTable(t, testkit.NewClock(testkit.Base), map[string]ttl.Strategy{"d": ttl.DefaultExpiration(time.Hour)}, []string{"meta"},
		ttl.OtherFamilies("meta"), ttl.RecordWriteTime())
	m := ttl.NewMutation()
	m.Set("meta", "\xff\xffwt:k", []byte("12345678"), ttl.Default)
	m.Set("meta", "k", []byte("v"), ttl.Default)
	require.NoError(t, tbl.Apply(ctx, "r", m))
	plain, err := tbl.ReadRow(ctx, "r")
	require.NoError(t, err)
	withTimes, err := tbl.ReadRow(ctx, "r", ttl.WithWriteTimes())
	require.NoError(t, err)
	assert.Equal(t, testkit.Values(plain), testkit.Values(withTimes))
	assert.Len(t, withTimes["meta"], 2)
	for _, it := range withTimes["meta"] {
		_, ok := ttl.WriteTime(it)
		assert.False(t, ok, "WriteTime of %q in a family without a strategy", it.Column)
	}
}

// TestWriteTimesAfterReadModifyWrite checks that a read-modify-write that
// replaces a cell in place (the column's newest cell is stamped in the
// future) leaves no companion describing the old value.
func TestWriteTimesAfterReadModifyWrite(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, _ := testkit.NewTable(t, clock, map[string]ttl.Strategy{"d": ttl.DefaultExpiration(time.Hour)}, nil, ttl.OtherFamilies(), ttl.RecordWriteTime())
	m := ttl.NewMutation()
	m.Set("d", "n", binary.BigEndian.AppendUint64(nil, 1), ttl.For(1000*time.Hour))
	m.Set("d", "other", []byte("x"), ttl.Default)
	require.NoError(t, tbl.Apply(ctx, "r", m))
	clock.Advance(time.Minute)
	rmw := ttl.NewReadModifyWrite()
	rmw.Increment("d", "n", 1)
	_, err := tbl.ApplyReadModifyWrite(ctx, "r", rmw)
	require.NoError(t, err)
	r, err := tbl.ReadRow(ctx, "r", ttl.WithWriteTimes())
	require.NoError(t, err)
	for _, it := range r["d"] {
		_, ok := ttl.WriteTime(it)
		assert.Equal(t, it.Column == "d:other", ok, "WriteTime(%s = %x)", it.Column, it.Value)
	}
}
