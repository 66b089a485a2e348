package serve

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestReady(t *testing.T) {
	start := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	const period = time.Minute
	for _, tc := range []struct {
		name   string
		role   Role
		last   time.Time
		now    time.Time
		period time.Duration
		code   int
		reason string
	}{
		{"holder, round just finished", Holding, start, start.Add(10 * time.Second), period, 200,
			"ready: holds the lease, last round finished 10s ago"},
		{"holder, two periods exactly", Holding, start, start.Add(2 * period), period, 200,
			"ready: holds the lease, last round finished 2m0s ago"},
		{"holder, past two periods", Holding, start, start.Add(2*period + time.Millisecond), period, 503,
			"not ready: holds the lease, last round finished 2m0.001s ago, more than two periods (2m0s)"},
		{"holder, no round yet", Holding, time.Time{}, start, period, 503,
			"not ready: holds the lease, no round finished yet"},
		{"standby, recent check", StandingBy, start, start.Add(time.Minute), period, 200,
			"ready: stands by, last standby check finished 1m0s ago"},
		{"standby, stale check", StandingBy, start, start.Add(3 * period), period, 503,
			"not ready: stands by, last standby check finished 3m0s ago, more than two periods (2m0s)"},
		{"neither", Idle, start, start, period, 503,
			"not ready: neither holds the lease nor stands by"},
		{"one round, finished long ago", Holding, start, start.Add(24 * time.Hour), 0, 200,
			"ready: holds the lease, last round finished 24h0m0s ago"},
		{"no lease, round just finished", Alone, start, start.Add(10 * time.Second), period, 200,
			"ready: runs alone, last round finished 10s ago"},
		{"no lease, no round yet", Alone, time.Time{}, start, period, 503,
			"not ready: runs alone, no round finished yet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status := func() (Role, time.Time) { return tc.role, tc.last }
			h := Ready(status, tc.period, func() time.Time { return tc.now })
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, ReadyPath, nil))
			if rec.Code != tc.code || rec.Body.String() != tc.reason+"\n" {
				t.Errorf("got %d %q, want %d %q", rec.Code, rec.Body.String(), tc.code, tc.reason+"\n")
			}
		})
	}
}

// A fake clock moving past two periods turns a ready sweeper unready, and
// a round finishing turns it ready again.
func TestReadyFollowsTheClock(t *testing.T) {
	now := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	last := now
	h := Mux(nil, Ready(func() (Role, time.Time) { return Holding, last }, 30*time.Second,
		func() time.Time { return now }))
	get := func() (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, ReadyPath, nil))
		b, _ := io.ReadAll(rec.Body)
		return rec.Code, string(b)
	}
	if code, body := get(); code != 200 {
		t.Fatalf("at the round's end: %d %s", code, body)
	}
	now = now.Add(61 * time.Second)
	if code, body := get(); code != 503 || !strings.Contains(body, "more than two periods (1m0s)") {
		t.Fatalf("61s after a 30s period's round: %d %s", code, body)
	}
	last = now
	if code, body := get(); code != 200 {
		t.Fatalf("after the next round: %d %s", code, body)
	}
}
