package move_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/move"
	"github.com/cellttl/ttl/scan"
)

// moveSums collects the move meter's counters from r as
// "name{step,reason}" → sum, checking every point's table and family, and
// the attributes of the scan meter's points.
func moveSums(t *testing.T, r *sdkmetric.ManualReader) (moved map[string]int64, scanned map[string]bool) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	out, scans := map[string]int64{}, map[string]bool{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name == scan.MeterName {
			for _, m := range sm.Metrics {
				if d, ok := m.Data.(metricdata.Sum[int64]); ok {
					for _, p := range d.DataPoints {
						scans[p.Attributes.Encoded(attribute.DefaultEncoder())] = true
					}
				}
			}
		}
		if sm.Scope.Name != "github.com/cellttl/ttl/move" {
			continue
		}
		for _, m := range sm.Metrics {
			assert.Equal(t, "{cell}", m.Unit, m.Name)
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				table, _ := p.Attributes.Value("cellttl.table")
				family, _ := p.Attributes.Value("cellttl.family")
				assert.Equal(t, [2]string{"t", "f"}, [2]string{table.AsString(), family.AsString()})
				step, _ := p.Attributes.Value("cellttl.step")
				key := m.Name + "{" + step.AsString()
				if reason, ok := p.Attributes.Value("cellttl.reason"); ok {
					key += "," + reason.AsString()
				}
				out[key+"}"] += p.Value
			}
		}
	}
	return out, scans
}

func TestMetricsRewrite(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	raced := testkit.MS(start.Add(-30 * time.Minute))
	x.put("a", "c", "old", raced)
	x.put("b", "c", "live", testkit.MS(start.Add(-10*time.Minute)))
	x.put("b", "d", "expired", testkit.MS(start.Add(-2*time.Hour)))
	reader := sdkmetric.NewManualReader()
	opts := x.opts(time.Minute)
	opts.Scan.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))

	dry := opts
	dry.DryRun = true
	_, err := x.family(x.raw, oneHour, dry).Rewrite(ctx)
	require.NoError(t, err)
	moved, scanned := moveSums(t, reader)
	assert.Empty(t, moved, "a dry run rewrites nothing")
	assert.Equal(t, map[string]bool{"cellttl.table=t,cellttl.work=move": true}, scanned, "the scans record through the move's provider")

	writer := &faulty{TableAPI: x.raw, before: func() { assert.NoError(t, x.raw.Apply(ctx, "a", cell("c", "changed", raced))) }}
	r, err := x.family(writer, oneHour, opts).Rewrite(ctx)
	require.NoError(t, err)
	assert.Equal(t, [2]int64{1, 1}, [2]int64{r.Rewritten, r.Kept})
	moved, _ = moveSums(t, reader)
	assert.Equal(t, map[string]int64{
		"cellttl.move.cells.rewritten{Rewrite}":       1,
		"cellttl.move.conflicts{Rewrite}":             1,
		"cellttl.move.cells.skipped{Rewrite,expired}": 1,
	}, moved)
}

func TestMetricsStart(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, bigtable.MaxAgePolicy(48*time.Hour))
	m := ttl.Move{From: ttl.DefaultExpiration(48 * time.Hour), To: ttl.OneSecond(), Start: start}
	x.put("b", "c", "long", testkit.MS(start.Add(23*time.Hour)))
	reader := sdkmetric.NewManualReader()
	opts := x.opts(-time.Hour)
	opts.Checkpoint = scan.MemoryCheckpoint()
	opts.Scan.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	_, err := x.family(x.raw, m, opts).Start(ctx)
	require.NoError(t, err)
	moved, _ := moveSums(t, reader)
	assert.Equal(t, map[string]int64{"cellttl.move.cells.rewritten{Start}": 1}, moved)
}

func TestNewRefusesAMeterProviderThatRefuses(t *testing.T) {
	x := newMoveTable(t, nil)
	_, err := move.New(x.e.Admin, x.raw, "t", "f", oneHour, move.Options{Scan: scan.Options{MeterProvider: testkit.RefusingMeters{Err: errBoom}}})
	require.ErrorIs(t, err, ttl.ErrInvalidOption)
	assert.ErrorIs(t, err, errBoom)
}
