package main

import (
	"testing"
	"time"
)

// TestNotYet checks that a rewrite judged before the move's start is
// "not yet" (exit 4), naming both instants, and one at or after it is not.
func TestNotYet(t *testing.T) {
	start := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	err := notYet(start.Add(-time.Hour), start)
	if err == nil || err.Error() != "the move starts at 2030-04-30T09:00:00Z (-start), it is 2030-04-30T08:00:00Z (-now): run the rewrite after the start" {
		t.Errorf("before the start: %v", err)
	}
	for _, now := range []time.Time{start, start.Add(time.Minute)} {
		if err := notYet(now, start); err != nil {
			t.Errorf("at %v: %v", now, err)
		}
	}
}
