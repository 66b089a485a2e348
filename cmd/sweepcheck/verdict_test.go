package main

import (
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/sweep"
)

// TestJudge: each kind of fault in the events is counted, and only a
// clean run passes.
func TestJudge(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	ev := func(row string, expired time.Time, at time.Duration, run int) received {
		return received{event: sweep.Event{Kind: sweep.Row, Table: "t", Row: row, Family: "f", Column: "c", Timestamp: bigtable.Time(expired), Expired: expired}, at: expired.Add(at), run: run}
	}
	sessions := map[string]time.Time{"a": t0, "b": t0.Add(time.Minute), "c": t0.Add(2 * time.Minute)}
	clean := []received{ev("a", t0, 5*time.Second, 0), ev("b", t0.Add(time.Minute), 15*time.Second, 0), ev("c", t0.Add(2*time.Minute), 10*time.Second, 1)}
	v := judge(sessions, clean, standard{bound: 20 * time.Second})
	if !v.ok() || v.Reported != 3 || v.Median != 10*time.Second || v.Max != 15*time.Second {
		t.Errorf("clean run: %+v", v)
	}
	if !strings.HasSuffix(v.String(), "PASS") {
		t.Errorf("clean run reads %q", v)
	}

	for name, tc := range map[string]struct {
		evs   []received
		gaps  []gap
		check func(verdict) bool
	}{
		"missing": {clean[:2], nil, func(v verdict) bool { return v.Missing == 1 }},
		"early": {append(clean, ev("c", t0.Add(time.Minute), 0, 0)), nil, func(v verdict) bool {
			return v.Early == 1
		}},
		"unknown": {append(clean, ev("x", t0, 0, 0)), nil, func(v verdict) bool { return v.Unknown == 1 }},
		"twice in one run": {append(clean, ev("a", t0, 6*time.Second, 0)), nil, func(v verdict) bool {
			return v.Duplicates == 1 && v.Redelivery == 0
		}},
		"late": {[]received{clean[0], ev("b", t0.Add(time.Minute), time.Minute, 0), clean[2]}, nil, func(v verdict) bool {
			return v.Late == 1 && v.Max == time.Minute
		}},
	} {
		v := judge(sessions, tc.evs, standard{gaps: tc.gaps, bound: 20 * time.Second})
		if v.ok() || !tc.check(v) || !strings.HasSuffix(v.String(), "FAIL") {
			t.Errorf("%s: %+v", name, v)
		}
	}

	// A killed run's batch printed again by the next run passes; a late
	// event whose expiry fell while the sweep was down counts as outage.
	redo := append(clean, ev("a", t0, 30*time.Second, 1))
	late := ev("b", t0.Add(time.Minute), time.Minute, 1)
	v = judge(sessions, append(redo[:1:1], late, clean[2], redo[3]), standard{gaps: []gap{{t0.Add(50 * time.Second), t0.Add(70 * time.Second)}}, bound: 20 * time.Second})
	if !v.ok() || v.Redelivery != 1 || v.Outage != time.Minute {
		t.Errorf("kill: %+v", v)
	}
}

// TestJudgeReplicas: of several replicas, an event printed again passes
// only when the run that printed it first or again was killed or
// paused; and a p99 bound forgives one late event in a hundred.
func TestJudgeReplicas(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	ev := func(row string, expired time.Time, at time.Duration, run int) received {
		return received{event: sweep.Event{Kind: sweep.Row, Table: "t", Row: row, Family: "f", Column: "c", Timestamp: bigtable.Time(expired), Expired: expired}, at: expired.Add(at), run: run}
	}
	sessions := map[string]time.Time{"a": t0, "b": t0.Add(time.Minute)}
	base := []received{ev("a", t0, 5*time.Second, 10), ev("b", t0.Add(time.Minute), 5*time.Second, 20)}
	paused := standard{bound: 20 * time.Second, interrupted: map[int]bool{10: true}}
	for name, tc := range map[string]struct {
		again received
		s     standard
		ok    bool
	}{
		"a killed run's batch again by a standby":    {ev("a", t0, 9*time.Second, 20), paused, true},
		"a paused run printing after the new holder": {ev("b", t0.Add(time.Minute), 9*time.Second, 10), paused, true},
		"two uninterrupted replicas":                 {ev("b", t0.Add(time.Minute), 9*time.Second, 30), paused, false},
		"one run twice":                              {ev("a", t0, 9*time.Second, 10), paused, false},
		"without the list, the next run only":        {ev("a", t0, 9*time.Second, 20), standard{bound: 20 * time.Second}, false},
	} {
		v := judge(sessions, append(base[:2:2], tc.again), tc.s)
		if v.ok() != tc.ok {
			t.Errorf("%s: ok = %v, want %v: %+v", name, v.ok(), tc.ok, v)
		}
	}

	many := map[string]time.Time{}
	var evs []received
	for i := range 200 {
		row := string(rune('A'+i/26)) + string(rune('a'+i%26))
		many[row] = t0.Add(time.Duration(i) * time.Second)
		delay := 5 * time.Second
		if i == 0 {
			delay = time.Minute
		}
		evs = append(evs, ev(row, many[row], delay, 0))
	}
	if v := judge(many, evs, standard{bound: 20 * time.Second, p99: true}); !v.ok() || v.Late != 1 || !strings.Contains(v.String(), "bound of the p99") {
		t.Errorf("one late in 200 under a p99 bound: %+v", v)
	}
	if v := judge(many, evs, standard{bound: 20 * time.Second}); v.ok() {
		t.Errorf("one late in 200 under a bound of each: %+v", v)
	}
}
