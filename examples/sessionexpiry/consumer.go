package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/examples/internal/btenv"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

// newSweeper returns the sweep of the sessions' family: one event per
// session (sweep.Row) once its last live cell has expired, reported from
// the clock's now on, and the expired cells deleted once reported. Its
// checkpoint is in memory, for the life of the program; a service gives it
// a scan.FileCheckpoint, so that a restarted sweep resumes where it
// stopped and reports nothing twice.
func newSweeper(env *btenv.Env, families map[string]ttl.Strategy, clock *btenv.Clock) (*sweep.Sweeper, error) {
	return sweep.New(env.Admin, env.Table, env.Name, families, sweep.Options{
		Granularity: sweep.Row,
		Since:       clock.Now(),
		Delete:      true,
		Scan:        scan.Options{Now: clock.Now},
	})
}

// round runs one round of the sweep: the consumer logs the events as they
// are delivered, then the story prints what the round did.
func (s *story) round(ctx context.Context) error {
	r, err := s.sweeper.Once(ctx, s.log.deliver)
	if err != nil {
		return err
	}
	if !r.Complete() {
		return fmt.Errorf("the sweep's round is not complete: %v", r)
	}
	did := "no event"
	if r.Events > 0 {
		did = fmt.Sprintf("%s, %s, deleted in %s", plural(r.Events, "event"), plural(r.Expired.Cells, "expired cell"), plural(r.Deleted, "row"))
	}
	s.logf("sweep: expiries after %s up to %s: %s", clockTime(r.From), clockTime(r.Until), did)
	return nil
}

// A consumer is what a service runs on the sweep's events: it logs each
// session that expired, once.
type consumer struct {
	out   io.Writer
	clock *btenv.Clock

	// seen holds the IDs of the events logged: a sweep that stopped while
	// delivering a batch delivers it again when run again, and the ID is
	// how a consumer recognizes the repeats.
	seen map[string]bool

	events map[string]sweep.Event // each session's event, by row
	at     map[string]time.Time   // when it was logged
}

// newConsumer returns a consumer that logs to out, with the times of
// clock.
func newConsumer(out io.Writer, clock *btenv.Clock) *consumer {
	return &consumer{out: out, clock: clock, seen: map[string]bool{}, events: map[string]sweep.Event{}, at: map[string]time.Time{}}
}

// deliver is the consumer as a sweep.Deliver: it logs "session <id>
// expired at <time>" for each event it has not logged before. A consumer
// that sends the events on (a queue, a log-out service) returns an error
// when it could not; the sweep then delivers the batch again next round.
func (c *consumer) deliver(_ context.Context, events []sweep.Event) error {
	for _, e := range events {
		if c.seen[e.ID()] {
			continue
		}
		c.seen[e.ID()] = true
		c.events[e.Row], c.at[e.Row] = e, c.clock.Now()
		fmt.Fprintf(c.out, "%s  session %s expired at %s\n", clockTime(c.clock.Now()), e.Row, clockTime(e.Expired))
	}
	return nil
}

// plural returns n and what, with an s unless n is 1: "1 event", "2 events".
func plural[N int | int64](n N, what string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
