// Package pipeline builds Apache Beam pipelines that do the table-wide work
// of github.com/cellttl/ttl past one machine: the table is split on its
// tablet boundaries (scan.Shards) when the pipeline is built, the shards
// are reshuffled so that the runner spreads them over its workers, and a
// DoFn reads each shard with the library's own per-row logic.
//
// Audit is audit.Auditor.Run's counts, from many workers; Sweep is one round of
// a sweep (sweep.Round), its events and optionally its deletions; Rewrite
// is move.Family.Rewrite's rewrite of a strategy move's old cells;
// AuditSchedule is audit.CountSchedule's count of a schedule table. ReadShards
// is the part every job shares: each takes its PCollection of shards, with
// a DoFn of its own that embeds the client and the reading of one shard.
package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"cloud.google.com/go/bigtable"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
)

// The package's DoFns, functions and combiners are registered by type
// (beam.RegisterType, beam.RegisterFunction), which the runner calls
// through reflection: about 0.2 µs more a call, a few calls per row
// deleted, beside a Bigtable write per row. The SDK's generic
// register.DoFnNxM would call them directly, but each instantiates its
// lifecycle wrappers for every arity: with them this package took 45 s and
// 2.7 GB to compile, 1 s without. Emitters and iterators, cheap to
// compile, keep their generic registration.
func init() {
	// Shards cross the Reshuffle as rows of two strings.
	beam.RegisterType(reflect.TypeOf(scan.Shard{}))
	beam.RegisterFunction(encodeJSON)
}

// A Table names a Bigtable table and the app profile to read it with. It is
// plain data, so that DoFns carry it to the workers, where each opens its
// own client (see Open). When BIGTABLE_EMULATOR_HOST is set, the clients
// connect to that emulator instead.
type Table struct {
	// Project is the Google Cloud project of the Bigtable instance.
	Project string `json:"project"`
	// Instance is the Bigtable instance's ID.
	Instance string `json:"instance"`
	// Table is the table's ID.
	Table string `json:"table"`
	// AppProfile is the app profile of every data client (see Open), such
	// as one that routes to a cluster that serves no application traffic:
	// the row-key sample, the workers' reads and Rewrite's conditional
	// writes go through it. "" is the instance's default profile. Admin
	// calls (the table's GC policies) take none.
	AppProfile string `json:"app_profile,omitempty"`
}

// check reports a Table that names no table.
func (t Table) check() error {
	if t.Project == "" || t.Instance == "" || t.Table == "" {
		return errors.New("pipeline: a table needs a project, an instance and a table ID")
	}
	return nil
}

// Open returns a data client for the table's instance, with its app
// profile. A pipeline exports no client-side metrics of its own: the
// runner's metrics and the DoFns' counters say what it did.
func (t Table) Open(ctx context.Context) (*bigtable.Client, error) {
	c, err := bigtable.NewClientWithConfig(ctx, t.Project, t.Instance,
		bigtable.ClientConfig{AppProfile: t.AppProfile, MetricsProvider: bigtable.NoopMetricsProvider{}})
	if err != nil {
		return nil, fmt.Errorf("pipeline: connecting to instance %s/%s: %w", t.Project, t.Instance, err)
	}
	return c, nil
}

// ReadShards splits the table on the boundaries Bigtable reports for its
// tablets (scan.Shards, read now, while the pipeline is built) and returns
// them as a PCollection of scan.Shard, reshuffled so that the runner hands
// them to many workers instead of reading them where they were created,
// and how many there are. Every row of the table is in exactly one shard.
//
// A DoFn that takes the shards embeds a shardReader, which opens a client
// on each worker in Setup and reads a shard with ReadRows(ctx,
// shard.RowSet(), ...).
func ReadShards(ctx context.Context, s beam.Scope, t Table) (beam.PCollection, int, error) {
	if err := t.check(); err != nil {
		return beam.PCollection{}, 0, err
	}
	client, err := t.Open(ctx)
	if err != nil {
		return beam.PCollection{}, 0, err
	}
	defer client.Close()
	shards, err := scan.Shards(ctx, client.Open(t.Table))
	if err != nil {
		return beam.PCollection{}, 0, fmt.Errorf("pipeline: table %q: %w", t.Table, err)
	}
	s = s.Scope("ReadShards")
	return beam.Reshuffle(s, beam.CreateList(s, shards)), len(shards), nil
}

// perShard is Audit's and Rewrite's pipeline: the table's shards
// (ReadShards), each given to fn in the scope name, and what fn emits
// combined into the table's by the combiner combine returns for the
// number of shards.
func perShard(ctx context.Context, s beam.Scope, t Table, name string, fn any, combine func(shards int) any) (beam.PCollection, error) {
	shards, n, err := ReadShards(ctx, s, t)
	if err != nil {
		return beam.PCollection{}, err
	}
	s = s.Scope(name)
	return beam.Combine(s, combine(n), beam.ParDo(s, fn, shards)), nil
}

// shardReader is what a DoFn over the shards of ReadShards embeds: the
// table, carried to the workers, and the client each worker opens for it.
// Its Setup and Teardown are the DoFn's; read reads one shard.
type shardReader struct {
	Table Table `json:"table"`

	client *bigtable.Client
	tbl    *bigtable.Table
}

// Setup opens the worker's client.
func (r *shardReader) Setup(ctx context.Context) error {
	c, err := r.Table.Open(ctx)
	if err != nil {
		return err
	}
	r.client, r.tbl = c, c.Open(r.Table.Table)
	return nil
}

// Teardown closes the worker's client.
func (r *shardReader) Teardown() error {
	if r.client == nil {
		return nil
	}
	err := r.client.Close()
	r.client, r.tbl = nil, nil
	return err
}

// read reads the rows of shard through filter and passes each to row,
// stopping at the first error row returns: scan.ReadShard, which counts
// one shard read as audit.Auditor.Run counts it. A shard not read to the end
// (an error) is an error: the DoFn fails its bundle, which the runner
// retries.
func (r *shardReader) read(ctx context.Context, shard scan.Shard, filter bigtable.Filter, row func(bigtable.Row) error) (scan.Stats, error) {
	read, err := scan.ReadShard(ctx, r.tbl, shard, filter, nil, row)
	if err != nil {
		return scan.Stats{}, fmt.Errorf("pipeline: shard %v: %w", shard, err)
	}
	read.ShardsRead = 1
	shardsRead.Inc(ctx, 1)
	rowsReturned.Inc(ctx, int64(read.RowsReturned))
	cellsReturned.Inc(ctx, int64(read.CellsReturned))
	return read, nil
}

// policies reads the GC policy of every family of the table (an admin
// call, made while a pipeline is built): policy.Tool.Policies.
func policies(ctx context.Context, t Table) (map[string]bigtable.GCPolicy, error) {
	admin, err := bigtable.NewAdminClient(ctx, t.Project, t.Instance)
	if err != nil {
		return nil, fmt.Errorf("pipeline: connecting to instance %s/%s: %w", t.Project, t.Instance, err)
	}
	defer admin.Close()
	tool, err := policy.New(admin, nil, t.Table, nil, policy.Options{})
	if err != nil {
		return nil, err
	}
	return tool.Policies(ctx)
}

// schedulePolicy returns the GC policy of the entries' family of the
// schedule table name of t: the one check of a schedule table that every
// job reading or writing one makes while the pipeline is built. It
// refuses t itself (its entries would be written among the data's rows),
// a table that does not exist, and one without the family (not a
// schedule).
func schedulePolicy(ctx context.Context, t Table, name string) (bigtable.GCPolicy, error) {
	if name == t.Table {
		return nil, fmt.Errorf("%w: pipeline: table %q: the schedule table must be another table: its entries would be written among the data's rows",
			ttl.ErrInvalidOption, t.Table)
	}
	st := t
	st.Table = name
	found, err := policies(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("pipeline: schedule table %q: %w", name, err)
	}
	gc, ok := found[schedule.Family]
	if !ok {
		return nil, fmt.Errorf("%w: pipeline: schedule table %q has no family %q: it is not a schedule (package schedule)",
			policy.ErrFamilyMismatch, name, schedule.Family)
	}
	return gc, nil
}

// parseFamilies parses what the DoFns carry of each family, as text (a
// strategy's spec, a GC policy as policy.Describe spells it), with parse,
// naming the family whose text does not parse: how each worker rebuilds
// what the pipeline was built with.
func parseFamilies[T any](texts map[string]string, parse func(string) (T, error)) (map[string]T, error) {
	out := make(map[string]T, len(texts))
	for name, text := range texts {
		v, err := parse(text)
		if err != nil {
			return nil, fmt.Errorf("pipeline: family %q: %w", name, err)
		}
		out[name] = v
	}
	return out, nil
}

// WriteJSON writes the elements of col, such as the one of Audit's or
// Rewrite's PCollection, to filename as indented JSON.
func WriteJSON(s beam.Scope, filename string, col beam.PCollection) {
	s = s.Scope("WriteJSON")
	textio.Write(s, filename, beam.ParDo(s, encodeJSON, col))
}

func encodeJSON(x beam.T) (string, error) {
	b, err := json.MarshalIndent(x, "", "  ")
	return string(b), err
}

// unmarshalJSON decodes a plain-data result that crossed a shuffle as its
// JSON: what each result's decoder does. (Beam names every instance of a
// generic function alike, so each coder is a function of its own that
// calls this.)
func unmarshalJSON[T any](b []byte) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		return nil, err
	}
	return v, nil
}

// The counters a runner shows while the job runs (Dataflow's job page).
var (
	shardsRead    = beam.NewCounter("cellttl", "shards_read")
	rowsReturned  = beam.NewCounter("cellttl", "rows_returned")
	cellsReturned = beam.NewCounter("cellttl", "cells_returned")
)
