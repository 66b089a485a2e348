package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/spec"
)

// config is a parsed command line.
type config struct {
	project, instance, table string
	families                 spec.Families
	others                   listFlag
	timeout, connectTimeout  time.Duration
	format                   formatFlag
	now                      timeFlag // -now: the instant cells are judged at

	// commands that read data
	appProfile string

	// commands that read a whole table
	workers  int
	sample   float64
	progress bool

	// ensure
	apply, allowDataLoss, ignoreWarnings bool

	// stats
	values, allBuckets bool

	// move; check and ensure for a family in a move
	moving     string // check, ensure: the family in a move
	from       fromFlag
	start      timeFlag
	old        oldFlag
	skew       time.Duration
	checkpoint string

	// ensure
	create bool

	// Terraform: check -terraform FILE, ensure -terraform-table NAME
	terraformFile, terraformTable string

	// check, ensure, stats, move, sweep: the schedule table
	schedule string

	// sweep, move rewrite: serving metrics and probes, logging
	service serviceConfig

	// inspect
	writeTimes bool
	margin     time.Duration
	row        string

	// sweep
	sweep sweepConfig
}

// dataFlags defines the flags of a command that reads data.
func dataFlags(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.appProfile, "app-profile", "", "the app `profile` to read with, such as one that routes to a cluster\n"+
		"that serves no application traffic (default: the instance's default profile)")
}

// scanFlags defines the flags of a command that reads a whole table and
// can estimate from a sample of it.
func scanFlags(fs *flag.FlagSet, c *config) {
	workerFlags(fs, c)
	fs.Float64Var(&c.sample, "sample", 0, "read about this `fraction` of the table (two random key ranges of every\n"+
		"shard) for a fast estimate with its 95% interval (clearly labelled; it\n"+
		"decides and changes nothing)")
}

// workerFlags defines the flags of a command that reads a whole table.
func workerFlags(fs *flag.FlagSet, c *config) {
	dataFlags(fs, c)
	fs.IntVar(&c.workers, "workers", scan.DefaultWorkers, "read `N` shards of the table at once")
	fs.BoolVar(&c.progress, "progress", true, "report progress on stderr, on by default: a live line on a terminal, a\n"+
		"plain line every 10s otherwise; -progress=false or -quiet turns it off")
	fs.BoolFunc("quiet", "report no progress (the same as -progress=false)", func(v string) error {
		quiet, err := strconv.ParseBool(v)
		if quiet {
			c.progress = false
		}
		return err
	})
}

// nowFlag defines -now, for a command that judges cells live or expired.
func nowFlag(fs *flag.FlagSet, c *config) {
	fs.Var(&c.now, "now", "judge the cells at this `time` (RFC 3339) instead of the clock's now")
}

// clock returns the clock one tool is given (Options.Scan.Now), or nil
// (the clock's now) without -now. Its first reading is -now: a tool reads
// its clock once, before it scans, for the instant it judges cells at.
// Later readings advance from -now with real time, because the scan times
// its progress with the same clock: one stopped at -now showed no elapsed
// time and no rate. Each tool takes a clock of its own. The sweep reads
// its clock again for its window, and takes sweepClock.
func (c *config) clock() func() time.Time {
	if c.now.t.IsZero() {
		return nil
	}
	var (
		once    sync.Once
		started time.Time
	)
	at := c.now.t
	return func() time.Time {
		first := false
		once.Do(func() { started, first = time.Now(), true })
		if first {
			return at
		}
		return at.Add(time.Since(started))
	}
}

// judgedAt returns the instant of -now, or the clock's now.
func (c *config) judgedAt() time.Time {
	if c.now.t.IsZero() {
		return time.Now()
	}
	return c.now.t
}

// formatFlag is -format: text (the zero value) or json, and for ensure
// terraform.
type formatFlag struct {
	json, terraform bool
	terraformOK     bool // the command prints Terraform (ensure)
}

func (f *formatFlag) String() string {
	switch {
	case f != nil && f.json:
		return "json"
	case f != nil && f.terraform:
		return "terraform"
	}
	return "text"
}

func (f *formatFlag) Set(v string) error {
	switch {
	case v == "text", v == "json", v == "terraform" && f.terraformOK:
		f.json, f.terraform = v == "json", v == "terraform"
		return nil
	case f.terraformOK:
		return errors.New("want text, json or terraform")
	}
	return errors.New("want text or json")
}

// listFlag collects the values of a repeated flag.
type listFlag []string

func (l *listFlag) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, ",")
}

func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// timeFlag is an instant given as RFC 3339; the zero value means now.
type timeFlag struct{ t time.Time }

func (f *timeFlag) String() string {
	if f == nil || f.t.IsZero() {
		return ""
	}
	return f.t.Format(time.RFC3339Nano)
}

func (f *timeFlag) Set(v string) error {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return fmt.Errorf("want a time such as 2030-04-30T09:00:00Z")
	}
	f.t = t
	return nil
}

// fromFlag is -from: a strategy SPEC, or none.
type fromFlag struct {
	s   ttl.Strategy
	set bool
}

func (f *fromFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	if f.s == nil {
		return "none"
	}
	return f.s.String()
}

func (f *fromFlag) Set(v string) error {
	s, err := spec.ParseFrom(v)
	if err != nil {
		return err
	}
	f.s, f.set = s, true
	return nil
}

// oldFlag is -old: default, for:DURATION, until:TIME or forever.
type oldFlag struct {
	life ttl.Lifetime
	spec string
}

func (f *oldFlag) String() string {
	if f == nil || f.spec == "" {
		return "default"
	}
	return f.spec
}

func (f *oldFlag) Set(v string) error {
	life, err := spec.ParseOld(v)
	if err != nil {
		return err
	}
	f.life, f.spec = life, v
	return nil
}
