package scan

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	catalogue "github.com/cellttl/ttl/internal/meters"
)

// MeterName is the name of the meter scans record their metrics with
// (Options.MeterProvider): the package's import path.
const MeterName = "github.com/cellttl/ttl/scan"

// meters are the instruments of one Run, recording its progress as
// counters by the counting rules (see Stats): each report adds what
// changed since the last.
type meters struct {
	rowsSeen, rowsReturned, cellsSeen, cellsReturned metric.Int64Counter
	bytes, requests, retries, shards                 metric.Int64Counter
	attrs                                            metric.MeasurementOption
	last                                             Progress
}

// newMeters returns the instruments of o.MeterProvider, or nil when it
// is nil: no metrics, no cost.
func newMeters(o Options) (*meters, error) {
	if o.MeterProvider == nil {
		return nil, nil
	}
	meter := o.MeterProvider.Meter(MeterName)
	m := &meters{}
	for _, in := range []struct {
		c *metric.Int64Counter
		catalogue.Instrument
	}{
		{&m.rowsSeen, catalogue.ScanRowsSeen}, {&m.rowsReturned, catalogue.ScanRowsReturned},
		{&m.cellsSeen, catalogue.ScanCellsSeen}, {&m.cellsReturned, catalogue.ScanCellsReturned},
		{&m.bytes, catalogue.ScanBytesReturned}, {&m.requests, catalogue.ScanRequests},
		{&m.retries, catalogue.ScanRetries}, {&m.shards, catalogue.ScanShardsDone},
	} {
		c, err := meter.Int64Counter(in.Name, metric.WithUnit(in.Unit), metric.WithDescription(in.Description))
		if err != nil {
			return nil, fmt.Errorf("scan: creating the metric %s: %w", in.Name, err)
		}
		*in.c = c
	}
	var attrs []attribute.KeyValue
	if o.Table != "" {
		attrs = append(attrs, attribute.String("cellttl.table", o.Table))
	}
	if o.Work != "" {
		attrs = append(attrs, attribute.String("cellttl.work", o.Work))
	}
	m.attrs = metric.WithAttributeSet(attribute.NewSet(attrs...))
	return m, nil
}

// record adds what p counts beyond the last progress recorded.
func (m *meters) record(ctx context.Context, p Progress) {
	if m == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	add := func(c metric.Int64Counter, now, before int64) {
		if now > before {
			c.Add(ctx, now-before, m.attrs)
		}
	}
	l := m.last
	add(m.rowsSeen, p.RowsSeen, l.RowsSeen)
	add(m.rowsReturned, p.Rows, l.Rows)
	add(m.cellsSeen, p.CellsSeen, l.CellsSeen)
	add(m.cellsReturned, p.Cells, l.Cells)
	add(m.bytes, p.Bytes, l.Bytes)
	add(m.requests, p.Requests, l.Requests)
	add(m.retries, p.Retries, l.Retries)
	add(m.shards, int64(p.ShardsDone), int64(l.ShardsDone))
	m.last = p
}
