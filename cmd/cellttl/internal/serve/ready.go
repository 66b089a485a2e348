package serve

import (
	"fmt"
	"net/http"
	"time"
)

// Status reports what readiness depends on: whether the process holds the
// lease of its work (one without a lease holds it), whether it stands by
// for another that holds it, and when its last round or standby check
// finished (zero before the first). It is called on every /readyz request,
// from the server's goroutines.
type Status func() (holding, standby bool, last time.Time)

// Ready returns the /readyz handler: 200 when status says the process
// holds the lease or stands by and its last round finished within two
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
	holding, standby, last := status()
	role, what := "holds the lease", "round"
	switch {
	case !holding && !standby:
		return http.StatusServiceUnavailable, "not ready: neither holds the lease nor stands by"
	case !holding:
		role, what = "stands by", "standby check"
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
