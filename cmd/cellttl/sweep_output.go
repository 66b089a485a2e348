package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

// A sweepOutput writes a sweep's events and reports, keeps its progress
// line out of their way, and remembers what the rounds leave to the exit
// status.
type sweepOutput struct {
	c              *config
	stdout, stderr io.Writer

	// mu orders the events, which the sweep's workers deliver, with the
	// progress, which the round's goroutine reports.
	mu       sync.Mutex
	progress *progressLine

	rounds   int   // rounds reported
	finished bool  // the last round read and delivered everything
	err      error // the last round's error
	missed   bool  // GC may have deleted cells before a round read them
}

func newSweepOutput(c *config, stdout, stderr io.Writer) *sweepOutput {
	return &sweepOutput{c: c, stdout: stdout, stderr: stderr, progress: newProgress(c, stderr)}
}

// scanOptions returns the options of the sweep's reads, which report
// progress to the output.
func (o *sweepOutput) scanOptions() scan.Options {
	so := o.progress.options(o.c)
	if o.progress != nil {
		so.Progress = o.report
	}
	return so
}

// report prints the progress of a round.
func (o *sweepOutput) report(p scan.Progress) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.progress.report(p)
}

// deliver writes a batch of events to stdout, one a line, in one write;
// the sweep records them as delivered once it returns nil.
func (o *sweepOutput) deliver(_ context.Context, events []sweep.Event) error {
	var b bytes.Buffer
	for _, e := range events {
		if o.c.format.json {
			line, err := e.MarshalJSON() // what json.Marshal writes, without its second pass
			if err != nil {
				return err
			}
			b.Write(line)
		} else {
			b.WriteString(e.String())
		}
		b.WriteByte('\n')
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if p := o.progress; p != nil && p.live {
		// The events may share the terminal: clear the live line, which
		// the next report draws again below them.
		fmt.Fprint(p.w, "\r\033[K")
		p.live = false
	}
	_, err := o.stdout.Write(b.Bytes())
	return err
}

// round ends a round: it ends its progress, prints its report and error,
// and keeps what the exit status needs. A round that the context ended
// before it began (no report) leaves the last round's state; one that
// -round-timeout ended is a round that failed, and says so.
func (o *sweepOutput) round(r *sweep.Report, err error) {
	o.endProgress()
	if r == nil && o.c.sweep.every > 0 && !errors.Is(err, sweep.ErrRoundTimeout) &&
		(errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return
	}
	o.rounds++
	o.err, o.finished = err, err == nil && r != nil && r.Read.Complete()
	if r != nil {
		o.missed = o.missed || len(r.Missed) > 0
	}
	// A round that failed before it had a report still ends with its
	// JSON line, {"report": null, "error": …}.
	if r != nil || o.c.format.json {
		if werr := o.printReport(r, err); werr != nil {
			fmt.Fprintf(o.stderr, "cellttl sweep: writing the report: %v\n", werr)
			o.err, o.finished = werr, false
		}
	}
	if err != nil {
		errorLine(o.stderr, fmt.Sprintf("cellttl sweep: %v", err))
	}
	switch {
	case r == nil:
	case !r.Read.Complete():
		fmt.Fprintf(o.stderr, "cellttl sweep: the round did not finish: %s\n", o.resume(r))
	case err == nil && o.c.sweep.every == 0 && r.From.Equal(r.Until):
		fmt.Fprintf(o.stderr, "cellttl sweep: the watermark is at %s, -margin before now: the next run reports what expires after it\n",
			text.Time(r.Until))
	}
}

// resume says how the round r, which did not finish, is resumed.
func (o *sweepOutput) resume(r *sweep.Report) string {
	switch {
	case o.c.checkpoint != "" && o.c.sweep.every > 0:
		return "the next round resumes it, as does a run with the same -checkpoint"
	case o.c.checkpoint != "":
		return "run again with the same -checkpoint to resume it"
	case o.c.sweep.every > 0:
		return "the next round resumes it; without -checkpoint, a new run does not"
	}
	return fmt.Sprintf("without -checkpoint no run resumes it: run again with -since %s to sweep its window again", text.Time(r.From))
}

// endProgress ends the round's progress line, and readies it for the
// next round.
func (o *sweepOutput) endProgress() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.progress != nil {
		o.progress.end()
		*o.progress = *newProgress(o.c, o.stderr)
	}
}

// printReport prints a round's report: on stderr as text, or on stdout as
// a JSON line {"report": ...} with its error.
func (o *sweepOutput) printReport(r *sweep.Report, err error) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.c.format.json {
		return renderSweep(o.stderr, r)
	}
	line := struct {
		Report *sweep.Report `json:"report"`
		Error  string        `json:"error,omitempty"`
	}{Report: r}
	if err != nil {
		line.Error = err.Error()
	}
	b, werr := json.Marshal(line)
	if werr == nil {
		_, werr = o.stdout.Write(append(b, '\n'))
	}
	return werr
}

// status returns the exit status the rounds leave: 2 for a command line
// the library refused (a -checkpoint of another sweep), 3 for a family
// the table does not have (as check), 1 if the last round did not finish,
// 3 if GC may have deleted cells before a round read them, 0 otherwise.
func (o *sweepOutput) status() int {
	switch {
	case errors.Is(o.err, ttl.ErrInvalidOption) || errors.Is(o.err, ttl.ErrInvalidStrategy):
		return exitUsage
	case errors.Is(o.err, policy.ErrFamilyMismatch):
		fmt.Fprintln(o.stderr, `cellttl sweep: "cellttl ensure -apply" creates the families with the policies their strategies need`)
		if o.c.schedule != "" {
			fmt.Fprintf(o.stderr, "cellttl sweep: \"cellttl ensure -schedule %s -apply\" sets up the schedule table's policy\n", o.c.schedule)
		}
		return exitMismatch
	}
	if o.missed {
		fmt.Fprintln(o.stderr, "cellttl sweep: GC may have deleted cells that expired before the sweep read them (the report lists them):\n"+
			"  give each such family a grace at least as long as the sweep may fall behind, -family NAME=grace:DURATION:SPEC,\n"+
			"  set with \"cellttl ensure -apply\"")
	}
	switch {
	case !o.finished: // a run that did not finish exits 1, whatever it found
		return exitFailed
	case o.missed:
		return exitMismatch
	}
	return exitOK
}

// renderSweep prints a round's report for a person: the window and
// whether the round is complete, the events, what was read and deleted,
// and each span GC may have deleted before the round read it.
func renderSweep(w io.Writer, r *sweep.Report) error {
	var b strings.Builder
	state := "complete"
	switch {
	case !r.Read.Complete():
		state = fmt.Sprintf("stopped after %d of %d shards; run again to resume", r.Read.ShardsRead, r.Read.Shards)
	case len(r.Missed) > 0:
		state = "complete, but GC may have deleted some expired cells first"
	}
	fmt.Fprintf(&b, "sweep of table %q, expiries after %s up to %s: %s\n", r.Table, text.Time(r.From), text.Time(r.Until), state)
	if r.Resumed {
		fmt.Fprintf(&b, "  resumed a round an earlier run began\n")
	}
	fmt.Fprintf(&b, "  %s delivered; %s expired (%s)", text.Plural(int(r.Events), r.Granularity.String()+" event", r.Granularity.String()+" events"),
		text.Plural(int(r.Expired.Cells), "cell", "cells"), text.Bytes(r.Expired.Bytes))
	if r.Unscheduled > 0 {
		fmt.Fprintf(&b, ", %d with no entry in the schedule", r.Unscheduled)
	}
	if r.Deleted > 0 {
		fmt.Fprintf(&b, ", deleted in %s", text.Plural(int(r.Deleted), "row", "rows"))
	}
	fmt.Fprintf(&b, "\n  read %s returned of %s seen, in %s\n", text.Plural(r.Read.CellsReturned, "cell", "cells"),
		text.Plural(r.Read.CellsSeen, "cell", "cells"), text.Plural(r.Read.Reads, "request", "requests"))
	for _, m := range r.Missed {
		fmt.Fprintf(&b, "  family %q: cells that expired after %s up to %s may have been deleted by GC (it keeps them %v after expiry) before the sweep read them\n",
			m.Family, text.Time(m.From), text.Time(m.Until), m.Keep)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
