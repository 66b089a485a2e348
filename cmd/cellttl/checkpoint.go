package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/lease"
	"github.com/cellttl/ttl/scan"
)

// bigtablePrefix starts a -checkpoint kept in a Bigtable row.
const bigtablePrefix = "bigtable:"

// checkpointRow splits -checkpoint bigtable:TABLE/KEY into its table and
// row key, and reports false for a file.
func checkpointRow(arg string) (table, key string, ok bool, err error) {
	rest, ok := strings.CutPrefix(arg, bigtablePrefix)
	if !ok {
		return "", "", false, nil
	}
	table, key, _ = strings.Cut(rest, "/")
	if table == "" || key == "" {
		return "", "", true, fmt.Errorf("-checkpoint %s: want bigtable:TABLE/KEY, a row of a table in the instance (create it: cbt createtable TABLE families=%s:maxversions=1)",
			arg, lease.Family)
	}
	return table, key, true, nil
}

// fileCheckpoint returns the checkpoint -checkpoint names when it is a
// file, and nil when it names none or a Bigtable row (openCheckpoint's).
func (c *config) fileCheckpoint() scan.Checkpoint {
	if c.checkpoint == "" || strings.HasPrefix(c.checkpoint, bigtablePrefix) {
		return nil
	}
	return scan.FileCheckpoint(c.checkpoint)
}

// openCheckpoint returns the checkpoint -checkpoint names: a row of a
// table in the instance (bigtable:TABLE/KEY), opened on admin and client,
// whose lease is measured on now; a file; or nil for none.
func (c *config) openCheckpoint(ctx context.Context, admin *bigtable.AdminClient, client *bigtable.Client, now func() time.Time) (scan.Checkpoint, error) {
	table, key, ok, err := checkpointRow(c.checkpoint)
	if err != nil || !ok {
		return c.fileCheckpoint(), err
	}
	return lease.Open(ctx, admin, client.Open(table), table, key, lease.Options{Now: now})
}
