package sweep_test

import (
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/sweep"
)

// TestOwnsEntries checks the rule a sweep run elsewhere (the Beam job)
// shares with a Sweeper: it may delete the schedule entries it serves only
// when it sweeps every family that may hold entries: one GC collects by
// age, alone or in a union, or one with no GC (a family in a move).
func TestOwnsEntries(t *testing.T) {
	policies := map[string]bigtable.GCPolicy{
		"sess":  bigtable.MaxAgePolicy(time.Hour),
		"hits":  bigtable.UnionPolicy(bigtable.MaxVersionsPolicy(3), bigtable.MaxAgePolicy(time.Minute)),
		"rev":   bigtable.MaxVersionsPolicy(2),
		"plain": bigtable.NoGcPolicy(),
		"both":  bigtable.IntersectionPolicy(bigtable.MaxVersionsPolicy(1), bigtable.MaxAgePolicy(time.Hour)),
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
		{[]string{"sess", "hits", "plain"}, true},
		{[]string{"sess", "hits", "plain", "rev"}, true},
		{[]string{"sess", "plain"}, false}, // hits is collected by age in its union
		{[]string{"sess", "hits"}, false},  // plain may be a family in a move
		{[]string{"hits", "rev", "plain", "both"}, false},
		{nil, false},
	} {
		if got := sweep.OwnsEntries(policies, in(tt.swept...)); got != tt.want {
			t.Errorf("OwnsEntries(sweeping %v) = %v, want %v", tt.swept, got, tt.want)
		}
	}
	if !sweep.OwnsEntries(map[string]bigtable.GCPolicy{"rev": bigtable.MaxVersionsPolicy(1)}, in()) {
		t.Error("OwnsEntries of a table no family of which may hold entries = false, want true")
	}
}
