// Command sweepcheck is the evidence for sweeps on a standalone emulator
// (scripts/sweep-emulator.sh runs it): it writes sessions that expire,
// renewing some, while `cellttl sweep -every` runs and is killed and
// restarted, then judges the events the sweep printed against the
// sessions written.
//
//	sweepcheck load -table T -family F -sessions N -span D -ledger FILE [-schedule S] [-tolerate]
//	cellttl sweep … -format json | sweepcheck stamp -run K >>events
//	sweepcheck judge -ledger FILE -events FILE -gaps FILE -bound D
//	sweepcheck leftover -table T -family F -before RFC3339
//	sweepcheck entries -table T -family F -schedule S
//	sweepcheck proxy -listen ADDR -to ADDR   (SIGUSR1 cuts it, SIGUSR2 restores it)
//
// load and leftover reach the emulator named by BIGTABLE_EMULATOR_HOST.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/sweep"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run runs the subcommand of args and returns the exit status: 0, 1 for
// a failure or a failed verdict, 2 for a bad command line.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: sweepcheck load|stamp|judge|leftover|entries|proxy [flags]")
		return 2
	}
	fs := flag.NewFlagSet("sweepcheck "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cmd func() error
	switch args[0] {
	case "load":
		cmd = loadCmd(ctx, fs, stdout)
	case "stamp":
		cmd = stampCmd(fs, stdin, stdout)
	case "judge":
		cmd = judgeCmd(fs, stdout)
	case "leftover":
		cmd = leftoverCmd(ctx, fs, stdout)
	case "entries":
		cmd = entriesCmd(ctx, fs, stdout)
	case "proxy":
		cmd = proxyCmd(ctx, fs, stdout)
	default:
		fmt.Fprintf(stderr, "sweepcheck: unknown subcommand %q: want load, stamp, judge, leftover, entries or proxy\n", args[0])
		return 2
	}
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if err := cmd(); err != nil {
		fmt.Fprintf(stderr, "sweepcheck %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// openTable opens table on the emulator of BIGTABLE_EMULATOR_HOST.
func openTable(ctx context.Context, table string) (*bigtable.Table, func(), error) {
	if os.Getenv("BIGTABLE_EMULATOR_HOST") == "" {
		return nil, nil, errors.New("BIGTABLE_EMULATOR_HOST is not set")
	}
	c, err := bigtable.NewClient(ctx, "p", "i")
	if err != nil {
		return nil, nil, err
	}
	return c.Open(table), func() { c.Close() }, nil
}

// loadCmd writes the sessions and saves their final expiries as JSON.
func loadCmd(ctx context.Context, fs *flag.FlagSet, stdout io.Writer) func() error {
	table := fs.String("table", "sessions", "table")
	family := fs.String("family", "sess", "family, under OneSecond with a grace")
	grace := fs.Duration("grace", time.Hour, "the family's grace")
	n := fs.Int("sessions", 500, "sessions to write")
	span := fs.Duration("span", 2*time.Minute, "sessions start spread over this span")
	minLife := fs.Duration("min-life", 10*time.Second, "shortest lifetime")
	maxLife := fs.Duration("max-life", 40*time.Second, "longest lifetime")
	renew := fs.Float64("renew", 0.4, "chance a session is renewed (again, up to three times)")
	seed := fs.Uint64("seed", 1, "random seed")
	ledger := fs.String("ledger", "ledger.json", "where to save each session's final expiry")
	sched := fs.String("schedule", "", "the schedule `table` to write beside the data (ttl.WithSchedule)")
	timeout := fs.Duration("write-timeout", 5*time.Second, "bound each write and read back by this `duration`, shorter than the\n"+
		"sweep's margin (0: no bound)")
	tolerate := fs.Bool("tolerate", false, "count failed writes instead of failing (an outage), and take each\n"+
		"session's final expiry from what the table holds at the end")
	return func() error {
		raw, done, err := openTable(ctx, *table)
		if err != nil {
			return err
		}
		defer done()
		opts := []ttl.Option{ttl.OtherFamilies()}
		if *sched != "" {
			s, done, err := openTable(ctx, *sched)
			if err != nil {
				return err
			}
			defer done()
			opts = append(opts, ttl.WithSchedule(s))
		}
		tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{*family: ttl.Grace(ttl.OneSecond(), *grace)}, opts...)
		if err != nil {
			return err
		}
		l := &load{tbl: tbl, raw: raw, family: *family, sessions: *n, span: *span, life: [2]time.Duration{*minLife, *maxLife},
			renew: *renew, seed: *seed, tolerate: *tolerate, timeout: *timeout, now: time.Now, sleep: sleep}
		sessions, err := l.run(ctx)
		if err != nil {
			return err
		}
		if l.failed > 0 {
			fmt.Fprintf(stdout, "%d writes failed (taken as not written unless the table holds them)\n", l.failed)
		}
		b, err := json.Marshal(sessions)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%d sessions written\n", len(sessions))
		return os.WriteFile(*ledger, b, 0o644)
	}
}

// sleep waits d or until ctx ends, and returns ctx's error if it ended.
func sleep(ctx context.Context, d time.Duration) error {
	wait, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	<-wait.Done()
	return ctx.Err()
}

// A stamped is one line of the events file: an event line of the sweep's
// output, when it arrived and the run that printed it.
type stamped struct {
	At    time.Time       `json:"at"`
	Run   int             `json:"run"`
	Event json.RawMessage `json:"event"`
}

// stampCmd copies the sweep's event lines from stdin to stdout, each with
// its arrival time and run; other lines (reports) are dropped.
func stampCmd(fs *flag.FlagSet, stdin io.Reader, stdout io.Writer) func() error {
	runN := fs.Int("run", 0, "which run of the sweep process this is")
	return func() error {
		enc := json.NewEncoder(stdout)
		sc := bufio.NewScanner(stdin)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var probe struct {
				Kind string `json:"kind"`
				ID   string `json:"id"`
			}
			if json.Unmarshal(sc.Bytes(), &probe) != nil || probe.Kind == "" || probe.ID == "" {
				continue
			}
			line := append(json.RawMessage(nil), sc.Bytes()...)
			if err := enc.Encode(stamped{At: time.Now().UTC(), Run: *runN, Event: line}); err != nil {
				return err
			}
		}
		return sc.Err()
	}
}

// judgeCmd judges the stamped events against the ledger.
func judgeCmd(fs *flag.FlagSet, stdout io.Writer) func() error {
	ledger := fs.String("ledger", "ledger.json", "the sessions' final expiries, from load")
	events := fs.String("events", "events.jsonl", "the stamped events, from stamp")
	gaps := fs.String("gaps", "", "a file of lines \"FROM UNTIL\" (RFC 3339): when no sweep ran")
	bound := fs.Duration("bound", 25*time.Second, "the longest delay allowed: a period, the margin and a scan")
	p99 := fs.Bool("p99", false, "hold the 99th percentile of the delays to -bound, not each delay")
	interrupted := fs.String("interrupted", "", "the runs killed or paused, comma-separated, when several replicas ran:\n"+
		"an event printed again must come from or after one of them")
	return func() error {
		var sessions map[string]time.Time
		b, err := os.ReadFile(*ledger)
		if err == nil {
			err = json.Unmarshal(b, &sessions)
		}
		if err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		evs, err := readEvents(*events)
		if err != nil {
			return err
		}
		gs, err := readGaps(*gaps)
		if err != nil {
			return err
		}
		s := standard{gaps: gs, bound: *bound, p99: *p99}
		if *interrupted != "" {
			s.interrupted = map[int]bool{}
			for _, f := range strings.Split(*interrupted, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil {
					return fmt.Errorf("-interrupted: %q is not a run number", f)
				}
				s.interrupted[n] = true
			}
		}
		v := judge(sessions, evs, s)
		fmt.Fprintln(stdout, v)
		if !v.ok() {
			return errors.New("the events do not match the sessions")
		}
		return nil
	}
}

// readEvents reads a file of stamped events.
func readEvents(path string) ([]received, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []received
	dec := json.NewDecoder(f)
	for {
		var s stamped
		var e sweep.Event
		if err := dec.Decode(&s); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if err := json.Unmarshal(s.Event, &e); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, received{event: e, at: s.At, run: s.Run})
	}
}

// readGaps reads a file of lines "FROM UNTIL"; "" is none.
func readGaps(path string) ([]gap, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []gap
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var from, until string
		if _, err := fmt.Sscan(sc.Text(), &from, &until); err != nil {
			return nil, fmt.Errorf("%s: %q: want FROM UNTIL", path, sc.Text())
		}
		a, err1 := time.Parse(time.RFC3339Nano, from)
		b, err2 := time.Parse(time.RFC3339Nano, until)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, gap{a, b})
	}
	return out, sc.Err()
}

// leftoverCmd reads the family without a filter and fails if a cell
// expired before -before is still stored: with deletion on, a sweep
// whose round ended after it deleted them all.
func leftoverCmd(ctx context.Context, fs *flag.FlagSet, stdout io.Writer) func() error {
	table := fs.String("table", "sessions", "table")
	family := fs.String("family", "sess", "family, under OneSecond")
	before := fs.String("before", "", "RFC 3339: no cell that expired before this may be left")
	return func() error {
		t, err := time.Parse(time.RFC3339Nano, *before)
		if err != nil {
			return fmt.Errorf("-before: %w", err)
		}
		raw, done, err := openTable(ctx, *table)
		if err != nil {
			return err
		}
		defer done()
		var cells, left int
		err = raw.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
			for _, it := range r[*family] {
				cells++
				if it.Timestamp.Time().Before(t) {
					left++
				}
			}
			return true
		}, bigtable.RowFilter(bigtable.FamilyFilter(*family)))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%d cells stored, %d of them expired before %s\n", cells, left, t.Format(time.RFC3339))
		if left > 0 {
			return fmt.Errorf("%d expired cells left", left)
		}
		return nil
	}
}
