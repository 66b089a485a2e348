package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/examples/internal/btenv"
)

// A decision is what the limiter makes of one request.
type decision string

const (
	allowed       decision = "allowed"
	refusedMinute decision = "refused by the minute limit"
	refusedDay    decision = "refused by the daily quota"
	refusedEdge   decision = "refused: counted and read in two windows"
)

// hms returns the instant h:m:s after a midnight, as an offset from it.
func hms(h, m, s int) time.Duration {
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second
}

// steps are the requests of day 1, in order: at an instant of the day, a
// user sends n requests, one after another.
var steps = []struct {
	at   time.Duration // after day 1's midnight
	user string
	n    int
}{
	{hms(23, 55, 0), "alice", 30},
	{hms(23, 55, 0), "bob", 80},
	{hms(23, 55, 0), "carol", 90},
	{hms(23, 55, 30), "bob", 40},   // 120 in the minute: the last 20 refused
	{hms(23, 56, 0), "carol", 90},  // her first 90 slid out of the minute
	{hms(23, 56, 5), "bob", 30},    // his first 80 slid out; the refused 20 still count
	{hms(23, 57, 0), "carol", 90},  // 270 in the day: the last 20 refused
	{hms(23, 57, 0), "alice", 10},  // then alice's three windows,
	{hms(23, 57, 20), "alice", 10}, // which the program watches
	{hms(23, 57, 40), "alice", 10}, // expire
}

// A limiter decides each user's requests on the counters of tbl.
type limiter struct {
	tbl   *ttl.Table
	clock *btenv.Clock
	out   io.Writer
	day1  time.Time

	// hit is the write of one request: 1 added to both counters, in one
	// mutation (one MutateRow). It is a blind write: no read, no
	// condition, no read-modify-write, so it works on an app profile that
	// refuses single-row transactions. A Mutation may be applied many
	// times, each time in the windows that hold that call's now.
	hit *ttl.Mutation
}

func newLimiter(tbl *ttl.Table, clock *btenv.Clock, out io.Writer, day1 time.Time) *limiter {
	hit := ttl.NewMutation()
	hit.Add(family, minuteCol, 1, minute)
	hit.Add(family, dayCol, 1, day)
	return &limiter{tbl: tbl, clock: clock, out: out, day1: day1, hit: hit}
}

// request counts one request of user and decides it, returning the sums
// it decided on.
//
// It counts first and decides after: the write adds 1 to both counters,
// then the reads sum them, this request included. Without a transaction
// that is what keeps the limit when requests run at once: each reads
// after its own write, so of the requests allowed, the last to write saw
// all their increments, and no more than the limit can be allowed,
// however many race (in one cluster: another cluster's increments arrive
// with replication delay). Deciding first (read, then count only if
// allowed) would let every request that read 99 through. The price, as
// in most rate limiters: a refused request counts too, so a client that
// keeps retrying keeps itself refused, and spends its daily quota doing so.
// A request whose write and reads fall on two sides of a window's edge
// is refused as well, as strict (patterns.go) says why; the story's clock
// stands still during a request, so none of its requests is.
func (l *limiter) request(ctx context.Context, user string) (d decision, inMinute, inDay int64, err error) {
	before := l.clock.Now()
	if err := l.tbl.Apply(ctx, user, l.hit); err != nil {
		return "", 0, 0, err
	}
	// Two counters, two reads: one SumCounter each, in its own windows.
	if inMinute, err = l.tbl.SumCounter(ctx, user, family, minuteCol, minute, minuteWindows); err != nil {
		return "", 0, 0, err
	}
	if inDay, err = l.tbl.SumCounter(ctx, user, family, dayCol, day, 1); err != nil {
		return "", 0, 0, err
	}
	// The quota is told first: a client it refuses should not retry
	// before midnight, whatever the minute says.
	switch {
	case inDay > quota:
		return refusedDay, inMinute, inDay, nil
	case inMinute > limit:
		return refusedMinute, inMinute, inDay, nil
	case !sameWindow(minute, before, l.clock.Now()): // a day's edge is a minute window's too
		return refusedEdge, inMinute, inDay, nil
	}
	return allowed, inMinute, inDay, nil
}

// A group is consecutive requests of a burst decided alike, with the sums
// they were decided on, first and last.
type group struct {
	d                       decision
	n                       int
	minuteFirst, minuteLast int64
	dayFirst, dayLast       int64
}

// burst sends n requests of user at the clock's now and prints their
// decisions, one line per group of equal ones.
func (l *limiter) burst(ctx context.Context, user string, n int) error {
	var groups []group
	for range n {
		d, inMinute, inDay, err := l.request(ctx, user)
		if err != nil {
			return fmt.Errorf("a request of %s: %w", user, err)
		}
		if k := len(groups) - 1; k >= 0 && groups[k].d == d {
			groups[k].n++
			groups[k].minuteLast, groups[k].dayLast = inMinute, inDay
			continue
		}
		groups = append(groups, group{d, 1, inMinute, inMinute, inDay, inDay})
	}
	// The table is under a heading with its day: the time of day will do.
	at, who, sent := l.clock.Now().UTC().Format("15:04:05"), user, fmt.Sprint(n)
	for _, g := range groups {
		line := fmt.Sprintf("%-8s  %-5s  %4s  %-30s  %-10s  %s", at, who, sent,
			fmt.Sprintf("%d %s", g.n, g.d), span(g.minuteFirst, g.minuteLast), span(g.dayFirst, g.dayLast))
		fmt.Fprintln(l.out, strings.TrimRight(line, " "))
		at, who, sent = "", "", ""
	}
	return nil
}

// tell tells the story: day 1's requests, the windows expiring, day 2.
func (l *limiter) tell(ctx context.Context) error {
	fmt.Fprintf(l.out, "\nPer user: at most %d requests in a sliding minute (the sum of the last %d\n", limit, minuteWindows)
	fmt.Fprintf(l.out, "windows of %v, each kept %v after it closes) and %d a day (a window\n", minute.Size, minute.Keep, quota)
	fmt.Fprintln(l.out, "of a day, from midnight UTC). Each request adds 1 to both counters (one")
	fmt.Fprintln(l.out, "blind write), then reads both sums (one SumCounter each), itself included,")
	fmt.Fprintln(l.out, "and is decided on them: a refused request counts too.")
	fmt.Fprintln(l.out, "\nDay 1")
	l.heading()
	for _, s := range steps {
		l.clock.Set(l.day1.Add(s.at))
		if err := l.burst(ctx, s.user, s.n); err != nil {
			return err
		}
	}
	fmt.Fprintln(l.out, "\nAt 23:56:05 the sliding minute is the windows from 23:55:10 on: bob's 80 of")
	fmt.Fprintln(l.out, "23:55:00 have left it, his 20 refused at 23:55:30 still count.")

	fmt.Fprintf(l.out, "\nAlice's minute counter as the clock moves on: ReadCounter lists the live\n")
	fmt.Fprintf(l.out, "windows, newest first; SumCounter sums the last %d. Each window's cell\n", minuteWindows)
	fmt.Fprintf(l.out, "expires %v after the window closes, as it leaves the sum.\n", minute.Keep)
	if err := l.watch(ctx, "alice", minuteCol, minute, minuteWindows,
		hms(23, 57, 40), hms(23, 58, 0), hms(23, 58, 20), hms(23, 58, 40)); err != nil {
		return err
	}
	fmt.Fprintln(l.out, "\nCarol's daily counter, before and after midnight:")
	if err := l.watch(ctx, "carol", dayCol, day, 1, hms(24, 0, 0)-time.Millisecond, hms(24, 0, 0)); err != nil {
		return err
	}

	fmt.Fprintln(l.out, "\nDay 2: a new daily window, and carol is allowed again.")
	l.heading()
	l.clock.Set(l.day1.Add(hms(24, 0, 0)))
	return l.burst(ctx, "carol", 10)
}

// heading prints the heading of burst's lines.
func (l *limiter) heading() {
	fmt.Fprintf(l.out, "%-8s  %-5s  %4s  %-30s  %-10s  %s\n", "time", "user", "sent", "decisions", "minute sum", "day sum")
}

// watch moves the clock to each instant of at (offsets from day 1's
// midnight) and prints the sum of the last n windows of the counter
// user:col and its live windows.
func (l *limiter) watch(ctx context.Context, user, col string, w ttl.Window, n int, at ...time.Duration) error {
	for _, d := range at {
		l.clock.Set(l.day1.Add(d))
		sum, err := l.tbl.SumCounter(ctx, user, family, col, w, n)
		if err != nil {
			return err
		}
		windows, err := l.tbl.ReadCounter(ctx, user, family, col, w)
		if err != nil {
			return err
		}
		live := fmt.Sprintf("%d windows live", len(windows))
		switch len(windows) {
		case 0:
			live = "no window live"
		case 1:
			live = "1 window live"
		}
		fmt.Fprintf(l.out, "at %s: sum %d, %s\n", l.when(l.clock.Now()), sum, live)
		for _, c := range windows {
			fmt.Fprintf(l.out, "  %s to %s: %d, expires %s\n", l.when(c.Start), l.when(c.End), c.Sum, l.when(c.Expires))
		}
	}
	return nil
}

// when formats an instant of the simulated clock as its time of day,
// with milliseconds when it has any, prefixed with its day from day 2 on.
func (l *limiter) when(t time.Time) string {
	s := t.UTC().Format("15:04:05")
	if t.Nanosecond() != 0 {
		s = t.UTC().Format("15:04:05.000")
	}
	if d := int(t.Sub(l.day1) / (24 * time.Hour)); d > 0 {
		s = fmt.Sprintf("day %d %s", d+1, s)
	}
	return s
}

// span formats the sums a group of requests was decided on: "7", "1–30".
func span(first, last int64) string {
	if first == last {
		return fmt.Sprint(first)
	}
	return fmt.Sprintf("%d–%d", first, last)
}
