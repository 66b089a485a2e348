package move

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/meters"
)

// OpenTelemetry metrics of a move's rewrites: cells rewritten, skipped and
// lost to a writer, by Start and Rewrite. internal/meters declares the
// instruments; docs/metrics.md lists them.

// A recorder records the cells one step rewrites. A nil *recorder records
// nothing: a dry run, or no Options.Scan.MeterProvider.
type recorder struct {
	rewritten, skipped, conflicts metric.Int64Counter
	step                          metric.MeasurementOption // table, family, step
	expired, inPlace              metric.MeasurementOption // the same, with the reason skipped
}

// newRecorders returns the recorders of Start and Rewrite of family of
// table, recording through mp, or nils without one. A provider that
// refuses the instruments is refused with ttl.ErrInvalidOption.
func newRecorders(mp metric.MeterProvider, table, family string) (start, rewrite *recorder, err error) {
	if mp == nil {
		return nil, nil, nil
	}
	cs, err := meters.New(mp, meters.Move, ttl.ErrInvalidOption, "move.Options.Scan.MeterProvider").Counters(
		meters.MoveRewritten, meters.MoveSkipped, meters.MoveConflicts)
	if err != nil {
		return nil, nil, err
	}
	of := func(step string) *recorder {
		base := []attribute.KeyValue{attribute.String("cellttl.table", table), attribute.String("cellttl.family", family), attribute.String("cellttl.step", step)}
		return &recorder{rewritten: cs[0], skipped: cs[1], conflicts: cs[2],
			step:    meters.Attributes(base),
			expired: meters.Attributes(base, attribute.String("cellttl.reason", "expired")),
			inPlace: meters.Attributes(base, attribute.String("cellttl.reason", "in_place"))}
	}
	return of("Start"), of("Rewrite"), nil
}

// recorder returns rec, the recorder of a step, or nil in a dry run, which
// rewrites nothing.
func (f *Family) recorder(rec *recorder) *recorder {
	if f.opts.DryRun {
		return nil
	}
	return rec
}

// counts records the cells c counts: rewritten, and expired.
func (r *recorder) counts(ctx context.Context, c Counts) {
	if r == nil {
		return
	}
	if c.Rewritten > 0 {
		r.rewritten.Add(ctx, c.Rewritten, r.step)
	}
	if c.Expired > 0 {
		r.skipped.Add(ctx, c.Expired, r.expired)
	}
}

// kept records one cell kept where it is: in place (not tried), or after
// its conditional rewrite was refused (a conflict).
func (r *recorder) kept(ctx context.Context, conflict bool) {
	switch {
	case r == nil:
	case conflict:
		r.conflicts.Add(ctx, 1, r.step)
	default:
		r.skipped.Add(ctx, 1, r.inPlace)
	}
}
