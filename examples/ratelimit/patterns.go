package main

import (
	"context"
	"time"

	"github.com/cellttl/ttl"
)

// The two ways to limit requests on a counter that docs/counters.md
// describes, on one counter each, for any number of servers at once: a
// server calls strict or refunding for each request, on a ttl.Table whose
// clock is now. The story (limiter.request) is strict, on two counters.

// A rule is one limit: at most max requests in the last n windows of w,
// counted in the column col of family.
type rule struct {
	col string
	w   ttl.Window
	n   int
	max int64
}

// add returns the mutation that adds delta to r's counter.
func (r rule) add(delta int64) *ttl.Mutation {
	m := ttl.NewMutation()
	m.Add(family, r.col, delta, r.w)
	return m
}

// strict counts a request of row, then decides it on the sum of the last
// n windows, which includes it; a refused request keeps its count. Of the
// requests allowed whose counts lie in any n windows, the last to write
// read all their counts, in windows that hold them all, so no more than
// max are allowed, however many servers race (with clocks that agree).
// The price: the sum counts requests received, allowed or not, so a
// client that keeps sending max or more per n windows is refused for
// good.
//
// The write and the read each take the table's clock, and at a window's
// edge they may fall on either side of it: the read's windows would then
// leave out the oldest window of the write's, whose counts the sum would
// miss. Such a request is refused too (sameWindow), which is why strict
// takes the clock itself before and after.
func strict(ctx context.Context, tbl *ttl.Table, now func() time.Time, row string, r rule) (allowed bool, sum int64, err error) {
	before := now()
	if err := tbl.Apply(ctx, row, r.add(1)); err != nil {
		return false, 0, err
	}
	if sum, err = tbl.SumCounter(ctx, row, family, r.col, r.w, r.n); err != nil {
		return false, 0, err
	}
	return sum <= r.max && sameWindow(r.w, before, now()), sum, nil
}

// refunding is strict, then gives a refused request's count back (adds
// −1), so that the sum counts only what was allowed: a client that keeps
// retrying is let through as the allowed requests slide out. But the −1
// lands in the window of its own now: a request counted before a
// window's edge and refunded after it takes 1 from a window that never
// held its count, and a span of n windows starting there sums one too
// few. So up to max + k are allowed in n windows, where k is the number
// of requests in flight (counted, not yet refunded) at the span's start:
// with S servers deciding one request at a time, max + S.
func refunding(ctx context.Context, tbl *ttl.Table, now func() time.Time, row string, r rule) (allowed bool, sum int64, err error) {
	allowed, sum, err = strict(ctx, tbl, now, row, r)
	if err != nil || allowed {
		return allowed, sum, err
	}
	return false, sum, refund(ctx, tbl, row, r)
}

// refund gives back the count of a request of row that r refused.
func refund(ctx context.Context, tbl *ttl.Table, row string, r rule) error {
	return tbl.Apply(ctx, row, r.add(-1))
}

// sameWindow reports whether a and b, from 1970 on, are in one window of
// w (windows are aligned to the epoch).
func sameWindow(w ttl.Window, a, b time.Time) bool {
	size := w.Size.Milliseconds()
	return a.UnixMilli()/size == b.UnixMilli()/size
}
