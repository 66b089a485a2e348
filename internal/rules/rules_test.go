package rules

import (
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
)

// TestFloorMillis checks the rounding and the range edges.
func TestFloorMillis(t *testing.T) {
	for _, tt := range []struct {
		sec, nsec int64
		ms        int64
		inRange   int
	}{
		{0, 0, 0, 0},
		{0, 999_999, 0, 0},
		{0, 1_000_000, 1, 0},
		{-1, 999_999_999, 0, -1},
		{MaxMillis / 1000, 775_999_999, MaxMillis, 0},
		{MaxMillis / 1000, 776_000_000, 0, +1},
		{MaxMillis/1000 + 1, 0, 0, +1},
	} {
		ms, inRange := FloorMillis(unix(tt.sec, tt.nsec))
		if ms != tt.ms || inRange != tt.inRange {
			t.Errorf("FloorMillis(%d.%09d) = %d, %d want %d, %d", tt.sec, tt.nsec, ms, inRange, tt.ms, tt.inRange)
		}
	}
}

func unix(sec, nsec int64) time.Time { return time.Unix(sec, nsec) }

// TestGCRules checks what the data-loss rules read from a current policy.
func TestGCRules(t *testing.T) {
	union := bigtable.UnionPolicy(bigtable.MaxAgePolicy(72*time.Hour), bigtable.MaxVersionsPolicy(5),
		bigtable.UnionPolicy(bigtable.MaxAgePolicy(48*time.Hour), bigtable.MaxVersionsPolicy(2)))
	inter := bigtable.IntersectionPolicy(bigtable.MaxAgePolicy(time.Hour), bigtable.MaxVersionsPolicy(1))
	for _, tt := range []struct {
		p        bigtable.GCPolicy
		age      time.Duration
		versions int
	}{
		{bigtable.NoGcPolicy(), 0, 0},
		{bigtable.MaxAgePolicy(time.Hour), time.Hour, 0},
		{bigtable.MaxVersionsPolicy(3), 0, 3},
		{union, 48 * time.Hour, 2},
		{inter, 0, 0}, // needs both rules: neither deletes on its own
	} {
		age, _ := GCAge(tt.p)
		versions, _ := GCVersions(tt.p)
		if age != tt.age || versions != tt.versions {
			t.Errorf("gcAge, GCVersions(%v) = %v, %d want %v, %d", tt.p, age, versions, tt.age, tt.versions)
		}
	}
}
