package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

var sweepCommand = &command{
	name: "sweep",
	args: " [-granularity cell|column|row] [-since TIME] [-margin DURATION] [-every DURATION [-round-timeout DURATION]] [-checkpoint FILE|bigtable:TABLE/KEY [-lease DURATION]] [-delete] [-values] [-write-times] [-schedule TABLE [-reconcile]] [-now TIME] [-workers N] [-app-profile PROFILE] [-move NAME -from SPEC|none -start TIME [-old RULE] [-skew DURATION]] [-format json] [-metrics-addr HOST:PORT] [-log-format text|json]",
	help: `Sweep reports the cells of the families given with -family that have
expired, each once, as events on stdout. Under onesecond and
default:DURATION a cell's timestamp is its expiry (or its expiry less the
default), so a sweep reads only the cells that expired, by timestamp, on
the server. It keeps a watermark: a round reports what expired after it, up
to now less -margin, then moves it there. Without -every, sweep runs one
round and exits; with -every it runs a round every period until interrupted
(SIGINT or SIGTERM), which ends the batch it is writing and stops.

-granularity says what an event reports: each expired cell (cell), a column
once no cell of it is live (column), or a row once no cell of it is live
in the swept families (row). A value kept alive by Touch, KeepAlive, a
newer Set or a Replace makes no column or row event while it is live.

Where a round starts: with -checkpoint, where the last run given the same
file stopped. A round that did not finish is resumed, and nothing is
reported twice but the one batch being written when it stopped (each
event's id is the same every time, to drop it). A new sweep, or one without
-checkpoint, starts at -since; without -since, at its first round's end, so
that it reports what expires from then on. One round with neither
-checkpoint nor -since would report nothing, and is refused.

-checkpoint bigtable:TABLE/KEY keeps the checkpoint in row KEY of table
TABLE of the instance, family cp (create it once: cbt createtable TABLE
families=cp:maxversions=1), where a sweep started on another machine finds
it. With -lease DURATION and -every, the processes given the same row are
the replicas of one sweep: one holds the lease and sweeps, the others stand
by, and one takes over within the lease and a period once the holder stops
renewing. The app profile must route to a single cluster.

-delete deletes, in each column where a round found a cell expired, the
cells expired by the round's end, once the batch's events are written, with
deletions that cannot reach a live cell, so that readers that do not use
the library (cbt, SQL, exports) stop seeing them.
-values puts the expired cells' values in the events (not with
-granularity row: row events carry none).

GC deletes an expired cell once its family's max age has passed (a second
after its expiry under onesecond), and a sweep cannot report what GC
deleted first: give each family a grace at least as long as the sweep may
fall behind, -family NAME=grace:DURATION:SPEC, set with "cellttl ensure
-apply". A round that read a family later than its GC keeps expired cells
lists what it may have missed, and sweep exits 3. A family whose policy is
not the one its spec needs gets a warning on stderr, as check says
mismatch; the sweep judges by the policy it finds.

Output. Text: each event is a line on stdout, such as
  cell expired 2030-04-30T09:00:10Z: table "t" row "user#1" sess:"token"
and each round's report goes to stderr. With -format json stdout is JSON
lines: each event one object (kind, id, table, row or row_base64 when not
UTF-8, family, column or column_base64, timestamp in microseconds,
expired, value in base64 with -values), and after each round, failed or
not, one line {"report": {...}} (with "error": "..." when the round
failed; "report": null when it failed before it had a window): a line
with a "report" key ends a round, any other is an event. An event is
recorded as delivered once it is written to stdout.

A -checkpoint of another sweep is a bad command line (exit 2). With
-every, SIGTERM or -timeout between rounds exits as the rounds did (0, or
3 if one may have missed cells), and SIGINT (Ctrl-C) exits 1, as it does
every command: an interrupted run.
` + sweepScheduleHelp + serviceHelp,
	scans: true,
	flags: func(fs *flag.FlagSet, c *config) {
		workerFlags(fs, c)
		movingFlags(fs, c)
		nowFlag(fs, c)
		s := &c.sweep
		fs.Var(&s.granularity, "granularity", "what an event reports (`KIND`): cell, each expired cell; column or row,\n"+
			"one once nothing in it is live (default cell)")
		fs.Var(&s.since, "since", "where a new sweep starts: report what expired after this `time` (RFC 3339)\n"+
			"(default: the first round's end, so that only what expires from then on)")
		fs.DurationVar(&s.margin, "margin", sweep.DefaultMargin, "how far behind now a round ends: a `duration` covering the longest\n"+
			"write and the skew between the writers' clocks and this one")
		fs.DurationVar(&s.every, "every", 0, "sweep every `period` until interrupted (default: one round)")
		fs.DurationVar(&s.roundTimeout, "round-timeout", 0, "a round not finished within this `duration` fails, saying so, and the\n"+
			"next resumes it (default 0: a round that cannot reach Bigtable waits for it)")
		fs.BoolVar(&s.delete, "delete", false, "delete the expired cells found, once their events are written")
		fs.BoolVar(&c.values, "values", false, "put the expired cells' values in the events (not row events')")
		fs.BoolVar(&c.writeTimes, "write-times", false, "the table records write times (ttl.RecordWriteTime): skip and delete\n"+
			"the companions with their cells")
		fs.StringVar(&c.checkpoint, "checkpoint", "", "where to keep the watermark and each round's progress, to resume: a `file`,\n"+
			"or bigtable:TABLE/KEY, a row of a table of the instance (family cp)")
		fs.DurationVar(&s.lease, "lease", 0, "run as one of the replicas given the same -checkpoint bigtable:TABLE/KEY:\n"+
			"one holds a lease of this `duration` and sweeps, the others stand by")
		sweepScheduleFlags(fs, c)
		serviceFlags(fs, c)
	},
	run: runSweep,
}

// sweepConfig is sweep's part of the command line.
type sweepConfig struct {
	granularity  sweep.Granularity
	since        timeFlag
	margin       time.Duration
	every        time.Duration
	roundTimeout time.Duration
	lease        time.Duration
	delete       bool
	reconcile    bool
}

// sweepNow is the sweep's clock; tests fix it.
var sweepNow = time.Now

// sweepClock is the sweep's clock: -now, stopped, or sweepNow. A sweep
// reads its clock for its window's end as well as for its options, so a
// clock that moved from -now would move the window; its progress shows no
// rate under -now.
func (c *config) sweepClock() func() time.Time {
	if at := c.now.t; !at.IsZero() {
		return func() time.Time { return at }
	}
	return sweepNow
}

// check reports a sweep command line that cannot work, at now, naming the
// flag at fault.
func (s *sweepConfig) check(c *config, now time.Time) error {
	if _, _, _, err := checkpointRow(c.checkpoint); err != nil {
		return err
	}
	switch {
	case s.margin <= 0:
		return fmt.Errorf("-margin %v: want a positive duration, covering the longest write and the clocks' skew", s.margin)
	case s.lease < 0:
		return fmt.Errorf("-lease %v: want a positive duration", s.lease)
	case s.lease > 0 && (!strings.HasPrefix(c.checkpoint, bigtablePrefix) || s.every == 0):
		return errors.New("-lease needs -checkpoint bigtable:TABLE/KEY, the row its replicas share, and -every PERIOD")
	case s.every > 0 && !c.now.t.IsZero():
		return errors.New("-now fixes the instant of one round: it cannot be used with -every")
	case s.since.t.After(now):
		return fmt.Errorf("-since %s: after now (%s): a sweep reports what has expired", text.Time(s.since.t), text.Time(now))
	case c.values && s.granularity == sweep.Row:
		return errors.New("-values: row events carry no value; use -granularity cell or column")
	case s.every == 0 && c.checkpoint == "" && s.since.t.IsZero():
		return errors.New("one round with neither -checkpoint nor -since reports nothing (a new sweep starts at its first round's end):\n" +
			"  give -since TIME to report what expired after TIME, -checkpoint FILE to report next time what expires from now on,\n" +
			"  or -every PERIOD to keep sweeping")
	}
	return nil
}

// sweepOptions returns the library's options for the command line, reading
// with o.
func (c *config) sweepOptions(o scan.Options) sweep.Options {
	opts := sweep.Options{
		Granularity:  c.sweep.granularity,
		Margin:       c.sweep.margin,
		RoundTimeout: c.sweep.roundTimeout,
		Since:        c.sweep.since.t,
		Values:       c.values,
		Delete:       c.sweep.delete,
		WriteTimes:   c.writeTimes,
		Scan:         o,
	}
	opts.Scan.Now = c.sweepClock()
	if cp := c.fileCheckpoint(); cp != nil {
		opts.Checkpoint = cp
	}
	opts.Lease = c.sweep.lease
	return opts
}

func runSweep(ctx context.Context, c *config, stdout, stderr io.Writer) int {
	strategies, err := c.strategies()
	if err == nil {
		err = c.sweep.check(c, c.sweepClock()())
	}
	if err != nil {
		fmt.Fprintf(stderr, "cellttl sweep: %v\n", err)
		return exitUsage
	}
	// execute ends the context on an interrupt; a service manager stops a
	// sweep with SIGTERM.
	ctx, stop := onSignal(ctx, syscall.SIGTERM, errTerminated)
	defer stop()
	svc, err := startService(ctx, c, c.sweep.every, c.sweepClock())
	if err != nil {
		return fail(stderr, "sweep", err)
	}
	defer svc.close("sweep", stderr)
	admin, err := adminClient(ctx, c)
	if err != nil {
		return fail(stderr, "sweep", err)
	}
	defer admin.Close()
	client, err := dataClient(ctx, c)
	if err != nil {
		return fail(stderr, "sweep", err)
	}
	defer client.Close()
	out := newSweepOutput(c, stdout, stderr)
	opts := c.sweepOptions(out.scanOptions())
	opts.Scan.MeterProvider = svc.meterProvider()
	if opts.Checkpoint, err = c.openCheckpoint(ctx, admin, client, opts.Scan.Now); err != nil {
		return fail(stderr, "sweep", err)
	}
	if code := sweepSchedule(c, client, &opts, stderr); code != exitOK {
		return code
	}
	s, err := sweep.New(admin, client.Open(c.table), c.table, strategies, opts)
	if err != nil {
		return fail(stderr, "sweep", err)
	}
	svc.watch(s.Status)
	found, err := reach(ctx, c, admin)
	if err == nil {
		err = found.unknown(c, c.families.Names())
	}
	if err != nil {
		return fail(stderr, "sweep", err)
	}
	if code := sweepScheduleExists(ctx, c, admin, stderr); code != exitOK {
		return code
	}
	sweepPolicyWarnings(ctx, c, admin, strategies, stderr)
	round := svc.rounds(reconcileRound(c, stderr, out.round), c.sweepClock())
	if c.sweep.every == 0 {
		round(s.Once(ctx, out.deliver))
		return out.status()
	}
	// Every returns ctx's error once it ends, or an error its round
	// reported; the cause says what ended ctx: an interrupt, SIGTERM or
	// -timeout.
	if err := s.Every(ctx, c.sweep.every, out.deliver, round); err != nil && ctx.Err() != nil {
		fmt.Fprintf(stderr, "cellttl sweep: stopped after %s: %v\n", text.Plural(out.rounds, "round", "rounds"), context.Cause(ctx))
	}
	return out.status()
}
