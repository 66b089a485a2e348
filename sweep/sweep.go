// Package sweep reports each cell of a table that expires, once.
//
// It reports a cell within minutes of its expiry, and can delete the
// expired cells so that no reader sees them again.
//
// Under a time strategy a cell's timestamp is its expiry (or its expiry
// less the family's default), so the cells that expire in an interval are
// exactly those in one range of timestamps: a sweep reads them with a
// server-side filter and transfers only what it reports. It advances a
// watermark through time, round by round: each round reports what expired
// after the watermark, up to Options.Margin before now, and then moves the
// watermark there.
//
//	s, err := sweep.New(admin, client.Open("sessions"), "sessions",
//		map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), time.Hour)},
//		sweep.Options{Granularity: sweep.Row, Checkpoint: scan.FileCheckpoint("sweep.json")})
//	err = s.Every(ctx, time.Minute, func(ctx context.Context, events []sweep.Event) error {
//		for _, e := range events {
//			log.Printf("session %s expired at %v", e.Row, e.Expired)
//		}
//		return nil
//	}, nil)
//
// What a sweep promises:
//
//   - Nothing missed that was stored. Every cell whose expiry falls behind
//     the watermark is reported, unless GC deleted it first; a family given
//     a grace (ttl.Grace) keeps expired cells stored that long, and a sweep
//     that keeps within it misses nothing. A round that read a family later
//     than its GC keeps expired cells says so (Report.Missed) and is not
//     Complete.
//   - Reported once. The watermark and each round's progress are kept in a
//     checkpoint: a sweep stopped at any point and run again resumes the
//     round and delivers nothing twice, except at most the batch it was
//     delivering when it stopped. Every event has a stable ID for a
//     consumer to deduplicate that batch.
//   - Events mean something is gone: each expired cell, or a column or a
//     row once nothing in it is live (see Granularity). A value kept alive
//     by Touch, KeepAlive, a newer Set or a Replace makes no column or row
//     event while it is live, and Forever cells never expire.
//   - Optionally gone for every reader (Options.Delete): after delivering
//     a batch the sweep deletes its rows' expired cells, with deletions
//     that cannot reach a live cell, so that readers that do not use this
//     module (cbt, SQL, exports) stop seeing expired data.
//
// A round filters by timestamp on the server, but Bigtable has no index
// by timestamp: the server reads the whole table each round. Given the
// table's schedule (package schedule, Options.Schedule), a round reads
// instead the entries of the seconds it covers and only the rows they
// name, so that it costs what expires, not the table; a reconcile sweep
// (Options.Reconcile), a scan at a long period, reports what was written
// without entries.
//
// A family in a strategy move is swept by each side's rule. A family under
// SequenceNumbers is refused: a version is superseded by newer ones, not
// expired at an instant, and Bigtable records no time at which it was.
package sweep

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
)

// ErrRoundTimeout reports a round that did not finish within
// Options.RoundTimeout; the error wraps context.DeadlineExceeded too.
var ErrRoundTimeout = errors.New("sweep: the round did not finish within its timeout")

// A Deliver takes a batch of events, in the order of their rows within a
// shard, and returns nil once they are safely delivered: the sweep then
// records them as delivered. An error stops the sweep, which delivers the
// batch again when run again. Calls are never concurrent.
type Deliver func(ctx context.Context, events []Event) error

// A Sweeper sweeps the families of one table; see the package doc. It is
// safe for use by multiple goroutines, which it serves one round at a
// time.
type Sweeper struct {
	// policies reads the table's GC policies, and schedulePolicies the
	// schedule table's; nil without an admin client (or a schedule).
	policies, schedulePolicies *policy.Tool
	data                       bigtable.TableAPI
	table                      string
	fams                       []family
	o                          Options
	now                        func() time.Time
	work                       string
	sleep                      func(ctx context.Context, d time.Duration) error
	m                          *metrics        // nil records nothing
	lc                         LeaseCheckpoint // with Options.Lease, the checkpoint; nil otherwise
	st                         status
	reads                      rowReads // how a scheduled round reads rows; zero: the defaults

	mu sync.Mutex // held by Once
}

// New returns a sweep of families of table: data is the table opened with
// a data client, families the strategies of the families to sweep, each
// of which must expire its cells at an instant (OneSecond,
// DefaultExpiration, their counters and graces, or a move with such a
// side). admin, when not nil, reads the families' GC policies each round,
// so that a round knows how long GC keeps expired cells (Report.Missed);
// nil trusts the strategies' own policies. New checks its arguments and
// reads nothing: nil data is refused with ttl.ErrNilArgument, a family
// that cannot be swept with ttl.ErrInvalidStrategy, bad options (a Since
// after now among them, a Scan.MeterProvider that refuses the sweep's
// instruments) with ttl.ErrInvalidOption.
func New(admin *bigtable.AdminClient, data bigtable.TableAPI, table string, families map[string]ttl.Strategy, opts Options) (*Sweeper, error) {
	if data == nil || rules.IsNilPointer(data) {
		return nil, fmt.Errorf("%w: sweep.New: nil table", ttl.ErrNilArgument)
	}
	s := &Sweeper{data: data, table: table, o: opts, now: time.Now, sleep: sleep}
	if admin != nil {
		var err error
		if s.policies, err = policy.New(admin, nil, table, nil, policy.Options{}); err != nil {
			return nil, fmt.Errorf("sweep.New: %w", err)
		}
		if opts.Schedule != nil {
			if s.schedulePolicies, err = policy.New(admin, nil, opts.ScheduleTable, nil, policy.Options{}); err != nil {
				return nil, fmt.Errorf("sweep.New: %w", err)
			}
		}
	}
	if opts.Scan.Now != nil {
		s.now = opts.Scan.Now
	}
	if len(families) == 0 {
		return nil, fmt.Errorf("%w: sweep.New: no family to sweep in table %q", ttl.ErrInvalidOption, table)
	}
	var names []string
	for name, strategy := range families {
		f, err := newFamily(name, strategy)
		if err != nil {
			return nil, fmt.Errorf("sweep.New: %w", err)
		}
		s.fams = append(s.fams, f)
		names = append(names, fmt.Sprintf("%q", name))
	}
	sort.Slice(s.fams, func(i, j int) bool { return s.fams[i].name < s.fams[j].name })
	sort.Strings(names)
	if err := s.checkOptions(s.now()); err != nil {
		return nil, fmt.Errorf("sweep.New: %w", err)
	}
	if s.o.Margin == 0 {
		s.o.Margin = DefaultMargin
	}
	if s.o.Batch == 0 {
		s.o.Batch = DefaultBatch
	}
	if s.o.Checkpoint == nil {
		s.o.Checkpoint = scan.MemoryCheckpoint()
	}
	if s.o.Lease > 0 {
		s.lc = s.o.Checkpoint.(LeaseCheckpoint)
		s.o.Checkpoint = leased{LeaseCheckpoint: s.lc, s: s}
		s.st.s.Role = StandsBy
	}
	s.o.Scan.Table = cmp.Or(s.o.Scan.Table, table)
	s.o.Scan.Work = cmp.Or(s.o.Scan.Work, "sweep")
	s.work = fmt.Sprintf("sweep of table %q, families %s, %s events", table, strings.Join(names, ", "), opts.Granularity) + s.scheduleWork()
	m, err := newMetrics(opts.Scan.MeterProvider, table, s.fams)
	if err != nil {
		return nil, fmt.Errorf("sweep.New: %w", err)
	}
	s.m = m
	return s, nil
}

// checkOptions reports options a sweep cannot work with, at now.
func (s *Sweeper) checkOptions(now time.Time) error {
	o := s.o
	switch {
	case o.Granularity > Row:
		return fmt.Errorf("%w: granularity %v: want Cell, Column or Row", ttl.ErrInvalidOption, o.Granularity)
	case o.Margin < 0:
		return fmt.Errorf("%w: margin %v: want a duration not negative", ttl.ErrInvalidOption, o.Margin)
	case o.RoundTimeout < 0:
		return fmt.Errorf("%w: round timeout %v: want a duration not negative", ttl.ErrInvalidOption, o.RoundTimeout)
	case o.Batch < 0:
		return fmt.Errorf("%w: batch %d: want a positive number of events", ttl.ErrInvalidOption, o.Batch)
	case o.Since.After(now):
		return fmt.Errorf("%w: since %s is after now (%s): a sweep reports what has expired",
			ttl.ErrInvalidOption, o.Since.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano))
	case o.Scan.Sample > 0:
		return fmt.Errorf("%w: a sweep reports every expiry: it reads the whole table, not a sample", ttl.ErrInvalidOption)
	}
	if err := s.checkSchedule(); err != nil {
		return err
	}
	if err := s.checkLease(); err != nil {
		return err
	}
	return o.Scan.Check()
}

// Round returns the round of the sweep that reports what expired after
// from, up to until: the filter and the per-row logic of Once, for a
// pipeline that reads the table itself (this module's Beam pipeline).
// until must be after from.
func (s *Sweeper) Round(from, until time.Time) (*Round, error) {
	if !until.After(from) {
		return nil, fmt.Errorf("%w: a round from %s until %s: the end must be after the start",
			ttl.ErrInvalidOption, from.UTC().Format(time.RFC3339Nano), until.UTC().Format(time.RFC3339Nano))
	}
	r := &Round{Table: s.table, From: from, Until: until, g: s.o.Granularity, values: s.o.Values, writeTimes: s.o.WriteTimes}
	for _, f := range s.fams {
		r.fams = append(r.fams, roundFamily{family: f, window: f.expiredIn(from, until)})
	}
	return r, nil
}

// Once runs one round of the sweep, or resumes the one the checkpoint
// records as begun: it reads the table shard by shard, delivers the
// events in batches and records each batch in the checkpoint once it is
// delivered (and its cells deleted, with Options.Delete). It returns the
// round's report and the first error, after which the report is not
// Complete and a call given the same checkpoint resumes the round. An
// error before the round begins returns no report
// (docs/api-notes.md#sweepsweeperonce).
//
// With Options.Lease, Once first takes or renews the lease: a replica
// that another's lease keeps out returns ErrStandby and no report; one
// whose lease passes during the round stops before its next batch or
// save with an error wrapping ErrLeaseLost.
func (s *Sweeper) Once(ctx context.Context, deliver Deliver) (*Report, error) {
	if ctx == nil || deliver == nil {
		return nil, fmt.Errorf("%w: sweep: Once: nil context or deliver", ttl.ErrNilArgument)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.finished()
	if s.lc != nil {
		ok, err := s.hold(ctx)
		switch {
		case err != nil && !ok:
			return nil, fmt.Errorf("sweep: taking the lease: %w", err)
		case !ok:
			return nil, ErrStandby
		}
	}
	rctx := ctx
	if d := s.o.RoundTimeout; d > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	r := &run{s: s, deliver: deliver}
	rep, err := r.do(rctx)
	if err != nil && ctx.Err() == nil && rctx.Err() != nil {
		err = fmt.Errorf("%w of %v (Options.RoundTimeout); the next resumes it: %w", ErrRoundTimeout, s.o.RoundTimeout, err)
	}
	s.m.round(ctx, rep)
	return rep, err
}

// Every runs a round (see Once) every period until ctx is done, and
// returns ctx's error then. A round is due a period after the round
// before it ended, its watermark then behind the margin: the round after
// one that took longer than period, or that resumed a round an outage
// left (whose window ended long ago), starts at once; after a round that
// failed, the next waits a period from that round's start. Each round's report and error go to
// report, when not nil (the report is nil when the round could not begin,
// as for Once); a round that fails is resumed by the next, except
// that an error no retry can heal (one wrapping ttl.ErrInvalidOption,
// ttl.ErrInvalidStrategy, ttl.ErrNilArgument or
// ttl.ErrTransactionNotAllowed, such as a checkpoint of other work) ends
// Every with that error. With Options.Lease, a replica standing by
// reports nothing and tries again every period; the holder renews the
// lease while it waits, and releases it when Every returns.
func (s *Sweeper) Every(ctx context.Context, period time.Duration, deliver Deliver, report func(*Report, error)) error {
	if ctx == nil || deliver == nil {
		return fmt.Errorf("%w: sweep: Every: nil context or deliver", ttl.ErrNilArgument)
	}
	if period <= 0 {
		return fmt.Errorf("%w: sweep: Every: period %v: want a positive duration", ttl.ErrInvalidOption, period)
	}
	defer s.release(ctx)
	for {
		start := s.now()
		r, err := s.Once(ctx, deliver)
		if report != nil && !errors.Is(err, ErrStandby) {
			report(r, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, ttl.ErrInvalidOption) || errors.Is(err, ttl.ErrInvalidStrategy) || errors.Is(err, ttl.ErrNilArgument) ||
			errors.Is(err, ttl.ErrTransactionNotAllowed) {
			return err
		}
		if wait := s.due(start, period, r, err).Sub(s.now()); wait > 0 {
			if err := s.wait(ctx, wait); err != nil {
				return err
			}
		}
	}
}

// due returns when the round after one that began at start, and returned
// rep and err, is due: a period after start, or sooner, once the next
// window (up to now less the margin) would span a period after the
// watermark the round left, rep.Until. A round begun now ends its window
// at now less the margin, so the two agree, but a round that resumed one
// an outage interrupted ends the window of that round, long before: the
// next is due at once, and catches up. After a round that failed, a
// period after start.
func (s *Sweeper) due(start time.Time, period time.Duration, rep *Report, err error) time.Time {
	due := start.Add(period)
	if err != nil || rep == nil {
		return due
	}
	return minTime(due, rep.Until.Add(s.o.Margin+period))
}

// sleep waits d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
