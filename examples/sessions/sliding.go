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
func slide(ctx context.Context, tbl *ttl.Table, clock *recordingClock) error {
	fmt.Printf("\nSliding expiration: ttl.KeepAlive(%v), whose slack is %v (idle/4)\n\n", idle, slack)
	var t0 time.Time // carol's save
	for _, id := range []string{kept, plain} {
		m := ttl.NewMutation()
		m.Replace(family, "user", []byte(id), ttl.For(idle))
		if err := tbl.Apply(ctx, id, m); err != nil {
			return err
		}
		if t0.IsZero() {
			t0 = clock.Last()
		}
	}
	fmt.Printf("%s and %s saved at T = %s with For(%v), then read every %v for %v:\n",
		kept, plain, clockTime(t0), idle, readEvery, readFor)
	fmt.Printf("%s with ttl.KeepAlive(%v), %s with plain reads.\n\n", kept, idle, plain)
	rel := func(t time.Time) string { return fmt.Sprintf("T+%.2fs", t.Sub(t0).Seconds()) }
	ms := func(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

	expires := t0.Add(idle).Truncate(time.Millisecond) // as the table stores it
	var lastRead time.Time
	plainLive := true
	for next := t0.Add(readEvery); next.Sub(t0) <= readFor; next = next.Add(readEvery) {
		time.Sleep(time.Until(next))
		r, err := tbl.ReadRow(ctx, kept, ttl.KeepAlive(idle))
		if err != nil {
			return err
		}
		lastRead = clock.Last()
		if len(r) == 0 {
			return fmt.Errorf("%s expired at %s while it was read", kept, rel(lastRead))
		}
		// A renewed cell is returned with its new timestamp.
		exp, _ := tbl.ExpiresAt(r[family][0])
		what := "nothing due"
		if !exp.Equal(expires) {
			what = "renewed    "
		}
		expires = exp
		fmt.Printf("  %s  %s read: %s  expires %s, the read + %s\n", rel(lastRead), kept, what, rel(exp), ms(exp.Sub(lastRead)))
		if plainLive {
			r, err := tbl.ReadRow(ctx, plain)
			if err != nil {
				return err
			}
			if plainLive = len(r) > 0; !plainLive {
				fmt.Printf("  %s  %s read: gone (saved for %v, and plain reads do not renew)\n", rel(clock.Last()), plain, idle)
			}
		}
	}
	if plainLive {
		return fmt.Errorf("%s, saved for %v, was still returned at %s", plain, idle, rel(clock.Last()))
	}

	fmt.Printf("\nLast read of %s at %s; from then on, plain reads only:\n\n", kept, rel(lastRead))
	lastSeen, firstHidden, err := watch(ctx, tbl, clock, kept, expires)
	if err != nil {
		return err
	}
	fmt.Printf("  last returned at      the last read + %s\n", ms(lastSeen.Sub(lastRead)))
	fmt.Printf("  first not returned at the last read + %s\n", ms(firstHidden.Sub(lastRead)))
	// Expiries are rounded down to the millisecond.
	if after := expires.Sub(lastRead); after < idle-time.Millisecond || after > idle+slack {
		return fmt.Errorf("%s expired %v after its last read, not within [%v, %v]", kept, after, idle, idle+slack)
	}
	fmt.Printf("\n%s expired %s after her last read: at least idle (%v), at most idle + slack (%v).\n",
		kept, ms(expires.Sub(lastRead)), idle, idle+slack)
	return nil
}

// slidingRows are the rows slide writes, deleted before a run.
var slidingRows = []string{kept, plain}
