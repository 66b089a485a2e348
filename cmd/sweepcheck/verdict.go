package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cellttl/ttl/sweep"
)

// A received is an event as the checker read it from a sweep process's
// standard output: when it arrived, and which run of the process (0 for
// the first, 1 after the first kill, …) printed it.
type received struct {
	event sweep.Event
	at    time.Time
	run   int
}

// A verdict is what the events say against the sessions written.
type verdict struct {
	Sessions   int `json:"sessions"`    // sessions written, each expired by the end
	Reported   int `json:"reported"`    // sessions reported, at least once
	Missing    int `json:"missing"`     // sessions never reported
	Early      int `json:"early"`       // events for an expiry a renewal had superseded
	Unknown    int `json:"unknown"`     // events for rows never written
	Redelivery int `json:"redelivered"` // events printed again by the run after a kill: the batch in flight
	Duplicates int `json:"duplicates"`  // events printed twice otherwise

	// The delay from each session's expiry to its first event, over the
	// sessions whose expiry fell while a sweep ran (not between a kill and
	// the restart's first round).
	Median, P99, Max time.Duration
	// Late counts those first events later than the bound.
	Late  int           `json:"late"`
	Bound time.Duration `json:"bound"`
	// Outage is the longest delay of a session whose expiry fell in a
	// kill's gap: bounded by the gap and a period.
	Outage time.Duration `json:"outage_max"`
}

// ok reports whether the verdict holds: every session reported, none
// early, none unknown, none twice but for a killed run's batch, none
// late.
func (v verdict) ok() bool {
	return v.Missing == 0 && v.Early == 0 && v.Unknown == 0 && v.Duplicates == 0 && v.Late == 0
}

// String returns the verdict as a few lines for a person.
func (v verdict) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sessions expired: %d; reported: %d; missing: %d; early: %d; unknown rows: %d\n",
		v.Sessions, v.Reported, v.Missing, v.Early, v.Unknown)
	fmt.Fprintf(&b, "printed twice: %d by the run after a kill (the batch in flight), %d otherwise\n", v.Redelivery, v.Duplicates)
	fmt.Fprintf(&b, "delay from expiry to event: median %v, p99 %v, max %v (bound %v, %d later)\n",
		v.Median.Round(time.Millisecond), v.P99.Round(time.Millisecond), v.Max.Round(time.Millisecond), v.Bound, v.Late)
	fmt.Fprintf(&b, "longest delay of an expiry while the sweep was down: %v\n", v.Outage.Round(time.Millisecond))
	if v.ok() {
		b.WriteString("PASS")
	} else {
		b.WriteString("FAIL")
	}
	return b.String()
}

// A gap is a span when no sweep process ran: from a kill to the restart.
type gap struct{ from, until time.Time }

// judge compares the row events evs with sessions, each session's final
// expiry by row: each session must be reported once, with that expiry,
// within bound of it unless it expired in one of gaps; an event may be
// printed again only by the run right after the one that printed it
// first, which was killed.
func judge(sessions map[string]time.Time, evs []received, gaps []gap, bound time.Duration) verdict {
	v := verdict{Sessions: len(sessions), Bound: bound}
	first := map[string]received{} // by event ID
	var delays []time.Duration
	for _, r := range evs {
		id := r.event.ID()
		if prev, seen := first[id]; seen {
			if r.run == prev.run+1 {
				v.Redelivery++
			} else {
				v.Duplicates++
			}
			continue
		}
		first[id] = r
		expiry, known := sessions[r.event.Row]
		switch {
		case !known:
			v.Unknown++
			continue
		case !r.event.Expired.Equal(expiry):
			v.Early++
			continue
		}
		v.Reported++
		delay := r.at.Sub(expiry)
		if inGap(expiry, gaps) {
			v.Outage = max(v.Outage, delay)
			continue
		}
		delays = append(delays, delay)
		if delay > bound {
			v.Late++
		}
	}
	v.Missing = v.Sessions - v.Reported
	if len(delays) > 0 {
		slices.Sort(delays)
		v.Median = delays[len(delays)/2]
		v.P99 = delays[(len(delays)*99)/100]
		v.Max = delays[len(delays)-1]
	}
	return v
}

// inGap reports whether t falls in one of gaps.
func inGap(t time.Time, gaps []gap) bool {
	for _, g := range gaps {
		if !t.Before(g.from) && t.Before(g.until) {
			return true
		}
	}
	return false
}
