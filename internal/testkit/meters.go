package testkit

import (
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// RefusingMeters is a metric.MeterProvider whose meters refuse to make
// the instrument named Refuse (every instrument when Refuse is ""),
// returning Err, and make the others as the no-op provider does: for
// testing that a provider that fails is refused, with nothing done.
type RefusingMeters struct {
	noop.MeterProvider
	Refuse string
	Err    error
}

// Meter returns a meter that refuses as p says.
func (p RefusingMeters) Meter(string, ...metric.MeterOption) metric.Meter {
	return refusingMeter{p: p}
}

type refusingMeter struct {
	noop.Meter
	p RefusingMeters
}

// refuses reports whether m refuses the instrument named name.
func (m refusingMeter) refuses(name string) bool { return m.p.Refuse == "" || m.p.Refuse == name }

func (m refusingMeter) Int64Counter(name string, _ ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	if m.refuses(name) {
		return nil, m.p.Err
	}
	return noop.Int64Counter{}, nil
}

func (m refusingMeter) Float64Histogram(name string, _ ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	if m.refuses(name) {
		return nil, m.p.Err
	}
	return noop.Float64Histogram{}, nil
}

func (m refusingMeter) Int64Gauge(name string, _ ...metric.Int64GaugeOption) (metric.Int64Gauge, error) {
	if m.refuses(name) {
		return nil, m.p.Err
	}
	return noop.Int64Gauge{}, nil
}
