package ttl

import (
	"testing"
	"time"
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
		{maxMillis / 1000, 775_999_999, maxMillis, 0},
		{maxMillis / 1000, 776_000_000, 0, +1},
		{maxMillis/1000 + 1, 0, 0, +1},
	} {
		ms, inRange := floorMillis(unix(tt.sec, tt.nsec))
		if ms != tt.ms || inRange != tt.inRange {
			t.Errorf("floorMillis(%d.%09d) = %d, %d want %d, %d", tt.sec, tt.nsec, ms, inRange, tt.ms, tt.inRange)
		}
	}
}

func unix(sec, nsec int64) time.Time { return time.Unix(sec, nsec) }
