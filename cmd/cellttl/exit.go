package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
)

// The exit statuses, one table for every command: "cellttl help", each
// command's -h and docs/errors.md print it from exitStatuses, so that
// none of them can say another thing.

// Exit statuses.
const (
	exitOK       = 0
	exitFailed   = 1 // the command failed or was interrupted
	exitUsage    = 2 // bad command line
	exitMismatch = 3 // refused: the table does not fit, or data would be lost
	exitNotReady = 4 // not yet: the step cannot run before an instant
)

// An exitStatus is a row of the table of exit statuses.
type exitStatus struct {
	code int
	what string // what it means, as one paragraph
}

// exitStatuses is the table of exit statuses.
var exitStatuses = []exitStatus{
	{exitOK, "done: the command did what it was asked (a dry run: what -apply would do), or printed its help (-h, help)."},
	{exitFailed, "failed or interrupted: an error, a server that did not answer, -timeout, or an interrupt (SIGINT, Ctrl-C) " +
		"while it worked. A scan that did not finish labels its counts partial, and decides and changes nothing. " +
		"A run that did not finish exits 1 whatever it found."},
	{exitUsage, "bad command line: a flag, value or argument the command cannot take; nothing read or changed."},
	{exitMismatch, "refused, or found wrong: the table does not fit, or data would be lost. A table or family that " +
		"does not exist (the nearest name the table has is suggested), a GC policy other than the strategy needs " +
		"(check), a change ensure or a move step refuses, changing nothing (its dry run exits 3 too), cells GC may " +
		"have deleted before a sweep read them."},
	{exitNotReady, "not yet: a step run before it can run, which can run later: a move's rewrite or finish before its start."},
}

// exitNote is said after the table: how sweep -every ends.
const exitNote = "sweep -every, which sweeps until it is stopped, exits as its rounds did (0, or 3 if one may have " +
	"missed cells) when SIGTERM (a service manager's stop) or -timeout ends it between rounds."

// exitHelp returns the table of exit statuses as the help prints it.
func exitHelp() string {
	var b strings.Builder
	b.WriteString("Exit status, the same for every command:\n")
	for _, s := range exitStatuses {
		fmt.Fprintf(&b, "  %d  %s\n", s.code, wrap(s.what, 73, "     "))
	}
	b.WriteString("\n" + wrap(exitNote, 76, "") + "\n")
	return b.String()
}

// exitMarkdown returns the table of exit statuses as docs/errors.md has
// it.
func exitMarkdown() string {
	var b strings.Builder
	b.WriteString("| exit | meaning |\n|---|---|\n")
	for _, s := range exitStatuses {
		fmt.Fprintf(&b, "| %d | %s |\n", s.code, s.what)
	}
	b.WriteString("\n" + exitNote + "\n")
	return b.String()
}

// wrap breaks s into lines of at most width characters (a longer word
// alone on its line), the lines after the first starting with indent.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(s) {
		switch {
		case i == 0:
		case n+1+len(word) > width:
			b.WriteString("\n" + indent)
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}

// errInterrupted is the cause of a command's context ended by an
// interrupt (SIGINT, Ctrl-C).
var errInterrupted = errors.New("interrupted")

// interruptible returns a context that an interrupt ends with the cause
// errInterrupted, and a function that stops listening for it.
func interruptible() (context.Context, func()) {
	return onSignal(context.Background(), os.Interrupt, errInterrupted)
}

// errTerminated is the cause of a sweep's context ended by SIGTERM, the
// stop of a service manager. (signal.NotifyContext gives a cause only
// from Go 1.23 on, and this module supports older versions.)
var errTerminated = errors.New("terminated signal received")

// onSignal returns a context, below parent, that sig ends with cause, and
// a function that stops listening for it.
func onSignal(parent context.Context, sig os.Signal, cause error) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, sig)
	done := make(chan struct{})
	go func() {
		select {
		case <-signals:
			cancel(cause)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(signals)
		close(done)
		cancel(nil)
	}
}

// interrupted returns the exit status of a command that returned code
// after ctx ended: an interrupted command did not finish, whatever it
// found, and exits 1 (a bad command line stays one).
func interrupted(ctx context.Context, name string, code int, stderr io.Writer) int {
	if !errors.Is(context.Cause(ctx), errInterrupted) || code == exitFailed || code == exitUsage {
		return code
	}
	fmt.Fprintf(stderr, "cellttl %s: interrupted: it did not finish\n", name)
	return exitFailed
}
