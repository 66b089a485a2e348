package serve

import (
	"fmt"
	"net/http"
	"time"
)

// A Role is what a process does with its work, as /readyz reports it.
type Role uint8

const (
	// Idle is a process that neither does its work nor stands by.
	Idle Role = iota
	// Alone is a process that does its work without a lease.
	Alone
	// Holding is a process that holds the lease of its work.
	Holding
	// StandingBy is a process that stands by for the holder of the lease.
	StandingBy
)

// Status reports what readiness depends on: the process's role, and when
// its last round (or, standing by, its last check of the lease) finished,
// zero before the first. It is called on every /readyz request, from the
// server's goroutines.
type Status func() (role Role, last time.Time)

// Ready returns the /readyz handler: 200 when status says the process
// works (alone or holding the lease) or stands by, and its last round or
// check finished within two
// periods of now (with period 0, one round that runs once: when it has
// finished), else 503; each with a one-line reason. now is its clock.
func Ready(status Status, period time.Duration, now func() time.Time) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		code, reason := readiness(status, period, now())
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(code)
		fmt.Fprintln(w, reason)
	})
}

// readiness returns the status code and reason of Ready at now.
func readiness(status Status, period time.Duration, now time.Time) (int, string) {
	r, last := status()
	var role, what string
	switch r {
	case Alone:
		role, what = "runs alone", "round"
	case Holding:
		role, what = "holds the lease", "round"
	case StandingBy:
		role, what = "stands by", "standby check"
	default:
		return http.StatusServiceUnavailable, "not ready: neither holds the lease nor stands by"
	}
	if last.IsZero() {
		return http.StatusServiceUnavailable, fmt.Sprintf("not ready: %s, no %s finished yet", role, what)
	}
	ago := now.Sub(last).Round(time.Millisecond)
	if period > 0 && ago > 2*period {
		return http.StatusServiceUnavailable, fmt.Sprintf("not ready: %s, last %s finished %v ago, more than two periods (%v)", role, what, ago, 2*period)
	}
	return http.StatusOK, fmt.Sprintf("ready: %s, last %s finished %v ago", role, what, ago)
}
