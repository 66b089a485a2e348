package sweep

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/meters"
)

// OpenTelemetry metrics of a sweep: its rounds, the events it delivers and
// how long after their expiry, the rows it deletes in, the spans it may
// have missed. internal/meters declares the instruments; docs/metrics.md
// lists them.

// The outcomes of a call of Once (attribute "outcome").
const (
	outcomeComplete = "complete" // every shard read, nothing missed
	outcomeMissed   = "missed"   // every shard read, but GC may have deleted cells first
	outcomeStopped  = "stopped"  // stopped before every shard was read; the next call resumes
	outcomeFailed   = "failed"   // could not begin: no report
)

// metrics records a sweep's measurements. A nil *metrics records nothing.
type metrics struct {
	rounds, events, deletes, missed, unscheduledEvents metric.Int64Counter
	delay                                              metric.Float64Histogram
	leaseHeld                                          metric.Int64Gauge
	leaseAcquired, leaseLost                           metric.Int64Counter

	table    metric.MeasurementOption            // table
	family   map[string]metric.MeasurementOption // table, family, for each family swept
	outcomes map[string]metric.MeasurementOption // table, outcome
}

// newMetrics returns the instruments of a sweep of fams of table through
// mp, or nil without mp. A provider that refuses them is refused with
// ttl.ErrInvalidOption.
func newMetrics(mp metric.MeterProvider, table string, fams []family) (*metrics, error) {
	if mp == nil {
		return nil, nil
	}
	meter := meters.New(mp, meters.Sweep, ttl.ErrInvalidOption, "sweep.Options.Scan.MeterProvider")
	cs, err := meter.Counters(meters.SweepRounds, meters.SweepEvents, meters.SweepDeletes, meters.SweepMissed, meters.SweepUnscheduled,
		meters.SweepLeaseTaken, meters.SweepLeaseLost)
	if err != nil {
		return nil, err
	}
	delay, err := meter.Histogram(meters.SweepDelay)
	if err != nil {
		return nil, err
	}
	held, err := meter.Gauge(meters.SweepLeaseHeld)
	if err != nil {
		return nil, err
	}
	base := []attribute.KeyValue{attribute.String("cellttl.table", table)}
	m := &metrics{rounds: cs[0], events: cs[1], deletes: cs[2], missed: cs[3], unscheduledEvents: cs[4], delay: delay,
		leaseHeld: held, leaseAcquired: cs[5], leaseLost: cs[6],
		table: meters.Attributes(base), family: map[string]metric.MeasurementOption{}, outcomes: map[string]metric.MeasurementOption{}}
	for _, f := range fams {
		m.family[f.name] = meters.Attributes(base, attribute.String("cellttl.family", f.name))
	}
	for _, o := range []string{outcomeComplete, outcomeMissed, outcomeStopped, outcomeFailed} {
		m.outcomes[o] = meters.Attributes(base, attribute.String("cellttl.outcome", o))
	}
	return m, nil
}

// delivered records events delivered at now.
func (m *metrics) delivered(ctx context.Context, events []Event, now time.Time) {
	if m == nil {
		return
	}
	for _, e := range events {
		at := m.family[e.Family]
		m.events.Add(ctx, 1, at)
		m.delay.Record(ctx, now.Sub(e.Expired).Seconds(), at)
	}
}

// unscheduled records events a reconcile round delivered: none of them
// had an entry in the schedule.
func (m *metrics) unscheduled(ctx context.Context, events []Event) {
	if m == nil {
		return
	}
	for _, e := range events {
		m.unscheduledEvents.Add(ctx, 1, m.family[e.Family])
	}
}

// deleted records deletions in rows rows.
func (m *metrics) deleted(ctx context.Context, rows int) {
	if m != nil && rows > 0 {
		m.deletes.Add(ctx, int64(rows), m.table)
	}
}

// round records what a call of Once did: rep, nil when it could not
// begin.
func (m *metrics) round(ctx context.Context, rep *Report) {
	if m == nil {
		return
	}
	outcome := outcomeComplete
	switch {
	case rep == nil:
		outcome = outcomeFailed
	case !rep.Read.Complete():
		outcome = outcomeStopped
	case len(rep.Missed) > 0:
		outcome = outcomeMissed
	}
	m.rounds.Add(ctx, 1, m.outcomes[outcome])
	if rep == nil {
		return
	}
	for _, missed := range rep.Missed {
		m.missed.Add(ctx, 1, m.family[missed.Family])
	}
}

// lease records the lease's state: held or not, and whether this process
// just took it or just lost it.
func (m *metrics) lease(ctx context.Context, held, acquired, lost bool) {
	if m == nil {
		return
	}
	v := int64(0)
	if held {
		v = 1
	}
	m.leaseHeld.Record(ctx, v, m.table)
	if acquired {
		m.leaseAcquired.Add(ctx, 1, m.table)
	}
	if lost {
		m.leaseLost.Add(ctx, 1, m.table)
	}
}
