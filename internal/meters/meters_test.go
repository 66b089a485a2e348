package meters_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/cellttl/ttl/internal/meters"
	"github.com/cellttl/ttl/testkit"
)

func TestCounters(t *testing.T) {
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	cs, err := meters.Counters(mp, "example.com/m",
		meters.Counter{Name: "cellttl.a.one", Unit: "{cell}", Description: "one"},
		meters.Counter{Name: "cellttl.a.two", Unit: "By", Description: "two"})
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

var errNo = errors.New("no")

func TestCountersRefused(t *testing.T) {
	cs, err := meters.Counters(testkit.RefusingMeters{Err: errNo}, "m", meters.Counter{Name: "cellttl.a.one"})
	if !errors.Is(err, errNo) || cs != nil {
		t.Errorf("got %v, %v; want no counters and the provider's error", cs, err)
	}
}
