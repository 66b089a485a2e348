package reads_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
)

// meterReader is a MeterProvider whose measurements a test collects with
// the SDK's manual reader.
type meterReader struct {
	*sdkmetric.MeterProvider
	r *sdkmetric.ManualReader
}

func newMeterReader() meterReader {
	r := sdkmetric.NewManualReader()
	return meterReader{sdkmetric.NewMeterProvider(sdkmetric.WithReader(r)), r}
}

// sums collects the meter's counters as "name{k=v,…}" → sum, and the
// meter's units by name.
func (m meterReader) sums(t *testing.T, meter string) (map[string]int64, map[string]string) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, m.r.Collect(context.Background(), &rm))
	sums, units := map[string]int64{}, map[string]string{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != meter {
			continue
		}
		for _, mt := range sm.Metrics {
			units[mt.Name] = mt.Unit
			s, ok := mt.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			for _, p := range s.DataPoints {
				sums[mt.Name+attrString(p.Attributes)] += p.Value
			}
		}
	}
	return sums, units
}

// attrString prints a set of attributes as {k=v,…}, sorted.
func attrString(s attribute.Set) string {
	var kv []string
	for _, a := range s.ToSlice() {
		kv = append(kv, string(a.Key)+"="+a.Value.Emit())
	}
	sort.Strings(kv)
	return "{" + strings.Join(kv, ",") + "}"
}

func TestMetricsRenewals(t *testing.T) {
	ctx := context.Background()
	m := newMeterReader()
	x := newTouchFixture(t, ttl.WithMeterProvider(m, attribute.String("cellttl.table", "t")))
	x.set(0, "sess", "tok", "v", ttl.For(time.Minute))
	x.set(0, "clicks", "n", "1", ttl.Default)

	touched, err := x.tbl.Touch(ctx, "r", "sess", "tok", ttl.For(time.Hour))
	require.NoError(t, err)
	require.True(t, touched)
	x.hook = func() { x.set(0, "sess", "tok", "w", ttl.For(time.Hour)) }
	_, err = x.tbl.Touch(ctx, "r", "sess", "tok", ttl.For(2*time.Hour))
	require.ErrorIs(t, err, ttl.ErrConflict)
	_, err = x.tbl.Touch(ctx, "r", "sess", "none", ttl.For(time.Hour))
	require.NoError(t, err, "no live cell: nothing to renew, nothing recorded")

	x.clock.Set(testkit.Base.Add(50 * time.Minute)) // clicks:n expires at 1h: due
	_, err = x.tbl.ReadRow(ctx, "r", ttl.KeepAlive(30*time.Minute), ttl.RowFilter(bigtable.FamilyFilter("clicks")))
	require.NoError(t, err)
	x.clock.Set(testkit.Base.Add(80 * time.Minute)) // renewed until 87m30s: due again; a writer wins
	x.hook = func() { x.set(80*time.Minute, "clicks", "n", "2", ttl.Default) }
	_, err = x.tbl.ReadRow(ctx, "r", ttl.KeepAlive(2*time.Hour), ttl.RowFilter(bigtable.FamilyFilter("clicks")))
	require.NoError(t, err, "a renewal lost to a writer is no error")

	sums, units := m.sums(t, "github.com/cellttl/ttl")
	assert.Equal(t, map[string]int64{
		"cellttl.core.renewals{cellttl.call=Touch,cellttl.family=sess,cellttl.table=t}":            1,
		"cellttl.core.renewals.lost{cellttl.call=Touch,cellttl.family=sess,cellttl.table=t}":       1,
		"cellttl.core.conflicts{cellttl.call=Touch,cellttl.family=sess,cellttl.table=t}":           1,
		"cellttl.core.renewals{cellttl.call=KeepAlive,cellttl.family=clicks,cellttl.table=t}":      1,
		"cellttl.core.renewals.lost{cellttl.call=KeepAlive,cellttl.family=clicks,cellttl.table=t}": 1,
		"cellttl.core.conflicts{cellttl.call=KeepAlive,cellttl.family=clicks,cellttl.table=t}":     1,
	}, sums)
	assert.Equal(t, "{cell}", units["cellttl.core.renewals"])
	assert.Equal(t, "{write}", units["cellttl.core.conflicts"])
}

func TestMetricsRenewalsFailed(t *testing.T) {
	ctx := context.Background()
	m := newMeterReader()
	tbl, _ := refusedTable(t, singleRowRefusal, ttl.WithMeterProvider(m))
	_, err := tbl.Touch(ctx, "r", "sess", "tok", ttl.For(time.Hour))
	require.ErrorIs(t, err, ttl.ErrTransactionNotAllowed)
	_, err = tbl.ReadRow(ctx, "r", ttl.KeepAlive(time.Hour))
	require.ErrorIs(t, err, ttl.ErrTransactionNotAllowed)
	sums, _ := m.sums(t, "github.com/cellttl/ttl")
	assert.Equal(t, map[string]int64{
		"cellttl.core.renewals.failed{cellttl.call=Touch,cellttl.family=sess}":     1,
		"cellttl.core.renewals.failed{cellttl.call=KeepAlive,cellttl.family=sess}": 1,
	}, sums)
}

func TestMetricsCounterReads(t *testing.T) {
	ctx := context.Background()
	m := newMeterReader()
	tbl := meteredCounters(t, m)
	w := ttl.Window{Size: 10 * time.Second, Keep: 50 * time.Second}
	require.NoError(t, tbl.Apply(ctx, "u", testkit.Add("hits", "req", 1, w)))
	for range 2 {
		_, err := tbl.ReadCounter(ctx, "u", "hits", "req", w)
		require.NoError(t, err)
	}
	_, err := tbl.SumCounter(ctx, "u", "daily", "req", w, 2)
	require.NoError(t, err)
	_, err = tbl.ReadCounter(ctx, "u", "sess", "req", w)
	require.ErrorIs(t, err, ttl.ErrCounter, "refused before any read: not counted")
	sums, units := m.sums(t, "github.com/cellttl/ttl")
	assert.Equal(t, map[string]int64{
		"cellttl.core.counter.reads{cellttl.call=ReadCounter,cellttl.family=hits}": 2,
		"cellttl.core.counter.reads{cellttl.call=SumCounter,cellttl.family=daily}": 1,
	}, sums)
	assert.Equal(t, "{read}", units["cellttl.core.counter.reads"])
}

// meteredCounters is a Table of the counter families hits and daily, and
// the plain family sess, that records its measurements in m.
func meteredCounters(t *testing.T, m meterReader) *ttl.Table {
	e := emulator.StartForTest(t)
	fams := map[string]bigtable.Family{}
	for _, f := range []string{"hits", "daily"} {
		fams[f] = bigtable.Family{ValueType: bigtable.AggregateType{Input: bigtable.Int64Type{}, Aggregator: bigtable.SumAggregator{}}}
	}
	fams["sess"] = bigtable.Family{}
	require.NoError(t, e.Admin.CreateTableFromConf(context.Background(), &bigtable.TableConf{TableID: "c", ColumnFamilies: fams}))
	tbl, err := ttl.NewTable(e.Client.Open("c"), map[string]ttl.Strategy{
		"hits": ttl.Counter(ttl.OneSecond()), "daily": ttl.Counter(ttl.DefaultExpiration(time.Hour)), "sess": ttl.OneSecond(),
	}, ttl.WithClock(testkit.NewClock(testkit.Base).Now), ttl.WithMeterProvider(m))
	require.NoError(t, err)
	return tbl
}

func TestWithMeterProviderRefused(t *testing.T) {
	raw := &testkit.Recorder{}
	fams := map[string]ttl.Strategy{"f": ttl.OneSecond()}
	_, err := ttl.NewTable(raw, fams, ttl.WithMeterProvider(nil))
	require.ErrorIs(t, err, ttl.ErrInvalidOption)
	assert.Contains(t, err.Error(), "WithMeterProvider(nil)")
	_, err = ttl.NewTable(raw, fams, ttl.WithMeterProvider(testkit.RefusingMeters{Err: assert.AnError}))
	require.ErrorIs(t, err, ttl.ErrInvalidOption)
	assert.ErrorIs(t, err, assert.AnError)
	assert.Empty(t, raw.Calls(), "nothing sent")
}
