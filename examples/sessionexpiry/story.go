package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/examples/internal/btenv"
	"github.com/cellttl/ttl/sweep"
)

// life is how long a session is saved for, and renewed for.
const life = 5 * time.Minute

// A session is one row: its id is the row key, its token the value of
// its one cell.
type session struct {
	id, token string
	life      time.Duration // saved with ttl.For(life)
	story     string        // what happens to it, for the summary
	noEvent   string        // why the summary shows no event for it, if it does not
}

// sessions are saved at T0, in row order.
var sessions = []session{
	{"alice", "a-1", life, "left alone", ""},
	{"bob", "b-1", life, "Touch at 09:04, For(5m)", ""},
	{"carol", "c-1", life, "read with KeepAlive(5m) 09:01–09:06", ""},
	{"dave", "d-1", life, "logged out at 09:02", "none: deleted before it expired"},
	{"erin", "e-1", life, "replaced at 09:03, For(5m)", ""},
	{"frank", "f-1", time.Hour, "left alone", "none yet: live"},
}

// minutes is how many minutes the story runs after T0: until carol's
// session, kept alive until her last read at 09:06, has expired and been
// reported.
const minutes = 12

// A step is something a user does at a minute of the story, before that
// minute's round of the sweep.
type step struct {
	minute int // after T0
	do     func(s *story, ctx context.Context) error
}

// steps are the users' steps, in order.
var steps = []step{
	{1, (*story).keepAlive}, {2, (*story).keepAlive}, {2, (*story).logOut},
	{3, (*story).keepAlive}, {3, (*story).replace},
	{4, (*story).keepAlive}, {4, (*story).touch},
	{5, (*story).keepAlive}, {6, (*story).keepAlive},
}

// rawMinute is the minute at which the story reads the raw cells before
// and after the sweep's round: the first round that reports, and deletes,
// an expired session.
const rawMinute = 6

// A story is the example as it is told: where it prints, the sessions'
// table (through the library and raw), the clock, and the sweep.
type story struct {
	out     io.Writer
	tbl     *ttl.Table        // the sessions, read and written through the library
	raw     bigtable.TableAPI // the same table, read with the plain client
	clock   *btenv.Clock      // the simulated clock of tbl and the sweep
	t0      time.Time         // when the sessions are saved
	sweeper *sweep.Sweeper
	log     *consumer // the consumer of the sweep's events
}

// tell saves the sessions, then moves the clock a minute at a time: at
// each, the users' steps, then a round of the sweep; and at rawMinute, a
// raw read before and after the round. It ends with a raw read of what
// the sweep left and a summary of the events.
func (s *story) tell(ctx context.Context) error {
	if err := s.save(ctx); err != nil {
		return err
	}
	fmt.Fprintln(s.out, "\nEvery minute: the users' steps, then one round of the sweep (row events,")
	fmt.Fprintf(s.out, "margin %v, deleting what it reports), whose consumer logs each event.\n\n", sweep.DefaultMargin)
	next := 0
	for m := 1; m <= minutes; m++ {
		s.clock.Set(s.t0.Add(time.Duration(m) * time.Minute))
		for ; next < len(steps) && steps[next].minute == m; next++ {
			if err := steps[next].do(s, ctx); err != nil {
				return err
			}
		}
		if m == rawMinute {
			if err := s.showRaw(ctx, "before the round"); err != nil {
				return err
			}
		}
		if err := s.round(ctx); err != nil {
			return err
		}
		if m == rawMinute {
			if err := s.showRaw(ctx, "after the round"); err != nil {
				return err
			}
		}
	}
	if err := s.showRaw(ctx, "at the end"); err != nil {
		return err
	}
	return s.summary()
}

// save saves the sessions, each with its lifetime, in one bulk call at
// T0, and prints each one's expiry.
func (s *story) save(ctx context.Context) error {
	rows := make([]string, len(sessions))
	muts := make([]*ttl.Mutation, len(sessions))
	for i, ses := range sessions {
		rows[i] = ses.id
		muts[i] = ttl.NewMutation()
		muts[i].Set(family, column, []byte(ses.token), ttl.For(ses.life))
	}
	errs, err := s.tbl.ApplyBulk(ctx, rows, muts)
	if err != nil {
		return err
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "\nSessions saved at %s (simulated clock), one cell each in %s:%s:\n\n", clockTime(s.t0), family, column)
	for _, ses := range sessions {
		fmt.Fprintf(s.out, "  %-5s  %-11v  expires %s\n", ses.id, ttl.For(ses.life), clockTime(s.t0.Add(ses.life)))
	}
	return nil
}

// keepAlive is carol's read of her session with ttl.KeepAlive(life): it
// renews the session when it would expire within life of the read.
func (s *story) keepAlive(ctx context.Context) error {
	before, err := s.expiry(ctx, "carol")
	if err != nil {
		return err
	}
	r, err := s.tbl.ReadRow(ctx, "carol", ttl.KeepAlive(life))
	if err != nil {
		return err
	}
	// A renewed cell is returned with its new timestamp.
	exp, _ := s.tbl.ExpiresAt(r[family][0])
	what := "nothing due"
	if !exp.Equal(before) {
		what = "renewed"
	}
	s.logf("carol reads her session with KeepAlive(%v): %s, expires %s", life, what, clockTime(exp))
	return nil
}

// logOut is dave logging out: his session's row is deleted.
func (s *story) logOut(ctx context.Context) error {
	m := ttl.NewMutation()
	m.DeleteRow()
	if err := s.tbl.Apply(ctx, "dave", m); err != nil {
		return err
	}
	s.logf("dave logs out: his row is deleted")
	return nil
}

// replace is erin signing in again: her session is replaced by a new
// token, saved for life. Replace deletes the column first, so the old
// token's cell is gone, not left to expire.
func (s *story) replace(ctx context.Context) error {
	m := ttl.NewMutation()
	m.Replace(family, column, []byte("e-2"), ttl.For(life))
	if err := s.tbl.Apply(ctx, "erin", m); err != nil {
		return err
	}
	exp, err := s.expiry(ctx, "erin")
	if err != nil {
		return err
	}
	s.logf("erin signs in again: Replace with token e-2, For(%v), expires %s", life, clockTime(exp))
	return nil
}

// touch renews bob's session for life with Table.Touch.
func (s *story) touch(ctx context.Context) error {
	touched, err := s.tbl.Touch(ctx, "bob", family, column, ttl.For(life))
	if err != nil {
		return err
	}
	if !touched {
		return errors.New("bob's session was not live to touch")
	}
	exp, err := s.expiry(ctx, "bob")
	if err != nil {
		return err
	}
	s.logf("bob's session: Touch with For(%v), expires %s", life, clockTime(exp))
	return nil
}

// expiry reads row's session through the Table and returns its expiry.
func (s *story) expiry(ctx context.Context, row string) (time.Time, error) {
	r, err := s.tbl.ReadRow(ctx, row)
	if err != nil {
		return time.Time{}, err
	}
	if len(r[family]) == 0 {
		return time.Time{}, fmt.Errorf("%s's session is not live", row)
	}
	exp, _ := s.tbl.ExpiresAt(r[family][0])
	return exp, nil
}

// showRaw reads every stored cell with the plain bigtable client, no
// filter, and prints each with its expiry and whether it has expired.
func (s *story) showRaw(ctx context.Context, when string) error {
	var lines []string
	err := s.raw.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		for _, item := range r[family] {
			exp, _ := s.tbl.ExpiresAt(item)
			state := "live"
			if !exp.After(s.clock.Now()) {
				state = "expired, stored until GC or a sweep deletes it"
			}
			lines = append(lines, fmt.Sprintf("            %-5s  %-3s  expires %s  %s", r.Key(), item.Value, clockTime(exp), state))
		}
		return true
	})
	if err != nil {
		return err
	}
	s.logf("raw read, no filter, %s: %s", when, plural(len(lines), "cell"))
	for _, l := range lines {
		fmt.Fprintln(s.out, l)
	}
	return nil
}

// summary prints, for each session, what happened to it and the event
// the consumer logged for it. A session that should have had an event and
// did not is an error.
func (s *story) summary() error {
	fmt.Fprintln(s.out, "\nsession  saved until  what happened                         event")
	for _, ses := range sessions {
		event := ses.noEvent
		e, ok := s.log.events[ses.id]
		switch {
		case ok:
			event = fmt.Sprintf("expired at %s, logged at %s", clockTime(e.Expired), clockTime(s.log.at[ses.id]))
		case event == "":
			return fmt.Errorf("session %s expired, and the consumer logged no event for it", ses.id)
		}
		fmt.Fprintf(s.out, "%-7s  %-11s  %-36s  %s\n", ses.id, clockTime(s.t0.Add(ses.life)), ses.story, event)
	}
	return nil
}

// logf prints a line of the story, after the clock's time.
func (s *story) logf(format string, args ...any) {
	fmt.Fprintf(s.out, "%s  %s\n", clockTime(s.clock.Now()), fmt.Sprintf(format, args...))
}

// clockTime formats an instant of the simulated day as its time of day.
func clockTime(t time.Time) string { return t.UTC().Format("15:04:05") }
