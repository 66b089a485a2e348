package rules_test

import (
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
)

// The questions asked of a strategy's sides, each answered once by
// package rules: for each strategy, whether its cells expire at an
// instant (the table schedules them, a sweep reports them), the age from
// which GC collects its cells, the age a schedule must keep entries for
// under its own GC policy, whether a family with its GC policy may hold
// entries (so that a sweep of other families must leave them), and, for a
// move, whether it changes its old cells' expiry (so that their entries
// must be written again).
type answers struct {
	expires    bool          // Strategy.ExpiresAtInstant
	gcAge      time.Duration // Strategy.GCAge; -1: none
	keep       time.Duration // Strategy.ScheduleAge of its own GC policy; -1: none
	holds      bool          // MayHoldEntries of its GC policy
	reschedule bool          // Move.Reschedules
}

var (
	start = time.Date(2030, 5, 1, 0, 0, 0, 0, time.UTC)
	until = start.Add(2 * time.Hour)
)

// sides are the strategies a move goes from and to; nil is a family
// without a strategy.
var sides = []struct {
	name string
	s    ttl.Strategy
}{
	{"none", nil},
	{"OneSecond", ttl.OneSecond()},
	{"Default(1h)", ttl.DefaultExpiration(time.Hour)},
	{"Seq(3)", ttl.SequenceNumbers(3)},
	{"Grace(Default(1h),30m)", ttl.Grace(ttl.DefaultExpiration(time.Hour), 30*time.Minute)},
	{"Grace(OneSecond,2h)", ttl.Grace(ttl.OneSecond(), 2*time.Hour)},
}

var olds = []struct {
	name string
	life ttl.Lifetime
}{
	{"default", ttl.Default},
	{"For(20m)", ttl.For(20 * time.Minute)},
	{"Until(+2h)", ttl.Until(until)},
}

// wantAnswers is every strategy and every valid move between sides with
// each Old, and its answers. An invalid move is absent (the test checks
// that Move refuses it).
var wantAnswers = map[string]answers{
	"none":                   {false, -1, -1, true, false},
	"OneSecond":              {true, time.Second, time.Second, true, false},
	"Default(1h)":            {true, time.Hour, 0, true, false},
	"Seq(3)":                 {false, -1, -1, false, false},
	"Grace(Default(1h),30m)": {true, 90 * time.Minute, 30 * time.Minute, true, false},
	"Grace(OneSecond,2h)":    {true, 2 * time.Hour, 2 * time.Hour, true, false},

	// From no strategy: old cells live for ever (default) or until an
	// end, and GC waits for them (none); For gives them a time rule, and
	// GC the longer of the two.
	"none->OneSecond/default":                                {true, -1, -1, true, false},
	"none->OneSecond/For(20m)":                               {true, 20 * time.Minute, 0, true, true},
	"none->OneSecond/Until(+2h)":                             {true, -1, -1, true, true},
	"none->Default(1h)/default":                              {true, -1, -1, true, false},
	"none->Default(1h)/For(20m)":                             {true, time.Hour, 0, true, true},
	"none->Default(1h)/Until(+2h)":                           {true, -1, -1, true, true},
	"none->Seq(3)/default":                                   {false, -1, -1, true, false},
	"none->Seq(3)/For(20m)":                                  {true, -1, -1, true, true},
	"none->Seq(3)/Until(+2h)":                                {true, -1, -1, true, true},
	"none->Grace(Default(1h),30m)/default":                   {true, -1, -1, true, false},
	"none->Grace(Default(1h),30m)/For(20m)":                  {true, 90 * time.Minute, 30 * time.Minute, true, true},
	"none->Grace(Default(1h),30m)/Until(+2h)":                {true, -1, -1, true, true},
	"none->Grace(OneSecond,2h)/default":                      {true, -1, -1, true, false},
	"none->Grace(OneSecond,2h)/For(20m)":                     {true, 140 * time.Minute, 2 * time.Hour, true, true},
	"none->Grace(OneSecond,2h)/Until(+2h)":                   {true, -1, -1, true, true},
	"Default(1h)->OneSecond/default":                         {true, time.Hour, 0, true, false},
	"Default(1h)->OneSecond/For(20m)":                        {true, 20 * time.Minute, 0, true, true},
	"Default(1h)->OneSecond/Until(+2h)":                      {true, -1, -1, true, true},
	"Default(1h)->Grace(OneSecond,2h)/default":               {true, 3 * time.Hour, 2 * time.Hour, true, false},
	"Default(1h)->Grace(OneSecond,2h)/For(20m)":              {true, 140 * time.Minute, 2 * time.Hour, true, true},
	"Default(1h)->Grace(OneSecond,2h)/Until(+2h)":            {true, -1, -1, true, true},
	"Seq(3)->OneSecond/default":                              {true, -1, -1, true, false},
	"Seq(3)->OneSecond/For(20m)":                             {true, -1, -1, true, true},
	"Seq(3)->OneSecond/Until(+2h)":                           {true, -1, -1, true, true},
	"Seq(3)->Default(1h)/default":                            {true, -1, -1, true, false},
	"Seq(3)->Default(1h)/For(20m)":                           {true, -1, -1, true, true},
	"Seq(3)->Default(1h)/Until(+2h)":                         {true, -1, -1, true, true},
	"Seq(3)->Grace(Default(1h),30m)/default":                 {true, -1, -1, true, false},
	"Seq(3)->Grace(Default(1h),30m)/For(20m)":                {true, -1, -1, true, true},
	"Seq(3)->Grace(Default(1h),30m)/Until(+2h)":              {true, -1, -1, true, true},
	"Seq(3)->Grace(OneSecond,2h)/default":                    {true, -1, -1, true, false},
	"Seq(3)->Grace(OneSecond,2h)/For(20m)":                   {true, -1, -1, true, true},
	"Seq(3)->Grace(OneSecond,2h)/Until(+2h)":                 {true, -1, -1, true, true},
	"Grace(Default(1h),30m)->OneSecond/default":              {true, 90 * time.Minute, 30 * time.Minute, true, false},
	"Grace(Default(1h),30m)->OneSecond/For(20m)":             {true, 50 * time.Minute, 30 * time.Minute, true, true},
	"Grace(Default(1h),30m)->OneSecond/Until(+2h)":           {true, -1, -1, true, true},
	"Grace(Default(1h),30m)->Grace(OneSecond,2h)/default":    {true, 3 * time.Hour, 2 * time.Hour, true, false},
	"Grace(Default(1h),30m)->Grace(OneSecond,2h)/For(20m)":   {true, 140 * time.Minute, 2 * time.Hour, true, true},
	"Grace(Default(1h),30m)->Grace(OneSecond,2h)/Until(+2h)": {true, -1, -1, true, true},
}

// strategiesAndMoves returns every strategy of sides and every valid
// move between them with each Old, by name, and the number of invalid
// moves left out.
func strategiesAndMoves(t *testing.T) (map[string]ttl.Strategy, int) {
	out := map[string]ttl.Strategy{}
	for _, s := range sides {
		out[s.name] = s.s
	}
	invalid := 0
	for _, from := range sides {
		for _, to := range sides {
			for _, old := range olds {
				m := ttl.Move{From: from.s, To: to.s, Start: start, Old: old.life}
				if _, err := m.Rule(); err != nil {
					invalid++
					continue
				}
				out[fmt.Sprintf("%s->%s/%s", from.name, to.name, old.name)] = m
			}
		}
	}
	return out, invalid
}

// TestQuestions checks each question over every strategy and every move
// pair against the table, and the answers against what the strategies
// themselves do: ExpiresAt, GCPolicy.
func TestQuestions(t *testing.T) {
	all, invalid := strategiesAndMoves(t)
	if invalid == 0 {
		t.Fatal("no invalid move among the pairs: the pairs are not all the pairs")
	}
	for name := range wantAnswers {
		if _, ok := all[name]; !ok {
			t.Errorf("%s: in the table, but not a valid strategy or move", name)
		}
	}
	for name, s := range all {
		want, ok := wantAnswers[name]
		if !ok {
			t.Errorf("%s: a valid strategy or move missing from the table", name)
			continue
		}
		r, err := rules.Of(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p := bigtable.GCPolicy(bigtable.NoGcPolicy())
		if s != nil {
			p = s.GCPolicy()
		}
		got := answers{expires: r.ExpiresAtInstant(), gcAge: -1, keep: -1, holds: rules.MayHoldEntries(p)}
		if age, ok := r.GCAge(); ok {
			got.gcAge = age
		}
		if k, ok := r.ScheduleAge(p); ok {
			got.keep = k
		}
		if r.Kind == rules.Moving {
			got.reschedule = r.Move.Reschedules()
		}
		if got != want {
			t.Errorf("%s: answers %+v, want %+v", name, got, want)
		}
		checkAgainstStrategy(t, name, s, r, p)
	}
}

// checkAgainstStrategy checks the answers for s against what s does: a
// GC age is its GC policy's; a strategy that expires at an instant has a
// cell that ExpiresAt gives an expiry, and one that does not has none; a
// family that writes entries has a GC policy MayHoldEntries says may hold
// them; a move reschedules exactly when an old cell's expiry under it
// differs from under From.
func checkAgainstStrategy(t *testing.T, name string, s ttl.Strategy, r rules.Strategy, p bigtable.GCPolicy) {
	t.Helper()
	age, aged := r.GCAge()
	if pAge, pAged := rules.GCAge(p); pAge != age || pAged != aged {
		t.Errorf("%s: GCAge %v, %v; the GC policy %v has %v, %v", name, age, aged, p, pAge, pAged)
	}
	if r.ExpiresAtInstant() && !rules.MayHoldEntries(p) {
		t.Errorf("%s: expires at an instant, but its GC policy %v may hold no entries", name, p)
	}
	if s == nil {
		return
	}
	stamps := []bigtable.Timestamp{5, 1000, bigtable.Time(start.Add(-time.Hour)), bigtable.Time(start.Add(time.Hour))}
	expires, rescheduled := false, false
	for _, ts := range stamps {
		e, ok := s.ExpiresAt(ts)
		expires = expires || ok
		if m, isMove := s.(ttl.Move); isMove {
			at, changed := r.Move.Rescheduled(ts)
			if changed && (!ok || !at.Equal(e)) {
				t.Errorf("%s: Rescheduled(%d) = %v, but the move's cell expires at %v, %v", name, ts, at, e, ok)
			}
			rescheduled = rescheduled || changed
			var was time.Time
			had := false
			if m.From != nil {
				was, had = m.From.ExpiresAt(ts)
			}
			old, _, _ := r.Move.Sides()
			if old.Span.Contains(ts) && ok && (!had || !was.Equal(e)) != changed {
				t.Errorf("%s: Rescheduled(%d) changed = %v; From's expiry %v, %v, the move's %v", name, ts, changed, was, had, e)
			}
		}
	}
	if expires != r.ExpiresAtInstant() {
		t.Errorf("%s: ExpiresAtInstant = %v, but ExpiresAt of its cells says %v", name, r.ExpiresAtInstant(), expires)
	}
	if r.Kind == rules.Moving && rescheduled && !r.Move.Reschedules() {
		t.Errorf("%s: an old cell is rescheduled, but Reschedules = false", name)
	}
}

// TestOwnsEntries checks that a sweep may delete the entries it serves
// only when it sweeps every family that may hold cells with entries: a
// family collected by age, or one with no GC (a move keeps its cells until
// deleted); not one limited by versions alone.
func TestOwnsEntries(t *testing.T) {
	policies := map[string]bigtable.GCPolicy{
		"sess":  bigtable.MaxAgePolicy(time.Hour),
		"hits":  bigtable.UnionPolicy(bigtable.MaxVersionsPolicy(3), bigtable.MaxAgePolicy(time.Minute)),
		"rev":   bigtable.MaxVersionsPolicy(2),
		"mv":    bigtable.NoGcPolicy(),
		"both":  bigtable.IntersectionPolicy(bigtable.MaxVersionsPolicy(1), bigtable.MaxAgePolicy(time.Hour)),
		"noinf": nil,
	}
	in := func(names ...string) func(string) bool {
		return func(family string) bool {
			for _, n := range names {
				if n == family {
					return true
				}
			}
			return false
		}
	}
	for _, tt := range []struct {
		swept []string
		want  bool
	}{
		{[]string{"sess", "hits", "mv", "noinf"}, true},
		{[]string{"sess", "hits", "mv", "noinf", "rev", "both"}, true},
		{[]string{"sess", "hits", "noinf"}, false}, // mv may be in a move
		{[]string{"sess", "mv", "noinf"}, false},   // hits is collected by age in its union
		{nil, false},
	} {
		if got := rules.OwnsEntries(policies, in(tt.swept...)); got != tt.want {
			t.Errorf("OwnsEntries(sweeping %v) = %v, want %v", tt.swept, got, tt.want)
		}
	}
	if !rules.OwnsEntries(map[string]bigtable.GCPolicy{"rev": bigtable.MaxVersionsPolicy(1)}, in()) {
		t.Error("OwnsEntries of a table no family of which may hold entries = false, want true")
	}
}

// TestRescheduledOffSide checks that a cell on the new side of a move is
// never rescheduled: only old cells take Old's expiry.
func TestRescheduledOffSide(t *testing.T) {
	m := ttl.Move{From: ttl.DefaultExpiration(time.Hour), To: ttl.OneSecond(), Start: start, Old: ttl.For(20 * time.Minute)}
	r, err := rules.Of(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, changed := r.Move.Rescheduled(bigtable.Time(start.Add(time.Minute))); changed {
		t.Error("a new cell is rescheduled")
	}
	at, changed := r.Move.Rescheduled(bigtable.Time(start.Add(-time.Hour)))
	if want := start.Add(-40 * time.Minute); !changed || !at.Equal(want) {
		t.Errorf("an old cell stamped an hour before Start: %v, %v; want %v, true", at, changed, want)
	}
}
