package main

import (
	"context"
	"fmt"
	"time"

	"github.com/cellttl/ttl"
)

// Sliding expiration: a session that lives as long as it is read.
const (
	idle      = time.Second             // the sessions' idle time
	slack     = idle / 4                // what KeepAlive(idle) adds to a renewal
	readEvery = 200 * time.Millisecond  // how often the sessions are read
	readFor   = 2800 * time.Millisecond // for how long: well past idle
)

// The sliding sessions: both saved for idle, both read every readEvery for
// readFor; only carol's reads keep her session alive.
const (
	kept  = "carol" // read with ttl.KeepAlive(idle)
	plain = "dave"  // read without
)

// slide saves two sessions for idle, reads them every readEvery for
// readFor, one with KeepAlive and one without, and prints what each read
// finds: the one read without KeepAlive expires idle after it was saved;
// the other is renewed while it is read, and expires at least idle and at
// most idle + slack after its last read.
func (d *demo) slide(ctx context.Context) error {
	fmt.Fprintf(d.out, "\nSliding expiration: ttl.KeepAlive(%v), whose slack is %v (idle/4)\n\n", idle, slack)
	t0, err := d.save(ctx)
	if err != nil {
		return err
	}
	lastRead, expires, err := d.readWhileKept(ctx, t0)
	if err != nil {
		return err
	}
	return d.watchKept(ctx, t0, lastRead, expires)
}

// save saves both sessions for idle, and returns the clock reading of the
// first save, carol's: T of this part of the story.
func (d *demo) save(ctx context.Context) (t0 time.Time, err error) {
	for _, id := range []string{kept, plain} {
		m := ttl.NewMutation()
		m.Replace(family, "user", []byte(id), ttl.For(idle))
		if err := d.tbl.Apply(ctx, id, m); err != nil {
			return t0, err
		}
		if t0.IsZero() {
			t0 = d.clock.Last()
		}
	}
	fmt.Fprintf(d.out, "%s and %s saved at T = %s with For(%v), then read every %v for %v:\n",
		kept, plain, clockTime(t0), idle, readEvery, readFor)
	fmt.Fprintf(d.out, "%s with ttl.KeepAlive(%v), %s with plain reads.\n\n", kept, idle, plain)
	return t0, nil
}

// readWhileKept reads both sessions every readEvery for readFor from t0,
// carol with KeepAlive, and prints what each read finds: carol's session
// must be returned at every read, dave's must be gone by the end. It
// returns the clock reading of carol's last read and her expiry then.
func (d *demo) readWhileKept(ctx context.Context, t0 time.Time) (lastRead, expires time.Time, err error) {
	expires = t0.Add(idle).Truncate(time.Millisecond) // as the table stores it
	plainLive := true
	for next := t0.Add(readEvery); next.Sub(t0) <= readFor; next = next.Add(readEvery) {
		d.clock.Sleep(next.Sub(d.clock.Now()))
		r, err := d.tbl.ReadRow(ctx, kept, ttl.KeepAlive(idle))
		if err != nil {
			return lastRead, expires, err
		}
		lastRead = d.clock.Last()
		if len(r) == 0 {
			return lastRead, expires, fmt.Errorf("%s expired at %s while it was read", kept, relT(lastRead, t0))
		}
		// A renewed cell is returned with its new timestamp.
		exp, _ := d.tbl.ExpiresAt(r[family][0])
		what := "nothing due"
		if !exp.Equal(expires) {
			what = "renewed    "
		}
		expires = exp
		fmt.Fprintf(d.out, "  %s  %s read: %s  expires %s, the read + %s\n",
			relT(lastRead, t0), kept, what, relT(exp, t0), secs(exp.Sub(lastRead)))
		if plainLive {
			r, err := d.tbl.ReadRow(ctx, plain)
			if err != nil {
				return lastRead, expires, err
			}
			if plainLive = len(r) > 0; !plainLive {
				fmt.Fprintf(d.out, "  %s  %s read: gone (saved for %v, and plain reads do not renew)\n",
					relT(d.clock.Last(), t0), plain, idle)
			}
		}
	}
	if plainLive {
		return lastRead, expires, fmt.Errorf("%s, saved for %v, was still returned at %s", plain, idle, relT(d.clock.Last(), t0))
	}
	return lastRead, expires, nil
}

// watchKept watches carol's session expire once her reads have stopped,
// and checks that it did at least idle and at most idle + slack after her
// last read.
func (d *demo) watchKept(ctx context.Context, t0, lastRead, expires time.Time) error {
	fmt.Fprintf(d.out, "\nLast read of %s at %s; from then on, plain reads only:\n\n", kept, relT(lastRead, t0))
	lastSeen, firstHidden, err := d.watch(ctx, kept, expires)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.out, "  last returned at      the last read + %s\n", secs(lastSeen.Sub(lastRead)))
	fmt.Fprintf(d.out, "  first not returned at the last read + %s\n", secs(firstHidden.Sub(lastRead)))
	// Expiries are rounded down to the millisecond.
	if after := expires.Sub(lastRead); after < idle-time.Millisecond || after > idle+slack {
		return fmt.Errorf("%s expired %v after its last read, not within [%v, %v]", kept, after, idle, idle+slack)
	}
	fmt.Fprintf(d.out, "\n%s expired %s after her last read: at least idle (%v), at most idle + slack (%v).\n",
		kept, secs(expires.Sub(lastRead)), idle, idle+slack)
	return nil
}

// relT formats t as an offset from t0 in hundredths of a second: "T+1.45s".
func relT(t, t0 time.Time) string { return fmt.Sprintf("T+%.2fs", t.Sub(t0).Seconds()) }

// secs formats d in thousandths of a second: "1.250s".
func secs(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

// slidingRows are the rows slide writes, deleted before a run.
var slidingRows = []string{kept, plain}
