package sweep_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
	"github.com/cellttl/ttl/sweep"
)

// TestReconcile writes some cells with their entries and some without (as
// cbt would): a reconcile round reports exactly those without, counted in
// Unscheduled, and a scheduled round exactly the others; together, what a
// scanning round reports.
func TestReconcile(t *testing.T) {
	for _, g := range []sweep.Granularity{sweep.Cell, sweep.Column, sweep.Row} {
		t.Run(g.String(), func(t *testing.T) {
			f := newSchedFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
			f.sset(t, "a", "sess", "c", "v", 10*time.Second)
			f.set(t, "b", "sess", "c", "v", ttl.For(10*time.Second)) // no entry
			f.sset(t, "c", "sess", "c", "v", 12*time.Second)
			f.set(t, "d", "sess", "c", "v", ttl.For(12*time.Second)) // no entry
			f.set(t, "d", "sess", "e", "v", ttl.For(13*time.Second)) // no entry
			f.entry(t, "e", base.Add(5*time.Second))                 // stale: a column expired later, without one
			f.set(t, "e", "sess", "c", "v", ttl.For(14*time.Second))
			f.sset(t, "z", "sess", "c", "v", time.Hour) // live
			f.clock.Set(base.Add(30 * time.Second))
			opts := sweep.Options{Granularity: g, Margin: time.Second}

			var all, unscheduled, scheduled collector
			_, err := f.sweeper(t, opts).Once(ctx, all.deliver)
			require.NoError(t, err)
			reconcile := opts
			reconcile.Reconcile = true
			r, err := f.scheduled(t, reconcile).Once(ctx, unscheduled.deliver)
			require.NoError(t, err)
			_, err = f.scheduled(t, opts).Once(ctx, scheduled.deliver)
			require.NoError(t, err)

			want := map[sweep.Granularity][]string{
				sweep.Cell: {
					`cell expired ` + at(10*time.Second) + `: table "t" row "b" sess:"c"`,
					`cell expired ` + at(12*time.Second) + `: table "t" row "d" sess:"c"`,
					`cell expired ` + at(13*time.Second) + `: table "t" row "d" sess:"e"`,
					`cell expired ` + at(14*time.Second) + `: table "t" row "e" sess:"c"`,
				},
				sweep.Column: {
					`column expired ` + at(10*time.Second) + `: table "t" row "b" sess:"c"`,
					`column expired ` + at(12*time.Second) + `: table "t" row "d" sess:"c"`,
					`column expired ` + at(13*time.Second) + `: table "t" row "d" sess:"e"`,
					`column expired ` + at(14*time.Second) + `: table "t" row "e" sess:"c"`,
				},
				sweep.Row: {
					`row expired ` + at(10*time.Second) + `: table "t" row "b"`,
					`row expired ` + at(13*time.Second) + `: table "t" row "d"`,
					`row expired ` + at(14*time.Second) + `: table "t" row "e"`,
				},
			}[g]
			got := lines(unscheduled.events)
			assert.Equal(t, want, got)
			assert.Equal(t, int64(len(want)), r.Unscheduled)
			assert.Equal(t, int64(len(want)), r.Events)
			assert.True(t, r.Complete())
			// Together the two report what a scan does; e, read by the
			// scheduled round for its stale entry, by both.
			both := map[string]bool{}
			for _, l := range lines(scheduled.events) {
				assert.False(t, both[l], "twice: %s", l)
				both[l] = true
				if strings.Contains(l, `row "e"`) {
					assert.Contains(t, got, l, "e, in both")
				} else {
					assert.NotContains(t, got, l, "in both")
				}
			}
			for _, l := range got {
				both[l] = true
			}
			var union []string
			for l := range both {
				union = append(union, l)
			}
			assert.ElementsMatch(t, lines(all.events), union)
			assert.Contains(t, r.String(), "with no entry in the schedule")
			b, err := json.Marshal(r)
			require.NoError(t, err)
			assert.Contains(t, string(b), `"unscheduled":`)
		})
	}
}

// TestReconcileMixedRow: in a row written by a writer that schedules and
// one that does not, the scheduled round reads the row for the entry and
// reports every cell of it that expired, so a cell without an entry is
// reported by both sweeps, with one ID; a reconcile round that deletes
// leaves such a row to the scheduled sweep, and deletes the others.
func TestReconcileMixedRow(t *testing.T) {
	f := newSchedFixture(t, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), hour)})
	f.sset(t, "m", "sess", "c", "v", 10*time.Second)
	f.set(t, "m", "sess", "d", "v", ttl.For(12*time.Second)) // no entry
	f.set(t, "n", "sess", "c", "v", ttl.For(12*time.Second)) // no entry
	f.clock.Set(base.Add(30 * time.Second))
	reader := sdkmetric.NewManualReader()
	var unscheduled, scheduled collector
	r, err := f.scheduled(t, sweep.Options{Reconcile: true, Delete: true, Margin: time.Second, Scan: scan.Options{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))}}).Once(ctx, unscheduled.deliver)
	require.NoError(t, err)
	assert.Equal(t, []string{
		`cell expired ` + at(12*time.Second) + `: table "t" row "m" sess:"d"`,
		`cell expired ` + at(12*time.Second) + `: table "t" row "n" sess:"c"`,
	}, lines(unscheduled.events))
	assert.Equal(t, int64(1), r.Deleted, "n's cells, not m's: m's c has an entry")
	assert.Empty(t, testkit.RawRow(t, f.raw, "n"))
	assert.Len(t, testkit.RawRow(t, f.raw, "m")["sess"], 2)
	got, _ := sweepMetrics(t, reader)
	assert.Equal(t, float64(2), got["cellttl.sweep.unscheduled{cellttl.family=sess,cellttl.table=t}"])

	_, err = f.scheduled(t, sweep.Options{Margin: time.Second}).Once(ctx, scheduled.deliver)
	require.NoError(t, err)
	assert.Equal(t, []string{
		`cell expired ` + at(10*time.Second) + `: table "t" row "m" sess:"c"`,
		`cell expired ` + at(12*time.Second) + `: table "t" row "m" sess:"d"`,
	}, lines(scheduled.events), "m:d twice, never missed")
	ids := map[string]bool{}
	for _, e := range unscheduled.events {
		ids[e.ID()] = true
	}
	for _, e := range scheduled.events {
		assert.Equal(t, e.Column == "d", ids[e.ID()], "m:d, delivered by both, has one ID")
	}
	assert.Len(t, f.entries(t), 1, "a reconcile round deletes no entry")
	assert.Equal(t, []string{schedule.Key("m", base.Add(10*time.Second))}, f.entries(t))
}
