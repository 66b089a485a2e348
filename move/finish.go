package move

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
)

// Finish ends the move: when no cell of the old rule is live (for a
// reader lagging by the move's Skew), it sets the family's GC policy to
// the new strategy's. While one is, it refuses with policy.ErrDataLoss,
// unless Options.AllowDataLoss. The processes can then be configured with
// the new strategy alone.
func (f *Family) Finish(ctx context.Context) (*Report, error) {
	r, err := f.counted(ctx, "Finish")
	if err != nil {
		return r, err
	}
	m, opts := f.m, f.opts
	switch {
	case !r.Started:
		return r, fmt.Errorf("%w: move.Family.Finish: the move starts at %s", ttl.ErrInvalidOption, text.Time(m.Start))
	case samePolicy(r.Found, r.Final):
		r.Actions = append(r.Actions, "nothing to do: the family has the new strategy's policy")
		return r, nil
	case r.OldLive.Cells > 0 && !opts.AllowDataLoss:
		return r, fmt.Errorf("move.Family.Finish: %w", &policy.OptionError{Err: fmt.Errorf("%w: table %q, family %q: %s of the old rule are live (the latest until %s); rewrite them or wait",
			policy.ErrDataLoss, f.table, f.family, text.Plural(int(r.OldLive.Cells), "cell", "cells"), text.Time(r.LastExpiry.Add(m.Skew))), Option: policy.AllowDataLoss})
	}
	if r.OldLive.Cells > 0 {
		r.Actions = append(r.Actions, fmt.Sprintf("%s of the old rule are lost", text.Plural(int(r.OldLive.Cells), "live cell", "live cells")))
	}
	// The old cells still stored, expired by their rule, that the new
	// strategy alone would read as live (or, under a version limit, would
	// rank above every version) go before the new policy comes.
	purged, err := f.purgeOld(ctx, r.Now)
	r.Purged = purged
	if purged > 0 {
		verb := "deleted"
		if opts.DryRun {
			verb = "delete"
		}
		r.Actions = append(r.Actions, fmt.Sprintf("%s %s of the old rule, expired, which %v alone would read as live",
			verb, text.Plural(int(purged), "cell", "cells"), m.To))
	}
	if err != nil {
		return r, err
	}
	return r, f.setPolicy(ctx, r, r.Final)
}

// purgeOld deletes (in a dry run, counts) the cells on the old side of the
// move that the new strategy alone would read as live at now: once the
// processes are configured with it, they would come back. Under a version
// limit every old cell goes: real timestamps outrank every sequence
// number, and GC would delete the versions below them.
func (f *Family) purgeOld(ctx context.Context, now time.Time) (int64, error) {
	old, _, _ := f.rule.Sides()
	filter := []bigtable.Filter{bigtable.ColumnRangeFilter(f.family, "", ""), old.Span.Filter(), bigtable.StripValueFilter()}
	if _, versions := f.m.To.Versions(); !versions {
		filter = append(filter, f.m.To.Filter(now))
	}
	var total int64
	var failed error
	_, err := scan.ReadTable(ctx, f.data, bigtable.ChainFilters(filter...), f.opts.Scan,
		func() *purge { return &purge{ctx: ctx, data: f.data, family: f.family, dryRun: f.opts.DryRun} },
		(*purge).row,
		func(p *purge) {
			total += p.n
			if failed == nil {
				failed = p.err
			}
		})
	if err == nil {
		err = failed
	}
	if err != nil {
		return total, fmt.Errorf("move: deleting the expired old cells of family %q: %w", f.family, err)
	}
	return total, nil
}

// A purge deletes the cells a scan returns, row by row.
type purge struct {
	ctx    context.Context
	data   bigtable.TableAPI
	family string
	dryRun bool
	n      int64
	err    error
}

func (p *purge) row(r bigtable.Row) {
	items := r[p.family]
	if p.err != nil || len(items) == 0 {
		return
	}
	p.n += int64(len(items))
	if p.dryRun {
		return
	}
	mut := bigtable.NewMutation()
	for _, it := range items {
		_, qualifier := rules.SplitColumn(it.Column)
		mut.DeleteTimestampRange(p.family, qualifier, it.Timestamp, it.Timestamp+1000)
	}
	p.err = p.data.Apply(p.ctx, r.Key(), mut)
}
