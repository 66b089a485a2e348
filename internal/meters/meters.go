// Package meters makes the OpenTelemetry instruments of this module's
// packages from one catalogue of them (Catalogue): each package's meter,
// named by its import path, and its counters and histograms, named
// cellttl.<area>.<what> with UCUM units.
package meters

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// An Instrument describes one instrument of the catalogue: the meter
// that makes it, its name, UCUM unit, kind (Counter, Histogram or Gauge), a
// histogram's bucket bounds, and its description.
type Instrument struct {
	Meter, Name, Unit, Kind string
	Bounds                  []float64
	Description             string
}

// A Meter makes the instruments of one package's meter, and refuses a
// provider that refuses them the way every package does: with the
// package's sentinel, naming the option that passed the provider.
type Meter struct {
	m       metric.Meter
	invalid error
	option  string
}

// New returns the meter named name of mp. A refused instrument is refused
// with an error wrapping invalid (ttl.ErrInvalidOption, which this package
// cannot name) and the provider's error, naming option.
func New(mp metric.MeterProvider, name string, invalid error, option string) Meter {
	return Meter{m: mp.Meter(name), invalid: invalid, option: option}
}

// refused wraps err, a provider's refusal, as New says.
func (m Meter) refused(err error) error {
	return fmt.Errorf("%w: %s: %w", m.invalid, m.option, err)
}

// Counters returns the counters cs, in order, or the errors of those the
// provider refused.
func (m Meter) Counters(cs ...Instrument) ([]metric.Int64Counter, error) {
	out := make([]metric.Int64Counter, len(cs))
	errs := make([]error, len(cs))
	for i, c := range cs {
		out[i], errs[i] = m.m.Int64Counter(c.Name, metric.WithUnit(c.Unit), metric.WithDescription(c.Description))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, m.refused(err)
	}
	return out, nil
}

// Gauge returns the gauge c, or the provider's refusal.
func (m Meter) Gauge(c Instrument) (metric.Int64Gauge, error) {
	g, err := m.m.Int64Gauge(c.Name, metric.WithUnit(c.Unit), metric.WithDescription(c.Description))
	if err != nil {
		return nil, m.refused(err)
	}
	return g, nil
}

// Histogram returns the histogram c with its bucket bounds, or the
// provider's refusal.
func (m Meter) Histogram(c Instrument) (metric.Float64Histogram, error) {
	h, err := m.m.Float64Histogram(c.Name, metric.WithUnit(c.Unit), metric.WithDescription(c.Description),
		metric.WithExplicitBucketBoundaries(c.Bounds...))
	if err != nil {
		return nil, m.refused(err)
	}
	return h, nil
}

// Attributes returns the measurement option of the attributes base and
// more, built once to be reused.
func Attributes(base []attribute.KeyValue, more ...attribute.KeyValue) metric.MeasurementOption {
	kv := append(append(make([]attribute.KeyValue, 0, len(base)+len(more)), base...), more...)
	return metric.WithAttributeSet(attribute.NewSet(kv...))
}
