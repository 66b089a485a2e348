package main

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTuneGC: the command raises the collector's target unless the
// environment sets GOGC or GOMEMLIMIT.
func TestTuneGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	for env, want := range map[string]int{"": gcPercent, "GOGC": 100, "GOMEMLIMIT": 100} {
		debug.SetGCPercent(100)
		set := tuneGC(func(k string) string {
			if k == env {
				return "50"
			}
			return ""
		})
		assert.Equal(t, want == gcPercent, set, "env %q", env)
		assert.Equal(t, want, debug.SetGCPercent(100), "env %q", env)
	}
}
