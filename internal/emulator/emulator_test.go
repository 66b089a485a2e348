package emulator_test

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl/internal/emulator"
)

// families returns each family of table with its GC policy as the admin
// API reports it.
func families(t *testing.T, e *emulator.Emulator, table string) map[string]string {
	t.Helper()
	info, err := e.Admin.TableInfo(context.Background(), table)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range info.FamilyInfos {
		out[f.Name] = f.GCPolicy
	}
	return out
}

// TestCreateTable checks that CreateTable creates the families, sets the
// GC policy of those that have one and leaves the others without (the
// admin API reports "<never>"), and
// returns the table opened for reads and writes.
func TestCreateTable(t *testing.T) {
	ctx := context.Background()
	e, err := emulator.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if !strings.HasPrefix(e.Addr, "127.0.0.1:") && !strings.HasPrefix(e.Addr, "[::1]:") {
		t.Errorf("Addr = %q, want a local host:port", e.Addr)
	}

	tbl, err := e.CreateTable(ctx, "t", map[string]bigtable.GCPolicy{
		"versions": bigtable.MaxVersionsPolicy(2),
		"age":      bigtable.MaxAgePolicy(time.Hour),
		"plain":    nil,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := families(t, e, "t")
	want := map[string]string{"versions": "versions() > 2", "age": "age() > 1h", "plain": "<never>"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("families = %v, want %v", got, want)
	}

	m := bigtable.NewMutation()
	m.Set("plain", "c", bigtable.Time(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)), []byte("v"))
	if err := tbl.Apply(ctx, "row", m); err != nil {
		t.Fatal(err)
	}
	r, err := tbl.ReadRow(ctx, "row")
	if err != nil {
		t.Fatal(err)
	}
	if len(r["plain"]) != 1 || string(r["plain"][0].Value) != "v" {
		t.Errorf("read back %v, want the one cell written", r)
	}

	// No families: a table all the same.
	if _, err := e.CreateTable(ctx, "empty", nil); err != nil {
		t.Fatal(err)
	}
	if got := families(t, e, "empty"); len(got) != 0 {
		t.Errorf("families of a table created without = %v", got)
	}
}

// TestCreateTableExists: creating a table twice fails and leaves the first
// as it was.
func TestCreateTableExists(t *testing.T) {
	e := emulator.StartForTest(t)
	e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": bigtable.MaxVersionsPolicy(1)})
	_, err := e.CreateTable(context.Background(), "t", map[string]bigtable.GCPolicy{"g": nil})
	if status.Code(err) != codes.AlreadyExists {
		t.Fatalf("second CreateTable: %v, want AlreadyExists", err)
	}
	if got := families(t, e, "t"); fmt.Sprint(got) != "map[f:versions() > 1]" {
		t.Errorf("families after the refused CreateTable = %v", got)
	}
}

// failing is a dial option that fails the n-th ModifyColumnFamilies call
// (counting from 1), which CreateColumnFamily and SetGCPolicy both make.
func failing(n int) (grpc.DialOption, error) {
	injected := status.Error(codes.PermissionDenied, "injected")
	var mu sync.Mutex
	calls := 0
	return grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if strings.HasSuffix(method, "/ModifyColumnFamilies") {
			mu.Lock()
			calls++
			fail := calls == n
			mu.Unlock()
			if fail {
				return injected
			}
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}), injected
}

// TestCreateTableFails checks that CreateTable returns the error of each
// call it makes, and so that Start passes its dial options on: the
// families are made in the order of their names, each family's creation
// followed by its GC policy.
func TestCreateTableFails(t *testing.T) {
	policies := map[string]bigtable.GCPolicy{"b": nil, "a": bigtable.MaxVersionsPolicy(1)}
	for n, made := range []string{
		"",                 // 1: creating a
		"a:<never>",        // 2: a's policy
		"a:versions() > 1", // 3: creating b
	} {
		opt, injected := failing(n + 1)
		e := emulator.StartForTest(t, opt)
		tbl, err := e.CreateTable(context.Background(), "t", policies)
		if status.Code(err) != status.Code(injected) || tbl != nil {
			t.Fatalf("failing call %d: CreateTable = %v, %v; want the injected error", n+1, tbl, err)
		}
		var got []string
		for f, p := range families(t, e, "t") {
			got = append(got, f+":"+p)
		}
		sort.Strings(got)
		if strings.Join(got, " ") != made {
			t.Errorf("failing call %d: families %q, want %q", n+1, got, made)
		}
	}
}

// TestConnect checks that Connect reaches a server it did not start, and
// that closing it leaves the server running, while closing what Start
// returned stops it.
func TestConnect(t *testing.T) {
	ctx := context.Background()
	server, err := emulator.Start()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.CreateTable(ctx, "t", nil); err != nil {
		t.Fatal(err)
	}

	other, err := emulator.Connect(server.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if other.Addr != server.Addr {
		t.Errorf("Addr = %q, want %q", other.Addr, server.Addr)
	}
	tables, err := other.Admin.Tables(ctx)
	if err != nil || fmt.Sprint(tables) != "[t]" {
		t.Errorf("tables seen by the second connection: %v, %v; want [t]", tables, err)
	}
	if err := other.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	// A second Close reports the clients already closed.
	if err := other.Close(); err == nil {
		t.Error("second Close: no error")
	}
	if _, err := server.Admin.Tables(ctx); err != nil {
		t.Errorf("the server after closing another connection: %v", err)
	}

	if err := server.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	after, err := emulator.Connect(server.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := after.Admin.CreateTable(ctx, "u"); err == nil {
		t.Error("the server answered after Close")
	}
}

// TestConnectBadAddress: an address gRPC cannot parse is refused at once,
// naming it.
func TestConnectBadAddress(t *testing.T) {
	e, err := emulator.Connect("localhost:%zz")
	if err == nil {
		e.Close()
		t.Fatal("Connect accepted localhost:%zz")
	}
	if !strings.Contains(err.Error(), "connecting to the emulator at localhost:%zz") {
		t.Errorf("error %q does not name the address", err)
	}
}

// TestStartBadOption: Start fails when gRPC refuses its dial options.
func TestStartBadOption(t *testing.T) {
	e, err := emulator.Start(grpc.WithDefaultServiceConfig("{"))
	if err == nil {
		e.Close()
		t.Fatal("Start accepted a service config that is not JSON")
	}
	if !strings.Contains(err.Error(), "connecting to the emulator at ") {
		t.Errorf("error %q does not say what failed", err)
	}
}

// fakeTB records what the ForTest helpers do with a test: its Fatal
// (which ends the calling goroutine, as testing's does) and its cleanups.
type fakeTB struct {
	testing.TB
	fatal    string
	cleanups []func()
}

func (*fakeTB) Helper()                        { /* nothing to mark */ }
func (f *fakeTB) Cleanup(fn func())            { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Fatal(args ...any)            { f.fatal = fmt.Sprint(args...); runtime.Goexit() }
func (f *fakeTB) Fatalf(s string, args ...any) { f.Fatal(fmt.Sprintf(s, args...)) }

// run calls fn with tb in a goroutine of its own, as a test runs, and
// returns once it has returned or called Fatal.
func (f *fakeTB) run(fn func(testing.TB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
}

// TestForTest checks that the ForTest helpers fail the test on error and
// close what they opened when the test ends.
func TestForTest(t *testing.T) {
	ctx := context.Background()
	var tb fakeTB
	var e *emulator.Emulator
	tb.run(func(tb testing.TB) {
		e = emulator.StartForTest(tb)
		e.TableForTest(tb, "t", map[string]bigtable.GCPolicy{"f": nil})
	})
	if tb.fatal != "" || len(tb.cleanups) != 1 {
		t.Fatalf("StartForTest and TableForTest: fatal %q, %d cleanups; want none and 1", tb.fatal, len(tb.cleanups))
	}

	var conn fakeTB
	var c *emulator.Emulator
	conn.run(func(tb testing.TB) { c = emulator.ConnectForTest(tb, e.Addr) })
	if conn.fatal != "" || len(conn.cleanups) != 1 {
		t.Fatalf("ConnectForTest: fatal %q, %d cleanups; want none and 1", conn.fatal, len(conn.cleanups))
	}
	conn.run(func(tb testing.TB) {
		c.TableForTest(tb, "t", nil)
		t.Error("TableForTest of an existing table returned")
	})
	if !strings.Contains(conn.fatal, "AlreadyExists") {
		t.Errorf("TableForTest of an existing table: fatal %q, want AlreadyExists", conn.fatal)
	}
	conn.cleanups[0]()
	if _, err := c.Admin.Tables(ctx); err == nil {
		t.Error("ConnectForTest's clients still open after the cleanup")
	}
	if _, err := e.Admin.Tables(ctx); err != nil {
		t.Errorf("ConnectForTest's cleanup stopped the server: %v", err)
	}

	tb.cleanups[0]()
	if _, err := e.Admin.Tables(ctx); err == nil {
		t.Error("StartForTest's clients still open after the cleanup")
	}

	var bad fakeTB
	bad.run(func(tb testing.TB) {
		emulator.ConnectForTest(tb, "localhost:%zz")
		t.Error("ConnectForTest of a bad address returned")
	})
	if !strings.Contains(bad.fatal, "localhost:%zz") || len(bad.cleanups) != 0 {
		t.Errorf("ConnectForTest of a bad address: fatal %q, %d cleanups", bad.fatal, len(bad.cleanups))
	}
}
