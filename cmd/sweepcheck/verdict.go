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
	// Late counts those first events later than the bound; with a
	// standard's p99, only a 99th percentile over the bound fails.
	Late    int           `json:"late"`
	Bound   time.Duration `json:"bound"`
	P99Only bool          `json:"p99_only,omitempty"`
	// Outage is the longest delay of a session whose expiry fell in a
	// kill's gap: bounded by the gap and a period.
	Outage time.Duration `json:"outage_max"`
}

// ok reports whether the verdict holds: every session reported, none
// early, none unknown, none twice but for a killed run's batch, none
// late.
func (v verdict) ok() bool {
	late := v.Late > 0
	if v.P99Only {
		late = v.P99 > v.Bound
	}
	return v.Missing == 0 && v.Early == 0 && v.Unknown == 0 && v.Duplicates == 0 && !late
}

// String returns the verdict as a few lines for a person.
func (v verdict) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sessions expired: %d; reported: %d; missing: %d; early: %d; unknown rows: %d\n",
		v.Sessions, v.Reported, v.Missing, v.Early, v.Unknown)
	fmt.Fprintf(&b, "printed twice: %d by the run after a kill or pause (the batch in flight), %d otherwise\n", v.Redelivery, v.Duplicates)
	of := "bound"
	if v.P99Only {
		of = "bound of the p99"
	}
	fmt.Fprintf(&b, "delay from expiry to event: median %v, p99 %v, max %v (%s %v, %d later)\n",
		v.Median.Round(time.Millisecond), v.P99.Round(time.Millisecond), v.Max.Round(time.Millisecond), of, v.Bound, v.Late)
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

// A standard is what judge holds the events to.
type standard struct {
	// gaps are the spans when no sweep ran: an expiry in one is not held
	// to the bound.
	gaps []gap
	// bound is the longest delay from an expiry to its first event.
	bound time.Duration
	// p99 holds only the 99th percentile of the delays to bound.
	p99 bool
	// interrupted, when not nil, names the runs that were killed or
	// paused, of several replicas: an event printed again is a
	// redelivery when one of the two runs that printed it is among them.
	// Without it, of one process, only the run right after the one that
	// printed an event first (which was killed) may print it again.
	interrupted map[int]bool
}

// redelivery reports whether an event printed first by run first and
// again by run again is the batch in flight of an interrupted run.
func (s standard) redelivery(first, again int) bool {
	if s.interrupted == nil {
		return again == first+1
	}
	return first != again && (s.interrupted[first] || s.interrupted[again])
}

// judge compares the row events evs with sessions, each session's final
// expiry by row: each session must be reported once, with that expiry,
// within the standard's bound of it unless it expired in one of its
// gaps; an event may be printed again only as an interrupted run's batch
// in flight.
func judge(sessions map[string]time.Time, evs []received, s standard) verdict {
	gaps, bound := s.gaps, s.bound
	v := verdict{Sessions: len(sessions), Bound: bound, P99Only: s.p99}
	first := map[string]received{} // by event ID
	var delays []time.Duration
	for _, r := range evs {
		id := r.event.ID()
		if prev, seen := first[id]; seen {
			if s.redelivery(prev.run, r.run) {
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
