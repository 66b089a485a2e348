package sweep

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/scan"
)

// A LeaseCheckpoint is a checkpoint that also keeps a lease, which one
// process at a time holds: what the replicas of one sweep share
// (Options.Lease). Package lease's Checkpoint, kept in a Bigtable row, is
// one. Implementations must be safe for use by multiple goroutines.
type LeaseCheckpoint interface {
	scan.Checkpoint
	// Hold takes the lease for d when it is free or expired, renews it
	// when due, and reports whether this process holds it by its local
	// deadline, which passes before another process can take it.
	Hold(ctx context.Context, d time.Duration) (bool, error)
	// Release gives up the lease, if held, so another may take it at once.
	Release(ctx context.Context) error
	// Holder returns the holder last seen, "" for none, and its expiry.
	Holder() (string, time.Time)
}

var (
	// ErrStandby reports a round not run because another replica of the
	// sweep holds its lease (Options.Lease): this one stands by.
	ErrStandby = errors.New("sweep: another replica holds the lease; this one stands by")
	// ErrLeaseLost reports a round stopped because this process no longer
	// held its lease: it delivered no further batch and saved nothing.
	ErrLeaseLost = errors.New("sweep: this process no longer holds the lease; it stopped delivering")
)

// A Role is what a Sweeper does among the replicas of its sweep.
type Role int

const (
	// RunsAlone is a sweep without a lease (Options.Lease zero).
	RunsAlone Role = iota
	// HoldsLease is the replica that holds the lease, and delivers.
	HoldsLease
	// StandsBy is a replica that another's lease keeps from delivering.
	StandsBy
)

// String returns "alone", "holds the lease" or "stands by".
func (r Role) String() string {
	switch r {
	case HoldsLease:
		return "holds the lease"
	case StandsBy:
		return "stands by"
	}
	return "alone"
}

// Status is what a Sweeper last knew of itself, for a readiness probe.
type Status struct {
	// Role says whether it runs alone, holds the lease or stands by.
	Role Role
	// Holder names the lease's holder as last seen (itself when it holds
	// it); "" alone, or when none was seen.
	Holder string
	// Finished is when its last round, or its last check of the lease as
	// a replica standing by, finished; zero before the first.
	Finished time.Time
}

// status is a Sweeper's Status, and whether it held the lease, under its
// own lock: Status never waits for a round.
type status struct {
	mu   sync.Mutex
	s    Status
	held bool
}

// Status returns what the Sweeper last knew of its role and its last
// round. It is safe to call from any goroutine at any time, and never
// waits for a round or reaches Bigtable.
func (s *Sweeper) Status() Status {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	return s.st.s
}

// checkLease refuses a Lease without a checkpoint that keeps one.
func (s *Sweeper) checkLease() error {
	switch {
	case s.o.Lease < 0:
		return fmt.Errorf("%w: lease %v: want a duration not negative", ttl.ErrInvalidOption, s.o.Lease)
	case s.o.Lease == 0:
		return nil
	}
	if _, ok := s.o.Checkpoint.(LeaseCheckpoint); !ok {
		return fmt.Errorf("%w: Options.Lease (%v) needs a checkpoint that keeps a lease (a LeaseCheckpoint, such as package lease's, kept in Bigtable), not %T",
			ttl.ErrInvalidOption, s.o.Lease, s.o.Checkpoint)
	}
	return nil
}

// hold makes sure this process holds the lease, and notes the outcome.
func (s *Sweeper) hold(ctx context.Context) (bool, error) {
	ok, err := s.lc.Hold(ctx, s.o.Lease)
	holder, _ := s.lc.Holder()
	s.st.mu.Lock()
	acquired, lost := ok && !s.st.held, !ok && s.st.held
	s.st.held = ok
	s.st.s.Role, s.st.s.Holder = StandsBy, holder
	if ok {
		s.st.s.Role = HoldsLease
	}
	s.st.mu.Unlock()
	s.m.lease(ctx, ok, acquired, lost)
	return ok, err
}

// stillHeld returns nil when this process holds the lease, or has none to
// hold, and otherwise an error wrapping ErrLeaseLost naming what it was
// about to do.
func (s *Sweeper) stillHeld(ctx context.Context, what string) error {
	if s.lc == nil {
		return nil
	}
	ok, err := s.hold(ctx)
	if ok {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: before %s: %w", ErrLeaseLost, what, err)
	}
	return fmt.Errorf("%w: before %s", ErrLeaseLost, what)
}

// finished notes that a round or a check of the lease finished now.
func (s *Sweeper) finished() {
	now := s.now()
	s.st.mu.Lock()
	s.st.s.Finished = now
	s.st.mu.Unlock()
}

// release gives up the lease on a clean stop, even when ctx is done.
func (s *Sweeper) release(ctx context.Context) {
	if s.lc == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.o.Lease)
	defer cancel()
	if s.lc.Release(ctx) == nil {
		s.st.mu.Lock()
		held := s.st.held
		s.st.held, s.st.s.Role = false, StandsBy
		s.st.mu.Unlock()
		if held {
			s.m.lease(ctx, false, false, false)
		}
	}
}

// wait waits d, as Every does between rounds; a holder of the lease
// renews it meanwhile, waking every third of the lease.
func (s *Sweeper) wait(ctx context.Context, d time.Duration) error {
	for s.lc != nil && d > 0 && s.Status().Role == HoldsLease {
		step := min(d, s.o.Lease/3)
		if err := s.sleep(ctx, step); err != nil {
			return err
		}
		d -= step
		_, _ = s.hold(ctx) // a holder that lost it stands by at the next round
	}
	if d > 0 {
		return s.sleep(ctx, d)
	}
	return nil
}

// leased is the checkpoint of a sweep with a lease: it saves only while
// this process holds the lease.
type leased struct {
	LeaseCheckpoint
	s *Sweeper
}

// Save saves r if this process still holds the lease, and otherwise
// refuses with ErrLeaseLost, saving nothing.
func (c leased) Save(ctx context.Context, r *scan.Record) error {
	if err := c.s.stillHeld(ctx, "saving the checkpoint"); err != nil {
		return err
	}
	if err := c.LeaseCheckpoint.Save(ctx, r); err != nil {
		_, _ = c.s.hold(ctx) // a refused save may have lost the lease
		return err
	}
	return nil
}
