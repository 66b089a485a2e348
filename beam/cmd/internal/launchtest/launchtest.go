// Package launchtest is what the Beam commands' tests share: an
// in-process emulator holding the table they run against.
package launchtest

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"cloud.google.com/go/bigtable/bttest"
)

// Emulator starts an in-process emulator for t, points every client at
// it (BIGTABLE_EMULATOR_HOST, project "proj", instance "inst"), creates
// table "events" with family "sess", and writes to each row of cells one
// cell sess:c = "v" stamped as given. It returns the table, whose client
// closes when t ends.
func Emulator(t testing.TB, cells map[string]time.Time) *bigtable.Table {
	t.Helper()
	srv, err := bttest.NewServer("localhost:0")
	must(t, err)
	t.Cleanup(srv.Close)
	t.Setenv("BIGTABLE_EMULATOR_HOST", srv.Addr)
	ctx := context.Background()
	admin, err := bigtable.NewAdminClient(ctx, "proj", "inst")
	must(t, err)
	defer admin.Close()
	must(t, admin.CreateTable(ctx, "events"))
	must(t, admin.CreateColumnFamily(ctx, "events", "sess"))
	client, err := bigtable.NewClient(ctx, "proj", "inst")
	must(t, err)
	t.Cleanup(func() { client.Close() })
	tbl := client.Open("events")
	for row, at := range cells {
		m := bigtable.NewMutation()
		m.Set("sess", "c", bigtable.Time(at), []byte("v"))
		must(t, tbl.Apply(ctx, row, m))
	}
	return tbl
}

// must fails t with err, if any.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
