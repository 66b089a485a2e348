package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/move"
	"github.com/cellttl/ttl/policy"
)

// The move commands carry a family that holds data from one strategy to
// another, online, with ttl.Move: plan, start, status, rewrite, finish.

var moveUsage = moveText + "\n" + exitHelp() + `
Run "cellttl help move STEP" for a step's flags. The guide docs/moves.md
walks through a move.
`

const moveText = `cellttl move changes the strategy of a family that holds data, online, with
readers and writers running (ttl.Move):

  a family without a strategy (real timestamps)  -> onesecond, seqnum:N, default:D
  seqnum:N                                       -> onesecond, default:D
  default:D                                      -> onesecond

Every process that reads or writes the family is configured, before the
move's start, with ttl.Move{From, To, Start, Old, Skew}, the same values
these commands take. Then:

  cellttl move plan     what the move will do: the GC policy before, during
                        and after it, the boundary, the old cells live and
                        expired, the misplaced ones, when it can end
  cellttl move start    before the start: set the move's GC policy; from
                        default:D, rewrite the old cells stamped above the
                        boundary (needs -checkpoint)
  cellttl move status   where the move stands, and what blocks its end
  cellttl move rewrite  after the start: rewrite the old cells in the new
                        encoding now, instead of waiting for them to expire
                        (resumable with -checkpoint)
  cellttl move finish   once no old cell is live: set the new strategy's GC
                        policy; then configure the processes with it alone

start, rewrite and finish are dry runs unless -apply is given. Flags:

  -family NAME=SPEC   the family and the strategy it moves to
  -from SPEC|none     the strategy it moves from; none for real timestamps
  -start TIME         when writers switch, RFC 3339, announced in advance
  -old RULE           what the cells written before the start live by:
                      default (their old rule), for:DURATION (after their
                      write time; from seqnum, after the start),
                      until:TIME, forever
  -now TIME           judge the cells at TIME instead of now
  -skew DURATION      the most two processes' clocks differ

check and ensure take the same flags (and -move NAME among several
families) to accept the family's policy during the move and once finished.
`

// moveStep makes the command of one step of a move.
func moveStep(step, help string, flags func(fs *flag.FlagSet, c *config), run moveRun) *command {
	return &command{
		name:  "move " + step,
		args:  " -from SPEC|none -start TIME [-old RULE] [-skew DURATION]",
		help:  help,
		scans: true,
		flags: func(fs *flag.FlagSet, c *config) {
			workerFlags(fs, c)
			moveFlags(fs, c, " (required)")
			nowFlag(fs, c)
			if flags != nil {
				flags(fs, c)
			}
		},
		run: func(ctx context.Context, c *config, stdout, stderr io.Writer) int {
			m, err := c.move()
			if err != nil {
				fmt.Fprintf(stderr, "cellttl move %s: %v\n", step, err)
				return exitUsage
			}
			if at := c.judgedAt(); (step == "rewrite" || step == "finish") && at.Before(m.Start) {
				fmt.Fprintf(stderr, "cellttl move %s: %v: the move starts at %s, it is %s: run it after the start\n",
					step, errNotReady, text.Time(m.Start), text.Time(at))
				return exitNotReady
			}
			return run(ctx, c, "move "+step, m, stdout, stderr)
		},
	}
}

var (
	movePlanCommand = moveStep("plan", `Plan reads the family and prints what the move will do, changing nothing:
its GC policy now, during the move and after it, the boundary between the
two encodings, the old cells live (for a reader lagging by -skew) and
expired, those stamped on the wrong side of the boundary, when the move can
end, and what blocks each step.`, nil, runMovePlan)

	moveStatusCommand = moveStep("status", `Status reads the family and prints where the move stands: started or not,
the old cells still live and until when, the new cells, and what blocks the
end. Given -checkpoint start's file, which it only reads, it knows the
cells start rewrote ("move rewrite" takes a file of its own).`, checkpointFlag, runMovePlan)

	moveStartCommand = moveStep("start", `Start prepares the family, before the start and once every process is
configured with the move: from default:D it rewrites the old cells stamped
at or above the boundary in the new encoding (each only if unchanged,
recorded in -checkpoint first so that a second run rewrites nothing twice),
then it sets the family's GC policy to the move's. A dry run unless -apply;
the dry run refuses what -apply would refuse (misplaced cells without
-checkpoint).`,
		func(fs *flag.FlagSet, c *config) {
			checkpointFlag(fs, c)
			applyFlags(fs, c)
			moveScheduleFlag(fs, c)
		}, runMoveChange((*move.Family).Start))

	moveRewriteCommand = moveStep("rewrite", `Rewrite rewrites, after the start, the cells the old rule keeps live in the
new encoding, so that the move can end now: each keeps its value and its
expiry, and is rewritten only if still there unchanged and no newer cell of
its column would be outranked. With -checkpoint, a file of its own (not
start's), an interrupted rewrite resumes where it stopped and counts every
cell once. Moves to or from
seqnum cannot be rewritten: they end by waiting. A dry run unless -apply.
-metrics-addr serves /metrics, /healthz and /readyz (200 while it runs)
while it rewrites, and -log-format json logs what goes to stderr, as for
sweep ("cellttl sweep -h").`,
		func(fs *flag.FlagSet, c *config) {
			checkpointFlag(fs, c)
			applyFlags(fs, c)
			moveScheduleFlag(fs, c)
			serviceFlags(fs, c)
		}, runMoveChange((*move.Family).Rewrite))

	moveFinishCommand = moveStep("finish", `Finish ends the move: once no cell of the old rule is live (for a reader
lagging by -skew), it sets the family's GC policy to the new strategy's. It
refuses, exiting 3, while one is, unless -allow-data-loss. Then configure
the processes with the new strategy alone. A dry run unless -apply.`,
		func(fs *flag.FlagSet, c *config) {
			applyFlags(fs, c)
			fs.BoolVar(&c.allowDataLoss, "allow-data-loss", false, "finish although old cells are live: they are hidden and deleted")
		}, runMoveChange((*move.Family).Finish))
)

func checkpointFlag(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.checkpoint, "checkpoint", "", "a `file` recording the step's progress, to resume it, or\n"+
		"bigtable:TABLE/KEY, a row of a table of the instance (family cp)")
}

func applyFlags(fs *flag.FlagSet, c *config) {
	fs.BoolVar(&c.apply, "apply", false, "make the changes (without it, a dry run)")
	fs.BoolVar(&c.ignoreWarnings, "ignore-warnings", false, "pass Bigtable's IgnoreWarnings with the GC policy change")
}

// moveFlags defines the flags that describe a move, as ttl.Move takes
// them: the move commands' and, for a family in a move, check's and
// ensure's. required is appended to the help of -from and -start.
func moveFlags(fs *flag.FlagSet, c *config, required string) {
	fs.Var(&c.from, "from", "the family's strategy before the move: `SPEC`, or none for real timestamps"+required)
	fs.Var(&c.start, "start", "the move's start: `TIME` (RFC 3339), when writers switch"+required)
	fs.Var(&c.old, "old", "what the cells written before the start live by (`RULE`): default (their\n"+
		"old rule), for:DURATION, until:TIME or forever")
	fs.DurationVar(&c.skew, "skew", 0, "the most two processes' clocks differ by, a `DURATION`")
}

// move returns the ttl.Move the command line of a move command describes.
func (c *config) move() (ttl.Move, error) {
	names := c.families.Names()
	if len(names) != 1 {
		return ttl.Move{}, errors.New("give the one family to move with -family NAME=SPEC (SPEC: the strategy it moves to)")
	}
	return c.moveOf(names[0])
}

// moveOf returns the ttl.Move of family name that the move flags describe:
// from -from to the strategy given with -family.
func (c *config) moveOf(name string) (ttl.Move, error) {
	switch {
	case !c.from.set:
		return ttl.Move{}, errors.New("missing -from SPEC or -from none")
	case c.start.t.IsZero():
		return ttl.Move{}, errors.New("missing -start TIME")
	}
	return ttl.Move{From: c.from.s, To: c.families.Strategies[name], Start: c.start.t, Old: c.old.life, Skew: c.skew}, nil
}

// strategies returns the strategies of the families given, as check and
// ensure take them: the family in a move (-move NAME, or the one family
// given) has the ttl.Move that the move flags describe, the same one the
// move commands build.
func (c *config) strategies() (map[string]ttl.Strategy, error) {
	described := c.from.set || !c.start.t.IsZero() || c.old.spec != "" || c.skew != 0
	if c.moving == "" && !described {
		return c.families.Strategies, nil
	}
	name := c.moving
	if name == "" {
		names := c.families.Names()
		if len(names) != 1 {
			return nil, errors.New("-from, -start, -old and -skew describe a move: name the family in it with -move NAME")
		}
		name = names[0]
	}
	if _, ok := c.families.Strategies[name]; !ok {
		return nil, fmt.Errorf("-move %s: give the family with -family %s=SPEC too (SPEC: the strategy it moves to)", name, name)
	}
	m, err := c.moveOf(name)
	if err != nil {
		return nil, fmt.Errorf("family %q in a move: %v", name, err)
	}
	out := maps.Clone(c.families.Strategies)
	out[name] = m
	return out, nil
}

// movingFlags defines the flags of check and ensure for a family in a
// move.
func movingFlags(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.moving, "move", "", "the family in a move: -family `NAME`=SPEC gives the strategy it moves\n"+
		"to, -from, -start, -old and -skew the rest, as \"cellttl move\" takes them\n"+
		"(default: the one family given, when they are)")
	moveFlags(fs, c, "")
}

// moveOptions returns the library's options for the command line.
func (c *config) moveOptions(progress *progressLine) move.Options {
	o := move.Options{
		DryRun:         !c.apply,
		AllowDataLoss:  c.allowDataLoss,
		IgnoreWarnings: c.ignoreWarnings,
		AppProfile:     c.appProfile,
		Scan:           progress.options(c),
	}
	if cp := c.fileCheckpoint(); cp != nil {
		o.Checkpoint = cp
	}
	return o
}

func runMovePlan(ctx context.Context, c *config, name string, m ttl.Move, stdout, stderr io.Writer) int {
	return runMoveStep((*move.Family).Plan, false)(ctx, c, name, m, stdout, stderr)
}

// runMoveChange runs a step that changes the family, a dry run unless
// -apply.
func runMoveChange(step moveStepFunc) moveRun {
	return runMoveStep(step, true)
}

// A moveRun runs the step of the command named name ("move finish").
type moveRun = func(ctx context.Context, c *config, name string, m ttl.Move, stdout, stderr io.Writer) int

// A moveStepFunc is one of a move.Family's steps.
type moveStepFunc = func(*move.Family, context.Context) (*move.Report, error)

// runMoveStep runs one step of a move and prints its report; changes says
// whether the step changes the family. It is long because every step of a
// move shares it, with the checks each may need (a checkpoint, the
// schedule, the dry run) in the order the command makes them.
func runMoveStep(step moveStepFunc, changes bool) moveRun {
	return func(ctx context.Context, c *config, name string, m ttl.Move, stdout, stderr io.Writer) int {
		k, err := connectFamilies(ctx, c, c.families.Names())
		if err != nil {
			return fail(stderr, name, err)
		}
		defer k.close()
		admin, client := k.admin, k.data
		// A step runs once: ready while it runs (move rewrite's -metrics-addr).
		svc, err := startService(ctx, c, 0, time.Now)
		if err != nil {
			return fail(stderr, name, err)
		}
		defer svc.close(name, stderr)
		svc.roundEnded(time.Now())
		progress := newProgress(c, stderr)
		opts := c.moveOptions(progress)
		opts.Scan.MeterProvider = svc.meterProvider()
		if c.checkpoint != "" {
			if opts.Checkpoint, err = c.openCheckpoint(ctx, admin, client, nil); err != nil {
				return fail(stderr, name, err)
			}
		}
		moveSchedule(c, client, &opts)
		f, err := move.New(admin, client.Open(c.table), c.table, c.families.Names()[0], m, opts)
		if err != nil {
			return fail(stderr, name, err)
		}
		if code := moveScheduleExists(ctx, c, admin, name, stderr); code != exitOK {
			return code
		}
		r, err := step(f, ctx)
		progress.end()
		dryRun := changes && !c.apply
		if r != nil {
			render := renderMove
			if dryRun {
				render = renderDryRun
			}
			if code := printReport(c, stdout, stderr, name, r, render); code != exitOK {
				return code
			}
		}
		switch {
		case err != nil && dryRun && exitOf(err) != exitFailed:
			// A dry run refuses what the real run would refuse.
			fmt.Fprintf(stderr, "cellttl %s: %s\n", name, message(err))
			fmt.Fprintf(stderr, "cellttl %s: dry run: with -apply this step would be refused; nothing changed\n", name)
			return exitOf(err)
		case errors.Is(err, policy.ErrDataLoss):
			fmt.Fprintf(stderr, "cellttl %s: %s\n", name, message(err))
			fmt.Fprintf(stderr, "cellttl %s: refused, nothing changed\n", name)
			return exitMismatch
		case err != nil && r != nil && r.Read.ShardsRead < r.Read.Shards:
			fmt.Fprintf(stderr, "cellttl %s: %v\n", name, err)
			fmt.Fprintf(stderr, "cellttl %s: the scan did not finish: the counts above are partial\n", name)
			return exitFailed
		case err != nil:
			return fail(stderr, name, err)
		}
		if dryRun && !c.format.json {
			fmt.Fprintln(stdout, "dry run: nothing changed; run again with -apply")
		}
		return exitOK
	}
}
