package lease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
)

// RenewEvery returns how often a holder of a lease of d renews it: a
// third of d. Hold renews when that much has passed since the last
// renewal began.
func RenewEvery(d time.Duration) time.Duration { return d / 3 }

// Deadline returns how long after a successful renewal began a holder of a
// lease of d stops treating itself as the holder: two thirds of d, which
// leaves a third of the lease for the skew between the replicas' clocks
// and the time from a check to the write it allows.
func Deadline(d time.Duration) time.Duration { return d - d/3 }

// Acquire takes the lease for d, when the row records none, a released
// one or an expired one, and reports whether this process holds it. A
// process that holds it already gets true, and renews it when due (as
// Hold). false with a nil error means another process holds it, or took
// it first. A d not positive is refused with ttl.ErrInvalidOption; an
// app profile that refuses single-row transactions with
// ttl.ErrTransactionNotAllowed.
func (c *Checkpoint) Acquire(ctx context.Context, d time.Duration) (bool, error) {
	if d <= 0 {
		return false, fmt.Errorf("%w: lease: a lease of %v: want a positive duration", ttl.ErrInvalidOption, d)
	}
	if c.Held() {
		return c.Hold(ctx, d)
	}
	c.op.Lock()
	defer c.op.Unlock()
	c.drop()
	r, err := c.read(ctx, false)
	if err != nil {
		return false, err
	}
	c.observe(r.gen, r.lease)
	start := c.now()
	if r.lease.token != "" && start.Before(r.lease.expiry) {
		return false, nil
	}
	token := random(8)
	m := bigtable.NewMutation()
	l := leaseState{holder: c.holder, token: token, expiry: start.Add(d)}
	c.setLease(m, l)
	next, ok, err := c.write(ctx, r.gen, m, "taking the lease")
	if err != nil || !ok {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen, c.seen, c.token, c.d = next, l, token, d
	c.renewed, c.deadline = start, start.Add(Deadline(d))
	return true, nil
}

// setLease adds to m the lease l.
func (c *Checkpoint) setLease(m *bigtable.Mutation, l leaseState) {
	c.set(m, colHolder, l.holder)
	c.set(m, colToken, l.token)
	c.set(m, colExpiry, l.expiry.UTC().Format(time.RFC3339Nano))
}

// Renew extends the lease this process holds to its duration from now,
// and moves its local deadline (Deadline) from the instant the renewal
// began. It refuses with ErrLeaseLost, writing nothing, when this process
// does not hold the lease: its deadline passed, or the row changed. An
// error reaching Bigtable leaves the lease held until its deadline.
func (c *Checkpoint) Renew(ctx context.Context) error {
	c.op.Lock()
	defer c.op.Unlock()
	start := c.now()
	c.mu.Lock()
	gen, token, d, deadline := c.gen, c.token, c.d, c.deadline
	c.mu.Unlock()
	if token == "" {
		return fmt.Errorf("%w: renewing the lease of %s: this process does not hold it", ErrLeaseLost, c)
	}
	if !start.Before(deadline) {
		c.drop()
		return fmt.Errorf("%w: renewing the lease of %s: its local deadline %s passed", ErrLeaseLost, c, deadline.UTC().Format(time.RFC3339Nano))
	}
	l := leaseState{holder: c.holder, token: token, expiry: start.Add(d)}
	m := bigtable.NewMutation()
	c.set(m, colExpiry, l.expiry.UTC().Format(time.RFC3339Nano))
	next, ok, err := c.write(ctx, gen, m, "renewing the lease")
	if err != nil {
		return err
	}
	if !ok {
		c.drop()
		return fmt.Errorf("%w: renewing the lease of %s: the row changed since this process last wrote it", ErrLeaseLost, c)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen, c.seen = next, l
	c.renewed, c.deadline = start, start.Add(Deadline(d))
	return nil
}

// Hold makes sure this process holds the lease, for d: it takes it as
// Acquire when it does not, renews it when a third of it passed since the
// last renewal began (RenewEvery), and otherwise reaches no server. It
// reports whether this process holds the lease, by its local deadline. A
// renewal that fails to reach Bigtable is tried again at the next call,
// and the lease is held until its deadline; the error is returned only
// when the lease is not held.
func (c *Checkpoint) Hold(ctx context.Context, d time.Duration) (bool, error) {
	if !c.Held() {
		return c.Acquire(ctx, d)
	}
	c.mu.Lock()
	due := !c.now().Before(c.renewed.Add(RenewEvery(c.d)))
	c.mu.Unlock()
	if !due {
		return true, nil
	}
	err := c.Renew(ctx)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrLeaseLost):
		return false, nil
	case c.Held():
		return true, nil
	}
	return false, err
}

// Held reports whether this process holds the lease: it took it and has
// not passed its local deadline, nor seen another take it. It reaches no
// server.
func (c *Checkpoint) Held() bool {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token != "" && now.Before(c.deadline)
}

// Holder returns the holder the row named when this process last read or
// wrote it, and the expiry of its lease then, which may have passed; ""
// when it named none. It reaches no server.
func (c *Checkpoint) Holder() (string, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen.token == "" {
		return "", time.Time{}
	}
	return c.seen.holder, c.seen.expiry
}

// Release gives up the lease this process holds, so that another can take
// it at once, and does nothing when it holds none. It writes nothing when
// the row changed (another took the lease).
func (c *Checkpoint) Release(ctx context.Context) error {
	c.op.Lock()
	defer c.op.Unlock()
	c.mu.Lock()
	gen, token := c.gen, c.token
	c.token = ""
	c.mu.Unlock()
	if token == "" {
		return nil
	}
	m := bigtable.NewMutation()
	for _, col := range []string{colHolder, colToken, colExpiry} {
		m.DeleteCellsInColumn(Family, col)
	}
	next, ok, err := c.write(ctx, gen, m, "releasing the lease")
	if err != nil || !ok {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen, c.seen = next, leaseState{}
	return nil
}
