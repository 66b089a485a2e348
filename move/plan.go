package move

import (
	"context"
	"fmt"

	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/policy"
)

// Plan reports what the move does, without changing anything: the
// policies before, during and after, the boundary, the cells on each side
// and which of the old are live, the old cells stamped on the wrong side
// of the boundary, when the move can end, and what keeps each step from
// being taken.
func (f *Family) Plan(ctx context.Context) (*Report, error) {
	r, err := f.counted(ctx, "Plan")
	if err != nil {
		return r, err
	}
	r.DryRun = true
	f.plan(r)
	return r, nil
}

// plan says what the next steps are and what blocks them.
func (f *Family) plan(r *Report) {
	m := f.m
	switch {
	case !r.Started && !samePolicy(r.Found, r.Window) && !samePolicy(r.Found, r.Final):
		r.Actions = append(r.Actions, fmt.Sprintf("before %s: configure every process with the move, then start it: GC policy %s → %s",
			text.Time(m.Start), policy.Describe(r.Found), policy.Describe(r.Window)))
	case !r.Started:
		r.Actions = append(r.Actions, fmt.Sprintf("at %s writers switch to %v", text.Time(m.Start), m.To))
	}
	if r.Misplaced.Cells > 0 {
		r.Actions = append(r.Actions, fmt.Sprintf("start rewrites %s stamped at or above the boundary in the new encoding",
			text.Plural(int(r.Misplaced.Cells), "old cell", "old cells")))
	}
	if !r.Started && r.Now.Add(m.Skew).After(m.Start) {
		r.Blockers = append(r.Blockers, fmt.Sprintf("the start, %s, is less than the skew (%v) away: processes whose clocks run ahead may have started",
			text.Time(m.Start), m.Skew))
	}
	if r.State == Finished {
		r.Actions = append(r.Actions, "finished: the family has the new strategy's policy; configure the processes with "+m.To.String())
		return
	}
	if !r.Started {
		r.Blockers = append(r.Blockers, "the move has not started: it cannot finish before "+text.Time(m.Start))
	}
	switch {
	case r.OldNeverExpire.Cells > 0 && !f.rule.Rewritable():
		r.Blockers = append(r.Blockers, fmt.Sprintf("%s, and cells cannot be rewritten between sequence numbers and times: "+
			"the move never ends by itself; give the old cells an end (Old: For or Until), or finish with data loss",
			text.Plural(int(r.OldNeverExpire.Cells), "live cell of the old rule never expires", "live cells of the old rule never expire")))
	case r.OldNeverExpire.Cells > 0:
		r.Blockers = append(r.Blockers, fmt.Sprintf("%s: rewrite them (or finish with data loss)",
			text.Plural(int(r.OldNeverExpire.Cells), "live cell of the old rule never expires", "live cells of the old rule never expire")))
	case r.OldLive.Cells > 0:
		r.Blockers = append(r.Blockers, fmt.Sprintf("%s of the old rule live until %s (the skew included): wait, or rewrite them",
			text.Plural(int(r.OldLive.Cells), "cell", "cells"), text.Time(r.LastExpiry.Add(m.Skew))))
	case r.Started:
		r.Actions = append(r.Actions, fmt.Sprintf("finish: no cell of the old rule is live; GC policy %s → %s", policy.Describe(r.Found), policy.Describe(r.Final)))
	}
}
