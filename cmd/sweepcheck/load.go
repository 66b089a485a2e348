package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
)

// A load writes sessions over a span of time, renews some of them before
// they expire, and records each session's final expiry: the timestamp of
// its newest cell, read back after every write.
type load struct {
	tbl      *ttl.Table
	raw      bigtable.TableAPI // the same table, read without the library's filter
	family   string
	sessions int
	span     time.Duration // sessions start spread over it
	life     [2]time.Duration
	renew    float64 // the chance a session is renewed, up to three times
	seed     uint64
	// tolerate counts failed writes (failed) instead of failing the load,
	// and takes each session's final expiry from the table at the end:
	// a write that failed may or may not have landed.
	tolerate bool
	failed   int
	// timeout bounds each write and read back, as a service bounds its
	// calls: a write that lands later than the sweep's margin after its
	// timestamp was chosen may land behind the watermark, never to be
	// reported. Zero: no bound.
	timeout time.Duration
	now     func() time.Time
	sleep   func(ctx context.Context, d time.Duration) error
}

// run writes the sessions and returns each one's final expiry by row.
func (l *load) run(ctx context.Context) (map[string]time.Time, error) {
	rng := rand.New(rand.NewPCG(l.seed, 1))
	type plan struct {
		row    string
		start  time.Duration
		lives  []time.Duration // the first write's, then each renewal's
		renews []float64       // when each renewal comes, as a fraction of the life left
	}
	plans := make([]plan, l.sessions)
	for i := range plans {
		p := plan{row: fmt.Sprintf("session#%05d", i), start: time.Duration(rng.Int64N(int64(l.span) + 1))}
		p.lives = append(p.lives, l.lifetime(rng))
		for rng.Float64() < l.renew && len(p.lives) < 4 {
			p.lives = append(p.lives, l.lifetime(rng))
			p.renews = append(p.renews, 0.2+0.6*rng.Float64())
		}
		plans[i] = p
	}
	var (
		mu     sync.Mutex
		out    = map[string]time.Time{}
		errs   []error
		wg     sync.WaitGroup
		origin = l.now()
	)
	for _, p := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			expiry, err := l.session(ctx, origin, p.row, p.start, p.lives, p.renews)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil && l.tolerate && ctx.Err() == nil:
				l.failed++
			case err != nil:
				errs = append(errs, err)
			default:
				out[p.row] = expiry
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, fmt.Errorf("%d of %d sessions failed, the first: %w", len(errs), len(plans), errs[0])
	}
	if l.tolerate {
		return l.stored(ctx, plans[0].row[:len("session#")])
	}
	return out, nil
}

// stored returns the final expiry of every session the table holds, read
// without a filter (expired cells included) once the writes are over:
// what a sweep must report, whichever writes landed. Reads are retried
// for up to two minutes, as the table may still be out of reach.
func (l *load) stored(ctx context.Context, prefix string) (map[string]time.Time, error) {
	deadline := l.now().Add(2 * time.Minute)
	for {
		out := map[string]time.Time{}
		err := l.raw.ReadRows(ctx, bigtable.PrefixRange(prefix), func(r bigtable.Row) bool {
			var newest bigtable.Timestamp
			for _, it := range r[l.family] {
				newest = max(newest, it.Timestamp)
			}
			if newest > 0 {
				out[r.Key()] = newest.Time().UTC()
			}
			return true
		}, bigtable.RowFilter(bigtable.FamilyFilter(l.family)))
		if err == nil || ctx.Err() != nil || l.now().After(deadline) {
			return out, err
		}
		if err := l.sleep(ctx, time.Second); err != nil {
			return nil, err
		}
	}
}

// lifetime returns a random lifetime between the load's bounds.
func (l *load) lifetime(rng *rand.Rand) time.Duration {
	return l.life[0] + time.Duration(rng.Int64N(int64(l.life[1]-l.life[0])+1))
}

// session writes one session at origin+start with lives[0], renews it
// with each of the others at its fraction of the life left, and returns
// its final expiry.
func (l *load) session(ctx context.Context, origin time.Time, row string, start time.Duration, lives []time.Duration, renews []float64) (time.Time, error) {
	if err := l.sleep(ctx, origin.Add(start).Sub(l.now())); err != nil {
		return time.Time{}, err
	}
	m := ttl.NewMutation()
	m.Set(l.family, "token", []byte(row), ttl.For(lives[0]))
	if err := l.call(ctx, func(ctx context.Context) error { return l.tbl.Apply(ctx, row, m) }); err != nil {
		return time.Time{}, fmt.Errorf("writing %s: %w", row, err)
	}
	expiry, err := l.expiry(ctx, row)
	for i, life := range lives[1:] {
		if err != nil {
			break
		}
		if err = l.sleep(ctx, time.Duration(renews[i]*float64(expiry.Sub(l.now())))); err != nil {
			break
		}
		var touched bool
		err = l.call(ctx, func(ctx context.Context) (err error) {
			touched, err = l.tbl.Touch(ctx, row, l.family, "token", ttl.For(life))
			return err
		})
		if err == nil && !touched {
			err = fmt.Errorf("renewing %s: nothing live to renew, expiry %v", row, expiry)
		}
		if err == nil {
			expiry, err = l.expiry(ctx, row)
		}
	}
	return expiry, err
}

// call calls f with ctx, bounded by the load's timeout.
func (l *load) call(ctx context.Context, f func(context.Context) error) error {
	if l.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, l.timeout)
		defer cancel()
	}
	return f(ctx)
}

// expiry reads back the expiry of a session's newest cell.
func (l *load) expiry(ctx context.Context, row string) (time.Time, error) {
	var r bigtable.Row
	err := l.call(ctx, func(ctx context.Context) (err error) {
		r, err = l.tbl.ReadRow(ctx, row)
		return err
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("reading %s back: %w", row, err)
	}
	var newest bigtable.Timestamp
	for _, it := range r[l.family] {
		newest = max(newest, it.Timestamp)
	}
	if newest == 0 {
		return time.Time{}, fmt.Errorf("reading %s back: no live cell", row)
	}
	return newest.Time().UTC(), nil
}
