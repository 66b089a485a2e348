package ttl

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/cellttl/ttl/internal/meters"
)

// OpenTelemetry metrics of the core: renewals (Touch, KeepAlive) made,
// lost and failed, conditional writes that lost a race, counter reads.
// internal/meters declares the instruments; docs/metrics.md lists them.

// WithMeterProvider makes the table record what it does through mp, with
// a meter named "github.com/cellttl/ttl": renewals made, lost and failed
// (Touch, KeepAlive), conditional writes that lost a race, counter reads
// (docs/metrics.md lists the instruments). Every measurement carries the
// family and the call as attributes (cellttl.family, cellttl.call), and
// attrs: a Table does not know the name of the table it writes, so a
// service with several tables passes attribute.String("cellttl.table",
// name). Without this option the table records nothing and pays
// nothing. A nil mp is refused with ErrInvalidOption; so is a provider
// that refuses the instruments.
func WithMeterProvider(mp metric.MeterProvider, attrs ...attribute.KeyValue) Option {
	return optionFunc(func(c *config) error {
		if mp == nil {
			return fmt.Errorf("%w: WithMeterProvider(nil)", ErrInvalidOption)
		}
		c.metrics = metricsConfig{mp: mp, attrs: attrs}
		return nil
	})
}

// The calls the core's measurements name (attribute "call").
const (
	callTouch       = "Touch"
	callKeepAlive   = "KeepAlive"
	callReadCounter = "ReadCounter"
	callSumCounter  = "SumCounter"
)

// metrics records the core's measurements. A nil *metrics records
// nothing.
type metrics struct {
	renewals, lost, failed, conflicts, counterReads metric.Int64Counter

	// of holds, for each managed family and call, the measurement's
	// attributes, built once.
	of map[string]map[string]metric.MeasurementOption
}

// newMetrics returns the instruments of c for the managed families, or
// nil when c has no provider.
func newMetrics(c metricsConfig, managed map[string]Strategy) (*metrics, error) {
	if c.mp == nil {
		return nil, nil
	}
	cs, err := meters.New(c.mp, meters.Core, ErrInvalidOption, "WithMeterProvider").Counters(
		meters.CoreRenewals, meters.CoreRenewalsLost, meters.CoreRenewalsFail, meters.CoreConflicts, meters.CoreCounterReads)
	if err != nil {
		return nil, err
	}
	m := &metrics{renewals: cs[0], lost: cs[1], failed: cs[2], conflicts: cs[3], counterReads: cs[4],
		of: map[string]map[string]metric.MeasurementOption{}}
	for family := range managed {
		calls := map[string]metric.MeasurementOption{}
		for _, call := range []string{callTouch, callKeepAlive, callReadCounter, callSumCounter} {
			calls[call] = meters.Attributes(c.attrs, attribute.String("cellttl.family", family), attribute.String("cellttl.call", call))
		}
		m.of[family] = calls
	}
	return m, nil
}

// add adds 1 to c, for call in family.
func (m *metrics) add(ctx context.Context, c metric.Int64Counter, family, call string) {
	c.Add(ctx, 1, m.of[family][call])
}

// counterRead records a counter read of family by call.
func (m *metrics) counterRead(ctx context.Context, family, call string) {
	if m != nil {
		m.add(ctx, m.counterReads, family, call)
	}
}

// A renewal is the outcome of one renewal of a cell (Touch, KeepAlive).
type renewal int

const (
	renewalFailed   renewal = iota // an error stopped it
	renewalMade                    // the cell was rewritten
	renewalLost                    // a writer won, seen before any write
	renewalConflict                // a writer won: the conditional write was sent and refused
)

// rewritten returns the outcome of a renewal's conditional write, which
// wrote (moved) or not, or failed with err.
func rewritten(moved bool, err error) renewal {
	switch {
	case err != nil:
		return renewalFailed
	case moved:
		return renewalMade
	}
	return renewalConflict
}

// renewal records the outcome r of one renewal of a cell of family by
// call.
func (m *metrics) renewal(ctx context.Context, family, call string, r renewal) {
	if m == nil {
		return
	}
	switch r {
	case renewalFailed:
		m.add(ctx, m.failed, family, call)
	case renewalMade:
		m.add(ctx, m.renewals, family, call)
	default:
		m.add(ctx, m.lost, family, call)
		if r == renewalConflict {
			m.add(ctx, m.conflicts, family, call)
		}
	}
}
