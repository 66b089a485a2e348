package pipeline

import (
	"context"
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	// A SweepResult crosses the shuffle as JSON (a time.Time has no
	// schema); a row to delete as gob, which keeps every byte of its keys
	// and columns (JSON would replace those that are not UTF-8).
	beam.RegisterCoder(reflect.TypeOf((*SweepResult)(nil)), marshalSweep, decodeSweep)
	beam.RegisterCoder(reflect.TypeOf((*expiredRow)(nil)), encodeRow, decodeRow)

	beam.RegisterType(reflect.TypeOf((*sweepShardFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*writeEventsFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*deleteExpiredFn)(nil)).Elem())
	beam.RegisterFunction(afterWritten)
	beam.RegisterFunction(checkWritten)
	register.Emitter1[string]()
	register.Emitter1[*expiredRow]()
	register.Emitter1[*SweepResult]()
	register.Emitter1[int64]()
	register.Iter1[string]()
	register.Iter1[int64]()
	beam.RegisterType(reflect.TypeOf((*sumSweepsFn)(nil)).Elem())
}

// Sweep adds to the pipeline one round of a sweep: the events
// sweep.Sweeper.Once delivers for the round from cfg.From up to cfg.Until,
// found by the runner's workers, written to cfg.Output, and with
// cfg.Delete the expired cells deleted once the events are written.
// It refuses a config that sweep.New would refuse, with its error, while
// the pipeline is built. It returns a PCollection of one *SweepResult,
// complete once the events are written and the cells deleted. A run that
// fails writes nothing that says it finished: run the same round again.
//
// Costs and rationale: docs/api-notes.md#pipelinesweep.
func Sweep(ctx context.Context, s beam.Scope, cfg SweepConfig) (beam.PCollection, error) {
	fn, err := newSweepShardFn(ctx, cfg)
	if err != nil {
		return beam.PCollection{}, err
	}
	scheduled := cfg.Schedule != ""
	var shards beam.PCollection
	var n int
	var ownsEntries bool
	if scheduled {
		shards, n, ownsEntries, err = readSalts(ctx, s, cfg)
	} else {
		shards, n, err = ReadShards(ctx, s, cfg.Table)
	}
	if err != nil {
		return beam.PCollection{}, err
	}
	s = s.Scope("Sweep")
	var events, expired, served, given, results beam.PCollection
	if scheduled {
		events, expired, served, given, results = beam.ParDo5(s, &sweepSaltFn{sweepShardFn: *fn, Schedule: cfg.Schedule, DeletesEntries: ownsEntries}, shards)
	} else {
		events, expired, results = beam.ParDo3(s, fn, shards)
	}
	written := beam.ParDo(s.Scope("WriteEvents"), &writeEventsFn{Filename: cfg.Output}, beam.Impulse(s), beam.SideInput{Input: events})
	if cfg.Delete {
		d := s.Scope("Delete")
		expired = beam.ParDo(d, afterWritten, expired, beam.SideInput{Input: written})
		deleted, handled := beam.ParDo2(d, &deleteExpiredFn{shardReader: shardReader{Table: cfg.Table}, Round: fn.Round}, expired)
		results = beam.Flatten(s, results, deleted)
		if scheduled {
			results = beam.Flatten(s, results, unschedule(d, cfg, served, written, given, handled))
		}
	}
	result := fn.result(cfg.Output)
	result.Schedule = cfg.Schedule
	sum := beam.Combine(s, &sumSweepsFn{Result: result, Shards: n}, results)
	return beam.ParDo(s, checkWritten, sum, beam.SideInput{Input: written}), nil
}

// checkWritten returns the round's result once its events are written,
// and an error if the file does not hold every event the shards emitted.
func checkWritten(r *SweepResult, written func(*int64) bool) (*SweepResult, error) {
	n, err := writtenCount(written)
	switch {
	case err != nil:
		return nil, err
	case n != r.Events:
		return nil, fmt.Errorf("pipeline: wrote %d events of %d", n, r.Events)
	}
	return r, nil
}
