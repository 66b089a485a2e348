package meters_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/cellttl/ttl/internal/meters"
	"github.com/cellttl/ttl/internal/testkit"
)

func TestCounters(t *testing.T) {
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	cs, err := meters.New(mp, "example.com/m", errInvalid, "Opt").Counters(
		meters.Instrument{Name: "cellttl.a.one", Unit: "{cell}", Description: "one"},
		meters.Instrument{Name: "cellttl.a.two", Unit: "By", Description: "two"})
	if err != nil {
		t.Fatal(err)
	}
	at := meters.Attributes([]attribute.KeyValue{attribute.String("cellttl.table", "t")}, attribute.String("cellttl.family", "f"))
	cs[0].Add(context.Background(), 3, at)
	cs[1].Add(context.Background(), 5)
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != "example.com/m" {
			t.Errorf("scope %q", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			p := m.Data.(metricdata.Sum[int64]).DataPoints[0]
			got[m.Name] = m.Unit + " " + m.Description + " " + p.Attributes.Encoded(attribute.DefaultEncoder()) + " " + string(rune('0'+p.Value))
		}
	}
	want := map[string]string{"cellttl.a.one": "{cell} one cellttl.family=f,cellttl.table=t 3", "cellttl.a.two": "By two  5"}
	if len(got) != 2 || got["cellttl.a.one"] != want["cellttl.a.one"] || got["cellttl.a.two"] != want["cellttl.a.two"] {
		t.Errorf("got %q, want %q", got, want)
	}
}

var errNo, errInvalid = errors.New("no"), errors.New("invalid")

func TestCountersRefused(t *testing.T) {
	cs, err := meters.New(testkit.RefusingMeters{Err: errNo}, "m", errInvalid, "Opt").Counters(meters.Instrument{Name: "cellttl.a.one"})
	if !errors.Is(err, errNo) || !errors.Is(err, errInvalid) || cs != nil || !strings.Contains(err.Error(), "Opt") {
		t.Errorf("got %v, %v; want no counters and an error wrapping the sentinel and the provider's, naming the option", cs, err)
	}
}

func TestHistogram(t *testing.T) {
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	h, err := meters.New(mp, "example.com/m", errInvalid, "Opt").Histogram(meters.Instrument{Name: "cellttl.a.delay", Unit: "s", Kind: meters.Histogram, Bounds: []float64{1, 10}, Description: "delay"})
	if err != nil {
		t.Fatal(err)
	}
	h.Record(context.Background(), 5)
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	m := rm.ScopeMetrics[0].Metrics[0]
	p := m.Data.(metricdata.Histogram[float64]).DataPoints[0]
	if m.Name != "cellttl.a.delay" || m.Unit != "s" || m.Description != "delay" || !slices.Equal(p.Bounds, []float64{1, 10}) || !slices.Equal(p.BucketCounts, []uint64{0, 1, 0}) {
		t.Errorf("got %s %s %q bounds %v counts %v", m.Name, m.Unit, m.Description, p.Bounds, p.BucketCounts)
	}
}

func TestHistogramRefused(t *testing.T) {
	h, err := meters.New(testkit.RefusingMeters{Err: errNo}, "m", errInvalid, "Opt").Histogram(meters.Instrument{Name: "cellttl.a.delay"})
	if !errors.Is(err, errNo) || !errors.Is(err, errInvalid) || h != nil || !strings.Contains(err.Error(), "Opt") {
		t.Errorf("got %v, %v; want no histogram and an error wrapping the sentinel and the provider's, naming the option", h, err)
	}
}

func TestGauge(t *testing.T) {
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	g, err := meters.New(mp, "example.com/m", errInvalid, "Opt").Gauge(meters.Instrument{Name: "cellttl.a.held", Unit: "{lease}", Kind: meters.Gauge, Description: "held"})
	if err != nil {
		t.Fatal(err)
	}
	g.Record(context.Background(), 1)
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	m := rm.ScopeMetrics[0].Metrics[0]
	if p := m.Data.(metricdata.Gauge[int64]).DataPoints[0]; m.Name != "cellttl.a.held" || m.Unit != "{lease}" || p.Value != 1 {
		t.Errorf("got %s %s %d", m.Name, m.Unit, p.Value)
	}
	g, err = meters.New(testkit.RefusingMeters{Err: errNo}, "m", errInvalid, "Opt").Gauge(meters.Instrument{Name: "cellttl.a.held"})
	if !errors.Is(err, errNo) || !errors.Is(err, errInvalid) || g != nil {
		t.Errorf("got %v, %v; want no gauge and an error wrapping the sentinel and the provider's", g, err)
	}
}
