package terraform_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/policy/terraform"
)

// TestSchedulePolicy: the schedule's resource carries the policy the
// families need (an age from the grace, none when a family in a move
// keeps cells with no age), and bad arguments are refused.
func TestSchedulePolicy(t *testing.T) {
	o := terraform.Options{Instance: "i", Table: "sched"}
	hcl, err := terraform.SchedulePolicy("t", map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), time.Hour)}, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`resource "google_bigtable_gc_policy" "sched_e"`, `table           = "sched"`, `column_family   = "e"`, "max_age", `deletion_policy = "ABANDON"`} {
		if !contains(hcl, want) {
			t.Errorf("SchedulePolicy lacks %q:\n%s", want, hcl)
		}
	}
	moving := map[string]ttl.Strategy{"mv": ttl.Move{To: ttl.OneSecond(), Start: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}}
	hcl, err = terraform.SchedulePolicy("t", moving, o)
	if err != nil {
		t.Fatal(err)
	}
	if contains(hcl, "max_age") {
		t.Errorf("a move that keeps cells with no age gives the schedule an age:\n%s", hcl)
	}
	for name, tc := range map[string]struct {
		table string
		o     terraform.Options
	}{
		"no instance":        {"t", terraform.Options{Table: "sched"}},
		"schedule as table":  {"sched", o},
		"bad table resource": {"t", terraform.Options{Instance: "i", Table: "sched", TableResource: "nope"}},
	} {
		if _, err := terraform.SchedulePolicy(tc.table, map[string]ttl.Strategy{"sess": ttl.OneSecond()}, tc.o); !errors.Is(err, ttl.ErrInvalidOption) {
			t.Errorf("%s: err = %v, want ttl.ErrInvalidOption", name, err)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
