// Package emulator runs the Bigtable emulator (bttest) in process and
// connects Bigtable clients to it: the one setup of the module's tests,
// its examples and the example programs.
//
// Start and Connect are for code without a testing.TB (examples,
// programs): they return errors and the caller closes. StartForTest and
// ConnectForTest fail the test instead and close with t.Cleanup.
//
// The emulator starts its garbage collection loop only once a column
// family is modified (created or given a GC policy) by a call of its own:
// CreateTable, which adds a table's families one call each, starts it; a
// table created with its families in one call does not.
package emulator

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"

	"cloud.google.com/go/bigtable"
	"cloud.google.com/go/bigtable/bttest"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Project and Instance name the emulated instance the clients use.
const (
	Project  = "proj"
	Instance = "inst"
)

// An Emulator is a bttest server, or the address of one, with an admin
// client and a data client connected to it.
type Emulator struct {
	Addr   string                // host:port of the server
	Admin  *bigtable.AdminClient // table admin client
	Client *bigtable.Client      // data client, with metrics export off

	srv *bttest.Server // nil when the caller runs the server
}

// Start starts a bttest server on a free local port and connects clients
// to it, adding opts to the dial options of their connections
// (interceptors, stats handlers, message sizes). Close stops it.
func Start(opts ...grpc.DialOption) (*Emulator, error) {
	srv, err := bttest.NewServer("localhost:0")
	if err != nil {
		return nil, fmt.Errorf("starting the emulator: %w", err)
	}
	e, err := Connect(srv.Addr, opts...)
	if err != nil {
		srv.Close()
		return nil, err
	}
	e.srv = srv
	return e, nil
}

// Connect connects clients to the emulator at addr, which the caller
// started and stops, adding opts to their connections' dial options.
// Close then closes the clients only.
func Connect(addr string, opts ...grpc.DialOption) (*Emulator, error) {
	ctx := context.Background()
	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)
	// One connection per client: a client closes its connection.
	adminConn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to the emulator at %s: %w", addr, err)
	}
	dataConn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		adminConn.Close()
		return nil, fmt.Errorf("connecting to the emulator at %s: %w", addr, err)
	}
	e := &Emulator{Addr: addr}
	e.Admin, err = bigtable.NewAdminClient(ctx, Project, Instance, option.WithGRPCConn(adminConn))
	if err == nil {
		e.Client, err = bigtable.NewClientWithConfig(ctx, Project, Instance,
			bigtable.ClientConfig{MetricsProvider: bigtable.NoopMetricsProvider{}}, option.WithGRPCConn(dataConn))
	}
	if err != nil {
		adminConn.Close()
		dataConn.Close()
		return nil, fmt.Errorf("clients of the emulator at %s: %w", addr, err)
	}
	return e, nil
}

// Close closes the clients and, if Start started it, the server. It
// returns the clients' errors.
func (e *Emulator) Close() error {
	err := errors.Join(e.Client.Close(), e.Admin.Close())
	if e.srv != nil {
		e.srv.Close()
	}
	return err
}

// CreateTable creates table name with the given families, one call each
// in the order of their names, and returns it opened on the data client.
// A family's GC policy is set by a call of its own; a nil policy leaves
// the family without GC.
func (e *Emulator) CreateTable(ctx context.Context, name string, families map[string]bigtable.GCPolicy) (*bigtable.Table, error) {
	if err := e.Admin.CreateTable(ctx, name); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(families))
	for f := range families {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		if err := e.Admin.CreateColumnFamily(ctx, name, f); err != nil {
			return nil, err
		}
		if p := families[f]; p != nil {
			if err := e.Admin.SetGCPolicy(ctx, name, f, p); err != nil {
				return nil, err
			}
		}
	}
	return e.Client.Open(name), nil
}

// StartForTest is Start for a test: it fails t on error and stops the
// emulator when the test ends.
func StartForTest(t testing.TB, opts ...grpc.DialOption) *Emulator {
	t.Helper()
	e, err := Start(opts...)
	return forTest(t, e, err)
}

// ConnectForTest is Connect for a test: it fails t on error and closes
// the clients when the test ends.
func ConnectForTest(t testing.TB, addr string, opts ...grpc.DialOption) *Emulator {
	t.Helper()
	e, err := Connect(addr, opts...)
	return forTest(t, e, err)
}

func forTest(t testing.TB, e *Emulator, err error) *Emulator {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TableForTest is CreateTable for a test: it fails t on error.
func (e *Emulator) TableForTest(t testing.TB, name string, families map[string]bigtable.GCPolicy) *bigtable.Table {
	t.Helper()
	tbl, err := e.CreateTable(context.Background(), name, families)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}
