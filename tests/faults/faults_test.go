package faults_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	btpb "cloud.google.com/go/bigtable/apiv2/bigtablepb"
	"cloud.google.com/go/bigtable/bttest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
)

// This file checks what a caller learns when things go wrong: per-row
// failures, a cancelled or expired context, the emulator closed in the
// middle of ApplyBulk. Table.ApplyBulk promises: "errs is nil when every
// row was written; otherwise it has one entry per row, nil for each row
// written. A non-nil err means the request failed as a whole ...: no row
// is known to be written, and every row sent has an error in errs." So a
// row with a nil error must be stored, and a row that is not stored must
// have an error: never a silent success. It also runs many goroutines
// through one Table, for -race.

const mutateRows = "/google.bigtable.v2.Bigtable/MutateRows"

// faultServer is a bttest server the test can close, with clients on it.
type faultServer struct {
	*emulator.Emulator
	srv  *bttest.Server
	once sync.Once
}

// Close closes the server once; the clients then fail with Unavailable.
func (f *faultServer) Close() { f.once.Do(f.srv.Close) }

func newFaultServer(t testing.TB, srvOpts []grpc.ServerOption, dialOpts ...grpc.DialOption) *faultServer {
	t.Helper()
	srv, err := bttest.NewServer("localhost:0", srvOpts...)
	if err != nil {
		t.Fatal(err)
	}
	f := &faultServer{srv: srv}
	t.Cleanup(f.Close)
	f.Emulator = emulator.ConnectForTest(t, srv.Addr, dialOpts...)
	return f
}

// bulk is an ApplyBulk batch and what the test knows about each row.
type bulk struct {
	rows []string
	muts []*ttl.Mutation
	bad  map[int]error // rows whose recipe the library must refuse, and the sentinel
}

// newBulk makes n rows "k0000".. of one Set each (cells per row Sets with
// RecordWriteTime off); every badEvery-th row has a recipe the library
// refuses, alternating an expired lifetime and a nil mutation.
func newBulk(n, cellsPerRow, badEvery int) bulk {
	b := bulk{bad: map[int]error{}}
	for i := range n {
		b.rows = append(b.rows, fmt.Sprintf("k%04d", i))
		m := ttl.NewMutation()
		for c := range cellsPerRow {
			m.Set("f", fmt.Sprint(c), []byte("v"), ttl.For(time.Hour))
		}
		switch {
		case badEvery > 0 && i%badEvery == badEvery-1 && (i/badEvery)%2 == 0:
			m.Set("f", "late", nil, ttl.For(-time.Second))
			b.bad[i] = ttl.ErrExpired
		case badEvery > 0 && i%badEvery == badEvery-1:
			m = nil
			b.bad[i] = ttl.ErrInvalidMutation
		}
		b.muts = append(b.muts, m)
	}
	return b
}

// storedRows returns the rows raw holds.
func storedRows(t testing.TB, raw *bigtable.Table) map[string]bool {
	t.Helper()
	ctx := context.Background()
	out := map[string]bool{}
	if err := raw.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		out[r.Key()] = true
		return true
	}, bigtable.RowFilter(bigtable.StripValueFilter())); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkBulk checks ApplyBulk's result against the contract: each refused
// recipe has its sentinel; a row with a nil error is written (written
// reports whether it is, nil when the server cannot be asked); with a
// whole-request error, every row has an error.
func checkBulk(t *testing.T, b bulk, errs []error, err error, written func(row string) bool) {
	t.Helper()
	if errs == nil {
		if err != nil {
			t.Fatalf("ApplyBulk = nil, %v: a failed request without per-row errors", err)
		}
		if len(b.bad) > 0 {
			t.Fatalf("ApplyBulk = nil errs, with %d bad recipes", len(b.bad))
		}
	} else if len(errs) != len(b.rows) {
		t.Fatalf("ApplyBulk returned %d errors for %d rows", len(errs), len(b.rows))
	}
	for i, row := range b.rows {
		var e error
		if errs != nil {
			e = errs[i]
		}
		switch want, bad := b.bad[i]; {
		case bad && !errors.Is(e, want):
			t.Errorf("row %d (%s): error %v, want %v", i, row, e, want)
		case e == nil && err != nil:
			t.Errorf("row %d (%s): no error although the request failed with %v", i, row, err)
		case e == nil && written != nil && !written(row):
			t.Errorf("row %d (%s): no error, but not written", i, row)
		}
	}
}

// rowFaults fails chosen rows of MutateRows requests on the client side:
// their entries are held back from the server and answered with an error,
// at their index, as Bigtable answers a row it could not write.
type rowFaults struct {
	mu   sync.Mutex
	fail map[string]codes.Code // by row key
	once bool                  // fail each row the first time only
	sent [][]string            // the rows of each request that reached the server
}

func (f *rowFaults) take(row string) (codes.Code, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	code, ok := f.fail[row]
	if ok && f.once {
		delete(f.fail, row)
	}
	return code, ok
}

func (f *rowFaults) interceptor() grpc.DialOption {
	return grpc.WithStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
		streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		s, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil || method != mutateRows {
			return s, err
		}
		return &rowFaultStream{ClientStream: s, f: f}, nil
	})
}

type rowFaultStream struct {
	grpc.ClientStream
	f      *rowFaults
	kept   []int64 // the request's index of each entry sent on
	failed []*btpb.MutateRowsResponse_Entry
}

func (s *rowFaultStream) SendMsg(m any) error {
	req := m.(*btpb.MutateRowsRequest)
	out := &btpb.MutateRowsRequest{TableName: req.TableName, AuthorizedViewName: req.AuthorizedViewName, AppProfileId: req.AppProfileId}
	var keys []string
	for i, e := range req.Entries {
		if code, ok := s.f.take(string(e.RowKey)); ok {
			s.failed = append(s.failed, &btpb.MutateRowsResponse_Entry{Index: int64(i), Status: status.New(code, "injected failure").Proto()})
			continue
		}
		s.kept = append(s.kept, int64(i))
		out.Entries = append(out.Entries, e)
		keys = append(keys, string(e.RowKey))
	}
	s.f.mu.Lock()
	s.f.sent = append(s.f.sent, keys)
	s.f.mu.Unlock()
	return s.ClientStream.SendMsg(out)
}

func (s *rowFaultStream) RecvMsg(m any) error {
	if err := s.ClientStream.RecvMsg(m); err != nil {
		return err
	}
	res := m.(*btpb.MutateRowsResponse)
	for _, e := range res.Entries {
		e.Index = s.kept[e.Index]
	}
	res.Entries = append(res.Entries, s.failed...)
	s.failed = nil
	return nil
}

// TestApplyBulkRowErrors fails chosen rows on the wire, among rows whose
// recipes the library refuses itself, and checks that each error is
// reported at its row's index and that exactly the rows without an error
// are written.
func TestApplyBulkRowErrors(t *testing.T) {
	ctx := context.Background()
	faults := &rowFaults{fail: map[string]codes.Code{"k0002": codes.PermissionDenied, "k0006": codes.FailedPrecondition, "k0011": codes.PermissionDenied}}
	e := newFaultServer(t, nil, faults.interceptor())
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"f": ttl.OneSecond()}, ttl.WithClock(testkit.NewClock(testkit.Base).Now))
	if err != nil {
		t.Fatal(err)
	}
	b := newBulk(12, 2, 4) // rows 3 and 7 refused by the library, 11 too and failed on the wire if sent
	errs, err := tbl.ApplyBulk(ctx, b.rows, b.muts)
	if err != nil {
		t.Fatalf("ApplyBulk: %v", err)
	}
	have := storedRows(t, raw)
	checkBulk(t, b, errs, err, func(row string) bool { return have[row] })
	for i, row := range b.rows {
		code, injected := faults.fail[row]
		switch _, bad := b.bad[i]; {
		case bad:
		case injected && status.Code(errs[i]) != code:
			t.Errorf("row %d (%s): error %v, want the injected %v", i, row, errs[i], code)
		case !injected && errs[i] != nil:
			t.Errorf("row %d (%s): error %v, want none", i, row, errs[i])
		}
		if have[row] != (errs[i] == nil) {
			t.Errorf("row %d (%s): written = %v with error %v", i, row, have[row], errs[i])
		}
	}
	if want := [][]string{{"k0000", "k0001", "k0004", "k0005", "k0008", "k0009", "k0010"}}; fmt.Sprint(faults.sent) != fmt.Sprint(want) {
		t.Errorf("rows that reached the server: %v want %v", faults.sent, want)
	}
}

// TestApplyBulkRetriedRows fails rows once with a code the client retries:
// the retried rows are written and ApplyBulk reports full success.
func TestApplyBulkRetriedRows(t *testing.T) {
	ctx := context.Background()
	faults := &rowFaults{fail: map[string]codes.Code{"k0001": codes.Unavailable, "k0004": codes.Aborted}, once: true}
	e := newFaultServer(t, nil, faults.interceptor())
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"f": ttl.OneSecond()}, ttl.WithClock(testkit.NewClock(testkit.Base).Now))
	if err != nil {
		t.Fatal(err)
	}
	b := newBulk(6, 1, 0)
	errs, err := tbl.ApplyBulk(ctx, b.rows, b.muts)
	if errs != nil || err != nil {
		t.Fatalf("ApplyBulk = %v, %v want nil, nil", errs, err)
	}
	if have := storedRows(t, raw); len(have) != len(b.rows) {
		t.Errorf("stored rows %v, want all of %v", have, b.rows)
	}
	if len(faults.sent) != 2 || fmt.Sprint(faults.sent[1]) != "[k0001 k0004]" {
		t.Errorf("requests %v: want the two failed rows retried once", faults.sent)
	}
}

// TestApplyBulkContext checks a context already cancelled or past its
// deadline, and a deadline that passes while the server holds the request
// after writing it: every row sent gets an error, and the refused recipes
// keep their own.
func TestApplyBulkContext(t *testing.T) {
	ctx := context.Background()
	hold := make(chan struct{}) // closed when the server holds a request
	var holding atomic.Bool
	srvOpts := []grpc.ServerOption{grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if info.FullMethod != mutateRows || !holding.Load() {
			return handler(srv, ss)
		}
		return handler(srv, &heldStream{ServerStream: ss, held: hold})
	})}
	e := newFaultServer(t, srvOpts)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"f": ttl.OneSecond()}, ttl.WithClock(testkit.NewClock(testkit.Base).Now))
	if err != nil {
		t.Fatal(err)
	}
	b := newBulk(9, 1, 3)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	expired, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	for name, c := range map[string]context.Context{"cancelled": cancelled, "deadline passed": expired} {
		for _, b := range []bulk{b, newBulk(3, 1, 0)} { // with refused recipes and without
			errs, err := tbl.ApplyBulk(c, b.rows, b.muts)
			if !isContextErr(err, c.Err()) {
				t.Errorf("%s: ApplyBulk error %v, want %v", name, err, c.Err())
			}
			checkBulk(t, b, errs, err, nil)
			if have := storedRows(t, raw); len(have) != 0 {
				t.Errorf("%s: rows written: %v", name, have)
			}
		}
	}

	holding.Store(true)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	errs, err := tbl.ApplyBulk(short, b.rows, b.muts)
	<-hold
	if !isContextErr(err, context.DeadlineExceeded) {
		t.Errorf("ApplyBulk with a deadline that passes: error %v, want DeadlineExceeded", err)
	}
	checkBulk(t, b, errs, err, nil)
	if have := storedRows(t, raw); len(have) != len(b.rows)-len(b.bad) {
		t.Errorf("the server wrote %d rows before holding the answer, want %d", len(have), len(b.rows)-len(b.bad))
	}
}

// isContextErr reports whether err is the error of a context that is done
// with want (context.Canceled or context.DeadlineExceeded). The Bigtable
// client returns it as a gRPC status with the matching code
// (codes.Canceled, codes.DeadlineExceeded), for which errors.Is does not
// hold on the client version go.mod requires: either form passes.
func isContextErr(err, want error) bool {
	return errors.Is(err, want) || status.Code(err) == status.FromContextError(want).Code()
}

// heldStream holds a MutateRows answer until the client gives up.
type heldStream struct {
	grpc.ServerStream
	held chan struct{}
}

func (s *heldStream) SendMsg(any) error {
	close(s.held)
	<-s.Context().Done()
	return s.Context().Err()
}

// TestApplyBulkServerClosedMidRequest closes the emulator while it
// applies a large batch: it has written the first half of the rows when
// it goes away. Every row, written or not, gets an error: none is
// reported written.
func TestApplyBulkServerClosedMidRequest(t *testing.T) {
	ctx := context.Background()
	var (
		f        *faultServer
		applied  []string
		giveUp   = make(chan struct{})
		giveUpAt = 300 * time.Millisecond // how long the client keeps retrying after the close
	)
	c, cancel := context.WithCancel(ctx)
	defer cancel()
	srvOpts := []grpc.ServerOption{grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if info.FullMethod != mutateRows {
			return handler(srv, ss)
		}
		return handler(srv, &crashingStream{ServerStream: ss, applied: &applied, crash: func() {
			go f.Close()
			time.AfterFunc(giveUpAt, func() { cancel(); close(giveUp) })
		}})
	})}
	f = newFaultServer(t, srvOpts)
	raw := f.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(time.Hour)}, ttl.WithClock(testkit.NewClock(testkit.Base).Now))
	if err != nil {
		t.Fatal(err)
	}
	b := newBulk(2000, 5, 97)
	errs, err := tbl.ApplyBulk(c, b.rows, b.muts)
	<-giveUp
	if err == nil {
		t.Fatal("ApplyBulk succeeded although the server went away")
	}
	t.Logf("ApplyBulk: %v (%d rows written before the close)", err, len(applied))
	if len(applied) == 0 || len(applied) >= len(b.rows)-len(b.bad) {
		t.Errorf("the server wrote %d rows before it closed, want some but not all", len(applied))
	}
	checkBulk(t, b, errs, err, nil)
}

// crashingStream lets the server apply the first half of a MutateRows
// request, then crashes it before it answers.
type crashingStream struct {
	grpc.ServerStream
	applied *[]string
	crash   func()
}

func (s *crashingStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	req := m.(*btpb.MutateRowsRequest)
	req.Entries = req.Entries[:len(req.Entries)/2]
	for _, e := range req.Entries {
		*s.applied = append(*s.applied, string(e.RowKey))
	}
	return nil
}

func (s *crashingStream) SendMsg(any) error {
	s.crash()
	<-s.Context().Done()
	return s.Context().Err()
}

// TestApplyBulkServerClosedBetweenGroups sends a batch too large for one
// request: the client splits it in groups of at most 100,000 mutations.
// The emulator answers the first request and is closed when the second
// arrives. The rows of the first are written and reported so, each at its
// own index among the refused recipes; every other row has an error.
func TestApplyBulkServerClosedBetweenGroups(t *testing.T) {
	if testing.Short() {
		t.Skip("writes over 100,000 cells")
	}
	ctx := context.Background()
	var (
		f        *faultServer
		mu       sync.Mutex
		requests [][]string // the rows of each request the server saw
		giveUp   = make(chan struct{})
	)
	c, cancel := context.WithCancel(ctx)
	defer cancel()
	srvOpts := []grpc.ServerOption{grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if info.FullMethod != mutateRows {
			return handler(srv, ss)
		}
		mu.Lock()
		n := len(requests)
		requests = append(requests, nil)
		mu.Unlock()
		if n > 0 {
			go f.Close()
			time.AfterFunc(300*time.Millisecond, func() { cancel(); close(giveUp) })
			return status.Error(codes.Unavailable, "emulator closed")
		}
		return handler(srv, &rowRecordingStream{ServerStream: ss, rows: &requests[0], mu: &mu})
	})}
	f = newFaultServer(t, srvOpts)
	raw := f.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"f": ttl.OneSecond()}, ttl.WithClock(testkit.NewClock(testkit.Base).Now))
	if err != nil {
		t.Fatal(err)
	}
	b := newBulk(1100, 100, 13) // 1016 rows sent: 1000 in the first request, 16 in the second
	errs, err := tbl.ApplyBulk(c, b.rows, b.muts)
	<-giveUp
	if err != nil {
		t.Fatalf("ApplyBulk failed as a whole (%v); want per-row errors", err)
	}
	mu.Lock()
	first := map[string]bool{}
	for _, row := range requests[0] {
		first[row] = true
	}
	mu.Unlock()
	if len(first) != 1000 {
		t.Fatalf("the first request wrote %d rows, want 1000", len(first))
	}
	checkBulk(t, b, errs, err, func(row string) bool { return first[row] })
	var reported int
	for i := range errs {
		if errs[i] == nil {
			reported++
		} else if _, bad := b.bad[i]; !bad && status.Code(errs[i]) != codes.Unavailable && status.Code(errs[i]) != codes.Canceled {
			t.Errorf("row %d: error %v, want Unavailable or Canceled", i, errs[i])
		}
	}
	if reported != len(first) {
		t.Errorf("%d rows reported written, want the %d of the first request", reported, len(first))
	}
}

// rowRecordingStream records the rows of the MutateRows request.
type rowRecordingStream struct {
	grpc.ServerStream
	mu   *sync.Mutex
	rows *[]string
}

func (s *rowRecordingStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	if err == nil {
		s.mu.Lock()
		for _, e := range m.(*btpb.MutateRowsRequest).Entries {
			*s.rows = append(*s.rows, string(e.RowKey))
		}
		s.mu.Unlock()
	}
	return err
}

// TestCallsWithDoneContext checks that the other calls report a cancelled
// context and write nothing. (The read-modify-write, allowed under
// DefaultExpiration, fails on its first request, which purges expired
// cells.)
func TestCallsWithDoneContext(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, raw := testkit.NewTable(t, clock, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(time.Hour)}, nil)
	c, cancel := context.WithCancel(ctx)
	cancel()
	for name, call := range map[string]func() error{
		"Apply": func() error { return tbl.Apply(c, "r", testkit.Set("f", "c", "v", ttl.For(time.Hour))) },
		"Apply(cond)": func() error {
			return tbl.Apply(c, "r", ttl.NewCondMutation(nil, nil, testkit.Set("f", "c", "v", ttl.For(time.Hour))))
		},
		"ReadRow": func() error { _, err := tbl.ReadRow(c, "r"); return err },
		"ReadRows": func() error {
			return tbl.ReadRows(c, bigtable.InfiniteRange(""), func(bigtable.Row) bool { return true })
		},
		"ApplyReadModifyWrite": func() error {
			m := ttl.NewReadModifyWrite()
			m.Increment("f", "n", 1)
			_, err := tbl.ApplyReadModifyWrite(c, "r", m)
			return err
		},
	} {
		if err := call(); !isContextErr(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: error %v, want %v", name, err, context.Canceled)
		}
	}
	if have := storedRows(t, raw); len(have) != 0 {
		t.Errorf("rows written: %v", have)
	}
}

// TestConcurrentWritersAndReaders runs goroutines that write (Apply and
// ApplyBulk) and read (ReadRow and ReadRows, with write times) through one
// Table while they move one fake clock forward, and checks each read
// against what was acknowledged before it began: a returned cell had not
// expired when the read began; a cell acknowledged before it that expires
// after it ended is returned; a column of sequence numbers returns its
// newest versions. Run it with -race.
//
// The emulator itself races when a column is created while another
// request reads the row (bttest shares a row's sorted column names between
// the row and the copy a read works on), so every column exists before the
// goroutines start, and they neither create nor delete columns.
func TestConcurrentWritersAndReaders(t *testing.T) {
	ctx := context.Background()
	const (
		workers    = 8
		iterations = 16
		versions   = 3
	)
	rows := []string{"r0", "r1", "r2", "r3"}
	families := []string{"os", "de", "sn", "un"}
	clock := testkit.NewClock(testkit.Base)
	managed := map[string]ttl.Strategy{"os": ttl.OneSecond(), "de": ttl.DefaultExpiration(time.Minute), "sn": ttl.SequenceNumbers(versions)}
	tbl, _ := testkit.NewTable(t, clock, managed, []string{"un"}, ttl.OtherFamilies("un"), ttl.RecordWriteTime())

	// written is one cell a worker wrote, in its own column of each family.
	type written struct {
		row, fam, col, value string
		expiry               time.Time // time families
		version              int64     // sequence numbers
	}
	var (
		mu    sync.Mutex
		acked = map[string]written{} // acknowledged writes, by value
		tried = map[string]written{} // every write attempted, by value
		taken = map[string]bool{}    // timestamps taken, so that none is replaced
		seq   atomic.Int64
	)
	anchors := ttl.NewMutation() // every column, before the workers start
	for g := range workers {
		col := fmt.Sprint(g)
		anchors.Set("os", col, []byte("anchor"), ttl.Forever)
		anchors.Set("de", col, []byte("anchor"), ttl.Forever)
		anchors.Set("sn", col, []byte("anchor"), ttl.Version(0))
		anchors.Set("un", col, []byte("anchor"), ttl.Default)
	}
	for _, row := range rows {
		if err := tbl.Apply(ctx, row, anchors); err != nil {
			t.Fatal(err)
		}
	}

	// check checks a row read between t0 and t1 against the writes
	// acknowledged before t0.
	check := func(g int, r bigtable.Row, before map[string]written, t0, t1 time.Time) {
		got := map[string]bool{}
		returned := map[string][]int64{} // sequence numbers, by column
		for fam, items := range r {
			for _, it := range items {
				v := string(it.Value)
				got[v] = true
				if _, ok := ttl.WriteTime(it); !ok && fam != "un" {
					t.Errorf("worker %d: no write time for %q", g, v)
				}
				if v == "anchor" {
					if fam == "sn" {
						returned[it.Column] = append(returned[it.Column], 0)
					}
					continue
				}
				mu.Lock()
				w, ok := tried[v]
				mu.Unlock()
				switch {
				case !ok:
					t.Errorf("worker %d: read %q, never written", g, v)
				case w.fam == "sn":
					returned[it.Column] = append(returned[it.Column], w.version)
				case w.fam != "un" && !w.expiry.After(t0):
					t.Errorf("worker %d: read %q, which expired at %v, before the read began at %v", g, v, w.expiry, t0)
				}
			}
		}
		ackedVersions := map[string][]int64{}
		for g := range workers {
			ackedVersions[fmt.Sprintf("sn:%d", g)] = []int64{0}
		}
		for v, w := range before {
			switch {
			case w.row != r.Key():
			case w.fam == "sn":
				ackedVersions["sn:"+w.col] = append(ackedVersions["sn:"+w.col], w.version)
			case w.fam == "os" || w.fam == "de":
				if w.expiry.After(t1) && !got[v] {
					t.Errorf("worker %d: missed %q, live until %v, acknowledged before the read", g, v, w.expiry)
				}
			}
		}
		for col, acked := range ackedVersions {
			slices.Sort(acked)
			got := returned[col]
			if len(got) > versions || len(got) < min(versions, len(acked)) {
				t.Errorf("worker %d: %s returned versions %v; acknowledged before: %v", g, col, got, acked)
			} else if len(acked) >= versions && slices.Min(got) < acked[len(acked)-versions] {
				t.Errorf("worker %d: %s returned versions %v, older than the newest %d acknowledged before: %v", g, col, got, versions, acked)
			}
		}
	}

	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			col := fmt.Sprint(g)
			for i := range iterations {
				// Write a cell in each family of one row or a few, with
				// expiries within the next 300ms.
				now := clock.Now()
				var keys []string
				var muts []*ttl.Mutation
				var batch [][]written
				for _, row := range rows[:1+r.IntN(len(rows))] {
					m := ttl.NewMutation()
					var ws []written
					for _, fam := range families {
						w := written{row: row, fam: fam, col: col, value: fmt.Sprintf("%d.%d.%s.%s", g, i, row, fam)}
						switch fam {
						case "sn":
							w.version = seq.Add(1)
							m.Set(fam, col, []byte(w.value), ttl.Version(w.version))
						case "un":
							m.Set(fam, col, []byte(w.value), ttl.Default)
						default:
							w.expiry = now.Add(time.Duration(1+r.IntN(300)) * time.Millisecond).Truncate(time.Millisecond)
							mu.Lock()
							for taken[row+fam+col+w.expiry.String()] {
								w.expiry = w.expiry.Add(time.Millisecond)
							}
							taken[row+fam+col+w.expiry.String()] = true
							mu.Unlock()
							m.Set(fam, col, []byte(w.value), ttl.Until(w.expiry))
						}
						mu.Lock()
						tried[w.value] = w
						mu.Unlock()
						ws = append(ws, w)
					}
					keys = append(keys, row)
					muts = append(muts, m)
					batch = append(batch, ws)
				}
				var errs []error
				var err error
				if len(muts) == 1 && r.IntN(2) == 0 {
					err = tbl.Apply(ctx, keys[0], muts[0])
					errs = []error{err}
				} else {
					errs, err = tbl.ApplyBulk(ctx, keys, muts)
				}
				for j, ws := range batch {
					e := err
					if errs != nil {
						e = errs[j]
					}
					switch {
					case e == nil:
						mu.Lock()
						for _, w := range ws {
							acked[w.value] = w
						}
						mu.Unlock()
					case !errors.Is(e, ttl.ErrExpired): // the clock may pass an expiry before the write reads it
						t.Errorf("worker %d: %v", g, e)
					}
				}

				// Read, knowing what was acknowledged before.
				mu.Lock()
				before := make(map[string]written, len(acked))
				for v, w := range acked {
					before[v] = w
				}
				mu.Unlock()
				t0 := clock.Now()
				var got []bigtable.Row
				if r.IntN(4) > 0 {
					var row bigtable.Row
					row, err = tbl.ReadRow(ctx, testkit.Pick(r, rows...), ttl.WithWriteTimes())
					got = append(got, row)
				} else {
					err = tbl.ReadRows(ctx, bigtable.InfiniteRange(""), func(row bigtable.Row) bool {
						got = append(got, row)
						return true
					}, ttl.WithWriteTimes())
				}
				t1 := clock.Now()
				if err != nil {
					t.Errorf("worker %d: %v", g, err)
				}
				for _, row := range got {
					check(g, row, before, t0, t1)
				}
				clock.Advance(time.Duration(r.IntN(3000)) * time.Microsecond)
			}
		}()
	}
	wg.Wait()
	if len(acked) < workers*iterations*len(families) {
		t.Errorf("%d cells acknowledged, want at least %d", len(acked), workers*iterations*len(families))
	}
}
