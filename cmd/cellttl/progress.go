package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cellttl/ttl/scan"
)

// A progressLine prints the progress of a command that reads a whole
// table on stderr: on a terminal, one line rewritten in place; otherwise
// (a log, a CI job) a plain line every interval and, if it printed any,
// the last one. A scan over before the first interval prints nothing.
type progressLine struct {
	w        io.Writer
	terminal bool
	every    time.Duration // between plain lines
	printed  time.Time     // when the last plain line was printed, or the scan started
	lines    int           // plain lines printed
	live     bool          // a live line is on the terminal
	last     scan.Progress
	pending  bool // last has not been printed
}

// newProgress returns the progress line for the command's stderr, or nil
// when -progress is off.
func newProgress(c *config, stderr io.Writer) *progressLine {
	if !c.progress {
		return nil
	}
	p := &progressLine{w: stderr, every: 10 * time.Second, printed: time.Now()}
	if f, ok := stderr.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.terminal = true
		}
	}
	return p
}

// options returns the scan options of one tool, which report to the
// line, with the tool's clock.
func (p *progressLine) options(c *config) scan.Options {
	o := scan.Options{Workers: c.workers, Sample: c.sample, Now: c.clock()}
	if p == nil {
		return o
	}
	o.Progress = p.report
	if p.terminal {
		o.ProgressEvery = 200 * time.Millisecond
	}
	return o
}

// report prints p's progress, as often as the line allows.
func (p *progressLine) report(pr scan.Progress) {
	p.last, p.pending = pr, true
	switch {
	case p.terminal:
		fmt.Fprintf(p.w, "\r\033[K%s", pr)
		p.live, p.pending = true, false
	case time.Since(p.printed) >= p.every:
		fmt.Fprintf(p.w, "progress: %s\n", pr)
		p.printed, p.pending = time.Now(), false
		p.lines++
	}
}

// end ends the progress: a terminal's live line is left with the last
// report, a log gets the last report if it has not had it.
func (p *progressLine) end() {
	switch {
	case p == nil:
	case p.terminal && p.live:
		fmt.Fprintln(p.w)
	case !p.terminal && p.pending && p.lines > 0:
		fmt.Fprintf(p.w, "progress: %s\n", p.last)
	}
}
