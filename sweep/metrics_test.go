package sweep_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

// sweepMetrics collects the sweep meter's measurements from r: the
// counters' sums and the histogram's count and sum, as
// "name{k=v,…}" → value, and the units by name.
func sweepMetrics(t *testing.T, r *sdkmetric.ManualReader) (map[string]float64, map[string]string) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(ctx, &rm))
	out, units := map[string]float64{}, map[string]string{}
	key := func(name string, s attribute.Set) string {
		return name + "{" + s.Encoded(attribute.DefaultEncoder()) + "}"
	}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name == scan.MeterName { // the scans record through the sweep's provider
			for _, m := range sm.Metrics {
				if d, ok := m.Data.(metricdata.Sum[int64]); ok {
					for _, p := range d.DataPoints {
						out[key("scan", p.Attributes)] = 1
					}
				}
			}
			continue
		}
		require.Equal(t, "github.com/cellttl/ttl/sweep", sm.Scope.Name)
		for _, m := range sm.Metrics {
			units[m.Name] = m.Unit
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[key(m.Name, p.Attributes)] += float64(p.Value)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out[key(m.Name+".count", p.Attributes)] += float64(p.Count)
					out[key(m.Name+".sum", p.Attributes)] += p.Sum
				}
			}
		}
	}
	return out, units
}

func TestSweepMetrics(t *testing.T) {
	f := newFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour), "plain": ttl.OneSecond()})
	f.set(t, "u", "sess", "c", "v", ttl.For(10*time.Second))
	f.set(t, "v", "plain", "c", "v", ttl.For(20*time.Second))
	reader := sdkmetric.NewManualReader()
	s := f.sweeper(t, sweep.Options{Margin: time.Second, Delete: true, Scan: scan.Options{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))}})

	f.clock.Set(base.Add(40 * time.Second))
	var c collector
	r, err := s.Once(ctx, c.deliver)
	require.NoError(t, err)
	require.Equal(t, int64(2), r.Events)
	require.Equal(t, []string{"plain"}, []string{r.Missed[0].Family}, "GC keeps plain's cells 1s: 39s may be missed")

	// A round whose delivery fails stops; one that cannot begin fails.
	f.set(t, "w", "sess", "c", "v", ttl.For(10*time.Second)) // expires at 50s
	f.clock.Set(base.Add(time.Minute))
	_, err = s.Once(ctx, func(context.Context, []sweep.Event) error { return errors.New("down") })
	require.Error(t, err)
	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.Once(done, c.deliver)
	require.ErrorIs(t, err, context.Canceled)

	got, units := sweepMetrics(t, reader)
	assert.Equal(t, map[string]float64{
		"cellttl.sweep.rounds{cellttl.outcome=missed,cellttl.table=t}":             1,
		"cellttl.sweep.rounds{cellttl.outcome=stopped,cellttl.table=t}":            1,
		"cellttl.sweep.rounds{cellttl.outcome=failed,cellttl.table=t}":             1,
		"cellttl.sweep.missed{cellttl.family=plain,cellttl.table=t}":               2, // each call's report says so
		"cellttl.sweep.events{cellttl.family=sess,cellttl.table=t}":                1,
		"cellttl.sweep.events{cellttl.family=plain,cellttl.table=t}":               1,
		"cellttl.sweep.deletes{cellttl.table=t}":                                   2,
		"scan{cellttl.table=t,cellttl.work=sweep}":                                 1,
		"cellttl.sweep.delivery.delay.count{cellttl.family=sess,cellttl.table=t}":  1,
		"cellttl.sweep.delivery.delay.sum{cellttl.family=sess,cellttl.table=t}":    30, // expired at 10s, delivered at 40s
		"cellttl.sweep.delivery.delay.count{cellttl.family=plain,cellttl.table=t}": 1,
		"cellttl.sweep.delivery.delay.sum{cellttl.family=plain,cellttl.table=t}":   20,
	}, got)
	assert.Equal(t, map[string]string{
		"cellttl.sweep.rounds": "{round}", "cellttl.sweep.missed": "{round}", "cellttl.sweep.events": "{event}",
		"cellttl.sweep.deletes": "{row}", "cellttl.sweep.delivery.delay": "s",
	}, units)
}

func TestSweepMetricsRoundComplete(t *testing.T) {
	f := newFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	reader := sdkmetric.NewManualReader()
	s := f.sweeper(t, sweep.Options{Margin: time.Second, Scan: scan.Options{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))}})
	f.clock.Set(base.Add(time.Minute))
	var c collector
	r, err := s.Once(ctx, c.deliver)
	require.NoError(t, err)
	require.True(t, r.Complete())
	got, _ := sweepMetrics(t, reader)
	assert.Equal(t, map[string]float64{
		"cellttl.sweep.rounds{cellttl.outcome=complete,cellttl.table=t}": 1,
		"scan{cellttl.table=t,cellttl.work=sweep}":                       1,
	}, got, "nothing expired: no event, no delay")
}

var errRefused = errors.New("refused")

func TestNewRefusesAMeterProviderThatRefuses(t *testing.T) {
	f := newFixture(t, map[string]ttl.Strategy{"sess": ttl.OneSecond()})
	for _, name := range []string{"cellttl.sweep.events", "cellttl.sweep.delivery.delay"} {
		_, err := sweep.New(nil, f.raw, "t", map[string]ttl.Strategy{"sess": ttl.OneSecond()}, sweep.Options{Scan: scan.Options{MeterProvider: testkit.RefusingMeters{Refuse: name, Err: errRefused}}})
		assert.ErrorIs(t, err, ttl.ErrInvalidOption, name)
		assert.ErrorIs(t, err, errRefused, name)
	}
}
