package policy_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
)

// TestEnsureMetrics checks that the scan for data loss records its
// metrics with the table's name and the work "ensure", unless the scan
// options name them.
func TestEnsureMetrics(t *testing.T) {
	ctx := context.Background()
	e := emulator.StartForTest(t)
	raw := e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	testkit.Put(t, raw, "f", stored("r", "x", testkit.MS(testkit.Base)))
	fams := map[string]ttl.Strategy{"f": ttl.DefaultExpiration(48 * time.Hour)}
	for _, tt := range []struct{ table, work, wantTable, wantWork string }{
		{"", "", "t", "ensure"},
		{"events", "nightly ensure", "events", "nightly ensure"},
	} {
		reader := sdkmetric.NewManualReader()
		opts := policy.Options{DryRun: true, Scan: scan.Options{Now: fixedNow, MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), Table: tt.table, Work: tt.work}}
		_, err := runEnsure(ctx, e.Admin, "t", raw, fams, opts)
		require.NoError(t, err)
		var rm metricdata.ResourceMetrics
		require.NoError(t, reader.Collect(ctx, &rm))
		found := false
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name != "cellttl.scan.rows.seen" {
					continue
				}
				found = true
				p := m.Data.(metricdata.Sum[int64]).DataPoints[0]
				table, _ := p.Attributes.Value("cellttl.table")
				work, _ := p.Attributes.Value("cellttl.work")
				if table.AsString() != tt.wantTable || work.AsString() != tt.wantWork || p.Value != 1 {
					t.Errorf("rows seen: %d with table %q and work %q, want 1 with %q and %q",
						p.Value, table.AsString(), work.AsString(), tt.wantTable, tt.wantWork)
				}
			}
		}
		if !found {
			t.Errorf("no cellttl.scan.rows.seen in %+v", rm)
		}
	}
}
