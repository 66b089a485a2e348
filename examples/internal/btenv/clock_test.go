package btenv

import (
	"testing"
	"time"
)

// TestClock: a Clock reads the time it was made with until it is set.
func TestClock(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewClock(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Errorf("Now = %v, want %v", got, t0)
	}
	c.Set(t0.Add(time.Minute))
	if got := c.Now(); !got.Equal(t0.Add(time.Minute)) {
		t.Errorf("after Set, Now = %v, want %v", got, t0.Add(time.Minute))
	}
}
