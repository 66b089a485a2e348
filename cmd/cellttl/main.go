// Command cellttl checks, sets up, audits, inspects and sweeps the column
// families of a Bigtable table whose cells have a time to live, as the
// library github.com/cellttl/ttl writes them.
//
//	cellttl check   -project P -instance I -table T -family SPEC... [MOVE] [-schedule TABLE] [-terraform FILE]
//	cellttl ensure  -project P -instance I -table T -family SPEC... [MOVE] [-apply] [-create] [-allow-data-loss] [-schedule TABLE]
//	cellttl stats   -project P -instance I -table T [-family SPEC]... [-now TIME] [-schedule TABLE]
//	cellttl inspect -project P -instance I -table T -family SPEC... [-other F]... [-now TIME] ROW
//	cellttl move plan|start|status|rewrite|finish -project P -instance I -table T -family SPEC MOVE
//	cellttl sweep   -project P -instance I -table T -family SPEC... [-granularity G] [-since TIME] [-checkpoint FILE] [-every DURATION] [-delete] [-schedule TABLE [-reconcile]]
//
// A family SPEC is NAME=onesecond, NAME=default:DURATION or
// NAME=seqnum:VERSIONS. MOVE describes a family in a move: -from SPEC|none
// -start TIME [-old RULE] [-skew DURATION], and for check and ensure
// [-move NAME]. Run "cellttl help" for the details.
//
// With BIGTABLE_EMULATOR_HOST set it talks to that emulator (still under
// -project and -instance); otherwise to Cloud Bigtable with the
// application default credentials.
//
// Exit status, the same for every command (the table exitStatuses, which
// "cellttl help" prints): 0 done; 1 failed or interrupted; 2 bad command
// line; 3 refused, nothing changed (a table or family that does not exist,
// a policy that does not match, a change that would lose data, cells a
// sweep may have missed); 4 not yet (a move's step before its start).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	tuneGC(os.Getenv)
	os.Exit(execute(os.Args[1:], os.Stdout, os.Stderr))
}

var commands = []*command{checkCommand, ensureCommand, statsCommand, inspectCommand,
	movePlanCommand, moveStartCommand, moveStatusCommand, moveRewriteCommand, moveFinishCommand, sweepCommand}

// commandName returns the command args name, and the arguments after it:
// "move" takes its step as a second word.
func commandName(args []string) (string, []string) {
	if args[0] == "move" && len(args) > 1 && !strings.HasPrefix(args[1], "-") {
		return "move " + args[1], args[2:]
	}
	return args[0], args[1:]
}

// execute runs cellttl with args (without the program name) and returns the
// exit status.
func execute(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	name, rest := commandName(args)
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) == 1 {
			fmt.Fprint(stdout, usage)
			return exitOK
		}
		topic, extra := commandName(rest)
		if topic == "move" && len(extra) == 0 {
			fmt.Fprint(stdout, moveUsage)
			return exitOK
		}
		cmd := lookup(topic)
		if cmd == nil || len(extra) > 0 {
			fmt.Fprintf(stderr, "cellttl help: unknown command %q; commands: check, ensure, stats, inspect, move, sweep\n", strings.Join(rest, " "))
			return exitUsage
		}
		printHelp(stdout, cmd)
		return exitOK
	case "move":
		if len(rest) == 1 && isHelp(rest[0]) {
			fmt.Fprint(stdout, moveUsage)
			return exitOK
		}
		fmt.Fprint(stderr, moveUsage)
		return exitUsage
	}
	cmd := lookup(name)
	if cmd == nil {
		fmt.Fprintf(stderr, "cellttl: unknown command %q; run \"cellttl help\"\n", name)
		return exitUsage
	}
	c, err := parse(cmd, rest)
	if errors.Is(err, flag.ErrHelp) {
		printHelp(stdout, cmd)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "cellttl %s: %v\nrun \"cellttl %s -h\" for its flags\n", cmd.name, err, cmd.name)
		return exitUsage
	}
	stderr, flush := serviceLog(c, stderr)
	defer flush()
	ctx, stop := interruptible()
	defer stop()
	run := ctx
	if c.timeout > 0 {
		var cancel context.CancelFunc
		run, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	return interrupted(ctx, cmd.name, cmd.run(run, c, stdout, stderr), stderr)
}

// isHelp reports an argument that asks for help.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help":
		return true
	}
	return false
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

var usage = usageText + "\n" + exitHelp() + `
Run "cellttl help COMMAND" or "cellttl COMMAND -h" for a command's flags.
`

const usageText = `cellttl checks, sets up, audits, inspects and sweeps the column families
of a Bigtable table whose cells have a time to live (github.com/cellttl/ttl).

Usage:
  cellttl check   -project P -instance I -table T -family SPEC... [MOVE] [-schedule TABLE] [-terraform FILE]
  cellttl ensure  -project P -instance I -table T -family SPEC... [MOVE] [-apply] [-create] [-allow-data-loss] [-ignore-warnings] [-schedule TABLE] [-format text|json|terraform]
  cellttl stats   -project P -instance I -table T [-family SPEC]... [MOVE] [-values] [-now TIME] [-schedule TABLE]
  cellttl inspect -project P -instance I -table T -family SPEC... [-other FAMILY]... [-now TIME] ROW
  cellttl move plan|start|status|rewrite|finish -project P -instance I -table T -family NAME=SPEC -from SPEC|none -start TIME [-old RULE] [-skew DURATION] [-now TIME] [-schedule TABLE]
  cellttl sweep   -project P -instance I -table T -family SPEC... [-granularity cell|column|row] [-since TIME] [-checkpoint FILE] [-every DURATION [-round-timeout DURATION]] [-delete] [-now TIME] [-schedule TABLE [-reconcile]]
  cellttl help [COMMAND]

Commands:
  check    compare each family's GC policy with the one its strategy needs
  ensure   correct families' GC policies, and create missing ones with -create
           (a dry run unless -apply), refusing changes that would delete or
           hide data
  stats    audit what the table holds, per family: live cells, expired cells
           still stored (GC lags), cells that never expire, their bytes, and
           when the expired ones become collectable and the live ones expire
  inspect  list every cell of a row: its timestamp, its expiry, the time
           left, and whether a read through the library returns it
  move     change the strategy of a family that holds data, online: plan,
           start, status, rewrite, finish ("cellttl help move")
  sweep    report the cells that expired, each once, as lines of text or
           JSON on stdout, once or -every period, resumably (-checkpoint),
           and optionally delete them (-delete)

Commands that read a whole table (ensure, stats, move, sweep) split it on its
tablet boundaries and read the pieces in parallel (-workers), report
progress on stderr (a live line on a terminal, a plain line every 10s
otherwise; -progress=false or -quiet turns it off), and take -app-profile to read from a cluster that
serves no application traffic; ensure and stats take -sample to read a
fraction of the table for a fast, labelled estimate. A scan that fails, times out or is interrupted says so:
its counts are labelled partial, nothing is decided, and the exit status
is 1. Every command prints JSON with -format json.

-now TIME (RFC 3339) judges the cells at TIME instead of the clock's now,
the same instant for every command that judges cells live or expired
(stats, ensure, inspect, the move's steps, sweep) and for the Beam jobs
(cellttl-audit, cellttl-move-rewrite, cellttl-sweep), so that two tools
can be compared at one instant. check compares GC policies and judges no
cell: it has no -now. inspect's -at is a deprecated name of -now.

Every command bounds its first request by -connect-timeout (default 10s;
0: no limit) and then the whole command by -timeout (default: no limit);
a server that does not answer is named with where its address came from
(BIGTABLE_EMULATOR_HOST, or -project and -instance). An emulator port
where nothing listens fails at once ("connection refused"); without
BIGTABLE_EMULATOR_HOST and credentials, the error says how to give them.
No duration flag takes a negative value.

A family given with -family (or inspect's -other) that the table does not
have, or a table that does not exist, is refused (exit 3) by every
command, with the nearest name the table has suggested: check lists it as
missing; ensure creates it only with -create.

A family SPEC names a family and its strategy:
  NAME=onesecond           OneSecond(): the timestamp is the expiry; GC maxage=1s
  NAME=default:DURATION    DefaultExpiration(DURATION): cells live DURATION
                           (48h, 90m, 30d) from their timestamp; GC maxage=DURATION
  NAME=seqnum:VERSIONS     SequenceNumbers(VERSIONS): the newest VERSIONS cells of
                           each column live; GC maxversions=VERSIONS
  NAME=counter:SPEC        Counter(SPEC), SPEC onesecond or default:DURATION: an
                           aggregate family of int64 sums, counters that expire
  NAME=grace:DURATION:SPEC Grace(SPEC, DURATION), SPEC onesecond, default:DURATION
                           or a counter: SPEC's cells, kept DURATION longer by
                           GC, for a sweep that falls behind ("cellttl help sweep")

A family in a move is given to check, ensure, stats and sweep as the move
commands take it, -family NAME=SPEC with the strategy it moves to, and MOVE:
  [-move NAME] -from SPEC|none -start TIME [-old RULE] [-skew DURATION]
-move NAME names the family in the move among several (with one, it is
that one). Its policy then matches during the move and once finished.

The emulator: set BIGTABLE_EMULATOR_HOST=host:port; -project and -instance
are still needed, since it keeps tables per project and instance. Without
it cellttl uses Cloud Bigtable and the application default credentials.
`

// printHelp prints a command's usage line, help and flags.
func printHelp(w io.Writer, cmd *command) {
	families := "-family NAME=SPEC..."
	switch {
	case cmd.familiesOptional:
		families = "[-family NAME=SPEC]..."
	case strings.HasPrefix(cmd.name, "move "):
		families = "-family NAME=SPEC"
	}
	fmt.Fprintf(w, "Usage: cellttl %s -project P -instance I -table T %s%s\n\n%s\n\nFlags:\n",
		cmd.name, families, cmd.args, cmd.help)
	var c config
	fs := newFlagSet(cmd, &c)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, "\n"+exitHelp())
}
