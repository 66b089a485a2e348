// Package meters makes the OpenTelemetry instruments of this module's
// packages: each package's meter, named by its import path, and its
// counters, named cellttl.<area>.<what> with UCUM units.
package meters

import (
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// A Counter describes one counter: its name, UCUM unit and description.
type Counter struct {
	Name, Unit, Description string
}

// Counters returns the counters cs of the meter named meter of mp, in
// order, or the errors of those mp refused.
func Counters(mp metric.MeterProvider, meter string, cs ...Counter) ([]metric.Int64Counter, error) {
	m := mp.Meter(meter)
	out := make([]metric.Int64Counter, len(cs))
	errs := make([]error, len(cs))
	for i, c := range cs {
		out[i], errs[i] = m.Int64Counter(c.Name, metric.WithUnit(c.Unit), metric.WithDescription(c.Description))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// Attributes returns the measurement option of the attributes base and
// more, built once to be reused.
func Attributes(base []attribute.KeyValue, more ...attribute.KeyValue) metric.MeasurementOption {
	kv := append(append(make([]attribute.KeyValue, 0, len(base)+len(more)), base...), more...)
	return metric.WithAttributeSet(attribute.NewSet(kv...))
}
