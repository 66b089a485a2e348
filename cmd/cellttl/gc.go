package main

import "runtime/debug"

// gcPercent is the garbage collector's target (GOGC) the command runs
// with unless its environment sets one: a round of a sweep, an audit or a
// rewrite keeps a few megabytes live while it decodes hundreds of
// megabytes of responses, and at Go's default of 100 it collects every
// few megabytes. At 400 a catch-up's client spent about 30% less CPU
// (docs/sweeps.md, "Catching up after an outage"). The Go compiler raises
// its own target for the same reason.
const gcPercent = 400

// tuneGC sets the collector's target to gcPercent unless getenv says
// GOGC or GOMEMLIMIT is set, which the operator's choice then governs,
// and reports whether it set it.
func tuneGC(getenv func(string) string) bool {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return false
	}
	debug.SetGCPercent(gcPercent)
	return true
}
