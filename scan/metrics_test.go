package scan_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"cloud.google.com/go/bigtable"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/grpc/codes"

	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/meters"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/scan"
)

// sums collects reader's counters of the scan's meter: each counter's
// value, its unit and its attributes.
func sums(t *testing.T, reader *sdkmetric.ManualReader) (values map[string]int64, units map[string]string, attrs map[string]attribute.Set) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	values, units, attrs = map[string]int64{}, map[string]string{}, map[string]attribute.Set{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != scan.MeterName {
			t.Errorf("a meter named %q, want %q", sm.Scope.Name, scan.MeterName)
		}
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok || !sum.IsMonotonic || len(sum.DataPoints) != 1 {
				t.Fatalf("%s: %+v, want a counter with one series", m.Name, m.Data)
			}
			values[m.Name], units[m.Name], attrs[m.Name] = sum.DataPoints[0].Value, m.Unit, sum.DataPoints[0].Attributes
		}
	}
	return values, units, attrs
}

// TestMetrics checks the scan's counters against its progress and
// stats, on a scan whose second stream is retried: at every report the
// counters are the progress just reported (so never more rows returned
// than seen), and at the end the stats; with their units, the meter's
// name and the table's and work's attributes.
func TestMetrics(t *testing.T) {
	faults := &testkit.StreamFaults{Fail: map[int]codes.Code{2: codes.Unavailable}, After: 10}
	e := emulator.StartForTest(t, faults.Interceptor())
	tbl := testkit.EightShards(t, e)
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	reports := 0
	o := scan.Options{Workers: 2, MeterProvider: provider, Table: "t", Work: "audit", Progress: func(p scan.Progress) {
		reports++
		v, _, _ := sums(t, reader)
		if v["cellttl.scan.rows.returned"] != p.Rows || v["cellttl.scan.rows.seen"] != p.RowsSeen ||
			v["cellttl.scan.cells.returned"] != p.Cells || v["cellttl.scan.cells.seen"] != p.CellsSeen ||
			v["cellttl.scan.bytes.returned"] != p.Bytes || v["cellttl.scan.requests"] != p.Requests ||
			v["cellttl.scan.retries"] != p.Retries || v["cellttl.scan.shards.done"] != int64(p.ShardsDone) {
			t.Errorf("counters %v at progress %+v", v, p)
		}
		if v["cellttl.scan.rows.returned"] > v["cellttl.scan.rows.seen"] {
			t.Errorf("counters %v: more rows returned than seen", v)
		}
	}}
	read, err := scan.ReadTable(context.Background(), tbl, bigtable.PassAllFilter(), o,
		func() int { return 0 }, func(int, bigtable.Row) {}, func(int) {})
	if err != nil {
		t.Fatal(err)
	}
	v, units, attrs := sums(t, reader)
	want := map[string]int64{
		"cellttl.scan.rows.seen": 400, "cellttl.scan.rows.returned": 400,
		"cellttl.scan.cells.seen": 800, "cellttl.scan.cells.returned": 800,
		"cellttl.scan.bytes.returned": 800 * int64(len("r000")+len("f:live")+8+1),
		"cellttl.scan.requests":       int64(read.Reads), "cellttl.scan.retries": 1, "cellttl.scan.shards.done": 8,
	}
	if len(v) != len(want) || reports == 0 || read.Reads != 9 {
		t.Errorf("counters %v after %d reports, read %+v; want %v", v, reports, read, want)
	}
	wantUnits := map[string]string{"rows": "{row}", "cells": "{cell}", "bytes": "By", "requests": "{request}", "retries": "{request}", "shards": "{shard}"}
	for name, n := range want {
		if v[name] != n {
			t.Errorf("%s = %d, want %d", name, v[name], n)
		}
		what, _, _ := strings.Cut(strings.TrimPrefix(name, "cellttl.scan."), ".")
		if units[name] != wantUnits[what] {
			t.Errorf("%s in %q, want %q", name, units[name], wantUnits[what])
		}
		set := attrs[name]
		if table, _ := set.Value("cellttl.table"); table.AsString() != "t" || set.Len() != 2 {
			t.Errorf("%s: attributes %v", name, set.ToSlice())
		}
		if work, _ := set.Value("cellttl.work"); work.AsString() != "audit" {
			t.Errorf("%s: attributes %v", name, set.ToSlice())
		}
	}

	// Without a table or a work named, no attribute.
	reader = sdkmetric.NewManualReader()
	o = scan.Options{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))}
	if _, err := scan.Run(context.Background(), make([]scan.Shard, 3), o,
		func(context.Context, scan.Shard, *scan.ShardProgress) (int, error) { return 0, nil },
		func(int, int) error { return nil }); err != nil {
		t.Fatal(err)
	}
	v, _, attrs = sums(t, reader)
	set := attrs["cellttl.scan.shards.done"]
	if v["cellttl.scan.shards.done"] != 3 || set.Len() != 0 || v["cellttl.scan.rows.seen"] != 0 {
		t.Errorf("counters %v, attributes %v", v, attrs)
	}
}

// TestMeterNameInCatalogue checks that the meter scans record with is
// the one the catalogue of instruments (and docs/metrics.md) gives them.
func TestMeterNameInCatalogue(t *testing.T) {
	if scan.MeterName != meters.Scan {
		t.Errorf("scan.MeterName = %q, the catalogue's scan meter %q", scan.MeterName, meters.Scan)
	}
}

// TestMetricsRefused checks that a meter that cannot make the counters
// stops the work before it reads anything.
func TestMetricsRefused(t *testing.T) {
	read := 0
	_, err := scan.Run(context.Background(), make([]scan.Shard, 3), scan.Options{MeterProvider: brokenProvider{}},
		func(context.Context, scan.Shard, *scan.ShardProgress) (int, error) { read++; return 0, nil },
		func(int, int) error { return nil })
	if !errors.Is(err, errBroken) || !strings.Contains(err.Error(), "cellttl.scan.rows.seen") || read != 0 {
		t.Errorf("err = %v after %d shards, want the meter's, naming the metric, before any", err, read)
	}
}

// brokenProvider's meters make no counters.
type brokenProvider struct{ noop.MeterProvider }

func (brokenProvider) Meter(string, ...metric.MeterOption) metric.Meter { return brokenMeter{} }

type brokenMeter struct{ noop.Meter }

func (brokenMeter) Int64Counter(string, ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	return nil, errBroken
}
