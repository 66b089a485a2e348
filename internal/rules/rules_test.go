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

// TestGCRules checks what the data-loss rules read from a current policy:
// the shortest age and the fewest versions a rule deletes by on its own.
func TestGCRules(t *testing.T) {
	union := bigtable.UnionPolicy(bigtable.MaxAgePolicy(72*time.Hour), bigtable.MaxVersionsPolicy(5),
		bigtable.UnionPolicy(bigtable.MaxAgePolicy(48*time.Hour), bigtable.MaxVersionsPolicy(2)))
	inter := bigtable.IntersectionPolicy(bigtable.MaxAgePolicy(time.Hour), bigtable.MaxVersionsPolicy(1))
	for _, tt := range []struct {
		p        bigtable.GCPolicy
		age      time.Duration
		aged     bool
		versions int
		limited  bool
	}{
		{nil, 0, false, 0, false},
		{bigtable.NoGcPolicy(), 0, false, 0, false},
		{bigtable.MaxAgePolicy(time.Hour), time.Hour, true, 0, false},
		{bigtable.MaxVersionsPolicy(3), 0, false, 3, true},
		{union, 48 * time.Hour, true, 2, true},
		{bigtable.UnionPolicy(bigtable.MaxVersionsPolicy(4), inter), 0, false, 4, true},
		{bigtable.UnionPolicy(bigtable.MaxAgePolicy(time.Hour), inter), time.Hour, true, 0, false},
		{inter, 0, false, 0, false}, // needs both rules: neither deletes on its own
		{bigtable.UnionPolicy(), 0, false, 0, false},
	} {
		age, aged := GCAge(tt.p)
		versions, limited := GCVersions(tt.p)
		if age != tt.age || aged != tt.aged || versions != tt.versions || limited != tt.limited {
			t.Errorf("GCAge, GCVersions(%v) = %v, %v, %d, %v want %v, %v, %d, %v",
				tt.p, age, aged, versions, limited, tt.age, tt.aged, tt.versions, tt.limited)
		}
	}
}
